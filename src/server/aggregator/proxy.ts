// kube-aggregator's proxy (handler_proxy.go): the request, authenticated and
// authorized here, goes on over HTTPS to the APIService's Service, resolved as
// the admission webhook client resolves a Service reference
// (src/registry/admission/lookups.ts), trusting the APIService's caBundle
// (none when insecureSkipTLSVerify) and presenting the front-proxy client
// certificate; the user travels in X-Remote-User / X-Remote-Group /
// X-Remote-Extra-* (kube's requestheader authentication), and the client's own
// credentials do not. Watches and other long-running answers stream through.

import type { ClientRequest, IncomingMessage } from 'node:http';
import { request } from 'node:https';
import type { Clock, TimerHandle } from '../../core/clock.js';
import type { StreamSink } from '../../core/stream.js';
import { serviceUnavailable } from '../../core/errors.js';
import { REPLAYABLE_METHODS, closedReusedConnection } from '../../core/reused-connection.js';
import type { AggregatedVersion, ProxiedRequest } from '../../endpoints/filters/aggregator.js';
import type { HttpResponse } from '../../endpoints/http.js';
import { isLongRunning } from '../../endpoints/filters/timeout.js';
import { describeSocketError } from '../../registry/admission/webhook-client.js';
import type { UserInfo } from '../../auth/types.js';
import { type AggregatorProxyOptions, authProxyHeaders, forwardedHeaders, serviceRequestOptions } from './service-request.js';
import { isUpgrade, proxyUpgrade } from './upgrade.js';

/** the largest ordinary answer buffered whole; a longer one is refused (503), watches and followed logs stream */
const MAX_BUFFERED_BYTES = 16 * 1024 * 1024;
const DROPPED_RESPONSE_HEADERS = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'trailer', 'upgrade', 'proxy-connection']);

export function aggregatorProxy(o: AggregatorProxyOptions): (r: ProxiedRequest) => Promise<HttpResponse> {
  return (r) => {
    let target: ReturnType<typeof serviceRequestOptions>;
    try {
      target = serviceRequestOptions(r.target, o);
    } catch (e) {
      // kube logs the resolution error and answers 503 "service unavailable"
      o.log?.(`aggregator: ${r.target.name}: ${(e as Error).message}`);
      return Promise.reject(serviceUnavailable('service unavailable'));
    }
    if (isUpgrade(r.http.headers)) return proxyUpgrade(r, target);
    const headers = forwardedHeaders(r);
    if (r.http.body.length > 0) headers['content-length'] = r.http.body.length;
    const query = r.http.query.toString();
    // what the chain treats as long-running (no deadline, no flow-control seat) streams
    const long = isLongRunning(r.info) || r.http.query.get('follow') === 'true';
    const method = r.http.method;
    const attempt = (mayRetry: boolean): Promise<HttpResponse> =>
      new Promise<HttpResponse>((resolve, reject) => {
        let answered = false;
        const req = request(
          { host: target.host, port: target.port, method, path: query ? `${r.http.path}?${query}` : r.http.path, headers, agent: o.agents.get(target.agentKey), ...target.tls },
          (res) => {
            answered = true;
            resolve(long ? streamed(res, req.destroy.bind(req), o.clock) : buffered(res));
          },
        );
        const onAbort = () => req.destroy();
        r.http.signal.addEventListener('abort', onAbort, { once: true });
        req.on('close', () => r.http.signal.removeEventListener('abort', onAbort));
        req.on('error', (e: NodeJS.ErrnoException) => {
          // the server closed the kept-alive connection as this went out on it: a GET goes once more (Go's transport does)
          if (mayRetry && !answered && closedReusedConnection(req, e) && REPLAYABLE_METHODS.has(method) && !r.http.signal.aborted) {
            resolve(attempt(false));
            return;
          }
          o.log?.(`aggregator: ${r.target.name}: ${e.message}`);
          reject(serviceUnavailable(`error trying to reach service: ${describeSocketError(e, target)}`));
        });
        req.end(r.http.body.length > 0 ? Buffer.from(r.http.body) : undefined);
      });
    return attempt(true);
  };
}

function responseHeaders(res: IncomingMessage): [string, string][] {
  const out: [string, string][] = [];
  for (const [k, v] of Object.entries(res.headers)) {
    if (v === undefined || DROPPED_RESPONSE_HEADERS.has(k)) continue;
    for (const one of Array.isArray(v) ? v : [v]) out.push([k, one]);
  }
  return out;
}

