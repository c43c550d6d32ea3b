// Request metrics (apiserver_request_total, _duration_seconds): one
// observation per request with its outcome, from the RequestInfo already parsed.

import type { RequestInfo } from '../request.js';
import type { Filter } from './state.js';

export type Observer = (info: RequestInfo, code: number, seconds: number) => void;

export function observeFilter(observe: Observer): Filter {
  return async (s, next) => {
    const t0 = performance.now();
    const out = await next(s);
    const http = s.http;
    const observed = s.info ?? { isResourceRequest: false, path: http.path, verb: http.method.toLowerCase(), group: '', version: '', namespace: '', resource: '', subresource: '', name: '' };
    observe(observed, out.status, (performance.now() - t0) / 1000);
    return out;
  };
}
