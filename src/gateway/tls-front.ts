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
// This sits on the watch fan-out path (many long-lived connections), so the
// per-connection state is one map entry holding the socket; the certificate
// is decoded lazily on the first lookup and then cached.
import { type Clock, type TimerHandle, systemClock } from '../core/clock.js';
import { randomFillSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connect as netConnect, type Server as NetServer, type Socket } from 'node:net';
import { createServer, type Server, type TLSSocket } from 'node:tls';
import type { PeerCertificate } from '../auth/types.js';
import { createH2Bridge, type H2Bridge } from './h2-bridge.js';
import { RequestHeadCoalescer } from './request-head-coalescer.js';
import { ResponseChunkFramer } from './response-chunk-framer.js';

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
  /**
   * A TCP connection that has not completed its TLS handshake by then is
   * closed (default 32 s as in kube, `--tls-handshake-timeout`): a client that opens
   * connections and stalls in the handshake holds no slot for long.
   */
  handshakeTimeoutMs?: number;
  /**
   * Serve HTTP/2 to clients that offer `h2` by ALPN (default true), bridged
   * stream by stream to the uWS backend (src/gateway/h2-bridge.ts); false
   * offers only HTTP/1.1.
   */
  http2?: boolean;
  /** SETTINGS_MAX_CONCURRENT_STREAMS (kube `--http2-max-streams-per-connection`; default 1000) */
  http2MaxStreams?: number;
}

/** A listening socket: a net.Server, or the raw libuv handle a parent process sent. */
export type ListenHandle = NetServer | object;

export interface TlsConnectionInfo {
  /** the client's real address, for audit and logs */
  remoteAddress: string | undefined;
  remotePort: number | undefined;
  peer: PeerCertificate | undefined;
}

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
  /** HTTP/2 sessions and streams open now in this process (zero when HTTP/2 is off; absent for worker processes) */
  readonly http2?: { readonly sessions: number; readonly streams: number; readonly backendConnections: number };
  /** serve a client TCP socket accepted elsewhere (e.g. by the parent process); refused beyond `maxConnections` */
  adopt(socket: Socket): void;
  close(opts?: TlsCloseOptions): Promise<void>;
}

// --- PROXY protocol v2 (haproxy proxy-protocol.txt §2.2) --------------------

const PROXY_V2_SIGNATURE = Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a]);
/** version 2, command PROXY */
const PROXY_V2_VERSION_COMMAND = 0x21;
/** AF_INET6, SOCK_STREAM */
const PROXY_V2_TCP6 = 0x21;
const IPV6_ADDRESS_BLOCK_LENGTH = 36;
export const PROXY_V2_TCP6_HEADER_LENGTH = 16 + IPV6_ADDRESS_BLOCK_LENGTH;
const SRC_OFFSET = 16;
const DST_OFFSET = 32;
const SRC_PORT_OFFSET = 48;
const DST_PORT_OFFSET = 50;
/** first byte of every connection id: the IPv6 unique-local range fd00::/8 */
const ID_PREFIX = 0xfd;
/** destination address written into every header (fd00::1); uWS ignores it */
const DESTINATION = Buffer.from('fd000000000000000000000000000001', 'hex');

/** A PROXY v2 TCP-over-IPv6 header. */
export function encodeProxyV2Header(src: Uint8Array, dst: Uint8Array, srcPort: number, dstPort: number): Buffer {
  if (src.length !== 16 || dst.length !== 16) throw new Error('PROXY v2 IPv6 addresses are 16 bytes');
  const h = Buffer.allocUnsafe(PROXY_V2_TCP6_HEADER_LENGTH);
  PROXY_V2_SIGNATURE.copy(h, 0);
  h[12] = PROXY_V2_VERSION_COMMAND;
  h[13] = PROXY_V2_TCP6;
  h.writeUInt16BE(IPV6_ADDRESS_BLOCK_LENGTH, 14);
  h.set(src, SRC_OFFSET);
  h.set(dst, DST_OFFSET);
  h.writeUInt16BE(srcPort & 0xffff, SRC_PORT_OFFSET);
  h.writeUInt16BE(dstPort & 0xffff, DST_PORT_OFFSET);
  return h;
}

/** A fresh, unguessable connection id: fd followed by 15 random bytes (120 bits). */
export function newConnectionId(): Buffer {
  const id = Buffer.allocUnsafe(16);
  id[0] = ID_PREFIX;
  randomFillSync(id, 1, 15);
  return id;
}

/**
 * The text uWS returns from `getProxiedRemoteAddressAsText()` for a connection
 * id: 8 groups of 4 lowercase hex digits (e.g. `fd00:0000:...:0001:e240`).
 * This is the canonical form the front's map is keyed by.
 */
