// HTTP/2 on the TLS front (issue #14 item 3): client-go and most clients
// multiplex every watch of an informer set over one HTTP/2 connection (ALPN
// `h2`). uWebSockets.js speaks HTTP/1.1 only, so the front terminates HTTP/2
// itself (the Node `http2` module, on the accepted TLS socket) and bridges
// each stream to the uWS backend as one HTTP/1.1 request over a keep-alive
// unix-socket connection. Every backend connection of a session starts with
// the session's PROXY v2 header, so uWS attributes each request to the TLS
// connection's client certificate exactly as for HTTP/1.1 (docs/tls.md).
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
// - Request bodies are read whole before the backend request is sent (uWS
//   buffers them whole as well), so the head goes out in one write together
//   with the PROXY header and every request carries a Content-Length. Bodies
//   are bounded in size (413) and time (504), like the gateway's own.
// - WebSocket upgrades (exec, attach, port-forward) stay on HTTP/1.1: extended
//   CONNECT (RFC 8441) is not offered and CONNECT is answered 405.

import { Agent, type ClientRequest, type IncomingMessage, request as httpRequest, type RequestOptions } from 'node:http';
import {
  constants as h2constants,
  createServer as createH2Server,
  type IncomingHttpHeaders,
  type OutgoingHttpHeaders,
  type ServerHttp2Session,
  type ServerHttp2Stream,
} from 'node:http2';
import { connect as netConnect, type Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { type Clock, systemClock } from '../core/clock.js';
import { BACKEND_DIAL_PATIENCE_MS, isBacklogFull, redialWaitMs } from './backend-dial.js';
import { escapeHeaderName } from './request-head-coalescer.js';

/**
 * SETTINGS_MAX_CONCURRENT_STREAMS. Go's HTTP/2 server defaults to 250 (kube's
 * `--http2-max-streams-per-connection 0`); k8s.io/apiserver's recommended
 * options use 1000 because their clients multiplex many long-running
 * requests (watches) over one connection, which is the case here too.
 */
export const DEFAULT_MAX_CONCURRENT_STREAMS = 1000;
/** a session without open streams this long is closed (kube's http2 IdleTimeout, 90 s) */
const IDLE_SESSION_MS = 90_000;
/** a pooled backend connection unused this long is closed (uWS closes idle ones at ~10 s) */
const BACKEND_IDLE_MS = 4_000;
/**
 * Request bodies larger than this are answered 413 here without being held
 * (the gateway's own limit, 3 MiB in src/gateway/router.ts, answers 413 for
 * anything between): 1,000 streams of a session cannot hold more than this each.
 */
const MAX_BUFFERED_BODY = 4 * 1024 * 1024;
/** a request body not complete this long after its head is answered 504, as the gateway does (kube's request timeout) */
const BODY_TIMEOUT_MS = 60_000;
/** per-stream receive window for request bodies: kube's MaxUploadBufferPerStream (256 KiB) */
const STREAM_WINDOW = 256 * 1024;
/** request header block limit (uncompressed); kube's http.Server allows 1 MiB of headers */
const MAX_HEADER_LIST_SIZE = 1024 * 1024;

/** headers that describe one HTTP/1.1 connection, never carried across (RFC 9113 §8.2.2) */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'host', 'http2-settings']);
const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export interface H2BridgeOptions {
  /** unix socket the uWS app listens on */
  backendSocketPath: string;
  maxConcurrentStreams?: number;
  /** whether another backend connection may be opened now (the front's descriptor budget) */
  mayOpenBackend?: () => boolean;
  /** called on every backend dial refused by a full accept queue (it is repeated) */
  onBackendRefused?: () => void;
  /** called whenever a backend connection closes (the front waits for the last one on close) */
  onBackendClosed?: () => void;
  /** request-body deadlines (default the system clock) */
  clock?: Clock;
}

