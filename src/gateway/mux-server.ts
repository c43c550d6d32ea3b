// The main process's end of the HTTP/2 channel (docs/tls.md "HTTP/2"): the
// TLS front terminates HTTP/2 and sends each stream here as frames over one
// unix-socket connection per front process (src/gateway/mux-frames.ts); the
// requests go through the same handler chain as uWS's HTTP/1.1 requests
// (src/endpoints/http.ts), with the TLS connection's id as the proxied
// address, so identity, flow control and audit see no difference.
//
// Why not uWS: it speaks HTTP/1.1 only, so each HTTP/2 stream cost a unix
// connection and an HTTP/1.1 parse in the front, and each watch event one
// uWS send per watcher. Here a watch batch shared by many watchers crosses
// once per front (MultiData), and answers to requests go ahead of fan-out
// (src/gateway/mux-writer.ts).
//
// Back-pressure: a stream's backlog (what the watch service checks after
// each write against its per-watcher limit and the server-wide budget) is
// what this side still queues for it plus what the front reports its
// HTTP/2 stream holding beyond its high-water mark (Owed frames), i.e. what
// a client that stopped reading has not taken.

import { createServer, type Server, type Socket } from 'node:net';
import { unlink } from 'node:fs/promises';
import { type Clock, systemClock } from '../core/clock.js';
import type { StreamSink } from '../core/stream.js';
import type { HttpRequest, HttpResponse, PlainResponse, StreamingResponse } from '../endpoints/http.js';
import { FrameReader, FrameType, TEXT_INLINE, frameHeader, readOwed, type RequestHead, type ResponseHead } from './mux-frames.js';
import { readRequest } from './head-codec.js';
import type { RequestHead as ShedHead } from './flowcontrol/early-shed.js';
import { MuxWriter } from './mux-writer.js';
import { GatewayRequest } from './gateway-request.js';
import { DEFAULT_GZIP_MIN_BYTES, gzipBody, wantsGzip } from './response-body.js';

/** plain bodies above this go as Head, Data pieces and End, so one frame stays small */
const WHOLE_BODY_MAX = 1024 * 1024;
const PIECE = 256 * 1024;

export interface MuxServerOptions {
  /** unix socket to listen on */
  path: string;
  handle(req: HttpRequest): Promise<HttpResponse>;
  maxBodyBytes: number;
  tooLarge(limit: number): PlainResponse;
  /** overload shedding before the handler (as for HTTP/1.1, src/gateway/http-server.ts) */
  shed?(head: ShedHead): PlainResponse | undefined;
  gzipMinBytes?: number;
  /** shutdown waits (default the system clock) */
  clock?: Clock;
}

export interface MuxServer {
  readonly path: string;
  /** open streaming responses */
  readonly openStreams: number;
  /** front connections */
  readonly connections: number;
  /** requests received since start (HTTP/2 streams and HTTP/1.1 requests) */
  readonly requests: number;
  /** ends every stream cleanly, waits for requests in flight (at most timeoutMs), then drops the connections */
  close(timeoutMs?: number): Promise<void>;
}

interface Exchange {
  aborted: boolean;
  ctrl?: AbortController;
  stream?: StreamingResponse;
  sink?: StreamSink;
  /** bytes the front reports its HTTP/2 stream holds beyond what the client took */
  owed: number;
}

/** made on first use (most requests never look), already aborted if the client left */
function signalOf(ex: Exchange): AbortSignal {
  ex.ctrl ??= new AbortController();
  if (ex.aborted) ex.ctrl.abort();
  return ex.ctrl.signal;
}

const internalError = (err: unknown): PlainResponse => ({
  status: 500,
  headers: [['Content-Type', 'application/json']],
  body: JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `Internal error occurred: ${(err as Error)?.message ?? String(err)}`, reason: 'InternalError', code: 500 }),
});

const badRequest = (message: string): PlainResponse => ({
  status: 400,
  headers: [['Content-Type', 'application/json']],
  body: JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason: 'BadRequest', code: 400 }),
});

