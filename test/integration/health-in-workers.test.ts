// Health answered by the TLS worker processes from the main loop's snapshots
// (issue #15, src/gateway/health-snapshot.ts, src/gateway/health-probe.ts,
// src/gateway/tls-h1-connection.ts; the default with TLS workers): the same
// answers as the main process, the same authorization, answers while the
// main event loop is blocked, a failing liveness once its snapshot is old,
// and answers in request order on a kept-alive connection.
//
// The server runs in this process, so blocking this thread blocks its main
// loop; the probes are made from a worker thread, which records when each
// answer arrived. A worker's answer carries no `uWebSockets` header (uWS adds
// one to everything it answers), which tells who answered.

import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

interface ProbeAnswer {
  status: number;
  body: string;
  byUws: boolean;
  /** Date.now() when the answer arrived (the probe thread's clock) */
  at: number;
}

const PROBE_THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const { request } = require('node:https');
const { port, ca, cert, key } = workerData;
const probe = (path, anonymous, headers) => new Promise((resolve) => {
  const req = request({ host: '127.0.0.1', port, path, agent: false, ca, headers, ...(anonymous ? {} : { cert, key }) }, (res) => {
    let body = '';
    res.setEncoding('utf8');
    res.on('data', (d) => (body += d));
    res.on('end', () => resolve({ status: res.statusCode, body, byUws: res.headers['uwebsockets'] !== undefined, at: Date.now() }));
  });
  req.on('error', (e) => resolve({ status: 0, body: String(e), byUws: false, at: Date.now() }));
  req.end();
});
// HTTP/2: one new session, every path a stream on it at once
const http2 = require('node:http2');
const probeH2 = (paths, anonymous, headers) => new Promise((resolve) => {
  const session = http2.connect('https://127.0.0.1:' + port, { ca, servername: 'localhost', ...(anonymous ? {} : { cert, key }) });
  const failed = (e) => resolve(paths.map(() => ({ status: 0, body: String(e), byUws: false, at: Date.now() })));
  session.on('error', failed);
  Promise.all(paths.map((path) => new Promise((done) => {
    const req = session.request({ ':path': path, ...headers }, { endStream: true });
    let status = 0;
    let byUws = false;
    let body = '';
    req.setEncoding('utf8');
    req.on('response', (h) => { status = h[':status']; byUws = h['uwebsockets'] !== undefined; });
    req.on('data', (d) => (body += d));
    req.on('end', () => done({ status, body, byUws, at: Date.now() }));
    req.on('error', (e) => done({ status: 0, body: String(e), byUws: false, at: Date.now() }));
  }))).then((answers) => { session.close(); resolve(answers); });
});
parentPort.on('message', async (m) => {
  if (m.delayMs) await new Promise((r) => setTimeout(r, m.delayMs));
  if (m.h2) parentPort.postMessage({ id: m.id, answer: await probeH2(m.paths, m.anonymous, m.headers || {}) });
  else parentPort.postMessage({ id: m.id, answer: await probe(m.path, m.anonymous, m.headers || {}) });
});
`;

/** busy-waits this thread (and so the server's main event loop) */
function blockMainLoop(ms: number): number {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    /* spin */
  }
  return Date.now();
}

describe('health answered by the TLS workers', () => {
  let t: TestServer;
  let prober: Worker;
  let next = 0;
  const waiting = new Map<number, (a: ProbeAnswer & ProbeAnswer[]) => void>();
  const probe = (path: string, o: { anonymous?: boolean; delayMs?: number; headers?: Record<string, string> } = {}): Promise<ProbeAnswer> =>
    new Promise((resolve) => {
      const id = next++;
      waiting.set(id, resolve);
      prober.postMessage({ id, path, ...o });
    });

  /** streams on one new HTTP/2 session, answered in the order of `paths` */
  const probeH2 = (paths: string[], o: { anonymous?: boolean; headers?: Record<string, string> } = {}): Promise<ProbeAnswer[]> =>
    new Promise((resolve) => {
      const id = next++;
      waiting.set(id, resolve);
      prober.postMessage({ id, h2: true, paths, ...o });
    });

  beforeAll(async () => {
    // no healthInTlsWorkers: answering in the workers is the default with TLS workers
    t = await startTestServer({ tlsWorkers: 2 });
    prober = new Worker(PROBE_THREAD, { eval: true, workerData: { port: t.server.port, ca: t.server.caPem, cert: t.server.adminCertPem, key: t.server.adminKeyPem } });
    prober.on('message', (m: { id: number; answer: ProbeAnswer & ProbeAnswer[] }) => {
      waiting.get(m.id)?.(m.answer);
      waiting.delete(m.id);
    });
    // both workers have a snapshot once a few probes in a row are answered there
    await eventually(
      async () => {
        for (let i = 0; i < 4; i++) expect((await probe('/livez')).byUws).toBe(false);
        return true;
      },
      'probes answered by the workers',
      30_000,
    );
  }, 120_000);

  afterAll(async () => {
    await prober?.terminate();
    await t?.stop();
  });

  it('gives the main process answers, with the main-loop check', async () => {
    const livez = await probe('/livez');
    expect(livez).toMatchObject({ status: 200, body: 'ok', byUws: false });
    const verbose = await probe('/readyz?verbose');
    expect(verbose.byUws).toBe(false);
    expect(verbose.status).toBe(200);
    expect(verbose.body).toContain('[+]main-loop ok\n');
    expect(verbose.body).toContain('[+]etcd-readiness ok\n');
    expect(verbose.body).toContain('[+]tls-workers ok\n');
    expect(verbose.body.endsWith('healthz check passed\n')).toBe(true);
    const excluded = await probe('/livez?verbose&exclude=etcd&exclude=nope');
    expect(excluded.byUws).toBe(false);
    expect(excluded.body).toContain('[+]etcd excluded: ok');
    expect(excluded.body).toContain('warn: some health checks cannot be excluded: no matches for "nope"');
    // anonymous: kube's system:public-info-viewer lets system:unauthenticated GET /livez
    expect(await probe('/healthz', { anonymous: true })).toMatchObject({ status: 200, body: 'ok', byUws: false });
  });

  it('leaves to the main process what the snapshot does not allow or cannot judge', async () => {
    // /livez/<check> is not public (system:monitoring, or the admin): the main process decides
    const anonSingle = await probe('/livez/ping', { anonymous: true });
    expect(anonSingle).toMatchObject({ status: 403, byUws: true });
    const adminSingle = await probe('/livez/ping');
    expect(adminSingle).toMatchObject({ status: 200, body: 'ok', byUws: true });
    // a credential the worker cannot check: authentication is the main process's (401 here)
    const token = await probe('/livez', { anonymous: true, headers: { Authorization: 'Bearer not-a-token' } });
    expect(token).toMatchObject({ status: 401, byUws: true });
    // impersonation is authorized by the main process
    const imp = await probe('/livez', { headers: { 'Impersonate-User': 'someone' } });
    expect(imp.byUws).toBe(true);
    // not a health path
    expect((await probe('/version')).byUws).toBe(true);
  });

  it('answers while the main event loop is blocked, and fails liveness once the snapshot is old', async () => {
    // one probe right away, one after the 5 s staleness bound; the main loop is blocked for longer than both
    const early = probe('/livez?verbose');
    const late = probe('/livez?verbose', { delayMs: 6_500 });
    const lateReady = probe('/readyz', { delayMs: 6_500 });
    const unblockedAt = blockMainLoop(8_000);
    const [e, l, r] = await Promise.all([early, late, lateReady]);
    // answered before the main loop could have done anything
    expect(e.at).toBeLessThan(unblockedAt);
    expect(e).toMatchObject({ status: 200, byUws: false });
    expect(e.body).toContain('[+]main-loop ok\n');
    expect(l.at).toBeLessThan(unblockedAt);
    expect(l).toMatchObject({ status: 500, byUws: false });
    expect(l.body).toContain('[-]main-loop failed: reason withheld\n');
    expect(l.body).toContain('livez check failed');
    expect(r).toMatchObject({ status: 500, byUws: false });
    // a turning loop publishes again, and liveness is back
    await eventually(
      async () => {
        expect(await probe('/livez')).toMatchObject({ status: 200, body: 'ok', byUws: false });
        return true;
      },
      'liveness back',
      10_000,
    );
  }, 60_000);

  // HTTP/2 streams reach the main process over the multiplexed channel, not
  // through uWS (no `uWebSockets` header to tell them by): what the worker
  // answers comes while the main loop is blocked, what the main process
  // answers only after it turns again.
  it('answers HTTP/2 probes in the worker too, with the same answers and the same rules', async () => {
    const groups = Promise.all([
      probeH2(['/livez', '/readyz?verbose', '/livez/ping', '/version']),
      probeH2(['/healthz', '/livez/ping'], { anonymous: true }),
      probeH2(['/livez'], { anonymous: true, headers: { authorization: 'Bearer not-a-token' } }),
      probeH2(['/livez'], { headers: { 'impersonate-user': 'someone' } }),
    ]);
    const unblockedAt = blockMainLoop(3_000);
    const [[livez, verbose, single, version], [anon, anonSingle], [token], [imp]] = await groups;
    const inWorker = (a: ProbeAnswer | undefined) => a!.at < unblockedAt;
    expect(livez).toMatchObject({ status: 200, body: 'ok' });
    expect(inWorker(livez)).toBe(true);
    expect(verbose).toMatchObject({ status: 200 });
    expect(inWorker(verbose)).toBe(true);
    expect(verbose!.body).toContain('[+]main-loop ok\n');
    expect(verbose!.body.endsWith('healthz check passed\n')).toBe(true);
    // the admin's /livez/<check> and anything not a probe: the main process
    expect(single).toMatchObject({ status: 200, body: 'ok' });
    expect(inWorker(single)).toBe(false);
    expect(version).toMatchObject({ status: 200 });
    expect(inWorker(version)).toBe(false);
    expect(anon).toMatchObject({ status: 200, body: 'ok' });
    expect(inWorker(anon)).toBe(true);
    expect(anonSingle).toMatchObject({ status: 403 });
    expect(inWorker(anonSingle)).toBe(false);
    expect(token).toMatchObject({ status: 401 });
    expect(inWorker(token)).toBe(false);
    expect(inWorker(imp)).toBe(false);
  }, 30_000);

  it('answers an HTTP/2 probe on a new connection while the main loop is blocked; the session\'s other streams wait for it', async () => {
    const answers = probeH2(['/livez', '/version']);
    // the new session's registration cannot be acknowledged while the main loop is blocked
    const unblockedAt = blockMainLoop(3_000);
    const [livez, version] = await answers;
    expect(livez).toMatchObject({ status: 200, body: 'ok' });
    expect(livez!.at).toBeLessThan(unblockedAt);
    expect(version).toMatchObject({ status: 200 });
    expect(version!.at).toBeGreaterThanOrEqual(unblockedAt);
  }, 30_000);

  it('answers a probe pipelined behind a forwarded request after that request\'s answer', async () => {
    const s = await openTls();
    try {
      const got = readResponses(s, 3);
      // a probe first (answered by the worker), then a request for the main
      // process and a probe behind it, all in one write; the main loop is
      // blocked meanwhile, so a worker that answered the second probe at
      // once would put its answer before /version's on the wire
      const written = new Promise<void>((resolve, reject) => s.write(
        'GET /livez HTTP/1.1\r\nHost: x\r\n\r\n' + 'GET /version HTTP/1.1\r\nHost: x\r\n\r\n' + 'GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n',
        (e) => (e ? reject(e) : resolve()),
      ));
      await written;
      blockMainLoop(1_000);
      const [first, second, third] = await got;
      expect(first).toMatchObject({ status: 200, body: 'ok', byUws: false });
      expect(second!.status).toBe(200);
      expect(second!.byUws).toBe(true);
      expect(JSON.parse(second!.body)).toHaveProperty('gitVersion');
      // behind a forwarded request the probe went to the main process, in order
      expect(third).toMatchObject({ status: 200, body: 'ok', byUws: true });
      // the same connection answers probes itself again once it is quiet (backend retired idle)
      await eventually(
        async () => {
          // past the front's 4 s backend idle bound (BACKEND_IDLE_MS); a probe forwarded meanwhile restarts it
          await new Promise((r) => setTimeout(r, 5_000));
          const [again] = await (() => {
            const r = readResponses(s, 1);
            s.write('GET /livez HTTP/1.1\r\nHost: x\r\n\r\n');
            return r;
          })();
          expect(again).toMatchObject({ status: 200, body: 'ok', byUws: false });
          return true;
        },
        'probes answered by the worker again',
        25_000,
      );
    } finally {
      s.destroy();
    }
  }, 60_000);

  const openTls = (): Promise<TLSSocket> =>
    new Promise((resolve, reject) => {
      const s = tlsConnect({ host: '127.0.0.1', port: t.server.port, ca: t.server.caPem, cert: t.server.adminCertPem, key: t.server.adminKeyPem, ALPNProtocols: ['http/1.1'], servername: 'localhost' });
      s.once('secureConnect', () => resolve(s));
      s.once('error', reject);
    });
});

/** reads `n` HTTP/1.1 responses (Content-Length or chunked bodies) from `s`, in wire order */
function readResponses(s: TLSSocket, n: number): Promise<Omit<ProbeAnswer, 'at'>[]> {
  return new Promise((resolve, reject) => {
    let buf: Buffer = Buffer.alloc(0);
    const out: Omit<ProbeAnswer, 'at'>[] = [];
    const onData = (chunk: Buffer): void => {
      buf = Buffer.concat([buf, chunk]);
      for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buf.subarray(0, end).toString('latin1');
        const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
        const byUws = /\r\nuwebsockets:/i.test(head);
        const length = /\r\ncontent-length: *(\d+)/i.exec(head);
        let body: Buffer;
        let rest: Buffer;
        if (length) {
          const len = Number(length[1]);
          if (buf.length < end + 4 + len) return;
          body = buf.subarray(end + 4, end + 4 + len);
          rest = buf.subarray(end + 4 + len);
        } else {
          // chunked: collect chunks up to the zero-size one
          let i = end + 4;
          const parts: Buffer[] = [];
          for (;;) {
            const lineEnd = buf.indexOf('\r\n', i);
            if (lineEnd < 0) return;
            const size = parseInt(buf.subarray(i, lineEnd).toString('latin1'), 16);
            if (buf.length < lineEnd + 2 + size + 2) return;
            if (size === 0) {
              i = lineEnd + 4;
              break;
            }
            parts.push(buf.subarray(lineEnd + 2, lineEnd + 2 + size));
            i = lineEnd + 2 + size + 2;
          }
          body = Buffer.concat(parts);
          rest = buf.subarray(i);
        }
        out.push({ status, body: body.toString('utf8'), byUws });
        buf = rest;
        if (out.length === n) {
          s.off('data', onData);
          s.off('error', reject);
          resolve(out);
          return;
        }
      }
    };
    s.on('data', onData);
    s.once('error', reject);
  });
}

describe('--health-in-tls-workers=false', () => {
  it('sends every probe to the main process', async () => {
    await using t = await startTestServer({ tlsWorkers: 1, healthInTlsWorkers: false });
    for (const path of ['/livez', '/readyz?verbose', '/healthz']) {
      const r = await t.request('GET', path);
      expect(r.status).toBe(200);
      // uWS adds this header to everything it answers
      expect(r.headers['uwebsockets']).toBeDefined();
    }
  }, 60_000);
});
