// The HTTP/2 channel between the TLS front and the main process
// (src/gateway/h2-mux-client.ts, src/gateway/mux-server.ts, docs/tls.md
// "HTTP/2"), against a server whose TLS runs in a worker process: many watch
// streams cost the main process no descriptor each and get every event in
// order; a stream that never reads is ended by its backlog limit while its
// neighbours on the same session go on; resets and lost sessions stop the
// server's watches; kubectl's watch works through it; shutdown sends GOAWAY.
import { readdirSync } from 'node:fs';
import { type ClientHttp2Session, type ClientHttp2Stream, connect, constants } from 'node:http2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { lineSplitter } from '../helpers/json-lines.js';
import { startKubectl } from '../helpers/kubectl.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

const BACKLOG_LIMIT = 256 * 1024;
let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ tlsWorkers: 1, watchMaxBacklogBytes: BACKLOG_LIMIT });
  for (const ns of ['mux-many', 'mux-slow', 'mux-reset', 'mux-kubectl']) {
    expect((await t.request('POST', '/api/v1/namespaces', { body: { metadata: { name: ns } } })).status).toBe(201);
  }
}, 60_000);
afterAll(async () => {
  await t?.stop();
});

function session(server: TestServer, settings: { initialWindowSize?: number } = {}): Promise<ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const s = connect(`https://127.0.0.1:${server.server.port}`, { ca: server.server.caPem, cert: server.server.adminCertPem, key: server.server.adminKeyPem, settings });
    s.once('connect', () => resolve(s));
    s.once('error', reject);
  });
}

interface Watch {
  stream: ClientHttp2Stream;
  events: { type: string; name: string; rv: number; code?: number }[];
  status: Promise<number>;
  ended: Promise<'end' | 'close'>;
}

function watch(s: ClientHttp2Session, path: string, read = true): Watch {
  const stream = s.request({ ':method': 'GET', ':path': path });
  const events: Watch['events'] = [];
  stream.setEncoding('utf8');
  if (read) {
    stream.on(
      'data',
      lineSplitter((line) => {
        const e = JSON.parse(line) as { type: string; object: { metadata?: { name?: string; resourceVersion?: string }; code?: number } };
        events.push({ type: e.type, name: e.object.metadata?.name ?? '', rv: Number(e.object.metadata?.resourceVersion ?? 0), ...(e.object.code ? { code: e.object.code } : {}) });
      }),
    );
  }
  stream.on('error', () => undefined);
  const status = new Promise<number>((resolve) => stream.once('response', (h) => resolve(Number(h[':status']))));
  const ended = new Promise<'end' | 'close'>((resolve) => {
    stream.once('end', () => resolve('end'));
    stream.once('close', () => resolve('close'));
  });
  return { stream, events, status, ended };
}

function create(s: ClientHttp2Session, ns: string, name: string, data: Record<string, string> = { a: '1' }): Promise<number> {
  return new Promise((resolve, reject) => {
    const st = s.request({ ':method': 'POST', ':path': `/api/v1/namespaces/${ns}/configmaps`, 'content-type': 'application/json' });
    let status = 0;
    st.on('response', (h) => (status = Number(h[':status'])));
    st.resume();
    st.on('end', () => resolve(status));
    st.on('error', reject);
    st.end(JSON.stringify({ metadata: { name }, data }));
  });
}

const openFds = (): number => readdirSync('/proc/self/fd').length;

