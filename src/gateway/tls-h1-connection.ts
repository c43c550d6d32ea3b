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
// - a full backend accept queue: a dial that uWS's queue refused (EAGAIN,
//   its loop behind) is repeated with the bytes kept here, instead of ending
//   the client's connection under its request (src/gateway/backend-dial.ts);
// - linger: when uWS answers and closes (413, request deadline, slow head),
//   what the client still sends is read and dropped for a moment, so the
//   client reads the answer instead of a reset.
// - health probes (TLS workers, issue #15): a request head that the worker
//   can answer from the main process's health snapshot is answered here,
//   without the backend, as long as no forwarded request is outstanding on
//   the connection (src/gateway/tls-h1-probe-gate.ts).
import { type Clock, type TimerHandle } from '../core/clock.js';
import { connect as netConnect, type Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { ProbeAnswerer, ProbeReply } from './health-probe.js';
import { ProbeGate } from './tls-h1-probe-gate.js';
import { BACKEND_DIAL_PATIENCE_MS, isBacklogFull, redialWaitMs } from './backend-dial.js';
import { HeadCoalescer, headTimeoutResponse } from './request-head-coalescer.js';
import { ResponseChunkFramer } from './response-chunk-framer.js';
import { recordWriterAfterHandshake, type WebSocketRecordWriter } from './ws-record-writer.js';
import { relayToTunnel } from './byte-tunnels.js';
import type { TlsConnectionInfo } from './tls-connections.js';

/** how long a client's further bytes are read and dropped after the backend closed its connection */
const LINGER_MS = 2000;
/** uWS closes HTTP connections idle for 10 s; a backend close after this much silence is that idle close */
const UWS_IDLE_CLOSE_MIN_MS = 8_000;
/**
 * A backend connection idle this long (every response complete, no client
 * byte since) is closed by the front itself, well before uWS's idle close
 * (8–12 s: 10 s counted in 4 s ticks); the client's next request goes to a
 * fresh one. The h2 bridge's pool uses the same bound (src/gateway/h2-bridge.ts).
 */
export const BACKEND_IDLE_MS = 4_000;
/** request bytes held for a backend connection not yet accepted before the client is no longer read */
const UNSENT_LIMIT = 64 * 1024;
/** a client connection idle this long is closed (kube-apiserver's http.Server IdleTimeout) */
export const IDLE_CONNECTION_MS = 90_000;

/** what a connection needs of the front that accepted it */
export interface Http1FrontContext {
  clock: Clock;
  backendSocketPath: string;
  /** see TlsFrontOptions.register; undefined in-process */
  register: ((key: string, info: TlsConnectionInfo) => Promise<void>) | undefined;
  /** see BACKEND_IDLE_MS (tests shorten it) */
  backendIdleMs: number;
  /** see HEAD_HOLD_MS in request-head-coalescer.ts (tests shorten it) */
  headHoldMs: number;
  /** the front is closing: no backend connection is replaced any more */
  closing(): boolean;
  /** a backend connection opened; the front destroys it on a hard close and waits for it on a graceful one */
  backendOpened(b: Socket): void;
  /** a backend dial was refused by uWS's full accept queue and will be repeated (counted) */
  backendRefused?: () => void;
  /** called once the client connection has closed and its entry is gone */
  clientClosed(key: string): void;
  /** answers health probes here (TLS workers); undefined: everything goes to the backend */
  answerProbe: ProbeAnswerer | undefined;
}

/**
 * Forwards one HTTP/1.1 TLS connection (named `key`, announced to uWS by
 * `header`) to the backend.
 *
 * Bytes move by plain data handlers, not `pipe()` through Transform streams,
 * with explicit back-pressure that is the same as pipe()'s: a write that
 * returns false pauses the other side until 'drain' (a slow reader stops
 * uWS, a slow backend stops the client).
 */
export function serveHttp1(
  front: Http1FrontContext,
  tlsSocket: TLSSocket,
  key: string,
  header: Buffer,
  info: () => TlsConnectionInfo,
  /** handed over by the multiplexed-channel path (src/gateway/tls-h1-mux.ts): registered already, these bytes read, the client's end seen */
  adopted?: { initial: Buffer; ended: boolean },
): void {
  const { clock } = front;
  let failed = false;
  /** the backend connection in use; undefined after it was retired idle, until the client sends again */
  let backend: Socket | undefined;
  let coalescer: HeadCoalescer | undefined;
  /** client bytes flow to the backend (after the registration, until the linger) */
  let forwarding = false;
  /** the backend has closed for good: what the client sends is dropped */
  let lingering = false;
  let idleTimer: TimerHandle | undefined;
  const answerProbe = front.answerProbe;
  /** probes answered here (answerProbe set); made below, after what it calls */
  let gate: ProbeGate | undefined;
  /** the parent knows this connection (no register: at once); no byte goes to the backend before */
  let registered = front.register === undefined;
  /** bytes for the backend that wait for `registered` */
  let queued: Buffer[] = [];
  let endQueued = false;
  /** the TLS socket was paused because a probe answer filled its buffer */
  let pausedForAnswer = false;
  const fail = (): void => {
    if (failed) return;
    failed = true;
    tlsSocket.destroy();
    backend?.destroy();
  };
  tlsSocket.on('error', fail);
  tlsSocket.on('close', () => {
    idleTimer?.cancel();
    gate?.cancel();
    coalescer?.destroy();
    // Nobody is left to read what the backend might still send.
    backend?.destroy();
    tunnel?.destroy();
    front.clientClosed(key);
  });
  // uWS's chunk framing, made complete per write (src/gateway/response-chunk-framer.ts)
  const framer = new ResponseChunkFramer();
  /** the connection's writer once uWS switched it to WebSocket */
  let wsWriter: WebSocketRecordWriter | undefined;
  // a slow client: stop reading uWS until the TLS socket has sent what it holds
  tlsSocket.on('drain', () => {
    // an upgraded connection's flow is the record writer's
    if (!wsWriter?.holding) backend?.resume();
    // answers written here (probes) paused the client the same way
    if (pausedForAnswer) {
      pausedForAnswer = false;
      if (forwarding && !lingering && registered) tlsSocket.resume();
    }
  });

  // Keep-alive across uWS's fixed idle close. uWS closes an HTTP connection
  // after ~10 s without traffic, far shorter than kube-apiserver's 90 s idle
  // timeout, and a request the client sent at that moment met a closed
  // backend: the client saw "socket hang up" or a reset (node Leases renew
  // every 10 s; under event-loop lag in the API server uWS's timer sweep can
  // run before it reads the request that already arrived). So the front
  // retires an idle backend connection itself after BACKEND_IDLE_MS (every
  // response complete, no client byte since the last one), long before uWS
  // would, and the client's next bytes open a fresh backend connection (same
  // PROXY header, so the same identity). Should uWS still close an idle one
  // first (a lagging worker), that close is told apart by the same rule and
  // bridged. After IDLE_CONNECTION_MS of idleness the client connection is
  // closed too.
  let lastClientAt = 0;
  let lastBackendAt = 0;
  let idleSince = clock.now();
  const quiet = (): boolean => !front.closing() && !failed && !lingering && !tlsSocket.destroyed && framer.betweenResponses && lastClientAt <= lastBackendAt;
  const backendIdleClose = (): boolean => {
    const now = clock.now();
    return quiet() && now - Math.max(lastClientAt, lastBackendAt) >= UWS_IDLE_CLOSE_MIN_MS && now - idleSince < IDLE_CONNECTION_MS;
  };
  /** (re)arms the one idle timer of this connection for `ms` from now */
  const armIdle = (ms: number): void => {
    idleTimer?.cancel();
    idleTimer = clock.setTimeout(onIdleTimer, Math.max(1, ms));
  };
  const onIdleTimer = (): void => {
    idleTimer = undefined;
    if (failed || lingering || tlsSocket.destroyed) return;
    const now = clock.now();
    const quietFor = now - idleSince;
    if (!quiet()) {
      // a response or a request in progress (a watch, a slow handler): the
      // timer is armed again when a response completes (no timer per watch)
      return;
    }
    if (quietFor >= IDLE_CONNECTION_MS) {
      closeIdleClient();
      return;
    }
    if (backend && quietFor >= front.backendIdleMs) retireBackend();
    armIdle((backend ? front.backendIdleMs : IDLE_CONNECTION_MS) - quietFor);
  };
  /** ends the idle backend connection; the client's next bytes open a fresh one */
  const retireBackend = (): void => {
    // End politely: uWS has nothing of ours unanswered. Its 'close' is not
    // this connection's business any more (backend !== b).
    const b = backend!;
    backend = undefined;
    coalescer?.destroy();
    coalescer = undefined;
    gate?.reset();
    b.end();
  };
  const closeIdleClient = (): void => {
    if (!tlsSocket.writableEnded) tlsSocket.end();
    backend?.end();
    lingerAfterBackend();
  };

  // client → backend, through the head coalescer (the PROXY header goes out
  // with the first bytes; src/gateway/request-head-coalescer.ts)
  const onClientData = (chunk: Buffer): void => {
    if (!forwarding) return;
    const now = clock.now();
    // A request after the backend connection idled past its retirement: the
    // retirement timer ran late (this worker starved of CPU), and uWS's idle
    // close may come at any moment now: a fresh connection instead.
    if (backend && !unsent && quiet() && now - idleSince >= front.backendIdleMs) retireBackend();
    lastClientAt = now;
    idleSince = now;
    if (gate?.active) return gate.take(chunk);
    toBackend(chunk);
  };
  const toBackend = (chunk: Buffer): void => {
    if (!registered) {
      // the parent must know who the connection is from before uWS reads a byte of it
      queued.push(chunk);
      tlsSocket.pause();
      return;
    }
    if (!backend) dial();
    coalescer!.write(chunk);
  };
  const onClientEnd = (): void => {
    if (!forwarding) return;
    if (gate?.active && gate.holding) gate.stop();
    if (!registered) {
      endQueued = true;
      return;
    }
    if (backend) endBackend();
    else if (!tlsSocket.writableEnded) {
      // nothing outstanding (answered here, or the backend retired idle)
      tlsSocket.end();
    }
  };
  /** a probe's answer (ProbeGate) */
  const answered = (reply: ProbeReply): void => {
    const now = clock.now();
    lastBackendAt = now;
    idleSince = now;
    if (reply.close) {
      tlsSocket.end(reply.bytes);
      lingerAfterBackend();
      return;
    }
    // a client that pipelines probes without reading their answers is not read further either
    if (!tlsSocket.write(reply.bytes)) {
      pausedForAnswer = true;
      tlsSocket.pause();
    }
    if (!idleTimer) armIdle(front.backendIdleMs);
  };
  if (answerProbe) {
    gate = new ProbeGate({
      clock,
      answer: answerProbe,
      peer: () => info().peer,
      open: () => !failed && !lingering && !tlsSocket.destroyed,
      forward: toBackend,
      answered,
    });
  }
  const onRegistered = (): void => {
    registered = true;
    // resumed first: a backend write that fills its buffer below pauses the client again
    if (!lingering && !pausedForAnswer) tlsSocket.resume();
    const q = queued;
    queued = [];
    for (const c of q) toBackend(c);
    if (endQueued) {
      endQueued = false;
      if (backend) endBackend();
      else if (!tlsSocket.writableEnded) tlsSocket.end();
    }
  };
  const startForwarding = (): void => {
    if (lingering) return;
    forwarding = true;
    tlsSocket.on('data', onClientData);
    tlsSocket.on('end', onClientEnd);
    armIdle(front.backendIdleMs);
  };

  /**
   * Bytes for a backend connection that uWS has not accepted yet: kept here,
   * not in the socket, so that a dial refused by a full accept queue can be
   * repeated with them (src/gateway/backend-dial.ts). Undefined once accepted.
   */
  let unsent: Buffer[] | undefined;
  let unsentBytes = 0;
  /** the client's end came while the dial was pending: the backend is ended once it is accepted */
  let endUnsent = false;
  let pausedForDial = false;
  const endBackend = (): void => {
    coalescer?.end();
    if (unsent) endUnsent = true;
    else backend?.end();
  };
  const dial = (): void => {
    // The header goes first, in the same write as the first request bytes (uWS
    // reads a head split over several reads only up to 4 KiB).
    coalescer?.destroy();
    unsent = [];
    unsentBytes = 0;
    endUnsent = false;
    coalescer = new HeadCoalescer(
      (out) => {
        if (unsent) {
          unsent.push(out);
          unsentBytes += out.length;
          if (unsentBytes >= UNSENT_LIMIT && !pausedForDial) {
            pausedForDial = true;
            tlsSocket.pause();
          }
        } else if (backend && !backend.write(out)) tlsSocket.pause();
      },
      header,
      clock,
      { holdMs: front.headHoldMs, expired: (first) => first && headTimedOut() },
    );
    connectBackend(0, clock.now());
    // this one is retired in its turn when it idles
    if (forwarding) armIdle(front.backendIdleMs);
  };
  const connectBackend = (refusals: number, since: number): void => {
    const b = netConnect({ path: front.backendSocketPath });
    backend = b;
    front.backendOpened(b);
    /** uWS's accept queue was full: this socket is done with, another dial follows */
    let refused = false;
    b.once('connect', () => {
      if (backend !== b || !unsent) return;
      const out = unsent;
      unsent = undefined;
      let ok = true;
      for (const c of out) ok = b.write(c);
      if (endUnsent) b.end();
      if (ok && pausedForDial) {
        pausedForDial = false;
        if (forwarding && !lingering) tlsSocket.resume();
      }
    });
    // an error on a retired connection is no concern of the client's
    b.on('error', (e) => {
      if (backend !== b) return;
      if (unsent && isBacklogFull(e) && !front.closing() && clock.now() - since < BACKEND_DIAL_PATIENCE_MS) {
        // nothing reached uWS: dial again once its loop may have caught up
        refused = true;
        front.backendRefused?.();
        clock.setTimeout(() => {
          if (backend === b && !failed && !lingering && !tlsSocket.destroyed) connectBackend(refusals + 1, since);
        }, redialWaitMs(refusals + 1));
        return;
      }
      if (framer.betweenResponses && !tlsSocket.destroyed && !tlsSocket.writableEnded) {
        // uWS answered and closed (a 504 at the request deadline, a 413) while the client was
        // still sending: the write of its next bytes failed (EPIPE). What uWS answered is
        // already in the TLS socket's buffer: end it politely, do not destroy it unsent.
        tlsSocket.end();
        lingerAfterBackend();
        return;
      }
      fail();
    });
    b.on('drain', () => {
      if (backend === b && forwarding) {
        pausedForDial = false;
        tlsSocket.resume();
      }
    });
    b.on('data', (chunk: Buffer) => {
      lastBackendAt = clock.now();
      idleSince = lastBackendAt;
      if (tlsSocket.destroyed || backend !== b) return;
      if (wsWriter) return wsWriter.push(chunk);
      const out = framer.frame(chunk);
      if (framer.tunnelToken !== undefined) return handOver(b, out, framer.tunnelToken);
      if (framer.webSocket) {
        // upgraded: one TLS record per frame from here on (src/gateway/ws-record-writer.ts)
        wsWriter = recordWriterAfterHandshake(out, framer.takeWebSocketBytes(), tlsSocket, b);
        return;
      }
      if (out && !tlsSocket.write(out)) b.pause();
      if (!idleTimer && forwarding && framer.betweenResponses) armIdle(front.backendIdleMs);
    });
    b.on('close', () => {
      if (backend !== b || refused) return;
      if (backendIdleClose()) {
        // uWS's idle close came first: the client's next bytes open a fresh backend connection
        backend = undefined;
        coalescer?.destroy();
        coalescer = undefined;
        gate?.reset();
        tlsSocket.resume();
        return;
      }
      // Every byte of a clean backend end has been passed on ('close' follows
      // the last 'data'); end() closes the client side politely, after what
      // the TLS socket still holds.
      if (!tlsSocket.destroyed && !tlsSocket.writableEnded) {
        const rest = framer.finish();
        if (wsWriter) wsWriter.end();
        else if (rest) tlsSocket.end(rest);
        else tlsSocket.end();
      }
      lingerAfterBackend();
    });
  };

  // A SPDY/3.1 upgrade (src/gateway/byte-tunnels.ts): uWS answered the
  // internal 101 with the tunnel's token. The uWS connection is left, and the
  // client's connection is relayed as it is to the main process's tunnel
  // listener, token first; the tunnel writes the real 101. (A client speaks
  // SPDY only after the 101, so uWS has been sent nothing past the request.)
  let tunnel: Socket | undefined;
  const handOver = (b: Socket, before: Buffer | undefined, token: string): void => {
    if (before) tlsSocket.write(before);
    forwarding = false;
    idleTimer?.cancel();
    gate?.cancel();
    coalescer?.destroy();
    coalescer = undefined;
    backend = undefined;
    b.destroy();
    tunnel = relayToTunnel(tlsSocket, front.backendSocketPath, token, fail, framer.tunnelWebSocket);
  };

  // The first request head on a backend connection did not complete within
  // the header-read bound: 408 with a Status, and the connection closes. (A
  // later head on the same backend connection goes to uWS as it is, which
  // applies its own bound: an earlier response may still be in progress.)
  const headTimedOut = (): boolean => {
    if (tlsSocket.destroyed || tlsSocket.writableEnded || !framer.betweenResponses) return false;
    tlsSocket.end(headTimeoutResponse(front.headHoldMs, clock.now()));
    backend?.end();
    lingerAfterBackend();
    return true;
  };

  // The backend closed (uWS answered and closed: a 413, a request deadline,
  // a slow head) while the client may still be sending. Forwarding that
  // to the closed backend failed the connection with a reset, and a reset
  // can make the client drop the answer it has not read yet. Instead what
  // the client still sends is read and dropped for a moment after the
  // answer (Go's net/http does the same before closing).
  const lingerAfterBackend = (): void => {
    if (tlsSocket.destroyed || lingering) return;
    lingering = true;
    idleTimer?.cancel();
    gate?.cancel();
    coalescer?.destroy();
    if (!forwarding) tlsSocket.on('data', () => undefined);
    forwarding = false;
    tlsSocket.resume();
    clock.setTimeout(() => tlsSocket.destroy(), LINGER_MS);
  };

  // The first backend connection is opened at once; nothing (not even the
  // header) goes to it before the first client bytes are read, so not
  // reading the TLS socket holds back the whole connection until the
  // registration is acknowledged; meanwhile the TLS socket buffers and then
  // stops reading.
  if (adopted) {
    registered = true;
    gate?.stop();
    startForwarding();
    if (adopted.initial.length > 0) onClientData(adopted.initial);
    if (adopted.ended) onClientEnd();
  } else if (answerProbe) {
    // Read at once: a probe is answered without waiting for the parent's
    // acknowledgement (its event loop may be the saturated one), and no
    // backend connection is opened until a request must go there.
    startForwarding();
    front.register?.(key, info()).then(
      () => {
        if (!failed && !tlsSocket.destroyed) onRegistered();
      },
      fail,
    );
  } else if (!front.register) {
    dial();
    startForwarding();
  } else {
    dial();
    front.register(key, info()).then(
      () => {
        registered = true;
        if (!failed && !tlsSocket.destroyed) startForwarding();
      },
      fail,
    );
  }
}
