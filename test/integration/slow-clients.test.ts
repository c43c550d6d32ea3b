// Abusive and broken clients (issue #15 item 2, docs/reliability.md "Slow
// clients"): each abuse runs against a real server on loopback while an
// honest client keeps being served; every abusive connection is ended by
// the server (the test only waits for it), and the server stays up.
//
// Bounds under test: the TLS handshake deadline (--tls-handshake-timeout,
// 1 s here), uWS's own bound on a request head that trickles in, the body
// deadline (= --request-timeout, 3 s here), the per-watch backlog bound (a
// watcher that never reads is ended with 410; 2 MiB here), the body size
// limit, and clients that vanish mid-body.

import { connect as netConnect, type Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestServer, startTestServer } from '../helpers/server.js';
import { adminTls, closedByServer, stalledWatchersAndReader } from '../helpers/raw-tls.js';

let t: TestServer;

beforeAll(async () => {
  t = await startTestServer({ limits: { tlsHandshakeTimeoutMs: 1000, requestTimeoutMs: 3000 }, watchMaxBacklogBytes: 2 * 1024 * 1024 });
});
afterAll(async () => {
  await t?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const tls = (): Promise<TLSSocket> => adminTls(t);

/** an honest client: a list answered 200 */
async function honest(): Promise<void> {
  const r = await t.request('GET', '/api/v1/namespaces/default/configmaps?limit=1');
  expect(r.status).toBe(200);
}

/** keeps an honest client busy until `done` settles; returns how many requests it made */
async function honestWhile(done: Promise<unknown>): Promise<number> {
  let over = false;
  void done.finally(() => (over = true)).catch(() => undefined);
  let n = 0;
  while (!over) {
    await honest();
    n++;
    await sleep(100);
  }
  return n;
}

describe('slow and broken clients', () => {
  it('a TCP client that never finishes the TLS handshake is dropped at the handshake deadline', async () => {
    const stalls = await Promise.all(
      Array.from({ length: 20 }, () => new Promise<Socket>((resolve) => {
        const s = netConnect(t.server.port, '127.0.0.1', () => resolve(s));
      })),
    );
    // half send the start of a ClientHello and then nothing
    for (const s of stalls.slice(0, 10)) s.write(Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01]));
    const closed = Promise.all(stalls.map((s) => closedByServer(s, 20_000)));
    expect(await honestWhile(closed)).toBeGreaterThan(0);
    for (const got of await closed) expect(got).not.toContain('HTTP/1.1');
  }, 30_000);

  it('slowloris: a request head sent one byte a second is cut off before it completes; others are served', async () => {
    const head = `GET /api/v1/namespaces HTTP/1.1\r\nHost: x\r\nX-Slow: ${'a'.repeat(100)}\r\n\r\n`;
    const clients = await Promise.all(Array.from({ length: 10 }, () => tls()));
    const sent = clients.map(() => 0);
    const timer = setInterval(() => {
      clients.forEach((s, i) => {
        if (!s.destroyed && sent[i]! < head.length) s.write(head[sent[i]!++]!);
      });
    }, 1000);
    try {
      const t0 = Date.now();
      const closedAt: number[] = [];
      const closed = Promise.all(clients.map((s, i) => closedByServer(s, 60_000).finally(() => (closedAt[i] = Date.now() - t0))));
      const served = await honestWhile(closed);
      expect(served).toBeGreaterThan(0);
      for (const got of await closed) expect(got).toBe('');
      // none got as far as a whole head (it would take 140 s): uWS's 10 s
      // bound plus the front's 2 s linger; the figures are in docs/reliability.md
      for (const n of sent) expect(n).toBeLessThan(head.length);
      console.log(`slowloris: closed after ${Math.min(...closedAt)}–${Math.max(...closedAt)} ms having sent ${Math.min(...sent)}–${Math.max(...sent)} bytes; ${served} honest requests served meanwhile`);
    } finally {
      clearInterval(timer);
    }
  }, 90_000);

  it('a body that trickles in is answered 504 Timeout at the request deadline and the connection closed', async () => {
    const s = await tls();
    const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'trickled' }, data: { a: 'x'.repeat(500) } });
    s.write(`POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`);
    let i = 0;
    // fast enough for uWS's own idle rule, far too slow to finish before the deadline
    const timer = setInterval(() => {
      if (!s.destroyed && i < body.length) s.write(body.slice(i, (i += 8)));
    }, 200);
    try {
      const got = await closedByServer(s, 20_000);
      expect(got).toMatch(/^HTTP\/1.1 504 /);
      expect(got).toContain('"reason":"Timeout"');
      expect(i).toBeLessThan(body.length);
    } finally {
      clearInterval(timer);
    }
    expect((await t.request('GET', '/api/v1/namespaces/default/configmaps/trickled')).status).toBe(404);
    await honest();
  }, 30_000);

  it('clients that disconnect mid-body write nothing, and the server keeps serving', async () => {
    for (let n = 0; n < 20; n++) {
      const s = await tls();
      const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `half-${n}` }, data: { a: 'x'.repeat(100_000) } });
      s.write(`POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`);
      s.write(body.slice(0, 1 + ((n * 4999) % (body.length - 1))));
      await sleep(20);
      s.destroy();
    }
    await honest();
    const list = await t.request('GET', '/api/v1/namespaces/default/configmaps');
    const names = list.json<{ items: { metadata: { name: string } }[] }>().items.map((i) => i.metadata.name);
    expect(names.filter((x) => x.startsWith('half-'))).toEqual([]);
  }, 30_000);

  it('bodies and heads over the limits are refused without taking the server down', async () => {
    // (a 4 MiB body is answered 413 too: test/integration/api-basics.test.ts; here its upload would race the 3 s deadline)
    // a declared length far over the limit is answered at once, without reading the body
    const s = await tls();
    s.write('POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 200000000\r\n\r\n');
    const got = await closedByServer(s, 20_000);
    expect(got).toMatch(/^HTTP\/1.1 413 /);
    // a 1 MiB request head
    const h = await tls();
    h.write(`GET /version HTTP/1.1\r\nHost: x\r\nX-Huge: ${'h'.repeat(1024 * 1024)}\r\n\r\n`);
    const hugeHead = await closedByServer(h, 20_000);
    expect(hugeHead).not.toMatch(/^HTTP\/1.1 2/);
    await honest();
  }, 30_000);

  it('a flood of watches that never read is ended with 410 while a reading watcher gets every event', async () => {
    const ns = 'flood';
    expect((await t.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } })).status).toBe(201);
    const before = t.server.watch.stats().slowWatchersEnded;
    const path = `/api/v1/namespaces/${ns}/configmaps?watch=true&resourceVersion=0`;
    const { stalled, reader, seen } = await stalledWatchersAndReader(t, path, 10);
    await sleep(300);
    const N = 800;
    const value = 'v'.repeat(64 * 1024);
    for (let n = 0; n < N; n++) {
      const r = await t.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `c${n}` }, data: { v: value } } });
      expect(r.status).toBe(201);
      if (t.server.watch.stats().slowWatchersEnded - before >= stalled.length) break;
    }
    for (let i = 0; i < 200 && t.server.watch.stats().slowWatchersEnded - before < stalled.length; i++) await sleep(100);
    expect(t.server.watch.stats().slowWatchersEnded - before).toBeGreaterThanOrEqual(stalled.length);
    await honest();
    // the stalled clients, reading at last, find the 410 at the end of what was sent
    const tails = await Promise.all(
      stalled.map((s) => {
        const closed = closedByServer(s, 30_000);
        s.resume();
        return closed;
      }),
    );
    for (const tail of tails) {
      expect(tail.slice(-2000)).toContain('"type":"ERROR"');
      expect(tail.slice(-2000)).toContain('"code":410');
    }
    // the reader saw every create
    const created = (await t.request('GET', `/api/v1/namespaces/${ns}/configmaps`)).json<{ items: unknown[] }>().items.length;
    for (let i = 0; i < 100 && (seen().match(/"type":"ADDED"/g) ?? []).length < created; i++) await sleep(100);
    expect((seen().match(/"type":"ADDED"/g) ?? []).length).toBe(created);
    expect(seen()).not.toContain('"code":410');
    reader.destroy();
  }, 90_000);

  it('a quiet watch outlives the idle bound of plain connections', async () => {
    const s = await tls();
    let seen = '';
    s.on('data', (d: Buffer) => (seen += d.toString('latin1')));
    const rv = (await t.request('GET', '/api/v1/namespaces/default/configmaps')).json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion;
    s.write(`GET /api/v1/namespaces/default/configmaps?watch=true&resourceVersion=${rv} HTTP/1.1\r\nHost: x\r\n\r\n`);
    // a plain keep-alive connection idle past uWS's ~10 s bound meanwhile: the front keeps it (kube keeps
    // idle connections 90 s) and its next request is answered; the quiet watch lives on as well
    const idle = await tls();
    let idleSeen = '';
    idle.on('data', (d: Buffer) => (idleSeen += d.toString('latin1')));
    idle.write('GET /version HTTP/1.1\r\nHost: x\r\n\r\n');
    for (let i = 0; i < 100 && !idleSeen.startsWith('HTTP/1.1 200 '); i++) await sleep(50);
    expect(idleSeen).toMatch(/^HTTP\/1.1 200 /);
    await sleep(11_000);
    expect(idle.destroyed).toBe(false);
    idleSeen = '';
    idle.write('GET /version HTTP/1.1\r\nHost: x\r\n\r\n');
    for (let i = 0; i < 100 && !idleSeen.startsWith('HTTP/1.1 200 '); i++) await sleep(50);
    expect(idleSeen).toMatch(/^HTTP\/1.1 200 /);
    idle.destroy();
    expect(s.destroyed).toBe(false);
    await t.request('POST', '/api/v1/namespaces/default/configmaps', { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'after-quiet' } } });
    for (let i = 0; i < 100 && !seen.includes('after-quiet'); i++) await sleep(50);
    expect(seen).toContain('"type":"ADDED"');
    expect(seen).toContain('after-quiet');
    s.destroy();
  }, 60_000);
});