/** an ordinary answer: read whole (the transport frames and may compress it), or streamed when it is very long */
function buffered(res: IncomingMessage): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (c: Buffer) => {
      size += c.length;
      chunks.push(c);
      if (size > MAX_BUFFERED_BYTES) {
        res.destroy();
        reject(serviceUnavailable('the aggregated API server\'s response is too large'));
      }
    });
    res.on('end', () => resolve({ status: res.statusCode ?? 502, headers: responseHeaders(res), body: new Uint8Array(Buffer.concat(chunks)), compressible: true }));
    res.on('error', (e: Error) => reject(serviceUnavailable(`error reading from the aggregated API server: ${e.message}`)));
  });
}

/** a client this far behind pauses the server's stream until it catches up (bytes queued on the client's side) */
const PAUSE_BACKLOG_BYTES = 1024 * 1024;
const RESUME_CHECK_MS = 50;

/**
 * a watch (or a followed log): bytes as they come, until either side ends;
 * while the client's queue is long the server's response is paused (TCP then
 * slows the server), checked again on the clock
 */
export function streamed(res: IncomingMessage, abort: () => void, clock: Clock): HttpResponse {
  let check: TimerHandle | undefined;
  return {
    stream: true,
    status: res.statusCode ?? 502,
    headers: responseHeaders(res),
    start(sink: StreamSink) {
      const resumeWhenDrained = () => {
        check = clock.setTimeout(() => {
          if (sink.backlog() < PAUSE_BACKLOG_BYTES) res.resume();
          else resumeWhenDrained();
        }, RESUME_CHECK_MS);
      };
      res.on('data', (c: Buffer) => {
        if (!sink.write(c) && sink.backlog() >= PAUSE_BACKLOG_BYTES && !res.isPaused()) {
          res.pause();
          resumeWhenDrained();
        }
      });
      const end = () => {
        check?.cancel();
        sink.end();
      };
      res.on('end', end);
      res.on('error', end);
    },
    stop() {
      check?.cancel();
      abort();
    },
  };
}

/** the identity kube-aggregator's own requests carry (availability probe, discovery) */
const AGGREGATOR_USER: UserInfo = { username: 'system:kube-aggregator', groups: ['system:masters'] };

/**
 * GET of the server's `/apis/<group>/<version>` as kube's availability check
 * makes it (its own identity, 5 s at most, a 2xx answer); resolves with the
 * body (the version's APIResourceList, for discovery), rejects with kube's
 * "failing or missing response from <url>: …".
 */
export function getDiscoveryDocument(target: AggregatedVersion, o: AggregatorProxyOptions, clock: Clock, timeoutMs = 5000): Promise<string> {
  return getServerDocument(target, `/apis/${target.group}/${target.version}`, o, clock, timeoutMs);
}

/** the server's OpenAPI v3 document of the version (kube-aggregator's OpenAPI v3 aggregation), fetched the same way */
export function getOpenAPIV3Document(target: AggregatedVersion, o: AggregatorProxyOptions, clock: Clock, timeoutMs = 5000): Promise<string> {
  return getServerDocument(target, `/openapi/v3/apis/${target.group}/${target.version}`, o, clock, timeoutMs);
}

function getServerDocument(target: AggregatedVersion, path: string, o: AggregatorProxyOptions, clock: Clock, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let t: ReturnType<typeof serviceRequestOptions>;
    try {
      t = serviceRequestOptions(target, o, true);
    } catch (e) {
      reject(e);
      return;
    }
    const url = `https://${t.host}:${t.port}${path}`;
    let done = false;
    let answered = false;
    let req: ClientRequest;
    const fail = (why: string) => {
      if (done) return;
      done = true;
      timer.cancel();
      reject(new Error(`failing or missing response from ${url}: ${why}`));
    };
    const send = (mayRetry: boolean) => {
      req = request({ host: t.host, port: t.port, method: 'GET', path, headers: { accept: 'application/json', ...authProxyHeaders(AGGREGATOR_USER) }, agent: o.agents.get(t.agentKey), ...t.tls }, (res) => {
        answered = true;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const code = res.statusCode ?? 0;
          if (code < 200 || code >= 300) return fail(`bad status from ${url}: ${code}`);
          if (done) return;
          done = true;
          timer.cancel();
          resolve(Buffer.concat(chunks).toString('utf8'));
        });
        res.on('error', (e) => fail(e.message));
      });
      req.on('error', (e: NodeJS.ErrnoException) => {
        // a kept-alive connection the server closed as this went out: once more on a new one
        if (mayRetry && !done && !answered && closedReusedConnection(req, e)) send(false);
        else fail(`Get "${url}": ${describeSocketError(e, t)}`);
      });
      req.end();
    };
    const timer = clock.setTimeout(() => {
      fail(`Get "${url}": context deadline exceeded`);
      req.destroy();
    }, timeoutMs);
    send(true);
  });
}
