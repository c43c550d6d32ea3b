// The front's side of the HTTP/2 channel per stream (src/gateway/h2-sessions.ts,
// src/gateway/h2-mux-client.ts, src/gateway/mux-frames.ts) with real parts: a
// TLS front on loopback, a node:http2 client with a client certificate, and
// the main process's channel server (src/gateway/mux-server.ts) on a unix
// socket with a handler this file controls. What is checked is what the
// per-stream savings of docs/performance.md "TLS workers under HTTP/2
// creates" must keep: answers arrive whole and end the stream, a client's
// reset (before or during the answer) frees the stream and reaches the
// handler as an abort, the body deadline answers 504 on one shared timer,
// and a turn's frames, batched into one buffer, read back as they were.
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { type ClientHttp2Session, connect, constants } from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import type { HttpRequest, HttpResponse } from '../../src/endpoints/http.js';
import { Deadlines } from '../../src/gateway/h2-sessions.js';
import { FrameBatch, FrameReader, FrameType } from '../../src/gateway/mux-frames.js';
import { readRequest } from '../../src/gateway/head-codec.js';
import { type MuxServer, startMuxServer } from '../../src/gateway/mux-server.js';
import { startTlsFront, type TlsFront } from '../../src/gateway/tls-front.js';
import { ensurePki, type Pki } from '../../src/server/pki.js';
import { eventually } from '../helpers/eventually.js';

const BIG = 900 * 1024;
let dir: string;
let pki: Pki;
let mux: MuxServer;
let front: TlsFront;
/** requests whose handler saw its signal abort, by path */
const aborted: string[] = [];
/** handlers waiting for the test to answer them, by path */
const held = new Map<string, (r: HttpResponse) => void>();

const handle = (req: HttpRequest): Promise<HttpResponse> => {
  if (req.path === '/echo') {
    return Promise.resolve({ status: 201, headers: [['Content-Type', 'application/octet-stream'], ['X-Length', String(req.body.length)]], body: req.body });
  }
  if (req.path === '/big') return Promise.resolve({ status: 200, headers: [['Content-Type', 'application/octet-stream']], body: Buffer.alloc(BIG, 7) });
  if (req.path === '/empty') return Promise.resolve({ status: 204, headers: [], body: '' });
  return new Promise((resolve) => {
    held.set(req.path, resolve);
    req.signal?.addEventListener('abort', () => aborted.push(req.path));
  });
};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'orch-h2-front-'));
  pki = await ensurePki(join(dir, 'pki'), {});
  mux = await startMuxServer({
    path: join(dir, 'mux.sock'),
    handle,
    maxBodyBytes: 3 * 1024 * 1024,
    tooLarge: () => ({ status: 413, headers: [], body: '' }),
  });
  front = await startFront();
}, 60_000);
afterAll(async () => {
  await front?.close();
  await mux?.close(1000);
  await rm(dir, { recursive: true, force: true });
});

/** a front on the channel server above (no uWS: every stream goes over the channel) */
const startFront = (clock?: ManualClock): Promise<TlsFront> =>
  startTlsFront({ host: '127.0.0.1', port: 0, key: pki.serving.keyPem, cert: pki.serving.certPem, clientCA: pki.ca.certPem, backendSocketPath: join(dir, 'no-uws.sock'), muxSocketPath: mux.path, ...(clock ? { clock } : {}) });

/** an admin session (client certificate) */
async function session(port: number, settings: { initialWindowSize?: number } = {}): Promise<ClientHttp2Session> {
  const s = connect(`https://127.0.0.1:${port}`, { ca: pki.ca.certPem, cert: pki.admin.certPem, key: pki.admin.keyPem, settings });
  await once(s, 'connect');
  return s;
}

interface Answer {
  status: number;
  headers: Record<string, unknown>;
  body: Buffer;
  /** the client saw END_STREAM (not a reset) */
  ended: boolean;
}

function request(s: ClientHttp2Session, method: string, path: string, body?: Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const st = s.request({ ':method': method, ':path': path }, body ? {} : { endStream: true });
    let status = 0;
    let headers: Record<string, unknown> = {};
    const chunks: Buffer[] = [];
    st.on('response', (h) => {
      status = Number(h[':status']);
      headers = h;
    });
    st.on('data', (c: Buffer) => chunks.push(c));
    st.on('end', () => resolve({ status, headers, body: Buffer.concat(chunks), ended: true }));
    st.on('error', reject);
    if (body) st.end(body);
  });
}

