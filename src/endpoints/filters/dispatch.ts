// The end of the chain for resource requests: the installer's route for
// (definition, verb, sub-resource), the handler's answer encoded as
// negotiated. Nothing here depends on the verb: which handler serves what is
// decided once, in src/endpoints/installer.ts.

import type { HandlerContext } from '../handlers/context.js';
import type { ProtobufCatalog } from '../../registry/protobuf-catalog.js';
import type { ApiRequest, AuditAnnotator, Negotiated, RequestInfo } from '../request.js';
import type { ResourceDefinition } from '../../registry/types.js';
import { type Encoder, deprecationWarning, pushWarnings } from '../encode.js';
import type { RouteTable } from '../installer.js';
import type { HttpRequest, HttpResponse } from '../http.js';
import { type Next, infoOf, userOf } from './state.js';
import type { UserInfo } from '../../auth/types.js';

/**
 * The request a handler sees. A class, not an object literal: a literal with
 * a getter (`signal`, read lazily because the abort controller is made on
 * first use) is built in dictionary mode, ≈ 0.8 µs each on Node 20, and every
 * read of its properties is a dictionary lookup (issue 14,
 * docs/architecture.md "Third pass: the request path"). A copy made with a
 * spread does not get `signal` from the prototype: copy it explicitly.
 */
class DispatchedRequest implements ApiRequest {
  query: URLSearchParams;
  headers: Map<string, string>;
  body: Uint8Array;
  contentType: string;

  constructor(
    public info: RequestInfo,
    public def: ResourceDefinition,
    private readonly http: HttpRequest,
    public user: UserInfo,
    public accept: Negotiated,
    public protobuf: ProtobufCatalog,
    public audit: AuditAnnotator | undefined,
  ) {
    this.query = http.query;
    this.headers = http.headers;
    this.body = http.body;
    this.contentType = http.headers.get('content-type') ?? '';
  }

  get signal(): AbortSignal {
    return this.http.signal;
  }
}

export interface DispatchOptions {
  ctx: HandlerContext;
  routes: RouteTable;
  protobuf: ProtobufCatalog;
  apiDomain: string;
  respond: Encoder;
  /** a request used a deprecated endpoint (spec 000 §6: metric `apiserver_requested_deprecated_apis`) */
  onDeprecated?: (def: ResourceDefinition, info: RequestInfo) => void;
}

export function dispatch(o: DispatchOptions): Next {
  return async (s): Promise<HttpResponse> => {
    const info = infoOf(s);
    const { def, handler, compressible } = o.routes.resolve(info);
    const http = s.http;
    const audit = s.audit;
    if (audit && http.body.length > 0) audit.protobufBody(() => o.protobuf.decodeBody(http.body, def));
    const req = new DispatchedRequest(info, def, http, userOf(s), s.accept, o.protobuf, audit);
    // spec 000 §6: a deprecated endpoint answers with a Warning header and is counted
    let deprecation: string | undefined;
    if (def.deprecated) {
      deprecation = deprecationWarning(def);
      o.onDeprecated?.(def, info);
      // spec 000 §6: the audit event of a request to a deprecated endpoint is annotated
      audit?.annotate(`${o.apiDomain}/deprecated`, 'true');
      if (def.deprecated.removedRelease) audit?.annotate(`${o.apiDomain}/removed-release`, def.deprecated.removedRelease);
    }
    const res = await handler(o.ctx, req);
    // node-agent streams (exec, attach, port-forward): a WebSocket session
    if (res.upgrade) return { upgrade: res.upgrade, status: 101, headers: [] };
    if (res.tunnel) return { tunnel: res.tunnel, status: 101, headers: [] };
    const warnings = deprecation ? [deprecation, ...(res.warnings ?? [])] : res.warnings;
    // 204 No Content has no body to encode, nor to frame (a chunked 204 corrupts a keep-alive HTTP/1.1 client)
    if (res.status === 204) {
      const headers: [string, string][] = [];
      pushWarnings(headers, warnings ?? []);
      return { status: 204, headers, body: '' };
    }
    // watches and pods/log: bytes as they come
    if (res.raw) {
      const raw = res.raw;
      const headers: [string, string][] = [['Content-Type', raw.contentType], ...Object.entries(res.headers ?? {})];
      pushWarnings(headers, warnings ?? []);
      return { stream: true, status: res.status, headers, start: (sink) => raw.start(sink), stop: () => raw.stop() };
    }
    return o.respond(res.status, res.body, s.accept, warnings, compressible, res.headers, res.bodyJson);
  };
}
