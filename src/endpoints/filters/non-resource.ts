// Requests outside /api and /apis resources: health (livez, readyz, healthz),
// discovery, OpenAPI, version. They are authorized like every other path, as
// in kube: the default system:public-info-viewer role lets everyone,
// anonymous included, read them.

import { methodNotAllowed, notFoundPath } from '../../core/errors.js';
import type { Negotiated } from '../request.js';
import type { Encoder } from '../encode.js';
import { type Filter, infoOf } from './state.js';

export const HEALTH_PATH = /^\/(livez|readyz|healthz)(\/|$)/;

/** discovery, OpenAPI, version and other documents that are not resources */
export type NonResourceHandler = (
  path: string,
  query: URLSearchParams,
  accept: Negotiated,
  /** request headers (OpenAPI: Accept for its protobuf form, If-None-Match) */
  headers?: Map<string, string>,
) => Promise<NonResourceDoc | undefined> | NonResourceDoc | undefined;

/** `raw` is sent as is (pre-serialised documents such as OpenAPI, with their own headers); `body` is encoded as negotiated */
export type NonResourceDoc = { status: number; body: unknown; raw?: { contentType: string; text: string | Uint8Array; headers?: [string, string][] } };

/** the health checks (src/gateway/health.ts), as this filter uses them */
export interface HealthEndpoints {
  serve(path: string, query: URLSearchParams): Promise<{ status: number; body: string } | undefined>;
}

export function nonResourceFilter(health: HealthEndpoints, docs: NonResourceHandler, respond: Encoder): Filter {
  return async (s, next) => {
    if (infoOf(s).isResourceRequest) return next(s);
    const http = s.http;
    const checked = await health.serve(http.path, http.query);
    if (checked) {
      return { status: checked.status, headers: [['Content-Type', 'text/plain; charset=utf-8'], ['X-Content-Type-Options', 'nosniff']], body: checked.body };
    }
    if (http.method !== 'GET' && http.method !== 'HEAD') throw methodNotAllowed(`the server does not allow this method on the requested resource`);
    const doc = await docs(http.path, http.query, s.accept, http.headers);
    if (!doc) throw notFoundPath();
    if (doc.raw) return { status: doc.status, headers: [['Content-Type', doc.raw.contentType], ...(doc.raw.headers ?? [])], body: doc.raw.text, compressible: true };
    if (typeof doc.body === 'string') {
      return { status: doc.status, headers: [['Content-Type', 'text/plain; charset=utf-8']], body: doc.body };
    }
    return respond(doc.status, doc.body, s.accept, [], true);
  };
}
