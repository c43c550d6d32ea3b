// TLS terminator in front of the uWebSockets.js gateway.
//
// uWS can terminate TLS itself but does not give JavaScript the client
// certificate, and clients authenticate by X.509 certificate (spec
// 001_bdb487117be0ea8a.txt §5.3: CN = user name, O = groups). So a Node `tls`
// server terminates TLS, and for every TLS connection opens one plain
// connection to the uWS app on a unix socket, first writing a PROXY protocol
// v2 header whose *source address* is a synthetic IPv6 address (fdXX::/8, 120
// random bits) naming this connection. uWS parses the header; the gateway
// reads `res.getProxiedRemoteAddressAsText()` and calls `peerFor()` with it to
// learn who is on the other end. See docs/tls.md for why this is safe.
//
// This module owns the server: options, listen, accept, and the close life
// cycle. The parts it composes:
// - src/gateway/proxy-v2.ts: the PROXY v2 header and the connection ids;
// - src/gateway/tls-connections.ts: the registry id → socket and certificate;
// - src/gateway/tls-h1-connection.ts: one HTTP/1.1 connection's forwarding,
//   with uWS's idle close bridged for keep-alive clients;
// - src/gateway/h2-sessions.ts: HTTP/2 sessions; their streams go to the main
//   process over one multiplexed channel (h2-mux-client.ts) or, without one,
//   one HTTP/1.1 request each (h2-bridge.ts).
import { type Clock, type TimerHandle, systemClock } from '../core/clock.js';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Server as NetServer, Socket } from 'node:net';
import { createServer, type Server, type TLSSocket } from 'node:tls';
import type { PeerCertificate } from '../auth/types.js';
import { createH2Bridge } from './h2-bridge.js';
import { createH2MuxClient } from './h2-mux-client.js';
import { createH2Sessions, type H2Sessions } from './h2-sessions.js';
import type { H2ProbeAnswerer, ProbeAnswerer } from './health-probe.js';
import { HEAD_HOLD_MS } from './request-head-coalescer.js';
import { encodeProxyV2Header, newConnectionId, PROXY_DESTINATION, proxiedAddressFor } from './proxy-v2.js';
import { type TlsConnectionInfo, TlsConnectionRegistry } from './tls-connections.js';
import { BACKEND_IDLE_MS, IDLE_CONNECTION_MS, serveHttp1 } from './tls-h1-connection.js';
import { createH1MuxChannel } from './h1-mux-channel.js';
import { type H1MuxContext, serveHttp1Mux } from './tls-h1-mux.js';
import { timeoutResponse } from './timeouts.js';

export { encodeProxyV2Header, newConnectionId, parseProxiedAddress, proxiedAddressFor, PROXY_V2_TCP6_HEADER_LENGTH } from './proxy-v2.js';
export type { TlsConnectionInfo } from './tls-connections.js';

