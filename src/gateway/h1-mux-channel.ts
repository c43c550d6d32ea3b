// The TLS front's end of the multiplexed channel for HTTP/1.1 requests
// (docs/tls.md "HTTP/1.1 over the multiplexed channel"): one unix-socket
// connection per front process to the main process's mux server
// (src/gateway/mux-server.ts), beside the HTTP/2 one
// (src/gateway/h2-mux-client.ts), with the same frames
// (src/gateway/mux-frames.ts). Each request is a stream id; frames for it go
// to the handler its connection registered. A MultiData frame's one payload
// (a watch batch shared by many watchers) is handed to each of its streams.
//
// Requests written in one turn go out in one write (ChannelWriter, as for
// HTTP/2), so many connections' requests cost the main process one read.

import type { Socket } from 'node:net';
import { ChannelWriter, dialMux } from './mux-dial.js';
import { FrameType, frameHeader, readMulti, type RequestHead } from './mux-frames.js';

export interface MuxStreamHandler {
  /** a Response, Head, Data, End or Reset frame for this stream */
  frame(type: number, payload: Buffer): void;
  /** the channel dropped: this stream has no server side any more */
  lost(): void;
}

export interface H1MuxChannel {
  /** sends a request; frames for it go to `handler` until `forget` or `cancel` */
  request(head: RequestHead, body: Buffer, handler: MuxStreamHandler): number;
  /** the body of a request sent with `bodyFollows` */
  body(id: number, body: Buffer): void;
  /** the client went away: the server stops the stream (a watch ends there) */
  cancel(id: number): void;
  /** the response is complete: no more frames are expected */
  forget(id: number): void;
  /** bytes the client has not taken of this stream's response (the server counts them in a watcher's backlog) */
  owed(id: number, bytes: number): void;
  /** streams open now */
  readonly streams: number;
  destroy(): void;
}

export function createH1MuxChannel(socketPath: string, onClosed?: () => void): H1MuxChannel {
  let conn: Socket | undefined;
  let nextId = 1;
  const handlers = new Map<number, MuxStreamHandler>();
  const writer = new ChannelWriter(() => conn);

  const onFrame = (type: number, id: number, payload: Buffer): void => {
    if (type === FrameType.MultiData) {
      const { ids, data } = readMulti(payload);
      for (const sid of ids) handlers.get(sid)?.frame(FrameType.Data, data);
      return;
    }
    if (type < FrameType.Response || type > FrameType.Reset) {
      conn?.destroy();
      return;
    }
    handlers.get(id)?.frame(type, payload);
  };

  const connection = (): Socket => {
    if (conn && !conn.destroyed) return conn;
    const s = dialMux(socketPath, onFrame, () => {
      if (conn === s) conn = undefined;
      writer.drop();
      const lost = [...handlers.values()];
      handlers.clear();
      for (const h of lost) h.lost();
      onClosed?.();
    });
    conn = s;
    return s;
  };

  return {
    request(head, body, handler) {
      const id = nextId;
      nextId = nextId >= 0xfffffffe ? 1 : nextId + 1;
      handlers.set(id, handler);
      connection();
      writer.request(id, head, body);
      return id;
    },
    body(id, body) {
      if (!handlers.has(id)) return;
      writer.encoded(body.length > 0 ? [frameHeader(FrameType.Body, id, body.length), body] : [frameHeader(FrameType.Body, id, 0)]);
    },
    cancel(id) {
      if (!handlers.delete(id)) return;
      writer.forgetOwed(id);
      if (conn && !conn.destroyed) writer.bare(FrameType.Cancel, id);
    },
    forget(id) {
      handlers.delete(id);
      writer.forgetOwed(id);
    },
    owed(id, bytes) {
      if (handlers.has(id)) writer.owed(id, bytes);
    },
    get streams() {
      return handlers.size;
    },
    destroy() {
      conn?.destroy();
    },
  };
}
