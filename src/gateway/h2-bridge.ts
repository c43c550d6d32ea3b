// HTTP/2 streams bridged to the uWS backend as HTTP/1.1 (issue #14 item 3):
// the forwarder src/gateway/h2-sessions.ts uses when the front has no
// multiplexed channel to the main process (src/gateway/h2-mux-client.ts,
// which `orch server` configures): each stream becomes one HTTP/1.1 request
// over a keep-alive unix-socket connection. Every backend connection of a
// session starts with the session's PROXY v2 header, so uWS attributes each
// request to the TLS connection's client certificate exactly as for
// HTTP/1.1 (docs/tls.md).
//
// - A request holds its backend connection until its response ends; a watch
//   holds one for its lifetime. Finished connections go back to a per-session
//   pool and are closed after BACKEND_IDLE_MS unused, well inside uWS's own
//   10 s idle close, so a request is never sent on a connection uWS is closing.
// - Responses are de-chunked by Node's HTTP/1.1 parser into DATA frames; the
//   gateway's flush byte (`X-Orch-Flush`, src/gateway/response-chunk-framer.ts)
//   is dropped; hop-by-hop headers are not carried over.
// - Back-pressure: when a stream's write returns false the backend response is
//   paused (its socket stops being read) until the stream drains.
// - A stream the client resets (RST_STREAM) or loses with its session destroys
//   its backend connection: uWS sees the abort and the watch stops.
// - Request bodies arrive whole (h2-sessions.ts), so the head goes out in one
//   write together with the PROXY header and every request carries a
//   Content-Length.

import { Agent, type ClientRequest, type IncomingMessage, request as httpRequest, type RequestOptions } from 'node:http';
import { constants as h2constants, type ServerHttp2Stream } from 'node:http2';
import { connect as netConnect, type Socket } from 'node:net';
import { type Clock, systemClock } from '../core/clock.js';
import { BACKEND_DIAL_PATIENCE_MS, isBacklogFull, redialWaitMs } from './backend-dial.js';
import { h2ResponseHeaders, METHODS_WITH_BODY, respondStatus, type SessionContext, type StreamForwarder, type StreamRequest } from './h2-sessions.js';
import { escapeHeaderName } from './request-head-coalescer.js';

/** a pooled backend connection unused this long is closed (uWS closes idle ones at ~10 s) */
const BACKEND_IDLE_MS = 4_000;

export interface H2BridgeOptions {
  /** unix socket the uWS app listens on */
  backendSocketPath: string;
  /** whether another backend connection may be opened now (the front's descriptor budget) */
  mayOpenBackend?: () => boolean;
  /** called whenever a backend connection closes (the front waits for the last one on close) */
  onBackendClosed?: () => void;
  /** called on every backend dial refused by a full accept queue (it is repeated) */
  onBackendRefused?: () => void;
  /** redial waits (default the system clock) */
  clock?: Clock;
}

/** the options every backend request carries, read back by the agent */
interface BackendRequestOptions {
  connKey: string;
  proxyHeader: Buffer;
}

interface AgentInternals {
  freeSockets: Record<string, Socket[] | undefined>;
  getName(o: BackendRequestOptions): string;
  createConnection(o: BackendRequestOptions): Socket;
  keepSocketAlive(s: Socket): boolean;
  reuseSocket(s: Socket, req: ClientRequest): void;
}

