// The server half of SPDY/3.1 framing (draft-mbelshe-httpbis-spdy-00), as
// far as kube's port-forward protocol needs it: kubectl 1.32 port-forward
// opens a WebSocket with subprotocol `SPDY/3.1+portforward.k8s.io` and runs a
// SPDY session inside it (each binary message carries bytes of the SPDY byte
// stream). Frames: SYN_STREAM (client opens a stream; compressed name/value
// headers), SYN_REPLY (we accept it), DATA (with FIN = half close),
// RST_STREAM, PING (echoed), GOAWAY; SETTINGS and WINDOW_UPDATE are read and
// ignored (the peer does not enforce flow-control windows, and the streams
// here carry one TCP connection each, paced by the WebSocket).
//
// Header blocks share one zlib context per direction, primed with the SPDY/3
// dictionary (§2.6.10.1). The client sync-flushes each block, so a block is
// whole deflate data whose back-references reach at most 32 KiB back into the
// dictionary and the blocks before it: each is inflated on its own (raw, with
// those 32 KiB as its dictionary), synchronously, at a cost that does not grow
// with the session (a port-forward carries two blocks per connection, and one
// session may forward thousands). A block may inflate to at most 256 KiB. Our
// own blocks (empty header sets in SYN_REPLY) are sent as stored deflate
// blocks, which need no dictionary.

import { constants, inflateRawSync } from 'node:zlib';

const SYN_STREAM = 1;
const SYN_REPLY = 2;
const RST_STREAM = 3;
const PING = 6;
const GOAWAY = 7;
const HEADERS = 8;
export const FLAG_FIN = 0x01;
/** the largest frame payload accepted (kube's streams send 32 KiB) */
const MAX_FRAME = 1 << 20;
/** the most one header block may inflate to (a small block can inflate to gigabytes) */
const MAX_HEADER_BLOCK = 256 * 1024;
/** how far back deflate's back-references reach (RFC 1951 §2) */
const DEFLATE_WINDOW = 32 * 1024;

/** the SPDY/3 header dictionary: length-prefixed names and values, then a text tail (§2.6.10.1) */
const DICT_WORDS = [
  'options', 'head', 'post', 'put', 'delete', 'trace', 'accept', 'accept-charset', 'accept-encoding', 'accept-language',
  'accept-ranges', 'age', 'allow', 'authorization', 'cache-control', 'connection', 'content-base', 'content-encoding',
  'content-language', 'content-length', 'content-location', 'content-md5', 'content-range', 'content-type', 'date', 'etag',
  'expect', 'expires', 'from', 'host', 'if-match', 'if-modified-since', 'if-none-match', 'if-range', 'if-unmodified-since',
  'last-modified', 'location', 'max-forwards', 'pragma', 'proxy-authenticate', 'proxy-authorization', 'range', 'referer',
  'retry-after', 'server', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'user-agent', 'vary', 'via', 'warning',
  'www-authenticate', 'method', 'get', 'status', '200 OK', 'version', 'HTTP/1.1', 'url', 'public', 'set-cookie', 'keep-alive', 'origin',
];
const DICT_TAIL =
  '100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505' +
  '203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request401 Unauthorized' +
  '403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented503 Service Unavailable' +
  'Jan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMT' +
  'chunked,text/html,image/png,image/jpg,image/gif,application/xml,application/xhtml+xml,text/plain,' +
  'text/javascript,publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0.';

export const SPDY3_DICTIONARY: Buffer = Buffer.concat([
  ...DICT_WORDS.flatMap((w) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(w.length);
    return [len, Buffer.from(w, 'latin1')];
  }),
  Buffer.from(DICT_TAIL, 'latin1'),
]);

export interface SpdyHandlers {
  /** the client opened a stream; `fin`: it will send no data on it */
  onStream(id: number, headers: Map<string, string>, fin: boolean): void;
  onData(id: number, data: Buffer, fin: boolean): void;
  onReset(id: number): void;
  /** the session cannot go on (bad framing, GOAWAY) */
  onEnd(reason: string): void;
}

export class SpdyServerSession {
  private buf: Buffer = Buffer.alloc(0);
  /** the last 32 KiB of the dictionary and of every header block inflated so far */
  private window: Buffer = SPDY3_DICTIONARY.subarray(-DEFLATE_WINDOW);
  /** the first block's zlib header has been read */
  private zlibHeaderRead = false;
  private sentHeaderBlock = false;
  private ended = false;

  constructor(
    private readonly write: (bytes: Buffer) => void,
    private readonly h: SpdyHandlers,
  ) {}

  /** bytes of the client's SPDY stream, in order */
  feed(bytes: Buffer): void {
    if (this.ended) return;
    this.buf = this.buf.length === 0 ? bytes : Buffer.concat([this.buf, bytes]);
    while (this.buf.length >= 8 && !this.ended) {
      const len = this.buf.readUIntBE(5, 3);
      if (len > MAX_FRAME) return this.end(`a frame of ${len} bytes is larger than ${MAX_FRAME}`);
      if (this.buf.length < 8 + len) return;
      const head = this.buf.subarray(0, 8);
      const body = this.buf.subarray(8, 8 + len);
      this.buf = this.buf.subarray(8 + len);
      try {
        this.frame(head, body);
      } catch (e) {
        this.end(`bad SPDY frame: ${(e as Error).message}`);
      }
    }
  }

