// uWebSockets.js (the build we ship) writes each chunk of a chunked response
// as `\r\n<hex>\r\n<data>`: the CRLF that ends a chunk only goes out with the
// next write. Strict HTTP clients (urllib3 / the Kubernetes Python client)
// then see a watch event only when the next one is written (issue #11, spec
// 000 §2.5, §4.5). This stream sits between uWS and the client in the TLS
// front and re-frames each chunk as `<hex>\r\n<data>\r\n`, complete on the
// wire as soon as uWS writes it.
//
// It also drops the first chunk of a response whose head carries
// `X-Orch-Flush: 1` (and that header): the gateway writes a one-byte chunk
// only to make uWS send the response head before the first event, so a
// stream starts with its first event and nothing else.
//
// Responses are followed by their framing: a Content-Length body is counted
// (uWS sends one even for HEAD), a chunked body parsed. Anything unexpected
// switches the connection to plain pass-through, so the framer can never
// corrupt what uWS sent.

import { Transform, type TransformCallback } from 'node:stream';

const CRLF = Buffer.from('\r\n');
const HEAD_END = Buffer.from('\r\n\r\n');
const FLUSH_HEADER = /\r\nX-Orch-Flush: 1(?=\r\n)/i;
/** a head larger than this is not a response head we know: pass through */
const MAX_HEAD_BYTES = 64 * 1024;
/** the internal hand-over header (TUNNEL_HEADER of byte-tunnels.ts) and its token */
const TUNNEL_TOKEN = /\r\nx-orch-tunnel:\s*([0-9a-f]{64})\r\n/i;
/** TUNNEL_KIND_HEADER of byte-tunnels.ts naming a WebSocket */
const TUNNEL_WEBSOCKET = /\r\nx-orch-tunnel-kind:\s*websocket\r\n/i;

type State =
  | { s: 'head'; held: Buffer[]; bytes: number }
  | { s: 'body'; left: number }
  | { s: 'lead'; got: number }
  | { s: 'size'; line: string; dropNext: boolean }
  | { s: 'data'; left: number; drop: boolean }
  | { s: 'final'; got: number }
  | { s: 'passthrough' }
  | { s: 'websocket' }
  | { s: 'tunnel' };

export class ResponseChunkFramer extends Transform {
  private state: State = { s: 'head', held: [], bytes: 0 };
  private out: Buffer[] = [];
  /** the first chunk of the current response is the gateway's flush byte */
  private dropFirst = false;

  /** the last head was an interim response (100 Continue): its request's final response is still to come */
  private interim = false;

  /** bytes after a WebSocket handshake's 101, not framed here: the caller takes them with takeWebSocketBytes() */
  private wsBytes: Buffer[] = [];

  /** the token of the gateway's internal 101 (src/gateway/byte-tunnels.ts): the connection is handed over, nothing more is framed */
  tunnelToken: string | undefined;
  /** that tunnel carries a WebSocket (TUNNEL_KIND_HEADER): its frames go out one TLS record each */
  tunnelWebSocket = false;

  /** the backend switched the connection to WebSocket: from now on its bytes are frames (src/gateway/ws-record-writer.ts) */
  get webSocket(): boolean {
    return this.state.s === 'websocket';
  }

  /** the WebSocket bytes that came with the 101 head (and any fed since) */
  takeWebSocketBytes(): Buffer | undefined {
    if (this.wsBytes.length === 0) return undefined;
    const out = this.wsBytes.length === 1 ? this.wsBytes[0] : Buffer.concat(this.wsBytes);
    this.wsBytes = [];
    return out;
  }

  /** every response so far is complete (what follows would be a new response head) */
  get betweenResponses(): boolean {
    return this.state.s === 'head' && this.state.bytes === 0 && !this.interim;
  }

  /**
   * The bytes to send for one chunk from uWS, in one buffer (one write, so
   * one TLS record for a response uWS wrote at once), or undefined when
   * nothing is to be sent yet. The TLS front calls this straight from the
   * backend socket's data handler; `_transform` wraps it for streams.
   */
  frame(chunk: Buffer): Buffer | undefined {
    let i = 0;
    while (i < chunk.length) i = this.step(chunk, i);
    const out = this.out;
    if (out.length === 0) return undefined;
    this.out = [];
    return out.length === 1 ? out[0] : Buffer.concat(out);
  }

