// A request head that arrives in pieces is held by the TLS front until it is
// complete (uWS refuses a head over 4 KiB split across reads; pieces far
// apart: test/integration/api-basics.test.ts "large request heads"). A first
// head that never completes is answered 408 at the hold bound
// (src/gateway/request-head-coalescer.ts).
import type { Socket } from 'node:net';
import { connect, type TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTlsFront } from '../../src/gateway/tls-front.js';
import type { Pki } from '../../src/server/pki.js';
import { pkiAndUnixBackend, requestHeads, type UnixBackendFixture } from '../helpers/unix-backend.js';

let fixture: UnixBackendFixture | undefined;
let pki: Pki;
/** the request lines the backend read, and the bytes it got on each connection */
const seen: string[] = [];
const bytesPerConnection: number[] = [];

function serveBackend(s: Socket): void {
  const at = bytesPerConnection.push(0) - 1;
  const consume = requestHeads((line) => {
    seen.push(line);
    s.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
  });
  s.on('error', () => undefined);
  s.on('data', (chunk: Buffer) => {
    bytesPerConnection[at]! += chunk.length;
    consume(chunk);
  });
}

beforeAll(async () => {
  fixture = await pkiAndUnixBackend('orch-tls-h1-hold-', serveBackend);
  pki = fixture.pki;
});
afterAll(async () => {
  await fixture?.close();
});

function client(port: number): Promise<{ socket: TLSSocket; received: () => string; closed: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, ca: pki.ca.certPem, servername: 'localhost' }, () => resolve({ socket, received: () => out, closed }));
    let out = '';
    socket.on('data', (d: Buffer) => (out += d.toString('latin1')));
    const closed = new Promise<void>((r) => socket.on('close', () => r()));
    socket.on('error', reject);
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('request heads held by the TLS front', () => {
  it('a first head that does not complete within the bound is answered 408 with a Status, and nothing reaches the backend', async () => {
    const front = await startTlsFront({ host: '127.0.0.1', port: 0, key: pki.serving.keyPem, cert: pki.serving.certPem, clientCA: pki.ca.certPem, backendSocketPath: fixture!.socketPath, headHoldMs: 300 });
    try {
      const connectionsBefore = bytesPerConnection.length;
      const c = await client(front.port);
      c.socket.write('GET /never-finished HTTP/1.1\r\nHost: localhost\r\n');
      await c.closed;
      const text = c.received();
      expect(text).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
      expect(text).toMatch(/\r\nConnection: close\r\n/);
      const status = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;
      expect(status).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Timeout', code: 408 });
      expect(seen).not.toContain('GET /never-finished HTTP/1.1');
      // a backend connection may have been opened for it; it was sent nothing, not even the PROXY header
      expect(bytesPerConnection.slice(connectionsBefore).every((n) => n === 0)).toBe(true);
    } finally {
      await front.close();
    }
  });
});