export async function startMuxServer(opts: MuxServerOptions): Promise<MuxServer> {
  const clock = opts.clock ?? systemClock;
  const gzipMin = opts.gzipMinBytes ?? DEFAULT_GZIP_MIN_BYTES;
  const sockets = new Set<Socket>();
  const streams = new Map<StreamingResponse, StreamSink>();
  let inflight = 0;
  let requests = 0;
  let idle: (() => void) | undefined;
  const finish = (): void => {
    inflight--;
    if (inflight === 0) idle?.();
  };

  const serveConnection = (socket: Socket): void => {
    sockets.add(socket);
    socket.setNoDelay?.(true);
    const writer = new MuxWriter(socket);
    const exchanges = new Map<number, Exchange>();
    /** HTTP/1.1 requests sent before their bodies (`bodyFollows`), by stream id */
    const awaitingBody = new Map<number, (body: Buffer) => void>();

    const sendPlain = (id: number, out: PlainResponse, method: string, body: Uint8Array | string, gzipped: boolean): void => {
      const head: ResponseHead = { status: out.status, headers: gzipped ? [...out.headers, ['Content-Encoding', 'gzip']] : out.headers };
      if (method === 'HEAD') {
        // the head a GET would get, with its Content-Length (RFC 9110 §9.3.2, as Go's server
        // answers kube-apiserver's HEADs); the client end sends no body
        const length = typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
        writer.promptResponse(FrameType.Head, id, { ...head, length });
        writer.promptFrame([frameHeader(FrameType.End, id, 0)]);
        return;
      }
      // the usual answer: JSON text, encoded straight into the turn's frames
      if (typeof body === 'string' && body.length <= TEXT_INLINE) {
        writer.promptResponse(FrameType.Response, id, head, body);
        return;
      }
      const bytes = typeof body === 'string' ? Buffer.from(body) : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
      if (bytes.length <= WHOLE_BODY_MAX) {
        writer.promptResponse(FrameType.Response, id, head, bytes);
        return;
      }
      writer.promptResponse(FrameType.Head, id, { ...head, length: bytes.length });
      for (let at = 0; at < bytes.length; at += PIECE) {
        const piece = bytes.subarray(at, at + PIECE);
        writer.promptFrame([frameHeader(FrameType.Data, id, piece.length), piece]);
      }
      writer.promptFrame([frameHeader(FrameType.End, id, 0)]);
    };

    const startStream = (id: number, ex: Exchange, out: StreamingResponse): void => {
      writer.promptResponse(FrameType.Head, id, { status: out.status, headers: out.headers });
      let ended = false;
      const sink: StreamSink = {
        write(chunk) {
          if (ended || ex.aborted) return false;
          writer.data(id, typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
          return ex.owed === 0;
        },
        backlog() {
          if (ended || ex.aborted) return 0;
          return writer.queuedFor(id) + ex.owed;
        },
        end() {
          if (ended) return;
          ended = true;
          if (!ex.aborted) writer.bulkFrame(FrameType.End, id);
          done(id, ex);
        },
      };
      ex.stream = out;
      ex.sink = sink;
      streams.set(out, sink);
      out.start(sink);
    };

    const done = (id: number, ex: Exchange): void => {
      if (exchanges.get(id) !== ex) return;
      exchanges.delete(id);
      writer.forget(id);
      if (ex.stream) streams.delete(ex.stream);
      finish();
    };

    const onRequest = (id: number, payload: Buffer): void => {
      requests++;
      let head: RequestHead;
      let body: Buffer;
      try {
        ({ head, body } = readRequest(payload));
      } catch {
        writer.promptResponse(FrameType.Response, id, { status: 400, headers: [] });
        return;
      }
      const { method, path, proxiedAddress } = head;
      const query = new URLSearchParams(head.query);
      const headers = new Map(head.headers);
      // the shedder leaves the RequestInfo it parsed in `shedHead.info`; the chain reuses it
      const shedHead: ShedHead = { method, path, query, headers, proxiedAddress };
      const shed = opts.shed?.(shedHead);
      if (shed) return sendPlain(id, shed, method, shed.body, false);
      // an HTTP/1.1 body still arriving at the front: shed (above) before it, as uWS does; handled once its Body frame comes
      if (head.bodyFollows) awaitingBody.set(id, (b) => proceed(id, head, shedHead, b));
      else proceed(id, head, shedHead, body);
    };

    const proceed = (id: number, head: RequestHead, shedHead: ShedHead, body: Buffer): void => {
      const { method, path, proxiedAddress } = head;
      const { query, headers } = shedHead;
      if (body.length > opts.maxBodyBytes) {
        const out = opts.tooLarge(opts.maxBodyBytes);
        return sendPlain(id, out, method, out.body, false);
      }
      const ex: Exchange = { aborted: false, owed: 0 };
      exchanges.set(id, ex);
      inflight++;
      const respond = (out: HttpResponse): void => {
        if ('upgrade' in out || 'tunnel' in out) {
          // WebSockets and SPDY stay on HTTP/1.1 (the front answers CONNECT itself)
          if ('upgrade' in out) out.upgrade.close();
          else out.tunnel.close();
          out = badRequest('this request must be a WebSocket or SPDY/3.1 upgrade');
        }
        if (ex.aborted) {
          if (out.stream) out.stop();
          return;
        }
        if (out.stream) return startStream(id, ex, out);
        const plain = out;
        const send = (b: Uint8Array | string, gz: boolean): void => {
          if (ex.aborted) return;
          sendPlain(id, plain, method, b, gz);
          done(id, ex);
        };
        if (wantsGzip(plain, headers.get('accept-encoding'), gzipMin)) void gzipBody(plain.body).then((z) => send(z.body, z.gzipped));
        else send(plain.body, false);
      };
      const req = new GatewayRequest(method, path, query, headers, proxiedAddress, body, () => signalOf(ex), shedHead.info);
      opts
        .handle(req)
        .then(respond, (err: unknown) => respond(internalError(err)));
    };

    const cancel = (id: number): void => {
      awaitingBody.delete(id);
      const ex = exchanges.get(id);
      if (!ex) return;
      ex.aborted = true;
      ex.ctrl?.abort();
      ex.stream?.stop();
      done(id, ex);
    };

    const reader = new FrameReader((type, id, payload) => {
      switch (type) {
        case FrameType.Request:
          return onRequest(id, payload);
        case FrameType.Cancel:
          return cancel(id);
        case FrameType.Body: {
          const k = awaitingBody.get(id);
          awaitingBody.delete(id);
          return k?.(payload);
        }
        case FrameType.Owed:
          return readOwed(payload, (sid, bytes) => {
            const ex = exchanges.get(sid);
            if (ex) ex.owed = bytes;
          });
        default:
          // an unknown frame type: the front is of another build; drop the connection
          socket.destroy();
      }
    });
    socket.on('data', (chunk: Buffer) => {
      if (!reader.push(chunk)) socket.destroy();
    });
    socket.on('error', () => socket.destroy());
    socket.on('close', () => {
      sockets.delete(socket);
      writer.close();
      for (const id of [...exchanges.keys()]) cancel(id);
    });
  };

  // a stale socket file from a crashed run would make listen fail
  await unlink(opts.path).catch(() => undefined);
  const server: Server = createServer(serveConnection);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.path, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', () => undefined);

  return {
    path: opts.path,
    get openStreams() {
      return streams.size;
    },
    get connections() {
      return sockets.size;
    },
    get requests() {
      return requests;
    },
    async close(timeoutMs = 10_000) {
      server.close();
      // graceful shutdown ends watches cleanly: the stream stops producing, then its response ends
      for (const [s, sink] of [...streams]) {
        s.stop();
        sink.end();
      }
      if (inflight > 0) {
        await new Promise<void>((resolve) => {
          idle = resolve;
          clock.setTimeout(resolve, timeoutMs);
        });
      }
      // let the last frames go out before the connections are dropped: the writers
      // flush at the end of the turn (the End frames of the streams ended above)
      await new Promise<void>((resolve) => setImmediate(resolve));
      await Promise.all(
        [...sockets].map(
          (s) =>
            new Promise<void>((resolve) => {
              s.once('close', () => resolve());
              s.end();
              clock.setTimeout(() => {
                s.destroy();
                resolve();
              }, 1000);
            }),
        ),
      );
    },
  };
}
