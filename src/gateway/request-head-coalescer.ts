// uWebSockets.js can parse a request head of any size when it arrives in one
// read, but one larger than 4 KiB that arrives in several reads is refused
// (the connection is closed). Go clients write requests through a 4 KiB
// buffer, so a long bearer token arrives split. The TLS terminator therefore
// passes the client's bytes through this stream, which holds the pieces of a
// request head until the head is complete and forwards it in one write. It
// gives up holding at a size bound, or when the head has not completed within
// the header-read bound (HEAD_HOLD_MS). That bound used to be 50 ms: on a
// loaded host the pieces of one client write arrived further apart than that,
// the partial head was released, and uWS closed the connection of a client
// that had done nothing wrong.
//
// uWS also closes the connection on a header name with any character outside
// [A-Za-z0-9-], although '.', '_', '%' and others are legal (RFC 9110 tchar)
// and Kubernetes clients send them (`Impersonate-Extra-acme.com%2Fproject`).
// Such names in a complete head are carried as `X-Orch-Hn-<hex of the name>`,
// which the gateway decodes back (`decodeHeaderName`). Nothing else is changed.

import { type Clock, type TimerHandle, systemClock } from '../core/clock.js';
import { Transform, type TransformCallback } from 'node:stream';

const HEAD_END = Buffer.from('\r\n\r\n');
/** heads larger than this are forwarded as they come (uWS refuses them anyway) */
export const MAX_HELD_BYTES = 256 * 1024;
/** a head not complete after this long is a slow client's (uWS's own header-read bound is 10 s) */
export const HEAD_HOLD_MS = 10_000;

/**
 * The coalescing rule without a stream around it: `write` each client chunk,
 * and `emit` receives what goes to the backend (possibly later, from the
 * hold timer). The TLS front calls it straight from the socket's data
 * handler (no Transform stream per connection on the request path).
 */
export class HeadCoalescer {
  private held: Buffer[] = [];
  private heldBytes = 0;
  private timer: TimerHandle | undefined;
  private prefix: Buffer | undefined;

  /**
   * `prefix` (the PROXY header) is sent together with the first bytes, in the
   * same write. `expired`, when given, is asked about a head still
   * incomplete after `holdMs` (`first`: nothing was emitted before it): true
   * means the caller answered the client (what was held is dropped), false
   * releases it as it is.
   */
  constructor(
    private readonly emit: (chunk: Buffer) => void,
    prefix?: Buffer,
    private readonly clock: Clock = systemClock,
    private readonly expiry: { holdMs?: number; expired?: (first: boolean) => boolean } = {},
  ) {
    this.prefix = prefix;
  }

  write(chunk: Buffer): void {
    if (this.heldBytes === 0) {
      // a complete head, or bytes that are not the start of one (a body): pass on
      const isHead = startsWithMethod(chunk);
      if (!isHead || chunk.includes(HEAD_END)) {
        this.forward(isHead ? escapeHeaderNames(chunk) : chunk);
        return;
      }
    }
    this.held.push(chunk);
    this.heldBytes += chunk.length;
    // the head end may straddle two chunks: search the tail of the previous one too
    const prev = this.held.length > 1 ? this.held[this.held.length - 2]! : undefined;
    const seam = prev ? Buffer.concat([prev.subarray(Math.max(0, prev.length - 3)), chunk]) : chunk;
    if (seam.includes(HEAD_END) || this.heldBytes >= MAX_HELD_BYTES) this.release();
    else if (!this.timer) this.timer = this.clock.setTimeout(() => this.onHoldExpired(), this.expiry.holdMs ?? HEAD_HOLD_MS);
  }

  /** the client's end: what is held goes out (and the prefix, if nothing was sent at all) */
  end(): void {
    this.release();
    if (this.prefix) this.emit(this.prefix);
    this.prefix = undefined;
  }

  destroy(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }

  private onHoldExpired(): void {
    this.timer = undefined;
    if (!this.expiry.expired?.(this.prefix !== undefined)) {
      this.release();
      return;
    }
    this.held = [];
    this.heldBytes = 0;
  }

  private release(): void {
    this.timer?.cancel();
    this.timer = undefined;
    if (this.heldBytes === 0) return;
    const all = this.held.length === 1 ? this.held[0]! : Buffer.concat(this.held, this.heldBytes);
    this.held = [];
    this.heldBytes = 0;
    this.forward(escapeHeaderNames(all));
  }

