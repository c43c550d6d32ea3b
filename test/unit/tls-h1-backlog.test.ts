// "socket hang up" at 5,000 nodes (docs/scale.md, issue #13): uWS listens on
// its unix socket with a backlog of 512, and while the API server's event
// loop is behind it accepts nothing; the TLS front dials a new backend
// connection for every request after an idle retirement (every Lease renewal),
// so past 512 waiting dials the kernel refused them with EAGAIN and the front
// ended the client's connection under its request. The backend here is a
// child process with a backlog of 1, stopped (SIGSTOP) while the clients send:
// the same full accept queue at a small scale. The front now dials again
// (src/gateway/backend-dial.ts) and every request is answered.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect as h2connect } from 'node:http2';
import { Agent, request } from 'node:https';
import { connect as netConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { isBacklogFull } from '../../src/gateway/backend-dial.js';
import { PROXY_V2_TCP6_HEADER_LENGTH, startTlsFront } from '../../src/gateway/tls-front.js';
import { ensurePki, type Pki } from '../../src/server/pki.js';

/** clients sending at once while the backend is stopped: more than its accept queue holds (2 with a backlog of 1) */
const CLIENTS = 8;

// A plain HTTP/1.1 backend behind the PROXY header, listening with a backlog of
// 1; it answers each request head `ok <method> <body length>` and prints
// "ready" once it listens.
const BACKEND = `
const net = require('node:net');
const [path, headerLength] = [process.argv[1], Number(process.argv[2])];
net.createServer((s) => {
  let buf = Buffer.alloc(0);
  let skipped = false;
  s.on('error', () => {});
  s.on('data', (c) => {
    buf = Buffer.concat([buf, c]);
    if (!skipped) {
      if (buf.length < headerLength) return;
      buf = buf.subarray(headerLength);
      skipped = true;
    }
    for (;;) {
      const end = buf.indexOf('\\r\\n\\r\\n');
      if (end < 0) return;
      const head = buf.subarray(0, end).toString('latin1');
      const length = Number(/content-length: *(\\d+)/i.exec(head)?.[1] ?? 0);
      if (buf.length < end + 4 + length) return;
      buf = buf.subarray(end + 4 + length);
      const body = 'ok ' + head.split(' ')[0] + ' ' + length;
      s.write('HTTP/1.1 200 OK\\r\\nContent-Length: ' + body.length + '\\r\\n\\r\\n' + body);
    }
  });
}).listen({ path, backlog: 1 }, () => process.stdout.write('ready\\n'));
`;

let dir: string;
let pki: Pki;
let socketPath: string;
let backend: ChildProcess | undefined;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'orch-tls-h1-backlog-'));
  pki = await ensurePki(join(dir, 'pki'), {});
  socketPath = join(dir, 'backend.sock');
  const child = spawn(process.execPath, ['-e', BACKEND, socketPath, String(PROXY_V2_TCP6_HEADER_LENGTH)], { stdio: ['ignore', 'pipe', 'inherit'] });
  backend = child;
  await new Promise<void>((resolve, reject) => {
    child.stdout.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`backend exited (${code})`)));
  });
});

afterAll(async () => {
  if (backend && backend.exitCode === null) {
    backend.kill('SIGCONT');
    backend.kill('SIGKILL');
    await new Promise((r) => backend!.once('exit', r));
  }
  await rm(dir, { recursive: true, force: true });
});

