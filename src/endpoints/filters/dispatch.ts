// The end of the chain for resource requests: the installer's route for
// (definition, verb, sub-resource), the handler's answer encoded as
// negotiated. Nothing here depends on the verb: which handler serves what is
// decided once, in src/endpoints/installer.ts.

import type { HandlerContext } from '../handlers/context.js';
import type { ProtobufCatalog } from '../../registry/protobuf-catalog.js';
import type { ApiRequest, RequestInfo } from '../request.js';
import type { ResourceDefinition } from '../../registry/types.js';
import { type Encoder, deprecationWarning, warningHeader } from '../encode.js';
import type { RouteTable } from '../installer.js';
import type { HttpResponse } from '../http.js';
import { type Next, infoOf, userOf } from './state.js';

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
    const req: ApiRequest = {
      info,
      def,
      query: http.query,
      headers: http.headers,
      body: http.body,
      contentType: http.headers.get('content-type') ?? '',
      user: userOf(s),
      accept: s.accept,
      // read lazily: the abort controller is made on first use
      get signal() {
        return http.signal;
      },
      protobuf: o.protobuf,
      audit,
    };
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
    const warnings = deprecation ? [deprecation, ...(res.warnings ?? [])] : res.warnings;
    // watches and pods/log: bytes as they come
    if (res.raw) {
      const raw = res.raw;
      const headers: [string, string][] = [['Content-Type', raw.contentType], ...Object.entries(res.headers ?? {})];
      for (const w of warnings ?? []) headers.push(['Warning', warningHeader(w)]);
      return { stream: true, status: res.status, headers, start: (sink) => raw.start(sink), stop: () => raw.stop() };
    }
    return o.respond(res.status, res.body, s.accept, warnings, compressible, res.headers, res.bodyJson);
  };
}