export function proxiedAddressFor(id: Uint8Array): string {
  if (id.length !== 16) throw new Error('connection id must be 16 bytes');
  const hex = Buffer.from(id.buffer, id.byteOffset, 16).toString('hex');
  let out = hex.slice(0, 4);
  for (let i = 4; i < 32; i += 4) out += ':' + hex.slice(i, i + 4);
  return out;
}

const CANONICAL_RE = /^[0-9a-f]{4}(?::[0-9a-f]{4}){7}$/;

/**
 * Parse any textual IPv6 address (full or `::`-compressed, any case) into the
 * 16-byte connection id, or undefined when it is not an IPv6 address.
 * Embedded IPv4 (`::ffff:1.2.3.4`) is not a connection id and is rejected.
 */
export function parseProxiedAddress(text: string): Buffer | undefined {
  const t = text.toLowerCase();
  if (CANONICAL_RE.test(t)) return Buffer.from(t.replace(/:/g, ''), 'hex');
  const halves = t.split('::');
  if (halves.length > 2) return undefined;
  const parse = (part: string): string[] | undefined => {
    if (part === '') return [];
    const groups = part.split(':');
    return groups.every((g) => /^[0-9a-f]{1,4}$/.test(g)) ? groups : undefined;
  };
  const head = parse(halves[0]!);
  const tail = halves.length === 2 ? parse(halves[1]!) : [];
  if (!head || !tail) return undefined;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...tail];
  return Buffer.from(groups.map((g) => g.padStart(4, '0')).join(''), 'hex');
}

function canonicalKey(text: string): string | undefined {
  if (text.length === 39 && CANONICAL_RE.test(text)) return text;
  const id = parseProxiedAddress(text);
  return id ? proxiedAddressFor(id) : undefined;
}

// --- the front ---------------------------------------------------------------

/** see TlsFrontOptions.handshakeTimeoutMs and src/server/request-limits.ts */
export const DEFAULT_HANDSHAKE_TIMEOUT_MS = 32_000;
/** how long a client's further bytes are read and dropped after the backend closed its connection */
const LINGER_MS = 2000;
/** uWS closes HTTP connections idle for 10 s; a backend close after this much silence is that idle close */
const UWS_IDLE_CLOSE_MIN_MS = 8_000;
/** a client connection idle this long is closed (kube-apiserver's http.Server IdleTimeout) */
const IDLE_CONNECTION_MS = 90_000;

interface Connection {
  socket: TLSSocket;
  /** undefined = not decoded yet; null = no certificate presented */
  peer: PeerCertificate | null | undefined;
}