describe('a backend whose accept queue is full', () => {
  it('refuses a unix-socket connect at once with EAGAIN (the cause)', async () => {
    backend!.kill('SIGSTOP');
    const sockets = Array.from({ length: CLIENTS }, () => netConnect({ path: socketPath }));
    try {
      const outcomes = await Promise.all(
        sockets.map((s) => new Promise<unknown>((resolve) => {
          s.once('connect', () => resolve('connected'));
          s.once('error', (e) => resolve(e));
        })),
      );
      const refused = outcomes.filter((o) => o !== 'connected');
      // a backlog of 1 queues two connections; the others are refused, not left waiting
      expect(refused.length).toBeGreaterThan(0);
      expect(refused.every(isBacklogFull)).toBe(true);
    } finally {
      for (const s of sockets) s.destroy();
      backend!.kill('SIGCONT');
    }
  });

  it('delays the requests instead of ending their connections: each is answered once the backend accepts again', async () => {
    const front = await startTlsFront({ host: '127.0.0.1', port: 0, key: pki.serving.keyPem, cert: pki.serving.certPem, clientCA: pki.ca.certPem, backendSocketPath: socketPath });
    const agents = Array.from({ length: CLIENTS }, () => new Agent({ keepAlive: true, maxSockets: 1, ca: pki.ca.certPem, cert: pki.admin.certPem, key: pki.admin.keyPem }));
    const send = (agent: Agent, method: string, body: string) =>
      new Promise<string>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port: front.port, method, path: '/x', agent, servername: 'localhost', headers: { 'Content-Length': Buffer.byteLength(body) } }, (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => resolve(text));
        });
        req.on('error', reject);
        req.end(body);
      });
    try {
      // each client's first request dials a backend connection; the TLS handshakes need no backend
      const before = front.backendRefusals;
      backend!.kill('SIGSTOP');
      let results: Promise<PromiseSettledResult<string>[]>;
      try {
        // PUTs: client-go does not retry a write whose connection failed, so the front must not lose it
        let settled = 0;
        results = Promise.allSettled(agents.map((a, i) => send(a, 'PUT', `lease ${i}`).finally(() => settled++)));
        // until the queue refused a dial (or, before the fix, a request failed)
        await vi.waitFor(() => expect(front.backendRefusals > before || settled > 0).toBe(true), { timeout: 10_000, interval: 20 });
      } finally {
        backend!.kill('SIGCONT');
      }
      expect(await results).toEqual(agents.map((_, i) => ({ status: 'fulfilled', value: `ok PUT ${`lease ${i}`.length}` })));
      expect(front.backendRefusals).toBeGreaterThan(before);
    } finally {
      for (const a of agents) a.destroy();
      await front.close();
    }
  });

  it('over HTTP/2 too: the bridge dials again instead of answering 503', async () => {
    const front = await startTlsFront({ host: '127.0.0.1', port: 0, key: pki.serving.keyPem, cert: pki.serving.certPem, clientCA: pki.ca.certPem, backendSocketPath: socketPath });
    const session = h2connect(`https://localhost:${front.port}`, { ca: pki.ca.certPem, cert: pki.admin.certPem, key: pki.admin.keyPem });
    const put = (body: string) =>
      new Promise<string>((resolve, reject) => {
        const s = session.request({ ':method': 'PUT', ':path': '/x', 'content-length': String(Buffer.byteLength(body)) });
        let status = 0;
        let text = '';
        s.on('response', (h) => (status = Number(h[':status'])));
        s.on('data', (c: Buffer) => (text += c.toString()));
        s.on('end', () => resolve(`${status} ${text}`));
        s.on('error', reject);
        s.end(body);
      });
    try {
      await new Promise<void>((resolve, reject) => session.once('connect', () => resolve()).once('error', reject));
      const before = front.backendRefusals;
      backend!.kill('SIGSTOP');
      let results: Promise<string[]>;
      try {
        // every stream dials its own backend connection (none is pooled yet)
        let settled = 0;
        results = Promise.all(Array.from({ length: CLIENTS }, (_, i) => put(`lease ${i}`).finally(() => settled++)));
        await vi.waitFor(() => expect(front.backendRefusals > before || settled > 0).toBe(true), { timeout: 10_000, interval: 20 });
      } finally {
        backend!.kill('SIGCONT');
      }
      expect(await results).toEqual(Array.from({ length: CLIENTS }, (_, i) => `200 ok PUT ${`lease ${i}`.length}`));
      expect(front.backendRefusals).toBeGreaterThan(before);
    } finally {
      session.destroy();
      await front.close();
    }
  });
});
