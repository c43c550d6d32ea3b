// HTTP/1.1 request heads and chunked request bodies as the TLS front reads
// them for the multiplexed channel (docs/tls.md "HTTP/1.1 over the
// multiplexed channel"). The rule is exactness: a head is parsed only when
// the request means the same thing to the gateway as it does through uWS;
// anything else (an upgrade, HTTP/1.0, an odd framing, a header name the
// gateway would decode, bytes outside ASCII) is `undefined`, and the
// connection goes on over the per-connection uWS path, which handles it as
// it always has.

/** bodies above this go to uWS, which answers 413 (it reads and drops up to 64 MiB) */
export const MAX_MUX_BODY_BYTES = 4 * 1024 * 1024;

export interface H1RequestHead {
  method: string;
  /** the request target's path, as uWS's getUrl() gives it (raw, not decoded) */
  path: string;
  /** after `?`, as uWS's getQuery() gives it */
  query: string;
  /** lower-case names in order of first appearance, repeated fields joined with ", " (as the uWS transport reads them) */
  headers: [string, string][];
  /** the Content-Length, 0 when none; -1: a chunked body */
  bodyLength: number;
  expectContinue: boolean;
  /** `Connection: close`: the connection ends after this response */
  close: boolean;
}

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
const TCHAR = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * Parses the head in `buf[0, end)` (`end` is where its CRLFCRLF starts), or
 * undefined when it must take the uWS path.
 */
export function parseRequestHead(buf: Buffer, end: number): H1RequestHead | undefined {
  for (let i = 0; i < end; i++) {
    const c = buf[i]!;
    // bytes outside printable ASCII (and bare CR/LF are checked per line below)
    if (c >= 0x7f || (c < 0x20 && c !== 0x0d && c !== 0x0a && c !== 0x09)) return undefined;
  }
  const lines = buf.toString('latin1', 0, end).split('\r\n');
  const m = /^([A-Z]+) (\/[^ ]*) HTTP\/1\.1$/.exec(lines[0]!);
  if (!m || !METHODS.has(m[1]!)) return undefined;
  const target = m[2]!;
  const q = target.indexOf('?');
  const headers = new Map<string, string>();
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.includes('\n')) return undefined;
    const colon = line.indexOf(':');
    if (colon <= 0) return undefined;
    const name = line.slice(0, colon);
    // obs-fold, whitespace before the colon, names uWS would refuse or the gateway would decode
    if (!TCHAR.test(name)) return undefined;
    const lower = name.toLowerCase();
    if (lower.startsWith('x-orch-hn-')) return undefined;
    const value = line.slice(colon + 1).trim();
    const prev = headers.get(lower);
    headers.set(lower, prev === undefined ? value : `${prev}, ${value}`);
  }
  if (headers.has('upgrade') || headers.has('http2-settings')) return undefined;
  const connection = (headers.get('connection') ?? '').toLowerCase();
  if (connection.includes('upgrade')) return undefined;
  const te = headers.get('transfer-encoding');
  const cl = headers.get('content-length');
  let bodyLength = 0;
  if (te !== undefined) {
    if (cl !== undefined || te.toLowerCase() !== 'chunked') return undefined;
    bodyLength = -1;
  } else if (cl !== undefined) {
    if (!/^\d{1,10}$/.test(cl)) return undefined;
    bodyLength = Number(cl);
    if (bodyLength > MAX_MUX_BODY_BYTES) return undefined;
  }
  const expect = headers.get('expect');
  if (expect !== undefined && expect.toLowerCase() !== '100-continue') return undefined;
  return {
    method: m[1]!,
    path: q < 0 ? target : target.slice(0, q),
    query: q < 0 ? '' : target.slice(q + 1),
    headers: [...headers],
    bodyLength,
    expectContinue: expect !== undefined,
    close: /(^|,)\s*close\s*(,|$)/.test(connection),
  };
}

/**
 * Decodes a chunked body (RFC 9112 §7.1) from bytes that may arrive in
 * pieces: `push` the bytes that follow the head; `done` once the last chunk
 * and the trailer section are read. Extensions and trailers are dropped (as
 * uWS does). `failed`: the framing is broken or the body is over the limit.
 */
export class ChunkedBody {
  private buf: Buffer = Buffer.alloc(0);
  private readonly parts: Buffer[] = [];
  private bytes = 0;
  /** where the request's next bytes start in the last pushed buffer, once done */
  rest: Buffer = Buffer.alloc(0);
  done = false;
  failed = false;

  constructor(private readonly limit: number) {}

  push(chunk: Buffer): void {
    if (this.done || this.failed) return;
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    let at = 0;
    for (;;) {
      const lineEnd = this.buf.indexOf('\r\n', at);
      if (lineEnd < 0) {
        if (this.buf.length - at > 1024) this.failed = true;
        break;
      }
      const sizeText = this.buf.toString('latin1', at, lineEnd).split(';', 1)[0]!.trim();
      if (!/^[0-9a-fA-F]{1,8}$/.test(sizeText)) {
        this.failed = true;
        return;
      }
      const size = parseInt(sizeText, 16);
      if (size === 0) {
        // trailer fields up to the empty line
        const trailerEnd = this.buf.indexOf('\r\n', lineEnd + 2);
        if (trailerEnd < 0) break;
        if (trailerEnd === lineEnd + 2) {
          this.done = true;
          this.rest = this.buf.subarray(trailerEnd + 2);
          this.buf = Buffer.alloc(0);
          return;
        }
        const fieldsEnd = this.buf.indexOf('\r\n\r\n', lineEnd + 2);
        if (fieldsEnd < 0) break;
        this.done = true;
        this.rest = this.buf.subarray(fieldsEnd + 4);
        this.buf = Buffer.alloc(0);
        return;
      }
      if (this.bytes + size > this.limit) {
        this.failed = true;
        return;
      }
      if (this.buf.length < lineEnd + 2 + size + 2) break;
      if (this.buf[lineEnd + 2 + size] !== 0x0d || this.buf[lineEnd + 3 + size] !== 0x0a) {
        this.failed = true;
        return;
      }
      this.parts.push(this.buf.subarray(lineEnd + 2, lineEnd + 2 + size));
      this.bytes += size;
      at = lineEnd + 4 + size;
    }
    this.buf = at === 0 ? this.buf : this.buf.subarray(at);
  }

  body(): Buffer {
    return this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.bytes);
  }
}
