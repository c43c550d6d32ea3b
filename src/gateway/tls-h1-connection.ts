// One HTTP/1.1 client connection of the TLS front (src/gateway/tls-front.ts):
// its bytes go to the uWS backend over a unix-socket connection that starts
// with the connection's PROXY v2 header, and uWS's bytes come back through
// the response chunk framer (src/gateway/response-chunk-framer.ts).
//
// Besides forwarding, this owns two rules:
// - keep-alive across uWS's fixed ~10 s idle close: a backend close after a
//   quiet spell with every response complete is not passed on to the client;
//   the next request goes to a fresh backend connection with the same header
//   (so the same identity), until the client connection itself has been idle
//   for IDLE_CONNECTION_MS (kube-apiserver's 90 s);
// - linger: when uWS answers and closes (413, request deadline, slow head),
//   what the client still sends is read and dropped for a moment, so the
//   client reads the answer instead of a reset.
import { type Clock } from '../core/clock.js';
import { connect as netConnect, type Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { HeadCoalescer } from './request-head-coalescer.js';
import { ResponseChunkFramer } from './response-chunk-framer.js';
import type { TlsConnectionInfo } from './tls-connections.js';

/** how long a client's further bytes are read and dropped after the backend closed its connection */
const LINGER_MS = 2000;
/** uWS closes HTTP connections idle for 10 s; a backend close after this much silence is that idle close */
const UWS_IDLE_CLOSE_MIN_MS = 8_000;
/** a client connection idle this long is closed (kube-apiserver's http.Server IdleTimeout) */
export const IDLE_CONNECTION_MS = 90_000;

/** what a connection needs of the front that accepted it */
export interface Http1FrontContext {
  clock: Clock;
  backendSocketPath: string;
  /** see TlsFrontOptions.register; undefined in-process */
  register: ((key: string, info: TlsConnectionInfo) => Promise<void>) | undefined;
  /** the front is closing: no backend connection is replaced any more */
  closing(): boolean;
  /** a backend connection opened; the front destroys it on a hard close and waits for it on a graceful one */
  backendOpened(b: Socket): void;
  /** called once the client connection has closed and its entry is gone */
  clientClosed(key: string): void;
}

/**
 * Forwards one HTTP/1.1 TLS connection (named `key`, announced to uWS by
 * `header`) to the backend.
 *
 * Bytes move by plain data handlers, not `pipe()` through Transform streams:
 * per request that saved a stream hop in each direction (buffering, events,
 * callbacks) in the TLS worker processes. Back-pressure is explicit and the
 * same as pipe()'s: a write that returns false pauses the other side until
 * 'drain' (a slow reader stops uWS, a slow backend stops the client).
 */
export function serveHttp1(front: Http1FrontContext, tlsSocket: TLSSocket, key: string, header: Buffer, info: () => TlsConnectionInfo): void {
  const { clock } = front;
  let failed = false;
  let backend: Socket | undefined;
  let coalescer: HeadCoalescer | undefined;
  /** client bytes flow to the backend (after the registration, until the linger) */
  let forwarding = false;
  /** the backend has closed for good: what the client sends is dropped */
  let lingering = false;
  const fail = (): void => {
    if (failed) return;
    failed = true;
    tlsSocket.destroy();
    backend?.destroy();
  };
  tlsSocket.on('error', fail);
  tlsSocket.on('close', () => {
    coalescer?.destroy();
    // Nobody is left to read what the backend might still send.
    backend?.destroy();
    front.clientClosed(key);
  });
  // uWS's chunk framing, made complete per write (src/gateway/response-chunk-framer.ts)
  const framer = new ResponseChunkFramer();
  // a slow client: stop reading uWS until the TLS socket has sent what it holds
  tlsSocket.on('drain', () => backend?.resume());

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
      !front.closing() &&
      !failed &&
      !tlsSocket.destroyed &&
      framer.betweenResponses &&
      lastClientAt <= lastBackendAt &&
      now - lastTraffic >= UWS_IDLE_CLOSE_MIN_MS &&
      now - idleSince < IDLE_CONNECTION_MS
    );
  };

  // client → backend, through the head coalescer (the PROXY header goes out
  // with the first bytes; src/gateway/request-head-coalescer.ts)
  const onClientData = (chunk: Buffer): void => {
    if (!forwarding) return;
    lastClientAt = clock.now();
    idleSince = lastClientAt;
    coalescer!.write(chunk);
  };
  const onClientEnd = (): void => {
    if (!forwarding) return;
    coalescer!.end();
    backend?.end();
  };
  const startForwarding = (): void => {
    if (lingering) return;
    forwarding = true;
    tlsSocket.on('data', onClientData);
    tlsSocket.on('end', onClientEnd);
  };

  const dial = (first: boolean): void => {
    const b = netConnect({ path: front.backendSocketPath });
    backend = b;
    front.backendOpened(b);
    b.on('error', fail);
    // The header goes first, in the same write as the first request bytes (uWS
    // reads a head split over several reads only up to 4 KiB); writes made
    // before the unix socket connects are buffered in order.
    coalescer?.destroy();
    coalescer = new HeadCoalescer(
      (out) => {
        if (!b.write(out)) tlsSocket.pause();
      },
      header,
      clock,
    );
    b.on('drain', () => {
      if (backend === b && forwarding) tlsSocket.resume();
    });
    b.on('data', (chunk: Buffer) => {
      lastBackendAt = clock.now();
      idleSince = lastBackendAt;
      if (tlsSocket.destroyed) return;
      const out = framer.frame(chunk);
      if (out && !tlsSocket.write(out)) b.pause();
    });
    b.on('close', () => {
      if (backend !== b) return;
      if (backendIdleClose()) {
        // what the client sends next goes to a fresh backend connection
        tlsSocket.resume();
        dial(false);
        return;
      }
      // Every byte of a clean backend end has been passed on ('close' follows
      // the last 'data'); end() closes the client side politely, after what
      // the TLS socket still holds.
      if (!tlsSocket.destroyed && !tlsSocket.writableEnded) {
        const rest = framer.finish();
        if (rest) tlsSocket.end(rest);
        else tlsSocket.end();
      }
      lingerAfterBackend();
    });
    // Nothing (not even the header) goes to the backend before the first
    // client bytes are read, so not reading the TLS socket holds back the
    // whole connection until the registration is acknowledged; meanwhile the
    // TLS socket buffers and then stops reading.
    if (!first || !front.register) {
      if (first) startForwarding();
      return;
    }
    front.register(key, info()).then(
      () => {
        if (!failed && !tlsSocket.destroyed) startForwarding();
      },
      fail,
    );
  };

  // The backend closed (uWS answered and closed: a 413, a request deadline,
  // a slow head) while the client may still be sending. Forwarding that
  // to the closed backend failed the connection with a reset, and a reset
  // can make the client drop the answer it has not read yet. Instead what
  // the client still sends is read and dropped for a moment after the
  // answer (Go's net/http does the same before closing).
  const lingerAfterBackend = (): void => {
    if (tlsSocket.destroyed) return;
    lingering = true;
    coalescer?.destroy();
    if (!forwarding) tlsSocket.on('data', () => undefined);
    forwarding = false;
    tlsSocket.resume();
    clock.setTimeout(() => tlsSocket.destroy(), LINGER_MS);
  };

  dial(true);
}