  private forward(chunk: Buffer): void {
    if (this.prefix) {
      chunk = Buffer.concat([this.prefix, chunk]);
      this.prefix = undefined;
    }
    this.emit(chunk);
  }
}

/** `HeadCoalescer` as a Transform stream */
export class RequestHeadCoalescer extends Transform {
  private readonly core: HeadCoalescer;

  constructor(prefix?: Buffer, clock: Clock = systemClock, holdMs?: number) {
    super();
    this.core = new HeadCoalescer((c) => this.push(c), prefix, clock, { holdMs });
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.core.write(chunk);
    cb();
  }

  override _flush(cb: TransformCallback): void {
    this.core.end();
    cb();
  }

  override _destroy(err: Error | null, cb: (error: Error | null) => void): void {
    this.core.destroy();
    cb(err);
  }
}

/** a request line starts with 3 to 10 upper-case letters and a space (METHOD_START, without a string per chunk) */
function startsWithMethod(b: Buffer): boolean {
  const n = Math.min(b.length, 11);
  let i = 0;
  while (i < n && b[i]! >= 0x41 && b[i]! <= 0x5a) i++;
  return i >= 3 && i <= 10 && i < b.length && b[i] === 0x20;
}

const ESCAPED_PREFIX = 'X-Orch-Hn-';
const ESCAPED_PREFIX_LOWER = ESCAPED_PREFIX.toLowerCase();
const UWS_NAME_CHAR = /^[A-Za-z0-9-]*$/;

/**
 * Rewrites the header names uWS would refuse in the first request head of
 * `buf` (when that head is complete); returns `buf` itself when there are none.
 */
export function escapeHeaderNames(buf: Buffer): Buffer {
  const end = buf.indexOf(HEAD_END);
  if (end < 0 || !hasNameToEscape(buf, end)) return buf;
  const head = buf.subarray(0, end).toString('latin1');
  const lines = head.split('\r\n');
  let changed = false;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon);
    if (UWS_NAME_CHAR.test(name)) continue;
    lines[i] = escapeHeaderName(name) + line.slice(colon);
    changed = true;
  }
  if (!changed) return buf;
  return Buffer.concat([Buffer.from(lines.join('\r\n'), 'latin1'), buf.subarray(end)]);
}

/** whether a header name in `buf[0, end)` has a character uWS refuses (a byte scan: no string per request) */
function hasNameToEscape(buf: Buffer, end: number): boolean {
  let i = buf.indexOf(0x0a);
  while (i >= 0 && i < end) {
    // i is at the LF ending the previous line: the name runs to the colon
    let j = i + 1;
    for (; j < end; j++) {
      const c = buf[j]!;
      if (c === 0x3a || c === 0x0d) break;
      const ok = (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x2d;
      if (!ok) return true;
    }
    i = buf.indexOf(0x0a, j);
  }
  return false;
}

/** a header name uWS accepts: itself, or `X-Orch-Hn-<hex>` when it has characters uWS refuses */
export function escapeHeaderName(name: string): string {
  return UWS_NAME_CHAR.test(name) ? name : ESCAPED_PREFIX + Buffer.from(name, 'latin1').toString('hex');
}

/** the original (lower-case) name of a header uWS reports, undoing `escapeHeaderNames` */
export function decodeHeaderName(lowerName: string): string {
  if (!lowerName.startsWith(ESCAPED_PREFIX_LOWER)) return lowerName;
  const hex = lowerName.slice(ESCAPED_PREFIX_LOWER.length);
  if (hex.length === 0 || hex.length % 2 !== 0 || !/^[0-9a-f]+$/.test(hex)) return lowerName;
  return Buffer.from(hex, 'hex').toString('latin1').toLowerCase();
}

/** the answer to a request head that did not complete in time (a Status, as the gateway's errors are) */
export function headTimeoutResponse(holdMs: number, now: number): Buffer {
  const body = JSON.stringify({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `the request head did not complete within ${holdMs / 1000}s`,
    reason: 'Timeout',
    code: 408,
  });
  return Buffer.from(
    `HTTP/1.1 408 Request Timeout\r\nContent-Type: application/json\r\nDate: ${new Date(now).toUTCString()}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    'latin1',
  );
}
