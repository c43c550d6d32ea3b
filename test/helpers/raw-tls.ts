// Raw TLS connections to a test server, for tests that play misbehaving
// clients byte by byte (slowloris, watches that never read).

import type { Socket } from 'node:net';
import { type TLSSocket, connect as tlsConnect } from 'node:tls';
import type { TestServer } from './server.js';

/** a TLS connection authenticated as the admin (client certificate) */
export function adminTls(t: TestServer): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const s = tlsConnect({ host: '127.0.0.1', port: t.server.port, ca: t.server.caPem, cert: t.server.adminCertPem, key: t.server.adminKeyPem });
    s.once('secureConnect', () => resolve(s));
    s.once('error', reject);
  });
}

/** resolves with what the server sent once it closes the connection; rejects if it has not after `ms` */
export function closedByServer(s: Socket, ms: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const got: Buffer[] = [];
    s.on('data', (d: Buffer) => got.push(d));
    s.on('error', () => undefined);
    const timer = setTimeout(() => reject(new Error(`the server kept the connection open for ${ms} ms`)), ms);
    s.once('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(got).toString('latin1'));
    });
  });
}

/**
 * `n` watch streams on `path` whose clients never read (paused sockets: the
 * kernel buffers fill, then the server's backlog), and one that reads
 * everything; `seen()` is what the reader has received so far.
 */
export async function stalledWatchersAndReader(t: TestServer, path: string, n: number): Promise<{ stalled: TLSSocket[]; reader: TLSSocket; seen(): string }> {
  const request = `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`;
  const stalled = await Promise.all(Array.from({ length: n }, () => adminTls(t)));
  for (const s of stalled) {
    s.write(request);
    s.pause();
  }
  const reader = await adminTls(t);
  let seen = '';
  reader.on('data', (d: Buffer) => (seen += d.toString('latin1')));
  reader.write(request);
  return { stalled, reader, seen: () => seen };
}

/** one HTTP/1.1 response as it came on the wire */
export interface WireResponse {
  head: string;
  status: number;
  /** the body as framed on the wire (chunk sizes included) */
  framed: Buffer;
  /** the body's bytes */
  body: Buffer;
}

/** reads HTTP/1.1 responses from a raw connection, piece by piece, in wire order */
export class WireReader {
  private buf: Buffer = Buffer.alloc(0);
  private wake: (() => void) | undefined;
  ended = false;

  constructor(s: Socket) {
    s.on('data', (d: Buffer) => {
      this.buf = Buffer.concat([this.buf, d]);
      this.wake?.();
    });
    const end = (): void => {
      this.ended = true;
      this.wake?.();
    };
    s.on('end', end);
    s.on('close', end);
    s.on('error', () => undefined);
  }

  /** bytes received and not read yet */
  get pending(): number {
    return this.buf.length;
  }

  private async until<T>(take: () => T | undefined, what: string, ms = 20_000): Promise<T> {
    const deadline = Date.now() + ms;
    for (;;) {
      const got = take();
      if (got !== undefined) return got;
      if (this.ended) throw new Error(`connection closed while waiting for ${what} (${this.buf.length} bytes unread: ${JSON.stringify(this.buf.toString('latin1').slice(0, 200))})`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no ${what} within ${ms} ms`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.wake = undefined;
    }
  }

  /** a response head, CRLFCRLF included */
  head(): Promise<string> {
    return this.until(() => {
      const end = this.buf.indexOf('\r\n\r\n');
      if (end < 0) return undefined;
      const h = this.buf.toString('latin1', 0, end + 4);
      this.buf = this.buf.subarray(end + 4);
      return h;
    }, 'response head');
  }

  bytes(n: number): Promise<Buffer> {
    return this.until(() => {
      if (this.buf.length < n) return undefined;
      const b = this.buf.subarray(0, n);
      this.buf = this.buf.subarray(n);
      return b;
    }, `${n} bytes`);
  }

  /** one chunk of a chunked body: its framed bytes and its data (empty data: the last chunk) */
  chunk(): Promise<{ framed: Buffer; data: Buffer }> {
    return this.until(() => {
      const lineEnd = this.buf.indexOf('\r\n');
      if (lineEnd < 0) return undefined;
      const size = parseInt(this.buf.toString('latin1', 0, lineEnd), 16);
      if (Number.isNaN(size)) throw new Error(`not a chunk: ${JSON.stringify(this.buf.toString('latin1').slice(0, 80))}`);
      const total = lineEnd + 2 + size + 2;
      if (this.buf.length < total) return undefined;
      const framed = this.buf.subarray(0, total);
      this.buf = this.buf.subarray(total);
      return { framed, data: framed.subarray(lineEnd + 2, lineEnd + 2 + size) };
    }, 'chunk');
  }

  /** a whole response; `toHead`: it answers a HEAD request (no body follows) */
  async response(toHead = false): Promise<WireResponse> {
    const head = await this.head();
    const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(head)?.[1]);
    if (toHead || (status >= 100 && status < 200)) return { head, status, framed: Buffer.alloc(0), body: Buffer.alloc(0) };
    const length = /\r\ncontent-length: *(\d+)\r\n/i.exec(head);
    if (length) {
      const body = await this.bytes(Number(length[1]));
      return { head, status, framed: body, body };
    }
    if (!/\r\ntransfer-encoding: *chunked\r\n/i.test(head)) throw new Error(`no framing in ${JSON.stringify(head)}`);
    const framed: Buffer[] = [];
    const data: Buffer[] = [];
    for (;;) {
      const c = await this.chunk();
      framed.push(c.framed);
      if (c.data.length === 0) break;
      data.push(c.data);
    }
    return { head, status, framed: Buffer.concat(framed), body: Buffer.concat(data) };
  }
}
