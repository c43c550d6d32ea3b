// The uWebSockets.js transport: reads requests (with a body size limit),
// writes responses (corked, optionally gzip), and runs long-lived chunked
// streams with back-pressure accounting. It knows nothing of the API.

import { writeHeaders } from './uws-headers.js';
import uws from 'uWebSockets.js';
import type { StreamSink } from '../core/stream.js';
import type { RequestHead as ShedHead } from './flowcontrol/early-shed.js';
import { type Clock, systemClock } from '../core/clock.js';
import { DEFAULT_GZIP_MIN_BYTES, gzipBody, wantsGzip } from './response-body.js';
import { statusLine } from './status-line.js';
import { GatewayRequest } from './gateway-request.js';
import { startByteTunnelListener, TUNNEL_HEADER, tunnelSocketPath } from './byte-tunnels.js';

// the transport speaks the endpoint layer's neutral request and response (src/endpoints/http.ts)
export type { HttpRequest as IncomingRequest, HttpResponse as OutgoingResponse, PlainResponse, StreamingResponse, UpgradeResponse } from '../endpoints/http.js';
import type { HttpRequest as IncomingRequest, HttpResponse as OutgoingResponse, PlainResponse, StreamingResponse } from '../endpoints/http.js';
import { readHeaders, webSocketBehavior, type WsData } from './ws-sessions.js';
import type { WebSocket } from 'ws';

export interface HttpServerOptions {
  /** unix socket path (behind the TLS terminator) or a TCP port on host */
  listen: { unixPath: string } | { host: string; port: number };
  maxBodyBytes: number;
  /** bodies at least this large are gzipped when the client accepts it (Kubernetes uses 128 KiB) */
  gzipMinBytes?: number;
  handle(req: IncomingRequest): Promise<OutgoingResponse>;
  /** the response for a body over the limit */
  tooLarge(limit: number): PlainResponse;
  /**
   * A request body not fully received this long after its head is answered
   * with `bodyTimedOut()` and the connection closed (0 = no bound): a client
   * that trickles a body holds its connection and buffer for no longer than
   * kube's request timeout, which covers reading the body there.
   */
  bodyTimeoutMs?: number;
  bodyTimedOut?(): PlainResponse;
  clock?: Clock;
  /**
   * uWS route patterns (`:param`, trailing `*`) whose GET requests may be WebSocket handshakes;
   * only these are routed through the WebSocket handler (every GET it sees is otherwise passed
   * on, and some clients' requests did not survive that: the Python client's watches)
   */
  webSocketPaths?: string[];
  /**
   * Overload shedding before any work (src/gateway/flowcontrol/early-shed.ts):
   * a response here is sent at once, before the body is read or the request
   * handled; undefined goes on as usual.
   */
  shed?(head: ShedHead): PlainResponse | undefined;
}

export interface HttpServer {
  port: number;
  /** open streaming responses */
  readonly openStreams: number;
  /** stop accepting; streams are stopped; resolves when in-flight requests finish or the timeout ends */
  close(timeoutMs?: number): Promise<void>;
}

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** bodies over the limit are read and dropped up to this size, then the connection is closed */
const DISCARD_LIMIT = 64 * 1024 * 1024;