  /** what is still held at the backend's end (an incomplete head, passed on as it is) */
  finish(): Buffer | undefined {
    if (this.state.s === 'head' && this.state.bytes > 0) {
      const held = Buffer.concat(this.state.held);
      this.state = { s: 'head', held: [], bytes: 0 };
      return held;
    }
    return undefined;
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    const out = this.frame(chunk);
    if (out) this.push(out);
    // as a stream, WebSocket bytes follow unchanged
    const ws = this.takeWebSocketBytes();
    if (ws) this.push(ws);
    cb();
  }

  override _flush(cb: TransformCallback): void {
    const rest = this.finish();
    if (rest) this.push(rest);
    cb();
  }

  /** consumes bytes of `buf` from `i`, returns where it stopped */
  private step(buf: Buffer, i: number): number {
    const st = this.state;
    switch (st.s) {
      case 'passthrough':
        this.out.push(i === 0 ? buf : buf.subarray(i));
        return buf.length;
      case 'websocket':
        this.wsBytes.push(i === 0 ? buf : buf.subarray(i));
        return buf.length;
      case 'tunnel':
        return buf.length;
      case 'body': {
        const n = Math.min(st.left, buf.length - i);
        this.out.push(i === 0 && n === buf.length ? buf : buf.subarray(i, i + n));
        st.left -= n;
        if (st.left === 0) this.state = { s: 'head', held: [], bytes: 0 };
        return i + n;
      }
      case 'head':
        return this.head(st, buf, i);
      case 'lead': {
        if (st.got === 0) {
          const end = completeChunksEnd(buf, i);
          if (end > i) {
            // fast path: whole chunks `\r\n<hex>\r\n<data>` back to back. Each
            // chunk's leading CRLF ends the chunk before it, so the re-framed
            // bytes are the read itself from after the first CRLF, plus one CRLF:
            // no per-chunk parsing into strings, one slice per read
            this.out.push(buf.subarray(i + 2, end), CRLF);
            return end;
          }
        }
        // the CRLF uWS puts before every chunk size: the previous chunk's end, already sent
        if (buf[i] !== CRLF[st.got]) return this.passthrough(buf, i, [CRLF.subarray(0, st.got)]);
        st.got++;
        if (st.got === 2) this.state = { s: 'size', line: '', dropNext: false };
        return i + 1;
      }
      case 'size': {
        const nl = buf.indexOf(0x0a, i);
        const end = nl < 0 ? buf.length : nl + 1;
        st.line += buf.toString('latin1', i, end);
        if (nl < 0) {
          if (st.line.length > 16) return this.passthrough(buf, end, [Buffer.from(st.line, 'latin1')]);
          return end;
        }
        const m = /^([0-9a-fA-F]{1,8})\r\n$/.exec(st.line);
        if (!m) return this.passthrough(buf, end, [Buffer.from(st.line, 'latin1')]);
        const size = parseInt(m[1]!, 16);
        if (size === 0) {
          this.out.push(Buffer.from('0\r\n'));
          this.state = { s: 'final', got: 0 };
        } else {
          const drop = st.dropNext;
          if (!drop) this.out.push(Buffer.from(st.line, 'latin1'));
          this.state = { s: 'data', left: size, drop };
        }
        return end;
      }
      case 'data': {
        const n = Math.min(st.left, buf.length - i);
        if (!st.drop) this.out.push(buf.subarray(i, i + n));
        st.left -= n;
        if (st.left === 0) {
          // the chunk ends now, not with the next write
          if (!st.drop) this.out.push(CRLF);
          this.state = { s: 'lead', got: 0 };
        }
        return i + n;
      }
      case 'final': {
        if (buf[i] !== CRLF[st.got]) return this.passthrough(buf, i, []);
        st.got++;
        if (st.got === 2) {
          this.out.push(CRLF);
          this.state = { s: 'head', held: [], bytes: 0 };
        }
        return i + 1;
      }
    }
  }

