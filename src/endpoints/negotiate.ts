// Content negotiation (spec 000 §4.3): the first acceptable type of the
// Accept list wins; a list with nothing we serve is 406.

import { notAcceptable } from '../core/errors.js';
import { isProtobufMediaType } from '../machinery/protobuf/envelope.js';
import type { Negotiated } from './request.js';

interface MediaRange {
  type: string;
  params: Map<string, string>;
}

export function parseAccept(header: string | undefined): MediaRange[] {
  if (!header || header.trim() === '') return [{ type: '*/*', params: new Map() }];
  return header.split(',').map((part) => {
    const [type, ...params] = part.split(';');
    const m = new Map<string, string>();
    for (const p of params) {
      const eq = p.indexOf('=');
      if (eq > 0) m.set(p.slice(0, eq).trim().toLowerCase(), p.slice(eq + 1).trim().replace(/^"|"$/g, ''));
    }
    return { type: (type ?? '').trim().toLowerCase(), params: m };
  });
}

/**
 * Picks the representation. `metaGroups` are the groups accepted for
 * `as=Table` (meta.<domain>, plus meta.k8s.io so that unmodified kubectl gets tables).
 */
export function negotiate(
  header: string | undefined,
  opts: NegotiateOptions,
): Negotiated {
  const ranges = parseAccept(header);
  const picked = pick(ranges, opts);
  if (picked) return picked;
  throw notAcceptable(`only the following media types are accepted: application/json, application/yaml${opts.cbor ? ', application/cbor' : ''}${opts.protobuf ? `, ${opts.protobufName ?? 'application/vnd.orch.protobuf'}` : ''}`);
}

export interface NegotiateOptions {
  metaGroups: string[];
  allowTable: boolean;
  pretty: boolean;
  cbor?: boolean;
  protobuf?: boolean;
  /** the protobuf media type a 406 names (both names are accepted): kube's under --api-domain k8s.io */
  protobufName?: string;
  /**
   * a watch: protobuf may be asked for as `…protobuf;stream=watch` or plainly
   * (client-go sends the plain name on watches); elsewhere `stream=watch` is not served
   */
  watch?: boolean;
  /** `/api` or `/apis`: the aggregated discovery type is acceptable */
  discovery?: boolean;
}

function pick(ranges: MediaRange[], opts: NegotiateOptions): Negotiated | undefined {
  for (const [i, r] of ranges.entries()) {
    const as = r.params.get('as');
    if (as !== undefined) {
      if (as === 'Table' && opts.allowTable && (r.type === 'application/json' || r.type === 'application/yaml')) {
        const g = r.params.get('g') ?? '';
        const v = r.params.get('v') ?? '';
        if (opts.metaGroups.includes(g) && (v === 'v1' || v === 'v1beta1')) {
          return { format: r.type === 'application/yaml' ? 'yaml' : 'json', table: { group: g, version: v }, pretty: opts.pretty };
        }
      }
      // client-go's metadata client: kube allows it on every endpoint; we serve it on get, list and
      // watch (the reads `allowTable` marks), in JSON or YAML, and in protobuf (get and list, any
      // kind: the message is meta/v1's, custom resources included, as kube's; a watch's falls through)
      if ((as === 'PartialObjectMetadata' || as === 'PartialObjectMetadataList') && opts.allowTable) {
        const g = r.params.get('g') ?? '';
        const v = r.params.get('v') ?? '';
        if (opts.metaGroups.includes(g) && (v === 'v1' || v === 'v1beta1')) {
          const partial = { group: g, version: v, list: as === 'PartialObjectMetadataList' };
          if (r.type === 'application/json' || r.type === 'application/yaml') {
            return { format: r.type === 'application/yaml' ? 'yaml' : 'json', partial, pretty: opts.pretty };
          }
          if (isProtobufMediaType(r.type) && !opts.watch && r.params.get('stream') === undefined) {
            return { format: 'protobuf', partial, pretty: false, mediaType: r.type, fallback: pick(ranges.slice(i + 1), opts) };
          }
        }
      }
      // aggregated discovery: /api and /apis answer it themselves (src/server/non-resource.ts); errors are JSON
      if (as === 'APIGroupDiscoveryList' && opts.discovery && r.type === 'application/json') return { format: 'json', pretty: opts.pretty };
      continue;
    }
    switch (r.type) {
      case 'application/json':
      case 'application/*':
      case '*/*':
      case '*':
        return { format: 'json', pretty: opts.pretty };
      case 'application/yaml':
        return { format: 'yaml', pretty: opts.pretty };
      case 'application/cbor':
        if (opts.cbor) return { format: 'cbor', pretty: false };
        continue;
      case 'application/vnd.orch.protobuf':
      case 'application/vnd.kubernetes.protobuf':
        // spec 000 §4.3: only kinds with field numbers; the rest of the list
        // is kept for bodies that have no protobuf form
        if (opts.protobuf && (r.params.get('stream') === undefined || (opts.watch && r.params.get('stream') === 'watch'))) {
          return { format: 'protobuf', pretty: false, mediaType: r.type, fallback: pick(ranges.slice(i + 1), opts) };
        }
        continue;
      default:
        continue;
    }
  }
  return undefined;
}
