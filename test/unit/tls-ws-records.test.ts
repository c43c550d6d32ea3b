// Through the TLS front, a WebSocket's frames reach the client one TLS record
// each even when uWS wrote them in one go (src/gateway/ws-record-writer.ts):
// the Kubernetes Python client's port-forward stalled otherwise, its first
// frames (the ports) read and the next left in OpenSSL's buffer.
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PROXY_V2_TCP6_HEADER_LENGTH, startTlsFront } from '../../src/gateway/tls-front.js';
import { TUNNEL_HEADER, TUNNEL_KIND_HEADER, tunnelSocketPath } from '../../src/gateway/byte-tunnels.js';
import { ensurePki, type Pki } from '../../src/server/pki.js';

const HEAD = 'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: x\r\n\r\n';
/** what port-forward's first messages look like: channel byte and port, for data and error channels of two ports */
const FRAMES = [
  [0, 0xd2, 0x04],
  [1, 0xd2, 0x04],
  [2, 0xd3, 0x04],
  [3, 0xd3, 0x04],
].map((p) => Buffer.from([0x82, p.length, ...p]));

let dir: string;
let pki: Pki;
let backend: Server;
let socketPath: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'orch-tls-ws-'));
  pki = await ensurePki(join(dir, 'pki'), {});
  socketPath = join(dir, 'backend.sock');
  // answers the upgrade with the head and every frame in a single write, as uWS's cork does
  backend = createServer((s) => {
    let buf = Buffer.alloc(0);
    s.on('error', () => undefined);
    s.on('data', (c: Buffer) => {
      buf = Buffer.concat([buf, c]);
      if (buf.indexOf('\r\n\r\n', PROXY_V2_TCP6_HEADER_LENGTH) < 0) return;
      s.write(Buffer.concat([Buffer.from(HEAD, 'latin1'), ...FRAMES]));
      buf = Buffer.alloc(0);
    });
  });
  await new Promise<void>((r) => backend.listen(socketPath, r));
});

afterAll(async () => {
  await new Promise((r) => backend.close(r));
  await rm(dir, { recursive: true, force: true });
});

it('writes the 101 head and each frame after it as TLS records of their own', async () => {
  const front = await startTlsFront({ host: '127.0.0.1', port: 0, key: pki.serving.keyPem, cert: pki.serving.certPem, clientCA: pki.ca.certPem, backendSocketPath: socketPath });
  try {
    expect(await recordsOfUpgrade(front.port)).toEqual([HEAD, ...FRAMES.map((f) => f.toString('latin1'))]);
  } finally {
    await front.close();
  }
});

it('does the same for a WebSocket handed over through a tunnel (X-Orch-Tunnel-Kind: websocket)', async () => {
  // the gateway's way since uWS's asynchronous upgrade could close the socket (src/gateway/ws-tunnel.ts):
  // uWS answers an internal 101 with the token, the front relays the connection to the tunnel listener,
  // and what the tunnel writes (the real 101 and the frames, here in one write) is framed by the front
  const tunnelPath = join(dir, 'tunnel-backend.sock');
  const token = 'ab'.repeat(32);
  const tunnel = createServer((s) => {
    s.on('error', () => undefined);
    let line = '';
    s.on('data', (c: Buffer) => {
      line += c.toString('latin1');
      if (!line.includes('\n')) return;
      expect(line.slice(0, line.indexOf('\n'))).toBe(token);
      s.write(Buffer.concat([Buffer.from(HEAD, 'latin1'), ...FRAMES]));
    });
  });
  await new Promise<void>((r) => tunnel.listen(tunnelSocketPath(tunnelPath), r));
  const uws = createServer((s) => {
    s.on('error', () => undefined);
    let buf = Buffer.alloc(0);
    s.on('data', (c: Buffer) => {
      buf = Buffer.concat([buf, c]);
      if (buf.indexOf('\r\n\r\n', PROXY_V2_TCP6_HEADER_LENGTH) < 0) return;
      s.write(`HTTP/1.1 101 Switching Protocols\r\n${TUNNEL_HEADER}: ${token}\r\n${TUNNEL_KIND_HEADER}: websocket\r\nContent-Length: 0\r\n\r\n`);
    });
  });
  await new Promise<void>((r) => uws.listen(tunnelPath, r));
  const front = await startTlsFront({ host: '127.0.0.1', port: 0, key: pki.serving.keyPem, cert: pki.serving.certPem, clientCA: pki.ca.certPem, backendSocketPath: tunnelPath });
  try {
    expect(await recordsOfUpgrade(front.port)).toEqual([HEAD, ...FRAMES.map((f) => f.toString('latin1'))]);
  } finally {
    await front.close();
    await new Promise((r) => uws.close(r));
    await new Promise((r) => tunnel.close(r));
  }
});

/** a port-forward upgrade through the front on `port`: what the client reads, one entry per TLS record */
async function recordsOfUpgrade(port: number): Promise<string[]> {
  const sock = tlsConnect({ host: '127.0.0.1', port, ca: pki.ca.certPem, servername: 'localhost', cert: pki.admin.certPem, key: pki.admin.keyPem });
  try {
    // Node's TLS socket emits one 'data' per record it decrypts (SSL_read returns one record's bytes at most)
    const reads: Buffer[] = [];
    const total = HEAD.length + FRAMES.reduce((n, f) => n + f.length, 0);
    await new Promise<void>((resolve, reject) => {
      sock.on('error', reject);
      sock.on('secureConnect', () => {
        sock.write('GET /api/v1/namespaces/default/pods/p/portforward?ports=1234,1235 HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: v4.channel.k8s.io\r\n\r\n');
      });
      let got = 0;
      sock.on('data', (d: Buffer) => {
        reads.push(d);
        got += d.length;
        if (got >= total) resolve();
      });
    });
    return reads.map((r) => r.toString('latin1'));
  } finally {
    sock.destroy();
  }
}
