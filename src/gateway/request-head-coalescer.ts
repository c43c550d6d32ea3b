// uWebSockets.js can parse a request head of any size when it arrives in one
// read, but one larger than 4 KiB that arrives in several reads is refused
// (the connection is closed). Go clients write requests through a 4 KiB
// buffer, so a long bearer token arrives split. The TLS terminator therefore
// passes the client's bytes through this stream, which holds the pieces of a
// request head until the head is complete and forwards it in one write. It
// only ever delays bytes, never alters them, and gives up holding after a
// short time or a size bound so nothing can stall.

import { Transform, type TransformCallback } from 'node:stream';

const HEAD_END = Buffer.from('\r\n\r\n');
/** a request line starts with an upper-case method and a space */
const METHOD_START = /^[A-Z]{3,10} /;
/** heads larger than this are forwarded as they come (uWS refuses them anyway) */
export const MAX_HELD_BYTES = 256 * 1024;
const HOLD_MS = 50;

export class RequestHeadCoalescer extends Transform {
  private held: Buffer[] = [];
  private heldBytes = 0;
  private timer: NodeJS.Timeout | undefined;
  private prefix: Buffer | undefined;

  /** `prefix` (the PROXY header) is sent together with the first bytes, in the same write */
  constructor(prefix?: Buffer) {
    super();
    this.prefix = prefix;
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    if (this.heldBytes === 0) {
      // a complete head, or bytes that are not the start of one (a body): pass on
      if (!METHOD_START.test(chunk.subarray(0, 12).toString('latin1')) || chunk.includes(HEAD_END)) {
        this.forward(chunk);
        cb();
        return;
      }
    }
    this.held.push(chunk);
    this.heldBytes += chunk.length;
    // the head end may straddle two chunks: search the tail of the previous one too
    const prev = this.held.length > 1 ? this.held[this.held.length - 2]! : undefined;
    const seam = prev ? Buffer.concat([prev.subarray(Math.max(0, prev.length - 3)), chunk]) : chunk;
    if (seam.includes(HEAD_END) || this.heldBytes >= MAX_HELD_BYTES) this.release();
    else if (!this.timer) this.timer = setTimeout(() => this.release(), HOLD_MS);
    cb();
  }

  override _flush(cb: TransformCallback): void {
    this.release();
    if (this.prefix) this.push(this.prefix);
    this.prefix = undefined;
    cb();
  }

  override _destroy(err: Error | null, cb: (error: Error | null) => void): void {
    if (this.timer) clearTimeout(this.timer);
    cb(err);
  }

  private release(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.heldBytes === 0) return;
    const all = this.held.length === 1 ? this.held[0]! : Buffer.concat(this.held, this.heldBytes);
    this.held = [];
    this.heldBytes = 0;
    this.forward(all);
  }

  private forward(chunk: Buffer): void {
    if (this.prefix) {
      chunk = Buffer.concat([this.prefix, chunk]);
      this.prefix = undefined;
    }
    this.push(chunk);
  }
}