  private head(st: Extract<State, { s: 'head' }>, buf: Buffer, i: number): number {
    const piece = i === 0 ? buf : buf.subarray(i);
    // the head end may straddle pieces, and pieces may be a byte long: the last 3 bytes held, across pieces
    const prevTail = st.bytes > 0 ? Buffer.concat(st.held).subarray(-3) : undefined;
    const seam = prevTail ? Buffer.concat([prevTail, piece]) : piece;
    const at = seam.indexOf(HEAD_END);
    if (at < 0) {
      st.held.push(piece);
      st.bytes += piece.length;
      if (st.bytes > MAX_HEAD_BYTES) return this.passthrough(buf, buf.length, st.held.splice(0));
      return buf.length;
    }
    const endInPiece = at + 4 - (prevTail ? prevTail.length : 0);
    const headBuf = st.bytes > 0 ? Buffer.concat([...st.held, piece.subarray(0, endInPiece)]) : piece.subarray(0, endInPiece);
    let head = headBuf.toString('latin1');
    // only 101 heads are looked at for the internal hand-over: ordinary responses pay nothing
    const token = head.startsWith('HTTP/1.1 101') ? TUNNEL_TOKEN.exec(head) : null;
    if (token) {
      // the head is the gateway's own, not the client's: dropped, and the rest with it
      this.tunnelToken = token[1];
      this.tunnelWebSocket = TUNNEL_WEBSOCKET.test(head);
      this.state = { s: 'tunnel' };
      return buf.length;
    }
    if (head.startsWith('HTTP/1.1 101') && /\r\nupgrade:\s*websocket\r\n/i.test(head)) {
      // the head alone; the frames after it are for the caller to write frame by frame
      this.out.push(headBuf);
      this.state = { s: 'websocket' };
      return i + endInPiece;
    }
    // not a response head we know, or another protocol switch: bytes as they are from here on
    if (!head.startsWith('HTTP/1.') || head.startsWith('HTTP/1.1 101')) return this.passthrough(buf, i + endInPiece, [headBuf]);
    this.dropFirst = false;
    this.interim = head.startsWith('HTTP/1.1 1') || head.startsWith('HTTP/1.0 1');
    if (FLUSH_HEADER.test(head)) {
      head = head.replace(FLUSH_HEADER, '');
      this.dropFirst = true;
      this.out.push(Buffer.from(head, 'latin1'));
    } else this.out.push(headBuf);
    if (/\r\ntransfer-encoding:\s*chunked\r\n/i.test(head)) {
      // the head's final CRLF was the first chunk's leading one
      this.state = { s: 'size', line: '', dropNext: this.dropFirst };
      this.dropFirst = false;
    } else {
      const cl = /\r\ncontent-length:\s*(\d+)\r\n/i.exec(head);
      const left = cl ? Number(cl[1]) : 0;
      this.state = left > 0 ? { s: 'body', left } : { s: 'head', held: [], bytes: 0 };
    }
    return i + endInPiece;
  }

  /** stop interpreting: emit what was held and everything from `from` on as it is */
  private passthrough(buf: Buffer, from: number, held: Buffer[]): number {
    this.out.push(...held);
    this.state = { s: 'passthrough' };
    if (from < buf.length) this.out.push(buf.subarray(from));
    return buf.length;
  }
}

/** the value of a hex digit byte, or -1 */
function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  return -1;
}

/**
 * Where the run of complete non-empty chunks `\r\n<hex>\r\n<data>` that
 * starts at `i` ends in `buf` (`i` when none is complete there). The last
 * chunk (size 0), a partial chunk or anything else is left to the byte-wise
 * path.
 */
function completeChunksEnd(buf: Buffer, i: number): number {
  const len = buf.length;
  let end = i;
  for (;;) {
    let k = end + 2;
    if (k > len || buf[end] !== 0x0d || buf[end + 1] !== 0x0a) return end;
    let size = 0;
    let digits = 0;
    for (; k < len && digits <= 8; k++, digits++) {
      const v = hexValue(buf[k]!);
      if (v < 0) break;
      size = size * 16 + v;
    }
    if (digits === 0 || digits > 8 || size === 0 || k + 2 > len || buf[k] !== 0x0d || buf[k + 1] !== 0x0a) return end;
    const dataEnd = k + 2 + size;
    if (dataEnd > len) return end;
    end = dataEnd;
  }
}