  reply(id: number): void {
    const block = this.emptyHeaderBlock();
    const body = Buffer.alloc(4 + block.length);
    body.writeUInt32BE(id & 0x7fffffff);
    block.copy(body, 4);
    this.control(SYN_REPLY, 0, body);
  }

  data(id: number, data: Buffer, fin = false): void {
    if (this.ended || (data.length === 0 && !fin)) return;
    let off = 0;
    do {
      const piece = data.subarray(off, off + 32 * 1024);
      off += piece.length;
      const head = Buffer.alloc(8);
      head.writeUInt32BE(id & 0x7fffffff);
      head[4] = fin && off >= data.length ? FLAG_FIN : 0;
      head.writeUIntBE(piece.length, 5, 3);
      this.write(Buffer.concat([head, piece]));
    } while (off < data.length);
  }

  reset(id: number, status = 5 /* CANCEL */): void {
    const body = Buffer.alloc(8);
    body.writeUInt32BE(id & 0x7fffffff);
    body.writeUInt32BE(status, 4);
    this.control(RST_STREAM, 0, body);
  }

  private end(reason: string): void {
    if (this.ended) return;
    this.ended = true;
    this.h.onEnd(reason);
  }

  private control(type: number, flags: number, body: Buffer): void {
    if (this.ended) return;
    const head = Buffer.alloc(8);
    head.writeUInt16BE(0x8003);
    head.writeUInt16BE(type, 2);
    head[4] = flags;
    head.writeUIntBE(body.length, 5, 3);
    this.write(Buffer.concat([head, body]));
  }

  private frame(head: Buffer, body: Buffer): void {
    const flags = head[4]!;
    if ((head[0]! & 0x80) === 0) {
      this.h.onData(head.readUInt32BE(0) & 0x7fffffff, body, (flags & FLAG_FIN) !== 0);
      return;
    }
    const version = head.readUInt16BE(0) & 0x7fff;
    if (version !== 3) throw new Error(`SPDY version ${version} is not spoken (only 3)`);
    const type = head.readUInt16BE(2);
    switch (type) {
      case SYN_STREAM: {
        const id = body.readUInt32BE(0) & 0x7fffffff;
        this.h.onStream(id, this.headers(body.subarray(10)), (flags & FLAG_FIN) !== 0);
        return;
      }
      case HEADERS:
        // keeps the zlib context in step; nothing here uses late headers
        this.headers(body.subarray(4));
        return;
      case RST_STREAM:
        this.h.onReset(body.readUInt32BE(0) & 0x7fffffff);
        return;
      case PING:
        this.control(PING, 0, body.subarray(0, 4));
        return;
      case GOAWAY:
        this.end('the client sent GOAWAY');
        return;
      default:
        // SETTINGS, WINDOW_UPDATE, CREDENTIAL: nothing to do
        return;
    }
  }

  /** a compressed name/value block → lower-case names to values (multiple values joined by NUL) */
  private headers(block: Buffer): Map<string, string> {
    let raw = block;
    if (!this.zlibHeaderRead) {
      // RFC 1950: CMF, FLG, and with FDICT set the dictionary's Adler-32
      if (block.length < 2 || (block[0]! & 0x0f) !== 8) throw new Error('the first header block does not start with a zlib header');
      raw = block.subarray((block[1]! & 0x20) !== 0 ? 6 : 2);
      this.zlibHeaderRead = true;
    }
    const out = inflateRawSync(raw, { dictionary: this.window, finishFlush: constants.Z_SYNC_FLUSH, maxOutputLength: MAX_HEADER_BLOCK });
    const seen = Buffer.concat([this.window, out]);
    this.window = seen.length > DEFLATE_WINDOW ? Buffer.from(seen.subarray(seen.length - DEFLATE_WINDOW)) : seen;
    const map = new Map<string, string>();
    let at = 0;
    const n = out.readUInt32BE(at);
    at += 4;
    for (let i = 0; i < n; i++) {
      const kl = out.readUInt32BE(at);
      const k = out.toString('latin1', at + 4, at + 4 + kl);
      at += 4 + kl;
      const vl = out.readUInt32BE(at);
      const v = out.toString('latin1', at + 4, at + 4 + vl);
      at += 4 + vl;
      map.set(k.toLowerCase(), v);
    }
    return map;
  }

  /**
   * an empty name/value block (4 zero bytes) as a stored deflate block, then an empty stored
   * block, as a sync flush ends (inflaters such as Go's hand out a block's bytes only when the
   * next block starts); the first carries the zlib header
   */
  private emptyHeaderBlock(): Buffer {
    const stored = Buffer.from([0x00, 0x04, 0x00, 0xfb, 0xff, 0, 0, 0, 0, 0x00, 0x00, 0x00, 0xff, 0xff]);
    if (this.sentHeaderBlock) return stored;
    this.sentHeaderBlock = true;
    return Buffer.concat([Buffer.from([0x78, 0x01]), stored]);
  }
}