describe('HTTP/2 streams through the channel', () => {
  it('answers 64 concurrent creates whole, each ended by the server, and frees every stream', async () => {
    const s = await session(front.port);
    try {
      const bodies = Array.from({ length: 64 }, (_, i) => Buffer.from(JSON.stringify({ i, pad: 'x'.repeat(1000 + i) })));
      const answers = await Promise.all(bodies.map((b) => request(s, 'POST', '/echo', b)));
      answers.forEach((a, i) => {
        expect(a.status).toBe(201);
        expect(a.ended).toBe(true);
        expect(a.headers['x-length']).toBe(String(bodies[i]!.length));
        expect(a.body.equals(bodies[i]!)).toBe(true);
      });
      // an empty answer ends with its headers
      const empty = await request(s, 'GET', '/empty');
      expect(empty.status).toBe(204);
      expect(empty.body.length).toBe(0);
      await eventually(() => front.http2?.streams === 0, 'every stream closed in the front');
      expect(front.http2?.backendConnections).toBe(0);
    } finally {
      s.close();
    }
  });

  it('a client that resets a stream in the middle of a large answer frees the stream', async () => {
    // a 16 KiB window: the 900 KiB answer waits on the client, which resets after the first bytes
    const s = await session(front.port, { initialWindowSize: 16 * 1024 });
    try {
      const got = await new Promise<{ status: number; bytes: number }>((resolve, reject) => {
        const st = s.request({ ':method': 'GET', ':path': '/big' }, { endStream: true });
        let status = 0;
        st.on('response', (h) => (status = Number(h[':status'])));
        st.once('data', (c: Buffer) => {
          st.close(constants.NGHTTP2_CANCEL);
          resolve({ status, bytes: c.length });
        });
        st.on('error', reject);
      });
      expect(got.status).toBe(200);
      expect(got.bytes).toBeLessThan(BIG);
      await eventually(() => front.http2?.streams === 0, 'every stream closed in the front');
      expect(front.http2?.backendConnections).toBe(0);
      // the session goes on: the next stream is answered whole
      const after = await request(s, 'POST', '/echo', Buffer.from('{"after":true}'));
      expect(after.body.toString()).toBe('{"after":true}');
    } finally {
      s.close();
    }
  });

  it('a reset before the answer reaches the handler as an abort (Cancel), and its late answer goes nowhere', async () => {
    const s = await session(front.port);
    try {
      const st = s.request({ ':method': 'POST', ':path': '/held-1' });
      st.on('error', () => undefined);
      st.end('{}');
      await eventually(() => held.has('/held-1'), 'the request reached the handler');
      st.close(constants.NGHTTP2_CANCEL);
      await eventually(() => aborted.includes('/held-1'), "the handler's signal aborted");
      await eventually(() => front.http2?.streams === 0, 'every stream closed in the front');
      held.get('/held-1')!({ status: 200, headers: [], body: 'late' });
      // the channel is still good for the next stream
      const next = await request(s, 'POST', '/echo', Buffer.from('next'));
      expect(next.body.toString()).toBe('next');
      expect(front.http2?.backendConnections).toBe(0);
    } finally {
      s.close();
    }
  });
});

describe('request body deadline', () => {
  it('answers 504 to a body not complete 60 s after its head, and only to that stream', async () => {
    const clock = new ManualClock(Date.now());
    const f = await startFront(clock);
    const s = await session(f.port);
    try {
      const slow = s.request({ ':method': 'POST', ':path': '/echo' });
      const slowStatus = new Promise<number>((resolve) => slow.on('response', (h) => resolve(Number(h[':status']))));
      slow.on('error', () => undefined);
      slow.write('{"partial":');
      await eventually(() => f.http2?.streams === 1, 'the slow stream is open');
      clock.advance(30_000);
      // a stream that starts later and completes is not touched by the first one's deadline
      const later = s.request({ ':method': 'POST', ':path': '/held-2' });
      later.on('error', () => undefined);
      later.write('{"a":');
      await eventually(() => f.http2?.streams === 2, 'both streams are open');
      clock.advance(30_000);
      expect(await slowStatus).toBe(504);
      later.end('1}');
      await eventually(() => held.has('/held-2'), 'the completed body reached the handler');
      // past the second stream's own deadline: its body was complete, so the handler answers it
      clock.advance(60_000);
      const laterStatus = new Promise<number>((resolve) => later.on('response', (h) => resolve(Number(h[':status']))));
      held.get('/held-2')!({ status: 200, headers: [], body: 'ok' });
      expect(await laterStatus).toBe(200);
    } finally {
      s.close();
      await f.close();
    }
  });
});

