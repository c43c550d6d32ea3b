// Request deadlines (issue #15, kube-apiserver's --request-timeout and
// WithTimeoutForNonLongRunningRequests): every request that is not
// long-running ends by its deadline with 504 Timeout; watches and the
// streaming sub-resources are bounded elsewhere (the watch's own timeout).

import { StatusError } from '../../core/errors.js';
import type { RequestInfo } from '../request.js';
import { parseGoDuration } from '../../core/duration.js';
import type { HttpRequest, HttpResponse, PlainResponse } from '../http.js';
import type { Filter } from './state.js';
import type { Clock, TimerHandle } from '../../core/clock.js';

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

/** kube's answer when a request outlives its deadline */
export function timeoutResponse(): PlainResponse {
  const e = new StatusError(504, 'Timeout', 'Timeout: request did not complete within requested timeout - context deadline exceeded', {});
  return { status: 504, headers: [['Content-Type', 'application/json']], body: JSON.stringify(e.toStatus()) };
}

/**
 * The request as the work under a deadline sees it: its signal also aborts at
 * the deadline. A class, not an object literal with a `signal` getter, which
 * Node 20 builds in dictionary mode (≈ 0.8 µs, and slow reads after;
 * docs/architecture.md "Third pass: the request path").
 */
class DeadlineRequest implements HttpRequest {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly headers: Map<string, string>;
  readonly proxiedAddress: string;
  readonly body: Uint8Array;
  private timedOut = false;
  private ctrl: AbortController | undefined;

  constructor(private readonly incoming: HttpRequest) {
    this.method = incoming.method;
    this.path = incoming.path;
    this.query = incoming.query;
    this.headers = incoming.headers;
    this.proxiedAddress = incoming.proxiedAddress;
    this.body = incoming.body;
  }

  /** the abort controller is made on first use (creates never read the signal) */
  get signal(): AbortSignal {
    if (!this.ctrl) {
      this.ctrl = new AbortController();
      if (this.timedOut) this.ctrl.abort();
    }
    return AbortSignal.any([this.incoming.signal, this.ctrl.signal]);
  }

  expire(): void {
    this.timedOut = true;
    this.ctrl?.abort();
  }
}

/**
 * The work is abandoned at the deadline: its signal aborts, and what it
 * answers later is dropped (a write that was already proposed may still
 * apply, as in kube). The abort controller is made only when a handler reads
 * the signal (creates do not; docs/architecture.md "Write path cost").
 */
export function timeoutFilter(clock: Clock, defaultTimeoutMs: number): Filter {
  return (s, next) => {
    const timeoutMs = s.info && !isLongRunning(s.info) ? requestTimeoutMs(s.http.query, defaultTimeoutMs) : 0;
    if (timeoutMs <= 0) return next(s);
    const http = new DeadlineRequest(s.http);
    s.http = http;
    // one promise settled by whichever comes first (the work or the deadline), not a race of two
    return new Promise<HttpResponse>((resolve, reject) => {
      let timer: TimerHandle | undefined;
      next(s).then(
        (res) => {
          timer?.cancel();
          resolve(res);
        },
        (e: unknown) => {
          timer?.cancel();
          reject(e);
        },
      );
      timer = clock.setTimeout(() => {
        http.expire();
        resolve(timeoutResponse());
      }, timeoutMs);
    });
  };
}