describe('HTTP/2 streams over the front channel (TLS in a worker process)', () => {
  it('200 watches on one session hold no descriptor each in the server, and each sees every event once, in order', async () => {
    const s = await session(t);
    const w2 = await session(t);
    try {
      const before = openFds();
      const watches = Array.from({ length: 200 }, () => watch(s, '/api/v1/namespaces/mux-many/configmaps?watch=true'));
      expect(new Set(await Promise.all(watches.map((w) => w.status)))).toEqual(new Set([200]));
      await eventually(() => t.server.watch.stats().watchers >= 200, 'the server to hold the 200 watches');
      // the bridge held one unix connection (a descriptor here) per stream; the channel is one per worker
      expect(openFds() - before).toBeLessThan(20);
      const names = Array.from({ length: 12 }, (_, i) => `m${i}`);
      for (const n of names) expect(await create(w2, 'mux-many', n)).toBe(201);
      // (the namespace's own root-CA ConfigMap may come first)
      const mine = (w: Watch) => w.events.filter((e) => e.name.startsWith('m'));
      await eventually(() => watches.every((w) => mine(w).length >= names.length), 'every watch to see every create');
      for (const w of watches) {
        expect(mine(w).map((e) => e.name)).toEqual(names);
        expect(w.events.every((e) => e.type === 'ADDED')).toBe(true);
        const rvs = w.events.map((e) => e.rv);
        expect(rvs).toEqual([...rvs].sort((a, b) => a - b));
      }
    } finally {
      s.destroy();
      w2.destroy();
    }
    await eventually(() => t.server.watch.stats().watchers === 0, 'the lost session to end its watches on the server');
  });

  it('a stream that never reads is ended at its backlog limit (410); its neighbour on the same session gets everything', async () => {
    // Node's client stops granting window to a paused stream once its buffer is full (64 KiB window, 16 KiB buffer)
    const s = await session(t);
    s.setLocalWindowSize(64 * 1024 * 1024);
    const writer = await session(t);
    try {
      const slowBefore = t.server.watch.stats().slowWatchersEnded;
      const stalled = watch(s, '/api/v1/namespaces/mux-slow/configmaps?watch=true', false);
      stalled.stream.pause();
      const reader = watch(s, '/api/v1/namespaces/mux-slow/configmaps?watch=true');
      expect(await stalled.status).toBe(200);
      expect(await reader.status).toBe(200);
      const big = 'x'.repeat(48 * 1024);
      const names = Array.from({ length: 12 }, (_, i) => `big${i}`);
      for (const n of names) expect(await create(writer, 'mux-slow', n, { v: big })).toBe(201);
      await eventually(() => t.server.watch.stats().slowWatchersEnded > slowBefore, 'the stalled watcher to be ended at its backlog limit');
      const mine = () => reader.events.filter((e) => e.name.startsWith('big'));
      await eventually(() => mine().length >= names.length, 'the reading neighbour to see every create');
      expect(mine().map((e) => e.name)).toEqual(names);
      // the neighbour is still a live watch: a later change arrives too
      expect(await create(writer, 'mux-slow', 'after')).toBe(201);
      await eventually(() => reader.events.some((e) => e.name === 'after'), 'the neighbour to see a later create');
      // the stalled stream reads now: its events, then the 410 that ended it
      const late = watch(s, '/api/v1/namespaces/mux-slow/configmaps?watch=true&resourceVersion=0', true);
      expect(await late.status).toBe(200);
      stalled.stream.setEncoding('utf8');
      let text = '';
      stalled.stream.on('data', (c: string) => (text += c));
      stalled.stream.resume();
      expect(await stalled.ended).toBe('end');
      const lines = text.split('\n').filter((l) => l.trim() !== '');
      const last = JSON.parse(lines[lines.length - 1]!) as { type: string; object: { code: number; message: string } };
      expect(last.type).toBe('ERROR');
      expect(last.object.code).toBe(410);
      expect(last.object.message).toContain('fell behind');
      late.stream.close(constants.NGHTTP2_CANCEL);
      reader.stream.close(constants.NGHTTP2_CANCEL);
    } finally {
      s.destroy();
      writer.destroy();
    }
  });

  it('RST_STREAM ends that watch on the server and no other', async () => {
    // the earlier tests' streams are gone (their sessions were destroyed)
    await eventually(() => t.server.watch.stats().watchers === 0, 'no watch left from earlier tests');
    const base = 0;
    const s = await session(t);
    try {
      const watches = Array.from({ length: 20 }, () => watch(s, '/api/v1/namespaces/mux-reset/configmaps?watch=true'));
      await Promise.all(watches.map((w) => w.status));
      await eventually(() => t.server.watch.stats().watchers === base + 20, 'the server to hold the 20 watches');
      for (const w of watches.slice(0, 10)) w.stream.close(constants.NGHTTP2_CANCEL);
      await eventually(() => t.server.watch.stats().watchers === base + 10, 'the 10 reset watches to end on the server');
      expect(await create(s, 'mux-reset', 'r1')).toBe(201);
      await eventually(() => watches.slice(10).every((w) => w.events.some((e) => e.name === 'r1')), 'the 10 others to go on');
      expect(watches.slice(0, 10).some((w) => w.events.some((e) => e.name === 'r1'))).toBe(false);
    } finally {
      s.destroy();
    }
  });

  it('kubectl get -w (client-go over h2) prints the changes', async () => {
    const s = await session(t);
    expect(await create(s, 'mux-kubectl', 'k0')).toBe(201);
    const k = startKubectl(t.server.kubeconfigPath, ['-n', 'mux-kubectl', 'get', 'configmaps', '--watch']);
    try {
      // the watch starts at the list's resourceVersion: what is created after the list is printed arrives
      await eventually(() => /^k0\s/m.test(k.out()), `kubectl to print the list (stderr: ${k.err()})`, 20_000);
      for (const n of ['k1', 'k2']) expect(await create(s, 'mux-kubectl', n)).toBe(201);
      await eventually(() => ['k1', 'k2'].every((n) => new RegExp(`^${n}\\s`, 'm').test(k.out())), `kubectl to print the new objects (got ${k.out()})`, 20_000);
    } finally {
      await k.stop();
      s.destroy();
    }
  }, 60_000);
});

describe('shutdown', () => {
  it('sends GOAWAY and ends running watches cleanly', async () => {
    const own = await startTestServer({ tlsWorkers: 1 });
    let stopped = false;
    try {
      const s = await session(own);
      let goaway = false;
      s.once('goaway', () => (goaway = true));
      s.on('error', () => undefined);
      const w = watch(s, '/api/v1/namespaces/default/configmaps?watch=true');
      let ended: string | undefined;
      void w.ended.then((how) => (ended = how));
      expect(await w.status).toBe(200);
      await eventually(() => own.server.watch.stats().watchers === 1, 'the watch to register');
      await own.stop();
      stopped = true;
      await eventually(() => goaway, 'GOAWAY from the server');
      await eventually(() => ended !== undefined, 'the watch to end');
      expect(ended).toBe('end');
      s.destroy();
    } finally {
      if (!stopped) await own.stop();
    }
  }, 60_000);
});