export interface H2Bridge {
  /** serve HTTP/2 on a TLS connection that negotiated `h2`; `proxyHeader` names it to uWS */
  serve(socket: TLSSocket, connKey: string, proxyHeader: Buffer): void;
  readonly sessions: number;
  /** open HTTP/2 streams across all sessions */
  readonly streams: number;
  /** backend connections open (in use or pooled) */
  readonly backendConnections: number;
  /** GOAWAY to every session: running streams finish, no new ones start */
  closeSessions(): void;
  /** destroy every session and backend connection */
  destroy(): void;
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

export function createH2Bridge(opts: H2BridgeOptions): H2Bridge {
  const clock = opts.clock ?? systemClock;
  const backends = new Set<Socket>();
  const sessions = new Set<ServerHttp2Session>();
  let openStreams = 0;

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

  const server = createH2Server({
    settings: {
      maxConcurrentStreams: opts.maxConcurrentStreams ?? DEFAULT_MAX_CONCURRENT_STREAMS,
      initialWindowSize: STREAM_WINDOW,
      maxHeaderListSize: MAX_HEADER_LIST_SIZE,
      // no extended CONNECT: WebSockets stay on HTTP/1.1
      enableConnectProtocol: false,
    },
    maxHeaderListPairs: 512,
    // credit for all open streams' buffers (Node's default is 10 MB); new streams are refused beyond it
    maxSessionMemory: 64,
  });
  server.on('sessionError', () => undefined);

  let pending: { connKey: string; proxyHeader: Buffer } | undefined;
  server.on('session', (session: ServerHttp2Session) => {
    const ctx = pending;
    pending = undefined;
    if (!ctx) {
      session.destroy();
      return;
    }
    sessions.add(session);
    let streamsHere = 0;
    // the connection window for request bodies: one stream window per allowed stream, as kube sizes it
    session.once('localSettings', () => {
      try {
        session.setLocalWindowSize(STREAM_WINDOW * 16);
      } catch {
        // session already gone
      }
    });
    session.setTimeout(IDLE_SESSION_MS, () => {
      if (streamsHere === 0) session.close();
    });
    session.on('error', () => session.destroy());
    session.on('close', () => {
      sessions.delete(session);
      dropPooled(ctx.connKey);
    });
    session.on('stream', (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => {
      streamsHere++;
      openStreams++;
      stream.once('close', () => {
        streamsHere--;
        openStreams--;
      });
      bridgeStream(stream, headers, ctx);
    });
  });

  const bridgeStream = (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, ctx: BackendRequestOptions): void => {
    stream.on('error', () => undefined);
    const method = String(headers[':method'] ?? 'GET').toUpperCase();
    const path = String(headers[':path'] ?? '/');
    if (method === 'CONNECT') {
      respondStatus(stream, 405, 'MethodNotAllowed', 'CONNECT is not served over HTTP/2; WebSocket streams (exec, attach, port-forward) use HTTP/1.1');
      return;
    }
    const pooled = internals.freeSockets[ctx.connKey]?.length ?? 0;
    if (pooled === 0 && opts.mayOpenBackend && !opts.mayOpenBackend()) {
      respondStatus(stream, 429, 'TooManyRequests', 'the server has no connection left for this request, please try again later', { 'retry-after': '1' });
      return;
    }
    const out: Record<string, string> = { host: String(headers[':authority'] ?? headers.host ?? 'localhost') };
    for (const [name, value] of Object.entries(headers)) {
      if (name.startsWith(':') || HOP_BY_HOP.has(name) || value === undefined) continue;
      // HTTP/2 may split cookies into several fields (RFC 9113 §8.2.3)
      const joined = Array.isArray(value) ? value.join(name === 'cookie' ? '; ' : ', ') : String(value);
      out[escapeHeaderName(name)] = joined;
    }
    delete out['content-length'];

    if (stream.endAfterHeaders) {
      send(stream, method, path, out, Buffer.alloc(0), ctx);
      return;
    }
    const chunks: Buffer[] = [];
    let total = 0;
    let refused = false;
    const refuse = (code: number, reason: string, message: string): void => {
      refused = true;
      chunks.length = 0;
      timer.cancel();
      respondStatus(stream, code, reason, message);
      // what the client still sends is read and dropped
      stream.resume();
    };
    const timer = clock.setTimeout(() => {
      if (!refused) refuse(504, 'Timeout', 'Timeout: request did not complete within requested timeout - context deadline exceeded');
    }, BODY_TIMEOUT_MS);
    stream.once('close', () => timer.cancel());
    stream.on('data', (c: Buffer) => {
      if (refused) return;
      total += c.length;
      if (total > MAX_BUFFERED_BODY) {
        refuse(413, 'RequestEntityTooLarge', `the request body is larger than ${MAX_BUFFERED_BODY} bytes`);
        return;
      }
      chunks.push(c);
    });
    stream.on('end', () => {
      timer.cancel();
      if (!refused) send(stream, method, path, out, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total), ctx);
    });
  };

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
      const rh: OutgoingHttpHeaders = { ':status': res.statusCode ?? 502 };
      const raw = res.rawHeaders;
      for (let i = 0; i + 1 < raw.length; i += 2) {
        const name = raw[i]!.toLowerCase();
        const value = raw[i + 1]!;
        if (name === 'x-orch-flush') {
          dropFlushByte = value === '1';
          continue;
        }
        if (HOP_BY_HOP.has(name)) continue;
        const prev = rh[name];
        rh[name] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [String(prev), value];
      }
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
    serve(socket, connKey, proxyHeader) {
      pending = { connKey, proxyHeader };
      // synchronous: the server's connection listener makes the session and emits 'session'
      server.emit('connection', socket);
      if (pending) {
        pending = undefined;
        socket.destroy();
      }
    },
    get sessions() {
      return sessions.size;
    },
    get streams() {
      return openStreams;
    },
    get backendConnections() {
      return backends.size;
    },
    closeSessions() {
      for (const s of sessions) s.close();
    },
    destroy() {
      for (const s of sessions) s.destroy();
      for (const b of backends) b.destroy();
      agent.destroy();
    },
  };
}

function respondStatus(stream: ServerHttp2Stream, code: number, reason: string, message: string, extra: OutgoingHttpHeaders = {}): void {
  if (stream.closed || stream.destroyed) return;
  if (stream.headersSent) {
    stream.close(h2constants.NGHTTP2_INTERNAL_ERROR);
    return;
  }
  const body = JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code });
  stream.respond({ ':status': code, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...extra });
  stream.end(body);
}