export interface TlsFrontOptions {
  /** idle tracking, linger and close timers (default the system clock) */
  clock?: Clock;
  host: string;
  /** 0 = ephemeral */
  port: number;
  key: string | Buffer;
  cert: string | Buffer;
  /** PEM bundle of CAs that sign client certificates (`--client-ca-file`, spec 001 §5.3) */
  clientCA?: string | Buffer;
  /** unix socket the uWS app listens on (`app.listen_unix`) */
  backendSocketPath: string;
  /**
   * Client connections accepted at once; more are closed at accept. Default:
   * what the open-files limit allows (each client costs three descriptors:
   * the TLS socket and both ends of its unix-socket pair). Running out of
   * descriptors instead would leave the gateway's accept loop spinning.
   */
  maxConnections?: number;
  /**
   * Descriptors one client connection costs in this process, for the default
   * `maxConnections` (default 3; a TLS worker process holds only 2: the TLS
   * socket and its end of the unix-socket pair, see src/gateway/tls-workers.ts).
   */
  fdsPerConnection?: number;
  /**
   * Listen on this already-listening socket (handed over by the parent
   * process as a raw handle, see src/gateway/tls-workers.ts) instead of
   * binding `host:port`.
   */
  listenHandle?: ListenHandle;
  /**
   * Called once per connection, after the handshake and before any byte of
   * it reaches uWS; forwarding starts when the promise resolves (a rejection
   * closes the connection). TLS worker processes use it to tell the parent
   * who is on the other end of the connection id.
   */
  register?: (proxiedAddress: string, info: TlsConnectionInfo) => Promise<void>;
  /** called when a connection passed to `register` closes */
  unregister?: (proxiedAddress: string) => void;
  /** called on every failed handshake (timed-out ones included) */
  onHandshakeError?: () => void;
  /** called for every connection refused at accept because `maxConnections` are open */
  onConnectionRefused?: () => void;
  /** called on every backend dial refused by a full accept queue (it is repeated; TLS workers report the count) */
  onBackendRefused?: () => void;
  /**
   * A TCP connection that has not completed its TLS handshake by then is
   * closed (default 32 s as in kube, `--tls-handshake-timeout`): a client that opens
   * connections and stalls in the handshake holds no slot for long.
   */
  handshakeTimeoutMs?: number;
  /**
   * Serve HTTP/2 to clients that offer `h2` by ALPN (default true): over the
   * multiplexed channel at `muxSocketPath` (src/gateway/h2-mux-client.ts), or
   * without one bridged stream by stream to the uWS backend
   * (src/gateway/h2-bridge.ts); false offers only HTTP/1.1.
   */
  http2?: boolean;
  /** the main process's HTTP/2 channel (src/gateway/mux-server.ts) */
  muxSocketPath?: string;
  /**
   * Plain HTTP/1.1 requests go over the multiplexed channel at `muxSocketPath`
   * too (default true; src/gateway/tls-h1-mux.ts); upgrades and whatever it
   * cannot carry exactly stay on the per-connection uWS path. False: every
   * HTTP/1.1 connection takes the uWS path.
   */
  http1OverMux?: boolean;
  /** HTTP/1.1 over the channel: a request body not complete this long after its head is answered 504 (default 60 s, kube's request timeout) */
  requestBodyTimeoutMs?: number;
  /** SETTINGS_MAX_CONCURRENT_STREAMS (kube `--http2-max-streams-per-connection`; default 1000) */
  http2MaxStreams?: number;
  /**
   * The 48 bytes of session ticket keys (default: random per front). The TLS
   * worker processes get one set generated by the parent, so that a ticket
   * one worker issued resumes on any other (issue #13: reconnecting clients
   * paid a full handshake whenever the kernel gave them another worker).
   */
  ticketKeys?: Buffer;
  /**
   * Answers health probes on HTTP/1.1 connections in this process (TLS
   * workers, from the main process's snapshots: src/gateway/health-probe.ts);
   * HTTP/2 streams: `answerH2Probe`.
   */
  answerProbe?: ProbeAnswerer;
  /** the same for HTTP/2 streams (src/gateway/h2-sessions.ts); the session then starts before the registration is acknowledged */
  answerH2Probe?: H2ProbeAnswerer;
  /** an idle HTTP/1.1 backend connection is closed by the front after this long (default 4 s; src/gateway/tls-h1-connection.ts) */
  backendIdleMs?: number;
  /** an incomplete first request head is answered 408 after this long (default 10 s; src/gateway/request-head-coalescer.ts) */
  headHoldMs?: number;
}

/** A listening socket: a net.Server, or the raw libuv handle a parent process sent. */
export type ListenHandle = NetServer | object;

export interface TlsCloseOptions {
  /** stop accepting and let open connections finish by themselves (default false: destroy them) */
  graceful?: boolean;
  /** with `graceful`, destroy whatever is still open after this long */
  timeoutMs?: number;
}

export interface TlsFront {
  /** the port actually bound */
  readonly port: number;
  /** the client certificate of the connection named by a proxied address, if it presented one */
  peerFor(proxiedAddressText: string): PeerCertificate | undefined;
  /** everything known about the connection named by a proxied address */
  connectionFor(proxiedAddressText: string): TlsConnectionInfo | undefined;
  /** open TLS connections that completed the handshake */
  readonly connections: number;
  /** failed TLS handshakes since start (they are otherwise ignored) */
  readonly handshakeErrors: number;
  /** connections closed at accept, before the handshake, because `maxConnections` were open */
  readonly refusedConnections: number;
  /** backend dials refused by uWS's full accept queue and repeated (src/gateway/backend-dial.ts) */
  readonly backendRefusals: number;
  /** HTTP/2 sessions and streams open now in this process (zero when HTTP/2 is off; absent for worker processes) */
  readonly http2?: { readonly sessions: number; readonly streams: number; readonly backendConnections: number };
  /** serve a client TCP socket accepted elsewhere (e.g. by the parent process); refused beyond `maxConnections` */
  adopt(socket: Socket): void;
  close(opts?: TlsCloseOptions): Promise<void>;
}