export async function startHttpServer(opts: HttpServerOptions): Promise<HttpServer> {
  const app = uws.App();
  // SPDY upgrades reach their handler's tunnel through the TLS front, which only a unix listener has
  const tunnels = 'unixPath' in opts.listen ? await startByteTunnelListener(tunnelSocketPath(opts.listen.unixPath), opts.clock ?? systemClock) : undefined;
  let listenSocket: uws.us_listen_socket | undefined;
  let inflight = 0;
  let closing = false;
  const streams = new Map<StreamingResponse, StreamSink>();
  const gzipMin = opts.gzipMinBytes ?? DEFAULT_GZIP_MIN_BYTES;
  let idleResolve: (() => void) | undefined;
  const clock = opts.clock ?? systemClock;
  const bodyTimeoutMs = opts.bodyTimeoutMs ?? 0;

  app.any('/*', (res, req) => {
    const method = req.getMethod().toUpperCase();
    const path = req.getUrl();
    const query = new URLSearchParams(req.getQuery() ?? '');
    const headers = readHeaders(req);
    const proxiedAddress = Buffer.from(res.getProxiedRemoteAddressAsText()).toString();
    // the shedder leaves the RequestInfo it parsed in `head.info`; the chain reuses it
    const head: ShedHead = { method, path, query, headers, proxiedAddress };
    const shed = opts.shed?.(head);
    if (shed) {
      // uWS reads past a body nobody asked for, so the connection stays usable
      res.cork(() => {
        res.writeStatus(statusLine(shed.status));
        writeHeaders(res, shed.headers);
        res.end(shed.body, false);
      });
      return;
    }
    // Most requests (creates, gets) never look at the signal: the
    // controller is made on first use, already aborted if the client left.
    let ctrl: AbortController | undefined;
    const signal = (): AbortSignal => {
      if (!ctrl) {
        ctrl = new AbortController();
        if (aborted) ctrl.abort();
      }
      return ctrl.signal;
    };
    let aborted = false;
    const abortHooks: (() => void)[] = [];
    res.onAborted(() => {
      aborted = true;
      ctrl?.abort();
      for (const h of abortHooks) h();
    });
    inflight++;

    const finish = () => {
      inflight--;
      if (closing && inflight === 0) idleResolve?.();
    };

    const respond = (out: OutgoingResponse) => {
      if ('tunnel' in out) {
        if (tunnels && !aborted) {
          // the internal 101 the TLS front turns into a hand-over (byte-tunnels.ts)
          const token = tunnels.offer(out.tunnel);
          res.cork(() => {
            res.writeStatus('101 Switching Protocols');
            res.writeHeader(TUNNEL_HEADER, token);
            res.end('', false);
          });
          finish();
          return;
        }
        out.tunnel.close();
        out = { status: 400, headers: [['Content-Type', 'application/json']], body: JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'SPDY upgrades are served only behind the TLS front', reason: 'BadRequest', code: 400 }) };
      }
      if ('upgrade' in out) {
        // only a WebSocket handshake (app.ws below) can be upgraded
        out.upgrade.close();
        out = { status: 400, headers: [['Content-Type', 'application/json']], body: JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'this request must be a WebSocket upgrade', reason: 'BadRequest', code: 400 }) };
      }
      if (aborted) {
        if (out.stream) out.stop();
        finish();
        return;
      }
      if (out.stream) {
        runStream(res, out, () => aborted, finish, abortHooks);
        return;
      }
      if (wantsGzip(out, headers.get('accept-encoding'), gzipMin)) void gzipBody(out.body).then((z) => write(out, z.body, z.gzipped));
      else write(out, out.body, false);
    };

    const write = (out: PlainResponse, body: Uint8Array | string, gzipped: boolean) => {
      if (!aborted) {
        res.cork(() => {
          res.writeStatus(statusLine(out.status));
          writeHeaders(res, out.headers);
          if (gzipped) res.writeHeader('Content-Encoding', 'gzip');
          if (closing) res.writeHeader('Connection', 'close');
          // uWS would send the body to HEAD too, and a client that (rightly)
          // reads none would take it for the start of the next response. The
          // head says Content-Length: 0: this uWS build's endWithoutBody(length)
          // closes the connection at the next request (the channel path sends
          // the GET's length, mux-server.ts)
          res.end(method === 'HEAD' ? '' : body, false);
        });
      }
      finish();
    };

    const dispatch = (body: Uint8Array) => {
      opts
        .handle(new GatewayRequest(method, path, query, headers, proxiedAddress, body, signal, head.info))
        .then(respond, (err: unknown) => {
          respond({
            status: 500,
            headers: [['Content-Type', 'application/json']],
            body: JSON.stringify({
              kind: 'Status',
              apiVersion: 'v1',
              metadata: {},
              status: 'Failure',
              message: `Internal error occurred: ${(err as Error)?.message ?? String(err)}`,
              reason: 'InternalError',
              code: 500,
            }),
          });
        });
    };

    if (!METHODS_WITH_BODY.has(method)) {
      dispatch(new Uint8Array(0));
      return;
    }
    const declared = Number(headers.get('content-length') ?? '0');
    const refuse = (close: boolean, out: PlainResponse = opts.tooLarge(opts.maxBodyBytes)) => {
      if (aborted) return;
      res.cork(() => {
        res.writeStatus(statusLine(out.status));
        writeHeaders(res, out.headers);
        res.end(out.body, close);
      });
      aborted = true;
    };
    if (declared > DISCARD_LIMIT) {
      // answer at once and drop the connection rather than read a body we refuse
      refuse(true);
      finish();
      return;
    }
    const chunks: Buffer[] = [];
    let total = 0;
    /** set once the request is answered or dispatched: the body is no longer awaited */
    let refused = false;
    let bodyTimer: { cancel(): void } | undefined;
    if (bodyTimeoutMs > 0 && opts.bodyTimedOut) {
      const timedOut = opts.bodyTimedOut;
      bodyTimer = clock.setTimeout(() => {
        if (refused || aborted) return;
        refused = true;
        chunks.length = 0;
        refuse(true, timedOut());
        finish();
      }, bodyTimeoutMs);
    }
    // a client that goes away mid-body: nothing is dispatched, the request is done
    abortHooks.push(() => {
      bodyTimer?.cancel();
      if (refused) return;
      refused = true;
      chunks.length = 0;
      finish();
    });
    res.onData((chunk, isLast) => {
      if (refused) return;
      if (isLast) bodyTimer?.cancel();
      total += chunk.byteLength;
      if (total > opts.maxBodyBytes) {
        // read and discard the rest so the client sees the 413 instead of a reset; past the
        // discard limit, stop reading and close
        chunks.length = 0;
        if (total > DISCARD_LIMIT || isLast) {
          refused = true;
          bodyTimer?.cancel();
          refuse(!isLast);
          finish();
        }
        return;
      }
      // uWS reuses the chunk's memory after this callback: copy it
      chunks.push(Buffer.from(new Uint8Array(chunk)));
      if (isLast) {
        refused = true;
        dispatch(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
      }
    });
  });

  // WebSocket handshakes (exec, attach, port-forward): src/gateway/ws-sessions.ts
  const sessions = new Set<uws.WebSocket<WsData>>();
  const tunneled = new Set<WebSocket>();
  const wsBehavior = webSocketBehavior({
    handle: opts.handle,
    sessions,
    begin: () => {
      inflight++;
      return () => {
        inflight--;
        if (closing && inflight === 0) idleResolve?.();
      };
    },
    closing: () => closing,
    tunneled,
    ...(tunnels ? { tunnels } : {}),
  });
  for (const pattern of opts.webSocketPaths ?? []) app.ws<WsData>(pattern, wsBehavior);

  function runStream(
    res: uws.HttpResponse,
    out: StreamingResponse,
    isAborted: () => boolean,
    finish: () => void,
    abortHooks: (() => void)[],
  ) {
    /**
     * Bytes written since uWS last took a write whole. uWS (this build) does
     * not advance getWriteOffset() for chunked write()s and does not expose
     * its buffered amount, so the backlog is bounded from above instead: a
     * write that returns true leaves uWS's buffer empty (it drains what it
     * holds before the new bytes), and everything written since may still be
     * buffered (plus at most one cork buffer, 16 KiB, that uWS flushes after
     * reporting success). A reader that keeps up resets it with every accepted write;
     * one that stops reading only adds to it (issue #15: before this, the
     * "backlog" was every byte the stream ever sent, so every watch was ended
     * with 410 after 10 MiB of events, reading or not).
     */
    let unconfirmed = 0;
    let ended = false;
    res.cork(() => {
      res.writeStatus(statusLine(out.status));
      writeHeaders(res, out.headers);
      // Headers must go out before the first event so clients see the watch start
      // (kubectl waits on it), and uWS completes a response head only with the
      // first chunk. So one byte is written, and the TLS front drops it together
      // with this header (src/gateway/response-chunk-framer.ts): the client's
      // stream starts with its first event.
      res.writeHeader('X-Orch-Flush', '1');
      res.write('\n');
    });
    const done = () => {
      if (ended) return;
      ended = true;
      streams.delete(out);
      finish();
    };
    abortHooks.push(() => {
      out.stop();
      done();
    });
    const sink: StreamSink = {
      write(chunk) {
        if (ended || isAborted()) return false;
        let ok = false;
        res.cork(() => {
          ok = res.write(chunk);
        });
        if (ok) unconfirmed = 0;
        else unconfirmed += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.byteLength;
        return ok;
      },
      backlog() {
        if (ended || isAborted()) return 0;
        return unconfirmed;
      },
      end() {
        if (ended) return;
        if (!isAborted()) res.cork(() => res.end());
        done();
      },
    };
    streams.set(out, sink);
    out.start(sink);
  }

  await new Promise<void>((resolve, reject) => {
    const cb = (s: uws.us_listen_socket | false) => {
      if (!s) reject(new Error(`cannot listen on ${JSON.stringify(opts.listen)}`));
      else {
        listenSocket = s;
        resolve();
      }
    };
    if ('unixPath' in opts.listen) app.listen_unix(cb, opts.listen.unixPath);
    else app.listen(opts.listen.host, opts.listen.port, cb);
  });

  return {
    port: 'unixPath' in opts.listen ? 0 : uws.us_socket_local_port(listenSocket!),
    get openStreams() {
      return streams.size;
    },
    async close(timeoutMs = 10_000) {
      closing = true;
      if (listenSocket) uws.us_listen_socket_close(listenSocket);
      listenSocket = undefined;
      // graceful shutdown ends watches cleanly: the stream stops producing, then its response ends
      for (const [s, sink] of [...streams]) {
        s.stop();
        sink.end();
      }
      for (const ws of [...sessions]) ws.end(1001, 'server shutting down');
      for (const ws of [...tunneled]) ws.close(1001, 'server shutting down');
      if (inflight > 0) {
        await new Promise<void>((resolve) => {
          idleResolve = resolve;
          clock.setTimeout(resolve, timeoutMs);
        });
      }
      (app as unknown as { close(): void }).close();
      await tunnels?.close();
    },
  };
}

