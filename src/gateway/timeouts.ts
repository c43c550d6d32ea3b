// Request deadlines (issue #15, kube-apiserver's --request-timeout and
// --min-request-timeout): every request that is not long-running ends by its
// deadline with 504 Timeout; watches end after a randomised time instead.

import { StatusError } from '../core/errors.js';
import type { RequestInfo } from '../api/request.js';
import type { PlainResponse } from './http-server.js';

/** kube's long-running requests: watches and the streaming sub-resources */
const LONG_RUNNING_SUBRESOURCES = new Set(['exec', 'attach', 'portforward', 'proxy', 'log']);

export function isLongRunning(info: RequestInfo): boolean {
  return info.verb === 'watch' || info.verb === 'proxy' || (info.isResourceRequest && LONG_RUNNING_SUBRESOURCES.has(info.subresource));
}

/**
 * The deadline of a request: `?timeout=` (a Go duration such as `30s` or
 * `1m30s`, as kubectl's --request-timeout sends it) when shorter than the
 * server's, else the server's. A malformed value is ignored, as kube does.
 */
export function requestTimeoutMs(query: URLSearchParams, serverMs: number): number {
  const asked = query.get('timeout');
  if (asked) {
    const ms = parseGoDuration(asked);
    if (ms !== undefined && ms > 0 && (serverMs <= 0 || ms < serverMs)) return ms;
  }
  return serverMs;
}

const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** `1h2m3.5s`, `300ms`; undefined when not a duration */
export function parseGoDuration(text: string): number | undefined {
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/gy;
  let total = 0;
  let matched = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    total += Number(m[1]) * UNIT_MS[m[2]!]!;
    matched = re.lastIndex;
  }
  return matched === text.length && matched > 0 ? total : text === '0' ? 0 : undefined;
}

/** kube's answer when a request outlives its deadline */
export function timeoutResponse(): PlainResponse {
  const e = new StatusError(504, 'Timeout', 'Timeout: request did not complete within requested timeout - context deadline exceeded', {});
  return { status: 504, headers: [['Content-Type', 'application/json']], body: JSON.stringify(e.toStatus()) };
}

/** a watch without timeoutSeconds lasts a random time in [min, 2·min) (kube), so load spreads after restarts */
export function watchTimeoutMs(minRequestTimeoutMs: number, random: () => number): number {
  return minRequestTimeoutMs * (1 + random());
}