export async function startTlsFront(opts: TlsFrontOptions): Promise<TlsFront> {
  const clock = opts.clock ?? systemClock;
  const hasClientCA = opts.clientCA !== undefined && String(opts.clientCA).trim() !== '';
  const connections = new Map<string, Connection>();
  const backends = new Set<Socket>();
  /** every accepted TCP socket, including those still in the handshake, so that close() can end them */
  const accepted = new Set<Socket>();
  let handshakeErrors = 0;
  /** set while close() waits for the last connections to finish */
  let checkDrained: (() => void) | undefined;
  let boundPort = 0;

  const peerOf = (c: Connection): PeerCertificate | undefined => {
    if (c.peer === undefined) c.peer = decodePeer(c.socket, hasClientCA);
    return c.peer ?? undefined;
  };

  const bridge: H2Bridge | undefined =
    opts.http2 === false
      ? undefined
      : createH2Bridge({
          backendSocketPath: opts.backendSocketPath,
          clock,
          ...(opts.http2MaxStreams !== undefined ? { maxConcurrentStreams: opts.http2MaxStreams } : {}),
          // a backend connection costs about what a client connection does: they share the budget
          mayOpenBackend: () => accepted.size + (bridge?.backendConnections ?? 0) < (server.maxConnections ?? Infinity),
          onBackendClosed: () => checkDrained?.(),
        });

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
    // Node closes the socket and reports a tlsClientError (counted below) at the deadline
    handshakeTimeout: opts.handshakeTimeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS,
    noDelay: true,
    // Detect vanished peers on long-lived watch connections.
    keepAlive: true,
    keepAliveInitialDelay: 60_000,
  });

  server.maxConnections = opts.maxConnections ?? defaultMaxConnections(opts.fdsPerConnection);

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

  // An HTTP/2 connection: its identity is registered once (as for HTTP/1.1),
  // then every stream goes to uWS over backend connections that all carry
  // this connection's PROXY header.
  const serveHttp2 = (b: H2Bridge, tlsSocket: TLSSocket, key: string, header: Buffer, conn: Connection): void => {
    tlsSocket.on('error', () => tlsSocket.destroy());
    tlsSocket.on('close', () => {
      connections.delete(key);
      if (opts.register) opts.unregister?.(key);
      checkDrained?.();
    });
    if (!opts.register) {
      b.serve(tlsSocket, key, header);
      return;
    }
    const info = { remoteAddress: tlsSocket.remoteAddress, remotePort: tlsSocket.remotePort, peer: peerOf(conn) };
    opts.register(key, info).then(
      () => {
        if (!tlsSocket.destroyed) b.serve(tlsSocket, key, header);
      },
      () => tlsSocket.destroy(),
    );
  };

  server.on('secureConnection', (tlsSocket: TLSSocket) => {
    const id = newConnectionId();
    const key = proxiedAddressFor(id);
    const header = encodeProxyV2Header(id, DESTINATION, tlsSocket.remotePort ?? 0, boundPort);
    const conn: Connection = { socket: tlsSocket, peer: undefined };
    connections.set(key, conn);

    if (bridge && tlsSocket.alpnProtocol === 'h2') {
      serveHttp2(bridge, tlsSocket, key, header, conn);
      return;
    }

    let failed = false;
    let backend: Socket | undefined;
    let coalescer: RequestHeadCoalescer | undefined;
    const fail = (): void => {
      if (failed) return;
      failed = true;
      tlsSocket.destroy();
      backend?.destroy();
    };
    tlsSocket.on('error', fail);
    tlsSocket.on('close', () => {
      connections.delete(key);
      if (opts.register) opts.unregister?.(key);
      // Nobody is left to read what the backend might still send.
      backend?.destroy();
      checkDrained?.();
    });
    // uWS's chunk framing, made complete per write (src/gateway/response-chunk-framer.ts)
    const framer = new ResponseChunkFramer();
    framer.on('error', fail);
    framer.pipe(tlsSocket);

    // Keep-alive across uWS's fixed idle close. uWS closes an HTTP connection
    // after ~10 s without traffic, far shorter than kube-apiserver's 90 s idle
    // timeout; clients renewing every 10 s (node Leases) then raced the close
    // and got resets. When the backend closes a connection that was idle (every
    // response complete, no client byte since the last one, quiet for most of
    // uWS's bound), the client connection stays and a new backend connection
    // (same PROXY header, so the same identity) takes over. After
    // IDLE_CONNECTION_MS of idleness the client connection is closed too.
    let lastClientAt = 0;
    let lastBackendAt = 0;
    let idleSince = clock.now();
    const backendIdleClose = (): boolean => {
      const now = clock.now();
      const lastTraffic = Math.max(lastClientAt, lastBackendAt);
      return (
        closing === undefined &&
        !failed &&
        !tlsSocket.destroyed &&
        framer.betweenResponses &&
        lastClientAt <= lastBackendAt &&
        now - lastTraffic >= UWS_IDLE_CLOSE_MIN_MS &&
        now - idleSince < IDLE_CONNECTION_MS
      );
    };

    const dial = (first: boolean): void => {
      const b = netConnect({ path: opts.backendSocketPath });
      backend = b;
      backends.add(b);
      b.on('error', fail);
      b.on('data', () => {
        lastBackendAt = clock.now();
        idleSince = lastBackendAt;
      });
      b.on('close', () => {
        backends.delete(b);
        checkDrained?.();
        if (backend !== b) return;
        if (backendIdleClose()) {
          // what the client sends next goes to a fresh backend connection
          if (coalescer) tlsSocket.unpipe(coalescer);
          dial(false);
          return;
        }
        // A clean backend end has been forwarded through the framer (pipes
        // flush buffered data first); end() closes the client side politely,
        // after what the framer holds.
        if (!tlsSocket.destroyed && !framer.writableEnded) framer.end();
        lingerAfterBackend();
      });
      // The header goes first, in the same write as the first request bytes (uWS
      // reads a head split over several reads only up to 4 KiB); writes made
      // before the unix socket connects are buffered in order. pipe() gives
      // back-pressure in both directions.
      const c = new RequestHeadCoalescer(header, clock);
      coalescer = c;
      c.on('error', fail);
      c.on('data', () => {
        lastClientAt = clock.now();
        idleSince = lastClientAt;
      });
      c.pipe(b);
      b.pipe(framer, { end: false });
      // The coalescer writes nothing (not even the header) before the first
      // client bytes, so holding back only this pipe holds back the whole
      // connection until the registration is acknowledged; meanwhile the TLS
      // socket buffers and then stops reading.
      if (!first || !opts.register) tlsSocket.pipe(c);
      else {
        const info = { remoteAddress: tlsSocket.remoteAddress, remotePort: tlsSocket.remotePort, peer: peerOf(conn) };
        opts.register(key, info).then(
          () => {
            if (!failed && !tlsSocket.destroyed) tlsSocket.pipe(c);
          },
          fail,
        );
      }
    };

    // The backend closed (uWS answered and closed: a 413, a request deadline,
    // a slow head) while the client may still be sending. Forwarding that
    // to the closed backend failed the connection with a reset, and a reset
    // can make the client drop the answer it has not read yet. Instead what
    // the client still sends is read and dropped for a moment after the
    // answer (Go's net/http does the same before closing).
    const lingerAfterBackend = (): void => {
      if (tlsSocket.destroyed) return;
      if (coalescer) tlsSocket.unpipe(coalescer);
      tlsSocket.on('data', () => undefined);
      tlsSocket.resume();
      clock.setTimeout(() => tlsSocket.destroy(), LINGER_MS);
    };

    dial(true);
  });

  await new Promise<void>((resolve, reject) => {
    const onError = (err: Error): void => reject(err);
    server.once('error', onError);
    const onListening = (): void => {
      server.off('error', onError);
      resolve();
    };
    if (opts.listenHandle) server.listen(opts.listenHandle, onListening);
    else server.listen(opts.port, opts.host, onListening);
  });
  const address = server.address();
  boundPort = typeof address === 'object' && address !== null ? address.port : opts.port;
  // Errors after listening (e.g. EMFILE on accept) must not crash the process.
  server.on('error', () => undefined);

  const lookup = (text: string): Connection | undefined => {
    const direct = connections.get(text);
    if (direct) return direct;
    const key = canonicalKey(text);
    return key === undefined || key === text ? undefined : connections.get(key);
  };

  let closing: Promise<void> | undefined;

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
    get http2() {
      return { sessions: bridge?.sessions ?? 0, streams: bridge?.streams ?? 0, backendConnections: bridge?.backendConnections ?? 0 };
    },
    peerFor(text) {
      const c = lookup(text);
      return c ? peerOf(c) : undefined;
    },
    adopt(socket) {
      if (closing || accepted.size >= (server.maxConnections ?? Infinity)) {
        socket.destroy();
        return;
      }
      // The same path as a connection accepted here ('connection' wraps it in TLS).
      server.emit('connection', socket);
    },
    connectionFor(text) {
      const c = lookup(text);
      if (!c) return undefined;
      return { remoteAddress: c.socket.remoteAddress, remotePort: c.socket.remotePort, peer: peerOf(c) };
    },
    close(closeOpts = {}) {
      closing ??= new Promise<void>((resolve) => {
        const destroyAll = (): void => {
          for (const c of connections.values()) c.socket.destroy();
          for (const raw of accepted) raw.destroy();
          for (const b of backends) b.destroy();
          bridge?.destroy();
        };
        let timer: TimerHandle | undefined;
        let serverClosed = false;
        // Done when the listener is closed and every connection pair has
        // finished its own 'close' handling (map entry and backend gone).
        checkDrained = () => {
          if (!serverClosed || connections.size > 0 || backends.size > 0 || (bridge?.backendConnections ?? 0) > 0) return;
          timer?.cancel();
          checkDrained = undefined;
          resolve();
        };
        server.close(() => {
          serverClosed = true;
          checkDrained?.();
        });
        // HTTP/2 clients get GOAWAY: running streams finish, new requests go elsewhere
        bridge?.closeSessions();
        if (!closeOpts.graceful) destroyAll();
        else if (closeOpts.timeoutMs !== undefined) {
          timer = clock.setTimeout(destroyAll, closeOpts.timeoutMs);
        }
      });
      return closing;
    },
  };
}

/** What the handshake established about the client certificate, or null when none was presented. */
function decodePeer(socket: TLSSocket, hasClientCA: boolean): PeerCertificate | null {
  const cert = socket.getPeerCertificate(false);
  if (!cert || !cert.raw) return null;
  const subject = (cert.subject ?? {}) as unknown as Record<string, string | string[] | undefined>;
  const verified = hasClientCA && socket.authorized;
  let verifyError: string | undefined;
  if (!hasClientCA) verifyError = 'no client certificate authority configured';
  else if (!verified) verifyError = String(socket.authorizationError ?? 'certificate not verified');
  return {
    verified,
    ...(verifyError !== undefined ? { verifyError } : {}),
    commonName: firstValue(subject['CN']) ?? '',
    organizations: allValues(subject['O']),
    raw: new Uint8Array(cert.raw),
  };
}

function firstValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

function allValues(v: string | string[] | undefined): string[] {
  if (v === undefined) return [];
  return Array.isArray(v) ? [...v] : [v];
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
