// The main process's side of one front connection of the HTTP/2 channel
// (src/gateway/mux-frames.ts): frames go out in two classes so that a
// request's answer never queues behind watch fan-out (issue 14 item 2).
//
// - Prompt frames (Response, Head, Reset): written at the next flush, ahead
//   of every bulk frame not yet handed to the socket.
// - Bulk frames (Data, MultiData, and the End that follows a stream's data,
//   so that it cannot overtake them): handed to the socket only while it
//   holds less than BULK_LOW_WATER bytes, so a prompt frame waits behind at
//   most that much plus the kernel's buffer, never behind a whole fan-out.
// - A run of writes of the same Buffer to streams of this connection (the
//   watch service hands every watcher of a shared batch the same Buffer,
//   docs/watch.md "Batches") becomes one MultiData frame: the batch crosses
//   to the front once, with the list of streams it is for.
//
// One flush per turn: writes within a fan-out slice are collected and go
// out in one writev.

import type { Socket } from 'node:net';
import { FrameBatch, FrameType, frameHeader, multiHeader, type ResponseHead } from './mux-frames.js';

/** bulk bytes the socket may hold before more are handed to it */
const BULK_LOW_WATER = 256 * 1024;
/** at most this many ids in one MultiData frame */
const MAX_MULTI_IDS = 4096;

interface BulkFrame {
  parts: Buffer[];
  bytes: number;
  /** the streams whose queued bytes this frame carries */
  ids: number[] | number;
  payloadBytes: number;
}

export class MuxWriter {
  /** prompt frames of this turn, encoded into one arena (mux-frames.ts FrameBatch): one chunk for a turn's answers */
  private readonly prompt = new FrameBatch();
  private readonly bulk: BulkFrame[] = [];
  private bulkHead = 0;
  private multi: { data: Buffer; ids: number[] } | undefined;
  private scheduled = false;
  private waitingDrain = false;
  /** bulk bytes per stream not yet handed to the socket (part of its backlog) */
  private readonly queued = new Map<number, number>();
  private closed = false;

  constructor(private readonly socket: Socket) {
    socket.on('drain', () => {
      this.waitingDrain = false;
      this.flush();
    });
  }

  /** a frame that must not wait behind fan-out */
  promptFrame(parts: Buffer[]): void {
    if (this.closed) return;
    for (const p of parts) this.prompt.encoded(p);
    this.schedule();
  }

  /** a Response or Head frame (prompt) */
  promptResponse(type: FrameType, id: number, head: ResponseHead, body?: Uint8Array | string): void {
    if (this.closed) return;
    this.prompt.response(type, id, head, body);
    this.schedule();
  }

  /** a stream's data (bulk); the same Buffer for consecutive streams is sent once */
  data(id: number, chunk: Buffer): void {
    if (this.closed) return;
    this.queued.set(id, (this.queued.get(id) ?? 0) + chunk.length);
    const m = this.multi;
    if (m && m.data === chunk && m.ids.length < MAX_MULTI_IDS) {
      m.ids.push(id);
      return;
    }
    this.closeMulti();
    this.multi = { data: chunk, ids: [id] };
    this.schedule();
  }

  /** a bulk frame without payload (End after data) */
  bulkFrame(type: FrameType, id: number): void {
    if (this.closed) return;
    this.closeMulti();
    this.bulk.push({ parts: [frameHeader(type, id, 0)], bytes: 9, ids: [], payloadBytes: 0 });
    this.schedule();
  }

  /**
   * Bytes of this stream still queued here that the socket did not take:
   * while it takes everything, what was queued this turn leaves at the
   * flush that ends the turn and is not a backlog (the watch budget would
   * otherwise count every watcher's last batch).
   */
  queuedFor(id: number): number {
    return this.waitingDrain ? (this.queued.get(id) ?? 0) : 0;
  }

  forget(id: number): void {
    this.queued.delete(id);
  }

  close(): void {
    this.closed = true;
    this.prompt.take();
    this.bulk.length = 0;
    this.bulkHead = 0;
    this.multi = undefined;
    this.queued.clear();
  }

  private closeMulti(): void {
    const m = this.multi;
    if (!m) return;
    this.multi = undefined;
    if (m.ids.length === 1) {
      this.bulk.push({ parts: [frameHeader(FrameType.Data, m.ids[0]!, m.data.length), m.data], bytes: 9 + m.data.length, ids: m.ids[0]!, payloadBytes: m.data.length });
    } else {
      const h = multiHeader(m.ids, m.data.length);
      this.bulk.push({ parts: [h, m.data], bytes: h.length + m.data.length, ids: m.ids, payloadBytes: m.data.length });
    }
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    // after the current slice of fan-out or the handler's continuation
    queueMicrotask(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    if (this.closed || this.socket.destroyed || this.socket.writableEnded) return;
    if (this.waitingDrain && this.prompt.empty) {
      // bulk only: the drain continues it
      this.closeMulti();
      return;
    }
    this.closeMulti();
    const s = this.socket;
    s.cork();
    for (const p of this.prompt.take()) s.write(p);
    while (this.bulkHead < this.bulk.length && s.writableLength < BULK_LOW_WATER) {
      const f = this.bulk[this.bulkHead++]!;
      for (const p of f.parts) s.write(p);
      if (typeof f.ids === 'number') this.dequeued(f.ids, f.payloadBytes);
      else for (const id of f.ids) this.dequeued(id, f.payloadBytes);
    }
    if (this.bulkHead === this.bulk.length) {
      this.bulk.length = 0;
      this.bulkHead = 0;
    } else if (this.bulkHead > 1024) {
      this.bulk.splice(0, this.bulkHead);
      this.bulkHead = 0;
    }
    s.uncork();
    // bulk left means the socket holds BULK_LOW_WATER (more than its high-water mark): 'drain' follows
    if (this.bulkHead < this.bulk.length) this.waitingDrain = true;
  }

  private dequeued(id: number, bytes: number): void {
    const left = (this.queued.get(id) ?? 0) - bytes;
    if (left > 0) this.queued.set(id, left);
    else if (this.queued.has(id)) this.queued.set(id, 0);
  }
}
