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
import { RequestHeadCoalescer } from './request-head-coalescer.js';
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

/** Forwards one HTTP/1.1 TLS connection (named `key`, announced to uWS by `header`) to the backend. */
export function serveHttp1(front: Http1FrontContext, tlsSocket: TLSSocket, key: string, header: Buffer, info: () => TlsConnectionInfo): void {
  const { clock } = front;
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
    // Nobody is left to read what the backend might still send.
    backend?.destroy();
    front.clientClosed(key);
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
      !front.closing() &&
      !failed &&
      !tlsSocket.destroyed &&
      framer.betweenResponses &&
      lastClientAt <= lastBackendAt &&
      now - lastTraffic >= UWS_IDLE_CLOSE_MIN_MS &&
      now - idleSince < IDLE_CONNECTION_MS
    );
  };

  const dial = (first: boolean): void => {
    const b = netConnect({ path: front.backendSocketPath });
    backend = b;
    front.backendOpened(b);
    b.on('error', fail);
    b.on('data', () => {
      lastBackendAt = clock.now();
      idleSince = lastBackendAt;
    });
    b.on('close', () => {
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
    if (!first || !front.register) tlsSocket.pipe(c);
    else {
      front.register(key, info()).then(
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
}
