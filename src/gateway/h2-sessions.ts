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
import { type Clock, systemClock, type TimerHandle } from '../core/clock.js';
import type { H2ProbeReply } from './health-probe.js';
import { h2HeaderValue } from '../core/header-join.js';

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

/** called when a forwarded stream closes (the sessions hold each stream's one 'close' listener) */
export type StreamClosed = () => void;

export interface StreamForwarder {
  /** answer the stream; called once per stream with its whole request; what it returns is called when the stream closes */
  forward(stream: ServerHttp2Stream, req: StreamRequest, ctx: SessionContext): StreamClosed | void;
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

/** a session's context and whether the main process has acknowledged its connection */
interface SessionState extends SessionContext {
  ready: boolean;
}

/**
 * What the sessions keep of one stream: what its forwarder wants to hear at
 * its close. One 'close' listener per stream does it all (three listeners and
 * a timer per stream showed in a TLS worker's profile, docs/performance.md
 * "TLS workers under HTTP/2 creates").
 */
interface StreamEntry {
  closed: StreamClosed | undefined;
}

export function createH2Sessions(opts: H2SessionsOptions): H2Sessions {
  const clock = opts.clock ?? systemClock;
  const fwd = opts.forwarder;
  const sessions = new Set<ServerHttp2Session>();
  let openStreams = 0;
  const bodyDeadlines = new Deadlines(clock, BODY_TIMEOUT_MS);

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

  let pending: SessionState | undefined;
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
    // Idle: armed only while the session has no stream (a session timeout,
    // `session.setTimeout`, is refreshed by Node on every write of every stream)
    let idle: TimerHandle | undefined;
    const armIdle = (): void => {
      idle = clock.setTimeout(() => {
        if (streamsHere === 0) session.close();
      }, IDLE_SESSION_MS);
    };
    armIdle();
    session.on('error', () => session.destroy());
    session.on('close', () => {
      idle?.cancel();
      idle = undefined;
      sessions.delete(session);
      fwd.sessionClosed?.(ctx);
    });
    session.on('stream', (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, _flags: number, rawHeaders?: string[]) => {
      if (streamsHere++ === 0 && idle) {
        idle.cancel();
        idle = undefined;
      }
      openStreams++;
      const entry: StreamEntry = { closed: undefined };
      stream.on('close', () => {
        openStreams--;
        bodyDeadlines.delete(stream);
        entry.closed?.();
        if (--streamsHere === 0 && !session.closed && !session.destroyed) armIdle();
      });
      stream.on('error', ignore);
      acceptStream(stream, headers, ctx, entry, rawHeaders);
    });
  });

  const acceptStream = (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, ctx: SessionState, entry: StreamEntry, rawHeaders?: readonly string[]): void => {
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
    for (const name in headers) {
      const value = headers[name];
      // pseudo-headers start with ':' (58)
      if (name.charCodeAt(0) === 58 || value === undefined || HOP_BY_HOP.has(name) || name === 'content-length') continue;
      // HTTP/2 may split cookies into several fields (RFC 9113 §8.2.3)
      if (name === 'cookie' && Array.isArray(value)) out.push([name, value.join('; ')]);
      else if (name.startsWith('impersonate-')) out.push([name, h2HeaderValue(name, value, rawHeaders)!]);
      else out.push([name, typeof value === 'string' ? value : Array.isArray(value) ? value.join(', ') : String(value)]);
    }

    if (stream.endAfterHeaders) {
      const req = { method, path, headers: out, body: EMPTY };
      const probe = opts.answerProbe?.(headers, ctx.connKey);
      if (!probe) {
        forwardRegistered(stream, req, ctx, entry);
        return;
      }
      probe.then(
        (reply) => {
          if (!reply) forwardRegistered(stream, req, ctx, entry);
          else if (!stream.closed && !stream.destroyed) respondWhole(stream, reply.headers, reply.body);
        },
        () => forwardRegistered(stream, req, ctx, entry),
      );
      return;
    }
    const body: BodyRead = { chunks: [], total: 0, refused: false };
    bodyDeadlines.add(stream, () => {
      if (!body.refused) refuse(stream, body, 504, 'Timeout', 'Timeout: request did not complete within requested timeout - context deadline exceeded');
    });
    stream.on('data', (c: Buffer) => {
      if (body.refused) return;
      body.total += c.length;
      if (body.total > MAX_BUFFERED_BODY) {
        bodyDeadlines.delete(stream);
        refuse(stream, body, 413, 'RequestEntityTooLarge', `the request body is larger than ${MAX_BUFFERED_BODY} bytes`);
        return;
      }
      body.chunks.push(c);
    });
    stream.on('end', () => {
      bodyDeadlines.delete(stream);
      const { chunks, total } = body;
      if (!body.refused) forwardRegistered(stream, { method, path, headers: out, body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total) }, ctx, entry);
    });
  };

  /** forwards once the connection is registered (its session may start before: see `serve`) */
  const forwardRegistered = (stream: ServerHttp2Stream, req: StreamRequest, ctx: SessionState, entry: StreamEntry): void => {
    // acknowledged: no promise turn per stream
    if (!ctx.registered || ctx.ready) {
      entry.closed = fwd.forward(stream, req, ctx) ?? undefined;
      return;
    }
    ctx.registered.then(
      () => {
        if (!stream.closed && !stream.destroyed) entry.closed = fwd.forward(stream, req, ctx) ?? undefined;
      },
      () => stream.close(h2constants.NGHTTP2_REFUSED_STREAM),
    );
  };

  return {
    serve(socket, connKey, proxyHeader, registered) {
      const ctx: SessionState = { connKey, proxyHeader, ready: false, ...(registered ? { registered } : {}) };
      registered?.then(
        () => (ctx.ready = true),
        () => undefined,
      );
      pending = ctx;
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
      bodyDeadlines.clear();
      fwd.destroy();
    },
  };
}

