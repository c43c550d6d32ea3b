// The request and response heads of the channel's Request, Response and
// Head frames (src/gateway/mux-frames.ts), in binary instead of JSON: every
// request and every answer crosses between a TLS worker and the main process
// with one, and a JSON.stringify plus JSON.parse per crossing cost more than
// copying the strings (issue 14, docs/architecture.md "Write path cost").
//
//   request head:  u8 flags (1: bodyFollows given, 2: its value) | str method
//                  | str path | str query | str proxiedAddress | u32 n | n × (str name, str value)
//   response head: u16 status | u8 flags (1: length given) | [f64 length]
//                  | u32 n | n × (str name, str value)
//   str:           u32 (top two bits: 00 ASCII, 10 UTF-8, 01 JSON text) | bytes
//
// A string that is not well-formed UTF-16 (a lone surrogate) goes as JSON
// text, so every string round-trips exactly, as it did through JSON.

/** what the front sends of a request (the query apart, as uWS gives it) */
export interface RequestHead {
  method: string;
  path: string;
  query: string;
  /** the TLS connection's id (the PROXY-header address text the gateway looks identities up by) */
  proxiedAddress: string;
  /** lower-case names, repeated fields already joined */
  headers: [string, string][];
  /**
   * The body follows in a Body frame (HTTP/1.1: the head was read before the
   * body, and goes ahead so that overload shedding answers before the body
   * is read, as uWS does); the Request frame's body is empty.
   */
  bodyFollows?: boolean;
}

export interface ResponseHead {
  status: number;
  headers: [string, string][];
  /** a whole body sent in pieces (Head, Data…, End): its length, for HTTP/1.1's Content-Length; absent for streams */
  length?: number;
}

const UTF8 = 0x80000000;
const JSON_TEXT = 0x40000000;
const LENGTH_MASK = 0x3fffffff;
/** with the u flag a surrogate pair is one code point: only a lone half matches */
const LONE_SURROGATE = /\p{Cs}/u;

/** Buffer's own slicing decoders (what `toString(encoding, start, end)` calls after checking its arguments) */
interface Slicing {
  latin1Slice(start: number, end: number): string;
  utf8Slice(start: number, end: number): string;
}

/** at most this many bytes for a string: its length word and 3 bytes per UTF-16 unit (JSON text of a lone surrogate: 6 for its 1) */
function strBound(s: string): number {
  return 4 + 6 * s.length;
}

function pairsBound(pairs: readonly (readonly [string, string])[]): number {
  let n = 4;
  for (const [k, v] of pairs) n += strBound(k) + strBound(v);
  return n;
}

function writeStr(buf: Buffer, at: number, s: string): number {
  const start = at + 4;
  const n = s.length;
  let i = 0;
  for (; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c > 0x7f) break;
    buf[start + i] = c;
  }
  if (i === n) {
    buf.writeUInt32BE(n, at);
    return start + n;
  }
  if (!LONE_SURROGATE.test(s)) {
    const w = buf.write(s, start, 'utf8');
    buf.writeUInt32BE(w + UTF8, at);
    return start + w;
  }
  const w = buf.write(JSON.stringify(s), start, 'utf8');
  buf.writeUInt32BE(w + JSON_TEXT, at);
  return start + w;
}

function writePairs(buf: Buffer, at: number, pairs: readonly (readonly [string, string])[]): number {
  buf.writeUInt32BE(pairs.length, at);
  at += 4;
  for (const [k, v] of pairs) {
    at = writeStr(buf, at, k);
    at = writeStr(buf, at, v);
  }
  return at;
}

/** the most bytes `writeRequestHead` writes for this head */
export function requestHeadBound(h: RequestHead): number {
  return 1 + strBound(h.method) + strBound(h.path) + strBound(h.query) + strBound(h.proxiedAddress) + pairsBound(h.headers);
}

/** writes the head at `at` (room for `requestHeadBound` bytes); returns where it ends */
export function writeRequestHead(buf: Buffer, at: number, h: RequestHead): number {
  buf[at] = h.bodyFollows === undefined ? 0 : h.bodyFollows ? 3 : 1;
  at = writeStr(buf, at + 1, h.method);
  at = writeStr(buf, at, h.path);
  at = writeStr(buf, at, h.query);
  at = writeStr(buf, at, h.proxiedAddress);
  return writePairs(buf, at, h.headers);
}

export function responseHeadBound(h: ResponseHead): number {
  return 3 + 8 + pairsBound(h.headers);
}

export function writeResponseHead(buf: Buffer, at: number, h: ResponseHead): number {
  buf.writeUInt16BE(h.status, at);
  if (h.length === undefined) {
    buf[at + 2] = 0;
    at += 3;
  } else {
    buf[at + 2] = 1;
    buf.writeDoubleBE(h.length, at + 3);
    at += 11;
  }
  return writePairs(buf, at, h.headers);
}

/** reads one head within [at, end); a head that runs past `end` throws (a broken frame) */
class HeadReader {
  constructor(
    private readonly buf: Buffer,
    public at: number,
    private readonly end: number,
  ) {}

  private need(n: number): number {
    const at = this.at;
    if (at + n > this.end) throw new RangeError('truncated frame head');
    this.at = at + n;
    return at;
  }

  u8(): number {
    return this.buf[this.need(1)]!;
  }

  u16(): number {
    return this.buf.readUInt16BE(this.need(2));
  }

  u32(): number {
    return this.buf.readUInt32BE(this.need(4));
  }

  f64(): number {
    return this.buf.readDoubleBE(this.need(8));
  }

  str(): string {
    const w = this.u32();
    const n = w & LENGTH_MASK;
    const start = this.need(n);
    const b = this.buf as Buffer & Slicing;
    if (w >= UTF8) return b.utf8Slice(start, start + n);
    if (w >= JSON_TEXT) return JSON.parse(b.utf8Slice(start, start + n)) as string;
    return b.latin1Slice(start, start + n);
  }

  pairs(): [string, string][] {
    const n = this.u32();
    // each pair takes at least 8 bytes: a count beyond what is left is a broken frame, not an allocation
    if (n * 8 > this.end - this.at) throw new RangeError('truncated frame head');
    const out = new Array<[string, string]>(n);
    for (let i = 0; i < n; i++) {
      const k = this.str();
      out[i] = [k, this.str()];
    }
    return out;
  }
}

/** a headed payload: u32 head length, the head, the body */
function split(payload: Buffer): { reader: HeadReader; body: Buffer } {
  if (payload.length < 4) throw new RangeError('truncated frame head');
  const n = payload.readUInt32BE(0);
  if (4 + n > payload.length) throw new RangeError('truncated frame head');
  return { reader: new HeadReader(payload, 4, 4 + n), body: payload.subarray(4 + n) };
}

/** a Request frame's payload */
export function readRequest(payload: Buffer): { head: RequestHead; body: Buffer } {
  const { reader: r, body } = split(payload);
  const flags = r.u8();
  const method = r.str();
  const path = r.str();
  const query = r.str();
  const proxiedAddress = r.str();
  const head: RequestHead = { method, path, query, proxiedAddress, headers: r.pairs() };
  if (flags & 1) head.bodyFollows = (flags & 2) !== 0;
  return { head, body };
}

/** a Response or Head frame's payload */
export function readResponse(payload: Buffer): { head: ResponseHead; body: Buffer } {
  const { reader: r, body } = split(payload);
  const status = r.u16();
  const length = r.u8() & 1 ? r.f64() : undefined;
  const head: ResponseHead = { status, headers: r.pairs() };
  if (length !== undefined) head.length = length;
  return { head, body };
}
