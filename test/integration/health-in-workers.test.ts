// Health answered by the TLS worker processes from the main loop's snapshots
// (issue #15, src/gateway/health-snapshot.ts, src/gateway/health-tap.ts): the
// same answers as the main process, the same authorization, answers while the
// main event loop is blocked, and a failing liveness once its snapshot is old.
//
// The server runs in this process, so blocking this thread blocks its main
// loop; the probes are made from a worker thread, which records when each
// answer arrived. A worker's answer carries no `uWebSockets` header (uWS adds
// one to everything it answers), which tells who answered.

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
parentPort.on('message', async (m) => {
  if (m.delayMs) await new Promise((r) => setTimeout(r, m.delayMs));
  parentPort.postMessage({ id: m.id, answer: await probe(m.path, m.anonymous, m.headers || {}) });
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
  const waiting = new Map<number, (a: ProbeAnswer) => void>();
  const probe = (path: string, o: { anonymous?: boolean; delayMs?: number; headers?: Record<string, string> } = {}): Promise<ProbeAnswer> =>
    new Promise((resolve) => {
      const id = next++;
      waiting.set(id, resolve);
      prober.postMessage({ id, path, ...o });
    });

  beforeAll(async () => {
    t = await startTestServer({ tlsWorkers: 2, healthInTlsWorkers: true });
    prober = new Worker(PROBE_THREAD, { eval: true, workerData: { port: t.server.port, ca: t.server.caPem, cert: t.server.adminCertPem, key: t.server.adminKeyPem } });
    prober.on('message', (m: { id: number; answer: ProbeAnswer }) => {
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
});
