// The framing of the HTTP/2 channel between the TLS front and the main
// process (docs/tls.md "HTTP/2"): many HTTP/2 streams of many sessions over
// one unix-socket connection per front process, instead of one HTTP/1.1
// connection per stream. A frame is
//
//   u32 length (of what follows) | u8 type | u32 stream id | payload
//
// Front → main: Request (u32 head length, binary head (src/gateway/head-codec.ts), body), Cancel (the
// client reset the stream or lost its session), Owed (pairs of u32 id, u32
// bytes: what an HTTP/2 stream holds that its client has not taken yet), Body
// (the whole body of an HTTP/1.1 request whose head went ahead of it).
// Main → front: Response (u32 head length, binary head, whole body), Head (a
// streaming response's status and headers), Data, MultiData (u32 count, the
// ids, then one payload for all of them: a watch batch shared by many
// watchers crosses once), End, Reset (abort: the client must see an error).

export const FrameType = {
  Request: 1,
  Cancel: 2,
  Owed: 3,
  Body: 4,
  Response: 16,
  Head: 17,
  Data: 18,
  MultiData: 19,
  End: 20,
  Reset: 21,
} as const;
export type FrameType = (typeof FrameType)[keyof typeof FrameType];

import { requestHeadBound, responseHeadBound, writeRequestHead, writeResponseHead } from './head-codec.js';

export const FRAME_HEADER_BYTES = 9;
/** request bodies are at most 4 MiB (the front's limit) plus 1 MiB of headers; responses are split below this */
export const MAX_FRAME_BYTES = 8 * 1024 * 1024;

// the heads' shapes live with their encoding (head-codec.ts); re-exported for the channel's users
import type { RequestHead, ResponseHead } from './head-codec.js';
export type { RequestHead, ResponseHead };

export function frameHeader(type: FrameType, id: number, payloadBytes: number): Buffer {
  const h = Buffer.allocUnsafe(FRAME_HEADER_BYTES);
  h.writeUInt32BE(payloadBytes + 5, 0);
  h.writeUInt8(type, 4);
  h.writeUInt32BE(id, 5);
  return h;
}

/** the frame header and head length of a headed frame starting at `start` whose head ends at `headEnd` */
function writeHeaded(buf: Buffer, start: number, type: FrameType, id: number, headEnd: number, bodyBytes: number): void {
  const n = headEnd - (start + FRAME_HEADER_BYTES + 4);
  buf.writeUInt32BE(4 + n + bodyBytes + 5, start);
  buf[start + 4] = type;
  buf.writeUInt32BE(id, start + 5);
  buf.writeUInt32BE(n, start + 9);
}

/** one MultiData frame's header: the same payload follows once for every id */
export function multiHeader(ids: readonly number[], payloadBytes: number): Buffer {
  const h = Buffer.allocUnsafe(FRAME_HEADER_BYTES + 4 + 4 * ids.length);
  h.writeUInt32BE(5 + 4 + 4 * ids.length + payloadBytes, 0);
  h.writeUInt8(FrameType.MultiData, 4);
  h.writeUInt32BE(0, 5);
  h.writeUInt32BE(ids.length, 9);
  for (let i = 0; i < ids.length; i++) h.writeUInt32BE(ids[i]!, 13 + 4 * i);
  return h;
}

/** the ids of a MultiData payload and the bytes they all get */
export function readMulti(payload: Buffer): { ids: number[]; data: Buffer } {
  const n = payload.readUInt32BE(0);
  const ids = new Array<number>(n);
  for (let i = 0; i < n; i++) ids[i] = payload.readUInt32BE(4 + 4 * i);
  return { ids, data: payload.subarray(4 + 4 * n) };
}

/** an Owed frame: (id, bytes) pairs */
export function owedFrame(entries: Map<number, number>): Buffer {
  const f = Buffer.allocUnsafe(FRAME_HEADER_BYTES + 8 * entries.size);
  f.writeUInt32BE(5 + 8 * entries.size, 0);
  f.writeUInt8(FrameType.Owed, 4);
  f.writeUInt32BE(0, 5);
  let at = FRAME_HEADER_BYTES;
  for (const [id, bytes] of entries) {
    f.writeUInt32BE(id, at);
    f.writeUInt32BE(Math.min(bytes, 0xffffffff), at + 4);
    at += 8;
  }
  return f;
}

export function readOwed(payload: Buffer, each: (id: number, bytes: number) => void): void {
  for (let at = 0; at + 8 <= payload.length; at += 8) each(payload.readUInt32BE(at), payload.readUInt32BE(at + 4));
}

const EMPTY = new Uint8Array(0);

/** a batch's arena: frames are encoded into it, and each turn's part handed to the socket as a view */
const ARENA_BYTES = 64 * 1024;
/** bodies this large go to the socket as their own chunk instead of being copied */
const COPY_LIMIT = 16 * 1024;
/** text bodies up to this many UTF-16 units are encoded into the arena */
export const TEXT_INLINE = COPY_LIMIT;

/**
 * The frames of one turn, encoded into one buffer and taken as one chunk
 * (one socket write): a request's header, head and body land in the
 * arena directly, without a Buffer for each part, and a turn of 64 requests
 * is one write instead of a cork, three writes and an uncork for each.
 * Written bytes are never touched again (the socket may still hold them):
 * what is taken is a view, and the arena's free tail is used on.
 */