describe('idle sessions', () => {
  it('closes a session 90 s after its last stream closed, never one with a stream open', async () => {
    const clock = new ManualClock(Date.now());
    const f = await startFront(clock);
    const s = await session(f.port);
    const closed = new Promise<void>((resolve) => s.once('close', () => resolve()));
    s.on('error', () => undefined);
    try {
      const st = s.request({ ':method': 'POST', ':path': '/held-3' });
      st.on('error', () => undefined);
      const status = new Promise<number>((resolve) => st.on('response', (h) => resolve(Number(h[':status']))));
      st.end('{}');
      await eventually(() => held.has('/held-3'), 'the request reached the handler');
      clock.advance(200_000);
      expect(f.http2?.sessions).toBe(1);
      held.get('/held-3')!({ status: 200, headers: [], body: 'ok' });
      expect(await status).toBe(200);
      await eventually(() => f.http2?.streams === 0, 'the stream closed in the front');
      clock.advance(89_000);
      expect(f.http2?.sessions).toBe(1);
      // the session is still served before its idle time is up
      expect((await request(s, 'POST', '/echo', Buffer.from('still'))).body.toString()).toBe('still');
      await eventually(() => f.http2?.streams === 0, 'the stream closed in the front');
      clock.advance(89_000);
      expect(f.http2?.sessions).toBe(1);
      clock.advance(1_000);
      await closed;
      await eventually(() => f.http2?.sessions === 0, 'the front dropped the session');
    } finally {
      s.destroy();
      await f.close();
    }
  });
});

describe('Deadlines (one timer for many streams)', () => {
  it('expires entries in order at their own time, never a deleted one, with at most one timer', () => {
    const clock = new ManualClock(0);
    const d = new Deadlines<string>(clock, 1000);
    const fired: [string, number][] = [];
    d.add('a', () => fired.push(['a', clock.now()]));
    clock.advance(300);
    d.add('b', () => fired.push(['b', clock.now()]));
    clock.advance(300);
    d.add('c', () => fired.push(['c', clock.now()]));
    d.delete('a');
    expect(clock.pending).toBe(1);
    clock.advance(2000);
    expect(fired).toEqual([
      ['b', 1300],
      ['c', 1600],
    ]);
    expect(d.size).toBe(0);
    expect(clock.pending).toBe(0);
    d.add('d', () => fired.push(['d', clock.now()]));
    d.clear();
    clock.advance(5000);
    expect(fired.length).toBe(2);
  });
});

describe('FrameBatch', () => {
  it('reads back, in order, every frame of a turn however large its head or body', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            kind: fc.constantFrom('headed', 'bare', 'encoded'),
            id: fc.integer({ min: 1, max: 0xfffffffe }),
            text: fc.string({ unit: 'grapheme', maxLength: 300 }),
            bodyBytes: fc.constantFrom(0, 1, 1024, 16 * 1024 - 1, 16 * 1024, 70 * 1024),
          }),
          { maxLength: 40 },
        ),
        (frames) => {
          const batch = new FrameBatch();
          for (const f of frames) {
            if (f.kind === 'headed') batch.request(f.id, { method: 'POST', path: f.text, query: '', proxiedAddress: 'c', headers: [['x', f.text]] }, Buffer.alloc(f.bodyBytes, f.id & 0xff));
            else if (f.kind === 'bare') batch.bare(FrameType.Cancel, f.id);
            else {
              const e = Buffer.alloc(17);
              e.writeUInt32BE(13, 0);
              e.writeUInt8(FrameType.Owed, 4);
              e.writeUInt32BE(0, 5);
              e.writeUInt32BE(f.id, 9);
              e.writeUInt32BE(f.bodyBytes, 13);
              batch.encoded(e);
            }
          }
          const got: { type: number; id: number; payload: Buffer }[] = [];
          const r = new FrameReader((type, id, payload) => got.push({ type, id, payload: Buffer.from(payload) }));
          for (const chunk of batch.take()) expect(r.push(chunk)).toBe(true);
          expect(batch.empty).toBe(true);
          expect(got.length).toBe(frames.length);
          frames.forEach((f, i) => {
            const g = got[i]!;
            if (f.kind === 'headed') {
              expect(g.type).toBe(FrameType.Request);
              expect(g.id).toBe(f.id);
              const { head, body } = readRequest(g.payload);
              expect(head.path).toBe(f.text);
              expect(head.headers).toEqual([['x', f.text]]);
              expect(body.equals(Buffer.alloc(f.bodyBytes, f.id & 0xff))).toBe(true);
            } else if (f.kind === 'bare') {
              expect([g.type, g.id, g.payload.length]).toEqual([FrameType.Cancel, f.id, 0]);
            } else {
              expect([g.type, g.payload.readUInt32BE(0), g.payload.readUInt32BE(4)]).toEqual([FrameType.Owed, f.id, f.bodyBytes]);
            }
          });
        },
      ),
      { numRuns: 60 },
    );
  });

  it('never rewrites bytes already taken (the socket may still hold them)', () => {
    const batch = new FrameBatch();
    const head = (i: number) => ({ method: 'POST', path: `/${i}`, query: '', proxiedAddress: 'c', headers: [] });
    batch.request(1, head(1), Buffer.from('first'));
    const [first] = batch.take();
    const copy = Buffer.from(first!);
    for (let i = 0; i < 100; i++) batch.request(2 + i, head(i), Buffer.alloc(900, i));
    batch.take();
    expect(first!.equals(copy)).toBe(true);
  });
});
