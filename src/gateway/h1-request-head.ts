// HTTP/1.1 request heads and chunked request bodies as the TLS front reads
import { joinHeaderLine } from '../core/header-join.js';
// them for the multiplexed channel (docs/tls.md "HTTP/1.1 over the
// multiplexed channel"). The rule is exactness: a head is parsed only when
// the request means the same thing to the gateway as it does through uWS;
// anything else (an upgrade, an absolute target, a body over the limit, an
// unusual expectation, a header name the gateway would decode, bytes outside
// ASCII) is `undefined`, and the connection goes on over the per-connection
// uWS path, which handles it as it always has.
//
// Two kinds of request uWS cannot answer at all (it closes the connection
// without a word) are handled here instead:
// - HTTP/1.0 (load balancers' health checks, ApacheBench): carried like
//   HTTP/1.1, answered without chunked framing and the connection closed
//   after the answer (RFC 9112 §6.3, §9.3);
// - a head that is not HTTP (a broken request line or header line, an
//   invalid Content-Length, both framings, a transfer coding other than
//   chunked, an unknown method, another HTTP version): a `Rejection`, which
//   the front answers with a Status and closes (RFC 9112 §2.2, §6.1, §6.3).

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
  /** `Connection: close`, or HTTP/1.0: the connection ends after this response */
  close: boolean;
  /** an HTTP/1.0 request: its answer is not chunked (a stream ends with the connection) */
  http10: boolean;
}

/** a head the front answers itself with a Status and the connection's close */
export interface Rejection {
  /** 200: `OPTIONS *`, answered empty (Go's server answers it itself) */
  reject: { code: 200 | 400 | 405 | 501 | 505; message: string };
}

const rejection = (code: Rejection['reject']['code'], message: string): Rejection => ({ reject: { code, message } });

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
const TCHAR = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * Parses the head in `buf[0, end)` (`end` is where its CRLFCRLF starts):
 * the request, a Rejection the front answers, or undefined when it must take
 * the uWS path.
 */
export function parseRequestHead(buf: Buffer, end: number): H1RequestHead | Rejection | undefined {
  for (let i = 0; i < end; i++) {
    const c = buf[i]!;
    // a control character (bare CR/LF are checked per line below): not HTTP, Go's 400 (uWS would
    // keep the connection open without a word until its idle close)
    if (c === 0x7f || (c < 0x20 && c !== 0x0d && c !== 0x0a && c !== 0x09)) return rejection(400, 'malformed HTTP request: a control character in the request head');
    // bytes outside ASCII (UTF-8 in a header value)
    if (c > 0x7f) return undefined;
  }
  const lines = buf.toString('latin1', 0, end).split('\r\n');
  const m = /^([^ ]+) ([^ ]+) HTTP\/(\d)\.(\d)$/.exec(lines[0]!);
  if (!m || lines[0]!.includes('\n')) return rejection(400, 'malformed HTTP request line');
  const [, method, rawTarget, major, minor] = m as unknown as [string, string, string, string, string];
  if (!TCHAR.test(method)) return rejection(400, `malformed HTTP method "${method}"`);
  if (major !== '1' || (minor !== '0' && minor !== '1')) return rejection(505, `HTTP version ${major}.${minor} is not supported`);
  const http10 = minor === '0';
  // an authority target (CONNECT): as uWS has always handled it
  if (method === 'CONNECT') return undefined;
  const target = originForm(rawTarget);
  if (typeof target !== 'string') return target;
  if (!METHODS.has(method)) return rejection(405, 'the server does not allow this method on the requested resource');
  const q = target.indexOf('?');
  const headers = new Map<string, string>();
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.includes('\n')) return undefined;
    // obs-fold (RFC 9112 §5.2: reject or unfold; uWS never accepted it)
    if (line.startsWith(' ') || line.startsWith('\t')) return rejection(400, 'folded header line');
    const colon = line.indexOf(':');
    if (colon <= 0) return rejection(400, 'malformed header line');
    const name = line.slice(0, colon);
    // whitespace before the colon (RFC 9112 §5.1: 400) or not a token
    if (!TCHAR.test(name)) return rejection(400, `malformed header name "${name}"`);
    const lower = name.toLowerCase();
    if (lower.startsWith('x-orch-hn-')) return undefined;
    const value = line.slice(colon + 1).trim();
    headers.set(lower, joinHeaderLine(lower, headers.get(lower), value));
  }
  if (headers.has('upgrade') || headers.has('http2-settings')) return undefined;
  const connection = (headers.get('connection') ?? '').toLowerCase();
  if (connection.includes('upgrade')) return undefined;
  const te = headers.get('transfer-encoding');
  const cl = headers.get('content-length');
  let bodyLength = 0;
  if (te !== undefined) {
    // both framings: a request smuggling vector (RFC 9112 §6.3 item 3)
    if (cl !== undefined) return rejection(400, 'both Transfer-Encoding and Content-Length');
    if (http10) return rejection(400, 'Transfer-Encoding in an HTTP/1.0 request');
    if (te.toLowerCase() !== 'chunked') return rejection(501, `the transfer coding "${te}" is not supported`);
    bodyLength = -1;
  } else if (cl !== undefined) {
    if (!/^\d+$/.test(cl)) return rejection(400, `invalid Content-Length "${cl}"`);
    // over the limit: uWS answers 413 as it always has
    if (cl.length > 10) return undefined;
    bodyLength = Number(cl);
    if (bodyLength > MAX_MUX_BODY_BYTES) return undefined;
  }
  const expect = headers.get('expect');
  if (expect !== undefined && expect.toLowerCase() !== '100-continue') return undefined;
  return {
    method,
    path: q < 0 ? target : target.slice(0, q),
    query: q < 0 ? '' : target.slice(q + 1),
    headers: [...headers],
    bodyLength,
    // an HTTP/1.0 client does not know 100 Continue: it sends its body anyway
    expectContinue: expect !== undefined && !http10,
    // HTTP/1.0: every answer ends its connection (keep-alive is not offered)
    close: http10 || /(^|,)\s*close\s*(,|$)/.test(connection),
    http10,
  };
}

/**
 * The origin-form target (`/path?query`) a request target means, as Go's server reads it (RFC 9112
 * §3.2): an absolute-form one (`https://host/path`, a proxy's form) is its path and query; `OPTIONS *`
 * is Go's own empty 200; anything else (an authority, a relative path) is a 400. uWS answers none of
 * them: it holds the connection until its idle close.
 */
function originForm(target: string): string | Rejection {
  if (target.startsWith('/')) return target;
  if (target === '*') return { reject: { code: 200, message: '' } };
  const absolute = /^https?:\/\/[^/?#]*/i.exec(target);
  if (!absolute) return rejection(400, `malformed HTTP request: invalid request target ${JSON.stringify(target)}`);
  const rest = target.slice(absolute[0].length);
  return rest.startsWith('/') ? rest : `/${rest}`;
}

export function isRejection(h: H1RequestHead | Rejection): h is Rejection {
  return 'reject' in h;
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
