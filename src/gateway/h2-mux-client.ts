// The front's end of the HTTP/2 channel (docs/tls.md "HTTP/2"): every stream
// of every HTTP/2 session of this process goes to the main process as frames
// over one unix-socket connection (src/gateway/mux-frames.ts,
// src/gateway/mux-server.ts), instead of one HTTP/1.1 connection per stream.
//
// - Identity: each Request frame names its TLS connection (the id the front
//   registered, as the PROXY header does for HTTP/1.1); the channel is only
//   reachable by this server's processes (a socket in the data directory).
// - Data for a stream is written to its HTTP/2 stream as it arrives; a
//   MultiData frame's one payload goes to each of its streams.
// - Slow readers: when an HTTP/2 stream holds more than its high-water mark
//   (the client's flow-control window is used up), its held bytes are
//   reported to the main process (Owed); the watch service counts them in
//   the watcher's backlog and ends a watcher that falls 10 MiB behind (410),
//   so a stream that never reads holds at most that much here. A stream
//   ended with bytes still unsent is reset after END_GRACE_MS.
// - A stream the client resets or loses with its session sends Cancel: the
//   server's watch stops. If the channel drops, streams without an answer
//   get 503 and answered ones are reset; the next stream reconnects.

import { constants as h2constants, type ServerHttp2Stream } from 'node:http2';
import type { Socket } from 'node:net';
import { type Clock, systemClock } from '../core/clock.js';
import { h2ResponseHeaders, METHODS_WITH_BODY, respondStatus, respondWhole, type SessionContext, type StreamClosed, type StreamForwarder, type StreamRequest } from './h2-sessions.js';
import { ChannelWriter, dialMux } from './mux-dial.js';
import { FrameType, readMulti, type RequestHead } from './mux-frames.js';
import { readResponse } from './head-codec.js';

/** a stream ended by the server but still holding unsent bytes this long is reset (its client does not read) */
const END_GRACE_MS = 30_000;

interface Pending {
  stream: ServerHttp2Stream;
  /** bytes held beyond the stream's high-water mark, last reported */
  owed: number;
  waitingDrain: boolean;
  answered: boolean;
}

export interface H2MuxClientOptions {
  /** the main process's channel socket (src/gateway/mux-server.ts) */
  socketPath: string;
  /** called when the channel connection closes (the front waits for it on close) */
  onClosed?: () => void;
  /** the grace of an ended stream's unsent bytes (default the system clock) */
  clock?: Clock;
}

export function createH2MuxClient(opts: H2MuxClientOptions): StreamForwarder {
  const clock = opts.clock ?? systemClock;
  let conn: Socket | undefined;
  let nextId = 1;
  const pending = new Map<number, Pending>();
  let destroyed = false;
  const writer = new ChannelWriter(() => conn);

  const reportOwed = (id: number, p: Pending, bytes: number): void => {
    if (p.owed === bytes) return;
    p.owed = bytes;
    writer.owed(id, bytes);
  };

  const deliver = (id: number, data: Buffer): void => {
    const p = pending.get(id);
    if (!p || p.stream.destroyed || p.stream.writableEnded) return;
    if (p.stream.write(data)) {
      if (p.owed > 0) reportOwed(id, p, 0);
      return;
    }
    // held beyond the high-water mark: the client is not taking it (yet)
    reportOwed(id, p, p.owed + data.length);
    if (!p.waitingDrain) {
      p.waitingDrain = true;
      p.stream.once('drain', () => {
        p.waitingDrain = false;
        if (pending.get(id) === p) reportOwed(id, p, 0);
      });
    }
  };

  const finish = (id: number): void => {
    const p = pending.get(id);
    if (!p) return;
    pending.delete(id);
    const st = p.stream;
    if (st.destroyed || st.closed) return;
    st.end();
    if (st.writableLength > 0) {
      const t = clock.setTimeout(() => st.close(h2constants.NGHTTP2_CANCEL), END_GRACE_MS);
      st.once('close', () => t.cancel());
    }
  };

  const onFrame = (type: number, id: number, payload: Buffer): void => {
    switch (type) {
      case FrameType.Response:
      case FrameType.Head: {
        const p = pending.get(id);
        if (!p) return;
        const { head, body } = readResponse(payload);
        if (p.stream.destroyed || p.stream.closed) return;
        try {
          if (type === FrameType.Response) {
            pending.delete(id);
            respondWhole(p.stream, h2ResponseHeaders(head.status, head.headers), body);
          } else p.stream.respond(h2ResponseHeaders(head.status, head.headers));
        } catch {
          pending.delete(id);
          p.stream.close(h2constants.NGHTTP2_INTERNAL_ERROR);
          return;
        }
        p.answered = true;
        return;
      }
      case FrameType.Data:
        return deliver(id, payload);
      case FrameType.MultiData: {
        const { ids, data } = readMulti(payload);
        for (const sid of ids) deliver(sid, data);
        return;
      }
      case FrameType.End:
        return finish(id);
      case FrameType.Reset: {
        const p = pending.get(id);
        pending.delete(id);
        if (p && !p.stream.destroyed) p.stream.close(h2constants.NGHTTP2_INTERNAL_ERROR);
        return;
      }
      default:
        conn?.destroy();
    }
  };

  const connection = (): Socket => {
    if (conn && !conn.destroyed) return conn;
    const s = dialMux(opts.socketPath, onFrame, () => {
      if (conn === s) conn = undefined;
      // frames not written yet were for this connection's streams (answered below), not for the next one
      writer.drop();
      // every stream of this connection lost its server side
      for (const [, p] of pending) {
        if (p.answered) {
          if (!p.stream.destroyed) p.stream.close(h2constants.NGHTTP2_INTERNAL_ERROR);
        } else respondStatus(p.stream, 503, 'ServiceUnavailable', 'the API server is not reachable');
      }
      pending.clear();
      opts.onClosed?.();
    });
    conn = s;
    return s;
  };

  return {
    forward(stream: ServerHttp2Stream, req: StreamRequest, ctx: SessionContext): StreamClosed | void {
      if (destroyed || stream.closed || stream.destroyed) return;
      const id = nextId;
      nextId = nextId >= 0xfffffffe ? 1 : nextId + 1;
      const q = req.path.indexOf('?');
      const head: RequestHead = {
        method: req.method,
        path: q < 0 ? req.path : req.path.slice(0, q),
        query: q < 0 ? '' : req.path.slice(q + 1),
        proxiedAddress: ctx.connKey,
        headers: req.headers,
      };
      // the sessions made this list for this request alone
      if (req.body.length > 0 || METHODS_WITH_BODY.has(req.method)) req.headers.push(['content-length', String(req.body.length)]);
      const p: Pending = { stream, owed: 0, waitingDrain: false, answered: false };
      pending.set(id, p);
      connection();
      writer.request(id, head, req.body);
      return () => {
        if (pending.get(id) !== p) return;
        // the client reset the stream or lost its session: a watch must stop on the server
        pending.delete(id);
        if (conn && !conn.destroyed) {
          writer.bare(FrameType.Cancel, id);
        }
      };
    },
    /** the channel counts while it carries streams (the front's close waits for them, not for the channel) */
    get backendConnections() {
      return conn && !conn.destroyed && pending.size > 0 ? 1 : 0;
    },
    destroy() {
      destroyed = true;
      conn?.destroy();
    },
  };
}