const EMPTY = Buffer.alloc(0);
const ignore = (): void => undefined;

/** a request body being read */
interface BodyRead {
  chunks: Buffer[];
  total: number;
  refused: boolean;
}

function refuse(stream: ServerHttp2Stream, body: BodyRead, code: number, reason: string, message: string): void {
  body.refused = true;
  body.chunks.length = 0;
  respondStatus(stream, code, reason, message);
  // what the client still sends is read and dropped
  stream.resume();
}

/**
 * Deadlines of one fixed length for many streams on one timer (a timer per
 * stream showed in the profile). Entries are due in the order they were added
 * (a Map keeps insertion order), so the timer is armed for the oldest entry
 * still waiting; a deleted entry costs nothing but the Map delete.
 */
export class Deadlines<K> {
  private readonly waiting = new Map<K, { at: number; expire: () => void }>();
  private timer: TimerHandle | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly ms: number,
  ) {}

  add(key: K, expire: () => void): void {
    this.waiting.set(key, { at: this.clock.now() + this.ms, expire });
    // an armed timer is due no later than this entry
    this.timer ??= this.clock.setTimeout(() => this.fire(), this.ms);
  }

  delete(key: K): void {
    this.waiting.delete(key);
  }

  get size(): number {
    return this.waiting.size;
  }

  clear(): void {
    this.waiting.clear();
    this.timer?.cancel();
    this.timer = undefined;
  }

  private fire(): void {
    this.timer = undefined;
    const now = this.clock.now();
    for (const [key, w] of this.waiting) {
      if (w.at > now) {
        this.timer = this.clock.setTimeout(() => this.fire(), w.at - now);
        return;
      }
      this.waiting.delete(key);
      w.expire();
    }
  }
}

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
  const body = Buffer.from(JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code }));
  respondWhole(stream, { ':status': code, 'content-type': 'application/json', 'content-length': body.length, ...extra }, body);
}

/**
 * Headers and a whole body. The body is written, and the stream ended once
 * that write is done, rather than `end(body)`: with `end(body)` the body's
 * DATA frame carries END_STREAM, a stream whose request was read to its end
 * closes (and Node destroys it) before the write's callback, and that
 * callback then builds an ERR_STREAM_DESTROYED with its stack for nobody
 * (Node 20's `errorBuffer` in lib/internal/streams/writable.js): ≈ 7 % of a
 * TLS worker's CPU under creates. The price is an empty DATA frame with
 * END_STREAM, sent with the next turn's frames (docs/performance.md "TLS
 * workers under HTTP/2 creates").
 */
export function respondWhole(stream: ServerHttp2Stream, headers: OutgoingHttpHeaders, body: Buffer): void {
  if (body.length === 0) {
    stream.respond(headers, END_STREAM);
    return;
  }
  stream.respond(headers);
  stream.write(body, (err) => {
    if (!err && !stream.destroyed) stream.end();
  });
}

const END_STREAM = { endStream: true };