export function createH2Bridge(opts: H2BridgeOptions): StreamForwarder {
  const backends = new Set<Socket>();

  // One keep-alive agent, pooled by connection id: a backend connection is
  // only ever reused by streams of the session whose PROXY header it carries.
  const agent = new Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: 256, scheduling: 'lifo' });
  const internals = agent as unknown as AgentInternals;
  internals.getName = (o) => o.connKey;
  internals.createConnection = (o) => {
    const s = netConnect({ path: opts.backendSocketPath });
    backends.add(s);
    s.once('close', () => {
      backends.delete(s);
      opts.onBackendClosed?.();
    });
    // The PROXY header and the request head in one write: uWS reads a head
    // split over several reads only up to 4 KiB. The agent writes the head
    // (and the whole body, see above) in process.nextTick, before this.
    s.cork();
    s.write(o.proxyHeader);
    setImmediate(() => s.uncork());
    return s;
  };
  const keepAlive = Agent.prototype.keepSocketAlive as (this: Agent, s: Socket) => boolean;
  internals.keepSocketAlive = (s) => {
    const keep = keepAlive.call(agent, s);
    // the agent destroys a pooled socket that times out
    s.setTimeout(BACKEND_IDLE_MS);
    return keep;
  };
  const reuse = Agent.prototype.reuseSocket as (this: Agent, s: Socket, req: ClientRequest) => void;
  internals.reuseSocket = (s, req) => {
    s.setTimeout(0);
    reuse.call(agent, s, req);
  };
  const dropPooled = (connKey: string): void => {
    for (const s of internals.freeSockets[connKey] ?? []) s.destroy();
  };

  const clock = opts.clock ?? systemClock;
  const send = (stream: ServerHttp2Stream, method: string, path: string, headers: Record<string, string>, body: Buffer, ctx: BackendRequestOptions, retried = false, refusals = 0, since = clock.now()): void => {
    if (stream.closed || stream.destroyed) return;
    if (body.length > 0 || METHODS_WITH_BODY.has(method)) headers['content-length'] = String(body.length);
    let req: ClientRequest;
    try {
      const ro: RequestOptions & BackendRequestOptions = { agent, method, path, headers, setHost: false, connKey: ctx.connKey, proxyHeader: ctx.proxyHeader };
      req = httpRequest(ro);
    } catch (err) {
      respondStatus(stream, 400, 'BadRequest', `the request cannot be forwarded: ${(err as Error).message}`);
      return;
    }
    let responded = false;
    let finished = false;
    const onStreamClose = (): void => {
      // the client reset the stream or lost its session: a watch must stop on the server
      if (!finished) req.destroy();
    };
    stream.once('close', onStreamClose);
    req.on('response', (res: IncomingMessage) => {
      responded = true;
      if (stream.closed || stream.destroyed) {
        req.destroy();
        return;
      }
      let dropFlushByte = false;
      const fields: [string, string][] = [];
      const raw = res.rawHeaders;
      for (let i = 0; i + 1 < raw.length; i += 2) {
        if (raw[i]!.toLowerCase() === 'x-orch-flush') dropFlushByte = raw[i + 1] === '1';
        else fields.push([raw[i]!, raw[i + 1]!]);
      }
      const rh = h2ResponseHeaders(res.statusCode ?? 502, fields);
      try {
        stream.respond(rh);
      } catch {
        finished = true;
        req.destroy();
        stream.close(h2constants.NGHTTP2_INTERNAL_ERROR);
        return;
      }
      res.on('data', (chunk: Buffer) => {
        if (dropFlushByte) {
          // the gateway's one-byte chunk that only made uWS send the head
          dropFlushByte = false;
          chunk = chunk.subarray(1);
          if (chunk.length === 0) return;
        }
        if (!stream.write(chunk)) res.pause();
      });
      stream.on('drain', () => res.resume());
      res.on('end', () => {
        finished = true;
        stream.off('close', onStreamClose);
        if (!stream.closed && !stream.destroyed) stream.end();
      });
      res.on('aborted', () => {
        // uWS closed mid-response: the client must see an error, not a complete body
        finished = true;
        if (!stream.closed && !stream.destroyed) stream.close(h2constants.NGHTTP2_INTERNAL_ERROR);
      });
      res.on('error', () => undefined);
    });
    req.on('error', (err: Error) => {
      if (finished) return;
      if (responded) {
        finished = true;
        if (!stream.closed && !stream.destroyed) stream.close(h2constants.NGHTTP2_INTERNAL_ERROR);
        return;
      }
      stream.off('close', onStreamClose);
      if (isBacklogFull(err) && clock.now() - since < BACKEND_DIAL_PATIENCE_MS) {
        // uWS's accept queue is full (its loop is behind): nothing reached it, dial again shortly
        opts.onBackendRefused?.();
        clock.setTimeout(() => send(stream, method, path, headers, body, ctx, retried, refusals + 1, since), redialWaitMs(refusals + 1));
        return;
      }
      // a pooled connection closed under us (uWS's idle close): once more on a fresh one
      if ((req as ClientRequest & { reusedSocket?: boolean }).reusedSocket && !retried) {
        send(stream, method, path, headers, body, ctx, true);
        return;
      }
      finished = true;
      respondStatus(stream, 503, 'ServiceUnavailable', `the API server is not reachable: ${err.message}`);
    });
    req.end(body);
  };

  return {
    forward(stream: ServerHttp2Stream, req: StreamRequest, ctx: SessionContext) {
      const headers: Record<string, string> = {};
      for (const [name, value] of req.headers) headers[escapeHeaderName(name)] = value;
      send(stream, req.method, req.path, headers, req.body, ctx);
    },
    mayAccept(ctx) {
      return (internals.freeSockets[ctx.connKey]?.length ?? 0) > 0 || !opts.mayOpenBackend || opts.mayOpenBackend();
    },
    sessionClosed(ctx) {
      dropPooled(ctx.connKey);
    },
    get backendConnections() {
      return backends.size;
    },
    destroy() {
      for (const b of backends) b.destroy();
      agent.destroy();
    },
  };
}