export class FrameBatch {
  private arena = Buffer.allocUnsafe(ARENA_BYTES);
  private at = 0;
  private chunks: Buffer[] = [];

  get empty(): boolean {
    return this.at === 0 && this.chunks.length === 0;
  }

  /** a Request frame: the binary head (head-codec.ts), then the body */
  request(id: number, head: RequestHead, body: Uint8Array = EMPTY): void {
    const start = this.begin(requestHeadBound(head), body);
    this.finish(FrameType.Request, id, start, writeRequestHead(this.arena, start + FRAME_HEADER_BYTES + 4, head), body);
  }

  /** a Response or Head frame; a body given as text of at most TEXT_INLINE units is encoded into the arena (no Buffer of its own) */
  response(type: FrameType, id: number, head: ResponseHead, body: Uint8Array | string = EMPTY): void {
    if (typeof body === 'string' && body.length > TEXT_INLINE) body = Buffer.from(body);
    if (typeof body !== 'string') {
      const start = this.begin(responseHeadBound(head), body);
      this.finish(type, id, start, writeResponseHead(this.arena, start + FRAME_HEADER_BYTES + 4, head), body);
      return;
    }
    // a UTF-16 unit is at most 3 bytes of UTF-8
    this.reserve(FRAME_HEADER_BYTES + 4 + responseHeadBound(head) + 3 * body.length);
    const a = this.arena;
    const start = this.at;
    const headEnd = writeResponseHead(a, start + FRAME_HEADER_BYTES + 4, head);
    const n = body.length === 0 ? 0 : a.write(body, headEnd, 'utf8');
    writeHeaded(a, start, type, id, headEnd, n);
    this.at = headEnd + n;
  }

  /** room for a headed frame: its header, head and (when copied) body; returns where it starts */
  private begin(headBound: number, body: Uint8Array): number {
    this.reserve(FRAME_HEADER_BYTES + 4 + headBound + (body.byteLength < COPY_LIMIT ? body.byteLength : 0));
    return this.at;
  }

  private finish(type: FrameType, id: number, start: number, headEnd: number, body: Uint8Array): void {
    writeHeaded(this.arena, start, type, id, headEnd, body.byteLength);
    this.at = headEnd;
    if (body.byteLength === 0) return;
    if (body.byteLength < COPY_LIMIT) {
      this.arena.set(body, this.at);
      this.at += body.byteLength;
      return;
    }
    this.cut();
    this.chunks.push(Buffer.from(body.buffer, body.byteOffset, body.byteLength));
  }

  /** a frame without payload (Cancel) */
  bare(type: FrameType, id: number): void {
    this.reserve(FRAME_HEADER_BYTES);
    const a = this.arena;
    a.writeUInt32BE(5, this.at);
    a.writeUInt8(type, this.at + 4);
    a.writeUInt32BE(id, this.at + 5);
    this.at += FRAME_HEADER_BYTES;
  }

  /** a frame already encoded (Owed) */
  encoded(frame: Buffer): void {
    this.cut();
    this.chunks.push(frame);
  }

  /** what was batched, in order; the batch is empty after */
  take(): Buffer[] {
    this.cut();
    const out = this.chunks;
    this.chunks = [];
    return out;
  }

  private reserve(bytes: number): void {
    if (this.arena.length - this.at >= bytes) return;
    this.cut();
    this.arena = Buffer.allocUnsafe(Math.max(ARENA_BYTES, bytes));
  }

  /** the bytes written so far become a chunk; the arena's tail stays for what follows */
  private cut(): void {
    if (this.at === 0) return;
    this.chunks.push(this.arena.subarray(0, this.at));
    this.arena = this.arena.subarray(this.at);
    this.at = 0;
  }
}

/**
 * Cuts a byte stream into frames. Payloads are views into the read chunks
 * where a frame lies within one (no copy); a frame split across reads is
 * joined once. A length beyond MAX_FRAME_BYTES is a protocol error.
 */
export class FrameReader {
  private carry: Buffer[] = [];
  private carried = 0;

  constructor(private readonly onFrame: (type: number, id: number, payload: Buffer) => void) {}

  /** false: the peer broke the framing (the connection must be dropped) */
  push(chunk: Buffer): boolean {
    let buf = chunk;
    if (this.carried > 0) {
      this.carry.push(chunk);
      this.carried += chunk.length;
      if (this.carried < 4) return true;
      if (this.carry[0]!.length < 4) this.carry = [Buffer.concat(this.carry, this.carried)];
      const len = this.carry[0]!.readUInt32BE(0);
      if (len < 5 || len > MAX_FRAME_BYTES) return false;
      // join once, when the whole frame is here (a 4 MiB body comes in many reads)
      if (this.carried < 4 + len) return true;
      buf = this.carry.length === 1 ? this.carry[0]! : Buffer.concat(this.carry, this.carried);
      this.carry = [];
      this.carried = 0;
    }
    let at = 0;
    while (buf.length - at >= FRAME_HEADER_BYTES) {
      const len = buf.readUInt32BE(at);
      if (len < 5 || len > MAX_FRAME_BYTES) return false;
      if (buf.length - at < 4 + len) break;
      this.onFrame(buf.readUInt8(at + 4), buf.readUInt32BE(at + 5), buf.subarray(at + 9, at + 4 + len));
      at += 4 + len;
    }
    if (at < buf.length) {
      const rest = buf.subarray(at);
      this.carry = [rest];
      this.carried = rest.length;
    }
    return true;
  }
}
