// HTTP/2 sessions on the TLS front (issue #14 item 3, docs/tls.md "HTTP/2"):
// the Node `http2` server on accepted TLS sockets, the session and stream
// limits, CONNECT refused, and request bodies read whole with their size and
// time bounds. What happens to a complete request is the forwarder's job:
// the multiplexed channel to the main process (src/gateway/h2-mux-client.ts,
// what `orch server` uses) or one HTTP/1.1 request per stream to the uWS
// backend (src/gateway/h2-bridge.ts, when no channel is configured).

import {
  constants as h2constants,
  createServer as createH2Server,
  type IncomingHttpHeaders,
  type OutgoingHttpHeaders,
  type ServerHttp2Session,
  type ServerHttp2Stream,
} from 'node:http2';
import type { TLSSocket } from 'node:tls';
import { type Clock, systemClock } from '../core/clock.js';
import type { H2ProbeReply } from './health-probe.js';

/**
 * SETTINGS_MAX_CONCURRENT_STREAMS. Go's HTTP/2 server defaults to 250 (kube's
 * `--http2-max-streams-per-connection 0`); k8s.io/apiserver's recommended
 * options use 1000 because their clients multiplex many long-running
 * requests (watches) over one connection, which is the case here too.
 */
export const DEFAULT_MAX_CONCURRENT_STREAMS = 1000;
/** a session without open streams this long is closed (kube's http2 IdleTimeout, 90 s) */
const IDLE_SESSION_MS = 90_000;
/**
 * Request bodies larger than this are answered 413 here without being held
 * (the gateway's own limit, 3 MiB in src/gateway/router.ts, answers 413 for
 * anything between): 1,000 streams of a session cannot hold more than this each.
 */
export const MAX_BUFFERED_BODY = 4 * 1024 * 1024;
/** a request body not complete this long after its head is answered 504, as the gateway does (kube's request timeout) */
const BODY_TIMEOUT_MS = 60_000;
/** per-stream receive window for request bodies: kube's MaxUploadBufferPerStream (256 KiB) */
const STREAM_WINDOW = 256 * 1024;
/** request header block limit (uncompressed); kube's http.Server allows 1 MiB of headers */
const MAX_HEADER_LIST_SIZE = 1024 * 1024;

/** headers that describe one HTTP/1.1 connection, never carried across (RFC 9113 §8.2.2) */
export const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'host', 'http2-settings']);
export const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** the TLS connection a session runs on */
export interface SessionContext {
  /** its id, as the gateway looks identities up (the PROXY header's address text) */
  connKey: string;
  /** the 52-byte PROXY v2 header naming it to uWS */
  proxyHeader: Buffer;
  /** resolves once the main process knows the connection's identity (TLS workers); streams are forwarded only after it */
  registered?: Promise<void>;
}

/** one complete request of a stream */
export interface StreamRequest {
  method: string;
  /** `:path`, query included */
  path: string;
  /** `host` (from `:authority`) first, then the other fields, lower-case, repeated ones joined, hop-by-hop ones dropped */
  headers: [string, string][];
  body: Buffer;
}

export interface StreamForwarder {
  /** answer the stream; called once per stream with its whole request */
  forward(stream: ServerHttp2Stream, req: StreamRequest, ctx: SessionContext): void;
  /** false: the stream is answered 429 (no backend capacity) */
  mayAccept?(ctx: SessionContext): boolean;
  sessionClosed?(ctx: SessionContext): void;
  /** connections to the backend open now */
  readonly backendConnections: number;
  destroy(): void;
}