/**
 * The accept queue: as long as the kernel allows (it caps this at
 * net.core.somaxconn, which is what Go's listeners ask for). Node's default
 * of 511 overflowed when an overload opened 640 connections at once: a
 * dropped SYN costs its client a retransmission 1, 3, 7 s later, which is
 * how a fresh health probe took 10 s (docs/reliability.md).
 */
export const LISTEN_BACKLOG = 65_535;

/** see TlsFrontOptions.handshakeTimeoutMs and src/server/request-limits.ts */
export const DEFAULT_HANDSHAKE_TIMEOUT_MS = 32_000;
/**
 * How long a session ticket resumes (seconds): OpenSSL's own default (2 h),
 * Node lowers it to 5 min. A resumed session skips the certificate checks,
 * so the registry re-checks the certificate's expiry on resumption
 * (src/gateway/tls-connections.ts); docs/tls.md "Session resumption".
 */
export const SESSION_TIMEOUT_S = 7200;

/** see TlsFrontOptions.requestBodyTimeoutMs */
const DEFAULT_BODY_TIMEOUT_MS = 60_000;

export async function startTlsFront(opts: TlsFrontOptions): Promise<TlsFront> {
  const clock = opts.clock ?? systemClock;
  const hasClientCA = opts.clientCA !== undefined && String(opts.clientCA).trim() !== '';
  const connections = new TlsConnectionRegistry(hasClientCA, clock);
  const backends = new Set<Socket>();
  /** every accepted TCP socket, including those still in the handshake, so that close() can end them */
  const accepted = new Set<Socket>();
  let handshakeErrors = 0;
  let backendRefusals = 0;
  /** set while close() waits for the last connections to finish */
  let checkDrained: (() => void) | undefined;
  let closing: Promise<void> | undefined;
  let boundPort = 0;

  const bridge: H2Sessions | undefined =
    opts.http2 === false
      ? undefined
      : createH2Sessions({
          clock,
          ...(opts.http2MaxStreams !== undefined ? { maxConcurrentStreams: opts.http2MaxStreams } : {}),
          ...(opts.answerH2Probe ? { answerProbe: (headers, key) => opts.answerH2Probe!(headers, connections.peerFor(key)) } : {}),
          forwarder: opts.muxSocketPath
            ? createH2MuxClient({ socketPath: opts.muxSocketPath, onClosed: () => checkDrained?.() })
            : createH2Bridge({
                backendSocketPath: opts.backendSocketPath,
                // a backend connection costs about what a client connection does: they share the budget
                mayOpenBackend: () => accepted.size + (bridge?.backendConnections ?? 0) < maxConnections,
                onBackendClosed: () => checkDrained?.(),
                onBackendRefused: () => http1.backendRefused(),
              }),
        });

  // HTTP/1.1 over the multiplexed channel (docs/tls.md "HTTP/1.1 over the multiplexed channel")
  const h1Channel = opts.muxSocketPath && opts.http1OverMux !== false ? createH1MuxChannel(opts.muxSocketPath, () => checkDrained?.()) : undefined;
  /** HTTP/1.1 channel connections, to end the idle ones when the front closes */
  const h1Idle = new Set<() => void>();

  const server: Server = createServer({
    key: opts.key,
    cert: opts.cert,
    ...(hasClientCA ? { ca: opts.clientCA } : {}),
    // Ask for a certificate but accept connections without one or with one
    // that does not verify: such clients may still authenticate by token or
    // be anonymous; an unverified certificate is answered 401 by the gateway.
    requestCert: true,
    rejectUnauthorized: false,
    // h2 first, as Go clients (kubectl, client-go) prefer it; HTTP/2 is
    // terminated here and bridged to uWS, which speaks HTTP/1.1 only.
    ALPNProtocols: bridge ? ['h2', 'http/1.1'] : ['http/1.1'],
    minVersion: 'TLSv1.2',
    // Resumption (TLS 1.3 tickets, TLS 1.2 tickets): the ticket carries the
    // client certificate and its verification result, so a resumed
    // connection has the same identity (tested in test/unit/tls-resumption.test.ts).
    ...(opts.ticketKeys ? { ticketKeys: opts.ticketKeys } : {}),
    sessionTimeout: SESSION_TIMEOUT_S,
    // The same in every worker process and every run of this server with
    // these credentials (Node's default hashes process.argv); a session of
    // another server never resumes here anyway: its ticket does not decrypt.
    sessionIdContext: sessionIdContextFor(opts.cert, opts.clientCA),
    // Node closes the socket and reports a tlsClientError (counted below) at the deadline
    handshakeTimeout: opts.handshakeTimeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS,
    noDelay: true,
    // Detect vanished peers on long-lived watch connections.
    keepAlive: true,
    keepAliveInitialDelay: 60_000,
  });

  const maxConnections = opts.maxConnections ?? defaultMaxConnections(opts.fdsPerConnection);
  /** connections handed over by `adopt` and open: Node's accept-time check does not count them */
  let adoptedOpen = 0;
  // Node's check is `_connections >= maxConnections` on its own accepts only,
  // and a 0 there means no limit: -1 refuses every accept once adopted ones fill the cap.
  const applyCap = (): void => {
    server.maxConnections = maxConnections - adoptedOpen > 0 ? maxConnections - adoptedOpen : -1;
  };
  applyCap();
  // Node closes a connection beyond maxConnections as it accepts it: the
  // client sees its connection end before the handshake, refused rather
  // than left waiting (docs/reliability.md "Connections per TLS worker").
  let refusedConnections = 0;
  const refused = (): void => {
    refusedConnections++;
    opts.onConnectionRefused?.();
  };
  server.on('drop', refused);

  server.on('tlsClientError', (_err: Error, socket: TLSSocket) => {
    handshakeErrors++;
    opts.onHandshakeError?.();
    // Node reports a failed or timed-out handshake here but leaves the socket
    // open: without this a client that stalls in the handshake held its
    // connection (and a maxConnections slot) until the server exited.
    socket.destroy();
  });

  server.on('connection', (raw: Socket) => {
    accepted.add(raw);
    raw.once('close', () => accepted.delete(raw));
  });

  const clientClosed = (key: string): void => {
    connections.delete(key);
    if (opts.register) opts.unregister?.(key);
    checkDrained?.();
  };
  const infoOf = (key: string) => (): TlsConnectionInfo => connections.infoFor(key) ?? { remoteAddress: undefined, remotePort: undefined, peer: undefined };

  // An HTTP/2 connection: its identity is registered once (as for HTTP/1.1),
  // then every stream goes to uWS over backend connections that all carry
  // this connection's PROXY header.
  const serveHttp2 = (b: H2Sessions, tlsSocket: TLSSocket, key: string, header: Buffer): void => {
    tlsSocket.on('error', () => tlsSocket.destroy());
    tlsSocket.on('close', () => clientClosed(key));
    if (!opts.register) {
      b.serve(tlsSocket, key, header);
      return;
    }
    const registered = opts.register(key, infoOf(key)());
    if (opts.answerH2Probe) {
      // probes are answered at once; streams for the main process wait for the registration (h2-sessions.ts)
      registered.catch(() => tlsSocket.destroy());
      b.serve(tlsSocket, key, header, registered);
      return;
    }
    registered.then(
      () => {
        if (!tlsSocket.destroyed) b.serve(tlsSocket, key, header);
      },
      () => tlsSocket.destroy(),
    );
  };

  const http1 = {
    clock,
    backendSocketPath: opts.backendSocketPath,
    register: opts.register,
    backendIdleMs: opts.backendIdleMs ?? BACKEND_IDLE_MS,
    headHoldMs: opts.headHoldMs ?? HEAD_HOLD_MS,
    closing: () => closing !== undefined,
    backendOpened: (b: Socket) => {
      backends.add(b);
      b.on('close', () => {
        backends.delete(b);
        checkDrained?.();
      });
    },
    clientClosed,
    answerProbe: opts.answerProbe,
    backendRefused: () => {
      backendRefusals++;
      opts.onBackendRefused?.();
    },
  };

  const h1Mux: Omit<H1MuxContext, 'handOver'> | undefined = h1Channel
    ? {
        clock,
        channel: h1Channel,
        headHoldMs: http1.headHoldMs,
        bodyTimeoutMs: opts.requestBodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS,
        bodyTimedOut: timeoutResponse,
        idleMs: IDLE_CONNECTION_MS,
        answerProbe: opts.answerProbe,
        closing: () => closing !== undefined,
        clientClosed,
        track: (endIfIdle) => {
          h1Idle.add(endIfIdle);
          return () => h1Idle.delete(endIfIdle);
        },
      }
    : undefined;

  server.on('secureConnection', (tlsSocket: TLSSocket) => {
    const id = newConnectionId();
    const key = proxiedAddressFor(id);
    const header = encodeProxyV2Header(id, PROXY_DESTINATION, tlsSocket.remotePort ?? 0, boundPort);
    connections.add(key, tlsSocket);
    if (bridge && tlsSocket.alpnProtocol === 'h2') serveHttp2(bridge, tlsSocket, key, header);
    else if (h1Mux) {
      const info = infoOf(key);
      const registered = opts.register?.(key, info());
      serveHttp1Mux({ ...h1Mux, handOver: (initial, ended) => serveHttp1(http1, tlsSocket, key, header, info, { initial, ended }) }, tlsSocket, key, info, registered);
    } else serveHttp1(http1, tlsSocket, key, header, infoOf(key));
  });

  await new Promise<void>((resolve, reject) => {
    const onError = (err: Error): void => reject(err);
    server.once('error', onError);
    const onListening = (): void => {
      server.off('error', onError);
      resolve();
    };
    if (opts.listenHandle) server.listen(opts.listenHandle, LISTEN_BACKLOG, onListening);
    else server.listen(opts.port, opts.host, LISTEN_BACKLOG, onListening);
  });
  const address = server.address();
  boundPort = typeof address === 'object' && address !== null ? address.port : opts.port;
  // Errors after listening (e.g. EMFILE on accept) must not crash the process.
  server.on('error', () => undefined);

  return {
    get port() {
      return boundPort;
    },
    get connections() {
      return connections.size;
    },
    get handshakeErrors() {
      return handshakeErrors;
    },
    get refusedConnections() {
      return refusedConnections;
    },
    get backendRefusals() {
      return backendRefusals;
    },
    get http2() {
      return { sessions: bridge?.sessions ?? 0, streams: bridge?.streams ?? 0, backendConnections: bridge?.backendConnections ?? 0 };
    },
    peerFor(text) {
      return connections.peerFor(text);
    },
    adopt(socket) {
      if (closing || accepted.size >= maxConnections) {
        if (!closing) refused();
        socket.destroy();
        return;
      }
      adoptedOpen++;
      applyCap();
      socket.once('close', () => {
        adoptedOpen--;
        applyCap();
      });
      // The same path as a connection accepted here ('connection' wraps it in TLS).
      server.emit('connection', socket);
    },
    connectionFor(text) {
      return connections.connectionFor(text);
    },
    close(closeOpts = {}) {
      closing ??= new Promise<void>((resolve) => {
        const destroyAll = (): void => {
          connections.destroyAll();
          for (const raw of accepted) raw.destroy();
          for (const b of backends) b.destroy();
          bridge?.destroy();
          h1Channel?.destroy();
        };
        let timer: TimerHandle | undefined;
        let serverClosed = false;
        // Done when the listener is closed and every connection pair has
        // finished its own 'close' handling (map entry and backend gone).
        checkDrained = () => {
          if (!serverClosed || connections.size > 0 || backends.size > 0 || (bridge?.backendConnections ?? 0) > 0) return;
          timer?.cancel();
          checkDrained = undefined;
          // the HTTP/2 channel outlives its last stream: drop it with the front
          bridge?.destroy();
          h1Channel?.destroy();
          resolve();
        };
        server.close(() => {
          serverClosed = true;
          checkDrained?.();
        });
        // HTTP/2 clients get GOAWAY: running streams finish, new requests go elsewhere
        bridge?.closeSessions();
        // idle HTTP/1.1 channel connections end now; busy ones after their answers
        for (const endIfIdle of [...h1Idle]) endIfIdle();
        if (!closeOpts.graceful) destroyAll();
        else if (closeOpts.timeoutMs !== undefined) {
          timer = clock.setTimeout(destroyAll, closeOpts.timeoutMs);
        }
      });
      return closing;
    },
  };
}

/** 32 hex digits naming this server's TLS settings for session resumption (SSL_CTX_set_session_id_context, at most 32 bytes) */
function sessionIdContextFor(cert: string | Buffer, clientCA: string | Buffer | undefined): string {
  return createHash('sha256').update(cert).update('\0').update(clientCA ?? '').digest('hex').slice(0, 32);
}

/** descriptors per client connection in-process: the TLS socket and both ends of the unix-socket pair */
const FDS_PER_CONNECTION = 3;
/** descriptors kept for everything else (store files, peers, logs) */
const RESERVED_FDS = 512;

/** how many client connections the soft open-files limit allows (Linux: /proc/self/limits) */
export function defaultMaxConnections(fdsPerConnection = FDS_PER_CONNECTION): number {
  try {
    const limits = readFileSync('/proc/self/limits', 'utf8');
    const m = /^Max open files\s+(\d+|unlimited)/m.exec(limits);
    if (m && m[1] !== 'unlimited') return Math.max(16, Math.floor((Number(m[1]) - RESERVED_FDS) / fdsPerConnection));
  } catch {
    // not Linux: no limit known
  }
  return 100_000;
}
