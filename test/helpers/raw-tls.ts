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