export interface H2Sessions {
  /**
   * serve HTTP/2 on a TLS connection that negotiated `h2`; `proxyHeader` names it to uWS.
   * No stream is forwarded before `registered` resolves (the main process knows the id);
   * probes answered here do not wait for it.
   */
  serve(socket: TLSSocket, connKey: string, proxyHeader: Buffer, registered?: Promise<void>): void;
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

export interface H2SessionsOptions {
  forwarder: StreamForwarder;
  maxConcurrentStreams?: number;
  /** request-body deadlines (default the system clock) */
  clock?: Clock;
  /**
   * Health probes answered in this process (TLS workers, src/gateway/health-probe.ts):
   * asked for each stream that ended with its headers, with the session's connection key.
   */
  answerProbe?: (headers: IncomingHttpHeaders, connKey: string) => Promise<H2ProbeReply | undefined> | undefined;
}

export function createH2Sessions(opts: H2SessionsOptions): H2Sessions {
  const clock = opts.clock ?? systemClock;
  const fwd = opts.forwarder;
  const sessions = new Set<ServerHttp2Session>();
  let openStreams = 0;

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

  let pending: SessionContext | undefined;
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
      fwd.sessionClosed?.(ctx);
    });
    session.on('stream', (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => {
      streamsHere++;
      openStreams++;
      stream.once('close', () => {
        streamsHere--;
        openStreams--;
      });
      acceptStream(stream, headers, ctx);
    });
  });

  const acceptStream = (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, ctx: SessionContext): void => {
    stream.on('error', () => undefined);
    const method = String(headers[':method'] ?? 'GET').toUpperCase();
    const path = String(headers[':path'] ?? '/');
    if (method === 'CONNECT') {
      respondStatus(stream, 405, 'MethodNotAllowed', 'CONNECT is not served over HTTP/2; WebSocket streams (exec, attach, port-forward) use HTTP/1.1');
      return;
    }
    if (fwd.mayAccept && !fwd.mayAccept(ctx)) {
      respondStatus(stream, 429, 'TooManyRequests', 'the server has no connection left for this request, please try again later', { 'retry-after': '1' });
      return;
    }
    const out: [string, string][] = [['host', String(headers[':authority'] ?? headers.host ?? 'localhost')]];
    for (const [name, value] of Object.entries(headers)) {
      if (name.startsWith(':') || HOP_BY_HOP.has(name) || name === 'content-length' || value === undefined) continue;
      // HTTP/2 may split cookies into several fields (RFC 9113 §8.2.3)
      out.push([name, Array.isArray(value) ? value.join(name === 'cookie' ? '; ' : ', ') : String(value)]);
    }

    if (stream.endAfterHeaders) {
      const req = { method, path, headers: out, body: EMPTY };
      const probe = opts.answerProbe?.(headers, ctx.connKey);
      if (!probe) {
        forwardRegistered(stream, req, ctx);
        return;
      }
      probe.then(
        (reply) => {
          if (!reply) forwardRegistered(stream, req, ctx);
          else if (!stream.closed && !stream.destroyed) {
            stream.respond(reply.headers);
            stream.end(reply.body);
          }
        },
        () => forwardRegistered(stream, req, ctx),
      );
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
      if (!refused) forwardRegistered(stream, { method, path, headers: out, body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total) }, ctx);
    });
  };

  /** forwards once the connection is registered (its session may start before: see `serve`) */
  const forwardRegistered = (stream: ServerHttp2Stream, req: StreamRequest, ctx: SessionContext): void => {
    if (!ctx.registered) return fwd.forward(stream, req, ctx);
    ctx.registered.then(
      () => {
        if (!stream.closed && !stream.destroyed) fwd.forward(stream, req, ctx);
      },
      () => stream.close(h2constants.NGHTTP2_REFUSED_STREAM),
    );
  };

  return {
    serve(socket, connKey, proxyHeader, registered) {
      pending = { connKey, proxyHeader, ...(registered ? { registered } : {}) };
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
      return fwd.backendConnections;
    },
    closeSessions() {
      for (const s of sessions) s.close();
    },
    destroy() {
      for (const s of sessions) s.destroy();
      fwd.destroy();
    },
  };
}

const EMPTY = Buffer.alloc(0);

/** a response's headers for HTTP/2: hop-by-hop fields dropped, repeated ones as arrays */
export function h2ResponseHeaders(status: number, fields: Iterable<[string, string]>): OutgoingHttpHeaders {
  const rh: OutgoingHttpHeaders = { ':status': status };
  for (const [n, value] of fields) {
    const name = n.toLowerCase();
    if (HOP_BY_HOP.has(name)) continue;
    const prev = rh[name];
    rh[name] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [String(prev), value];
  }
  return rh;
}

export function respondStatus(stream: ServerHttp2Stream, code: number, reason: string, message: string, extra: OutgoingHttpHeaders = {}): void {
  if (stream.closed || stream.destroyed) return;
  if (stream.headersSent) {
    stream.close(h2constants.NGHTTP2_INTERNAL_ERROR);
    return;
  }
  const body = JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code });
  stream.respond({ ':status': code, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...extra });
  stream.end(body);
}
