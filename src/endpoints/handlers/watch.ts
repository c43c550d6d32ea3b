// The watch verb (spec 000 §4.2, §4.5, §4.6): an ordinary verb handler. It
// parses the query with the parser list and deletecollection use, picks the
// event encoder for the negotiated representation and opens the watch on the
// cacher below the registry (src/watch/service.ts).

import { type Clock, systemClock } from '../../core/clock.js';
import { badRequest, notAcceptable } from '../../core/errors.js';
import type { HandlerContext } from './context.js';
import { apiVersionOf } from '../../registry/registry.js';
import type { ApiRequest, ApiResponse } from '../request.js';
import type { ResourceDefinition } from '../../registry/types.js';
import { CborWatchEncoder, JsonWatchEncoder, PartialWatchEncoder, TableWatchEncoder, type WatchEncoder } from '../../watch/encode.js';
import { checkPartialShape } from '../../registry/partial-metadata.js';
import { ProtobufWatchEncoder } from '../../watch/protobuf-encode.js';
import type { WatchOpenOptions, WatchStream } from '../../watch/service.js';
import { type ListOptions, parseListOptions, watchParams } from '../list-params.js';
import { exactName } from '../../machinery/selectors/fields.js';

/** the cacher's side of a watch (WatchService) */
export interface WatchCacher {
  open(o: WatchOpenOptions): WatchStream;
}

export type VerbHandlerFn = (ctx: HandlerContext, req: ApiRequest) => Promise<ApiResponse>;

export function watchHandler(cacher: WatchCacher): VerbHandlerFn {
  return async (ctx, req) => {
    const stream = openWatch(cacher, req, ctx.clock, ctx.registry.apiDomain);
    return {
      status: stream.status,
      body: undefined,
      headers: { 'Cache-Control': 'no-cache, private' },
      raw: { contentType: stream.contentType, start: (sink) => stream.start(sink), stop: () => stream.stop() },
    };
  };
}

/**
 * validates the request and opens the stream; errors known before streaming are thrown as StatusError.
 * `clock` dates a Table watch's ages (the composition root's, through HandlerContext); `apiDomain`
 * names the meta group of its ListOptions errors.
 */
export function openWatch(cacher: WatchCacher, req: ApiRequest, clock: Clock = systemClock, apiDomain = 'k8s.io'): WatchStream {
  if (req.accept.format === 'yaml') {
    // Kubernetes has no YAML watch stream (spec 000 §4.3)
    throw notAcceptable('only the following media types are accepted: application/json, application/json;stream=watch');
  }
  const params = watchParams(namedWatch(parseListOptions(req.query, req.info.namespace, apiDomain), req.info.name));
  return cacher.open({ def: req.def, namespace: req.info.namespace, params, encoder: encoderFor(req, req.def, clock), signal: req.signal });
}

/**
 * `/watch/…/{name}` watches that one object: kube's ListResource turns the name into a
 * `metadata.name` field selector, and refuses a selector naming another object.
 */
function namedWatch(o: ListOptions, name: string): ListOptions {
  if (name === '') return o;
  if (o.fieldSelector.length === 0) return { ...o, fieldSelector: [{ field: 'metadata.name', op: '=', value: name }] };
  if (exactName(o.fieldSelector) !== name) throw badRequest("fieldSelector metadata.name doesn't match requested name");
  return o;
}

function encoderFor(req: ApiRequest, def: ResourceDefinition, clock: Clock): WatchEncoder {
  const apiVersion = apiVersionOf(def);
  if (req.accept.table) {
    const inc = req.query.get('includeObject') ?? 'Metadata';
    if (inc !== 'None' && inc !== 'Metadata' && inc !== 'Object') {
      throw badRequest(`includeObject: Unsupported value: "${inc}": supported values: "None", "Metadata", "Object"`);
    }
    return new TableWatchEncoder(def, apiVersion, req.accept.table, inc, () => clock.now());
  }
  if (req.accept.partial) {
    // each event's object is one PartialObjectMetadata, as kube-apiserver's watch transforms them
    checkPartialShape(def, req.accept.partial, false);
    return new PartialWatchEncoder(apiVersion, def.kind, req.accept.partial);
  }
  if (req.accept.format === 'cbor') return new CborWatchEncoder(apiVersion, def.kind);
  if (req.accept.format === 'protobuf' && req.protobuf) {
    return new ProtobufWatchEncoder(req.protobuf, apiVersion, def.kind, req.accept.mediaType ?? 'application/vnd.orch.protobuf');
  }
  return new JsonWatchEncoder(apiVersion, def.kind);
}
