// Overload protection and deadlines against a started server (issue #15):
// what exceeds a priority level's concurrency is answered 429 with
// Retry-After before any work; the admin identity and watches are not
// limited; a request that outlives its deadline is answered 504 Timeout.
// Requests are held in flight deterministically by an authorizer that waits
// for the test (authorization runs after admission, as in kube). Bearer-token
// requests are shed early by the user their token last authenticated as.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Authorizer, Decision, RequestAttributes } from '../../src/auth/authz/types.js';
import { type TestServer, startTestServer } from '../helpers/server.js';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer as createHttpsServer, request as httpsRequest, type Server as HttpsServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensurePki } from '../../src/server/pki.js';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';

/** reads from a raw connection until `text` has arrived */
function readUntil(s: TLSSocket, got: { text: string }, text: RegExp): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = (): void => {
      if (!text.test(got.text)) return;
      s.off('data', check);
      resolve();
    };
    s.on('data', check);
    s.once('close', () => reject(new Error(`closed; got ${got.text}`)));
    check();
  });
}

/** holds requests for namespace "held" until released */
class GateAuthorizer implements Authorizer {
  private waiting: (() => void)[] = [];
  arrived = 0;
  calls = 0;
  async authorize(attrs: RequestAttributes): Promise<Decision> {
    this.calls++;
    if (attrs.namespace === 'held') {
      this.arrived++;
      await new Promise<void>((r) => this.waiting.push(r));
    }
    return { decision: 'allow' };
  }
  release(): void {
    for (const r of this.waiting.splice(0)) r();
  }
}

async function until(f: () => boolean): Promise<void> {
  for (let i = 0; i < 3000 && !f(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(f()).toBe(true);
}

describe('overload protection', () => {
  let t: TestServer;
  const gate = new GateAuthorizer();

  beforeAll(async () => {
    // total concurrency 2: one seat for anonymous (catch-all, no queue)
    t = await startTestServer({ authorizer: gate, limits: { maxRequestsInflight: 1, maxMutatingRequestsInflight: 1 } });
  });
  afterAll(async () => {
    gate.release();
    await t.stop();
  });

  it('refuses what exceeds the level with 429 and Retry-After, and still serves the admin identity and health checks', async () => {
    const held = t.request('GET', '/api/v1/namespaces/held/configmaps', { anonymous: true });
    await until(() => gate.arrived === 1);
    const refused = await t.request('GET', '/api/v1/namespaces/default/configmaps', { anonymous: true });
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.json()).toMatchObject({ kind: 'Status', reason: 'TooManyRequests', code: 429, details: { retryAfterSeconds: 1 } });
    // the admin (system:masters) is exempt, health checks are served before any limit
    expect((await t.request('GET', '/api/v1/namespaces/default/configmaps')).status).toBe(200);
    expect((await t.request('GET', '/readyz', { anonymous: true })).status).toBe(200);
    const metrics = (await t.request('GET', '/metrics')).text;
    expect(metrics).toMatch(/apiserver_flowcontrol_rejected_requests_total\{priority_level="catch-all",reason="concurrency-limit"\} 1/);
    expect(metrics).toMatch(/apiserver_flowcontrol_current_executing_requests\{priority_level="catch-all"\} 1/);
    gate.release();
    expect((await held).status).toBe(200);
    // the seat is free again
    expect((await t.request('GET', '/api/v1/namespaces/default/configmaps', { anonymous: true })).status).toBe(200);
  });

  it('sheds before the body is read or anything is authorized, and the connection serves on', async () => {
    const held = t.request('GET', '/api/v1/namespaces/held/configmaps', { anonymous: true });
    await until(() => gate.arrived === 2);
    const calls = gate.calls;
    const s = tlsConnect({ host: '127.0.0.1', port: t.server.port, ca: t.server.caPem });
    const got = { text: '' };
    s.on('data', (d: Buffer) => (got.text += d.toString('latin1')));
    await new Promise((r) => s.once('secureConnect', r));
    const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'shed' }, data: { v: 'x'.repeat(64 * 1024) } });
    const half = Math.floor(body.length / 2);
    // the head and half the body: the answer comes without waiting for the rest
    s.write(`POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, half)}`);
    await readUntil(s, got, /\r\n\r\n\{[^]*\}\n?$/);
    expect(got.text).toMatch(/^HTTP\/1\.1 429 /);
    expect(got.text).toMatch(/\r\nRetry-After: 1\r\n/i);
    expect(got.text).toMatch(/\r\nX-Orch-Pf-Rejection: concurrency-limit\r\n/i);
    expect(gate.calls).toBe(calls);
    gate.release();
    expect((await held).status).toBe(200);
    // the rest of the body is skipped, and the same connection serves the next request
    got.text = '';
    s.write(`${body.slice(half)}GET /api/v1/namespaces/default/configmaps/shed HTTP/1.1\r\nHost: x\r\n\r\n`);
    await readUntil(s, got, /\r\n\r\n\{[^]*\}\n?$/);
    // nothing was created: the shed request was never handled
    expect(got.text).toMatch(/^HTTP\/1\.1 404 /);
    s.destroy();
  });

  it('does not count watches', async () => {
    const watch = httpsRequest({
      host: '127.0.0.1',
      port: t.server.port,
      path: '/api/v1/namespaces/default/configmaps?watch=true',
      ca: t.server.caPem,
      agent: false,
    });
    const opened = new Promise<number>((resolve) => watch.on('response', (res) => resolve(res.statusCode ?? 0)));
    watch.on('error', () => undefined);
    watch.end();
    expect(await opened).toBe(200);
    try {
      expect((await t.request('GET', '/api/v1/namespaces/default/configmaps', { anonymous: true })).status).toBe(200);
    } finally {
      watch.destroy();
    }
  });
});

describe('request deadlines', () => {
  let t: TestServer;
  const gate = new GateAuthorizer();

  beforeAll(async () => {
    t = await startTestServer({ authorizer: gate, limits: { requestTimeoutMs: 300 } });
  });
  afterAll(async () => {
    gate.release();
    await t.stop();
  });

  it('answers 504 Timeout when a request outlives --request-timeout', async () => {
    const r = await t.request('GET', '/api/v1/namespaces/held/configmaps');
    expect(r.status).toBe(504);
    expect(r.json()).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Timeout', code: 504 });
    expect(r.json<{ message: string }>().message).toMatch(/^Timeout: request did not complete within requested timeout/);
    // requests that finish in time are unaffected
    expect((await t.request('GET', '/api/v1/namespaces/default/configmaps')).status).toBe(200);
  });
});

describe('?timeout=', () => {
  let t: TestServer;
  const gate = new GateAuthorizer();

  beforeAll(async () => {
    t = await startTestServer({ authorizer: gate });
  });
  afterAll(async () => {
    gate.release();
    await t.stop();
  });

  it('shortens the deadline of one request (as kubectl --request-timeout sends it)', async () => {
    const r = await t.request('GET', '/api/v1/namespaces/held/configmaps?timeout=200ms');
    expect(r.status).toBe(504);
    expect(r.json()).toMatchObject({ reason: 'Timeout' });
  });
});

describe('shedding bearer-token requests before authentication', () => {
  // a real TokenReview webhook that counts what it is asked (its results are not cached: cacheTtlMs 0)
  let t: TestServer;
  let dir: string;
  let hook: HttpsServer;
  const gate = new GateAuthorizer();
  const reviewed: string[] = [];
  const revoked = new Set<string>();

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'orch-token-shed-'));
    const pki = await ensurePki(join(dir, 'pki'), { hosts: ['127.0.0.1'] });
    hook = createHttpsServer({ key: pki.serving.keyPem, cert: pki.serving.certPem }, (req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const review = JSON.parse(body) as { apiVersion: string; spec: { token: string } };
        reviewed.push(review.spec.token);
        const ok = review.spec.token === 'tok-bob' && !revoked.has('tok-bob');
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify({ apiVersion: review.apiVersion, kind: 'TokenReview', status: ok ? { authenticated: true, user: { username: 'bob', groups: ['devs'] } } : { authenticated: false } }));
      });
    });
    await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
    await writeFile(join(dir, 'ca.crt'), pki.ca.certPem);
    await writeFile(
      join(dir, 'webhook.kubeconfig'),
      `apiVersion: v1\nkind: Config\nclusters:\n- name: hook\n  cluster:\n    server: https://127.0.0.1:${(hook.address() as { port: number }).port}/authenticate\n    certificate-authority: ca.crt\nusers:\n- name: api\n  user: {}\ncontexts:\n- name: c\n  context: {cluster: hook, user: api}\ncurrent-context: c\n`,
    );
    // plain in-flight limits: one read-only seat, no queue
    t = await startTestServer({
      authorizer: gate,
      authn: { webhook: { configFile: join(dir, 'webhook.kubeconfig'), version: 'v1', cacheTtlMs: 0 } },
      limits: { enablePriorityAndFairness: false, maxRequestsInflight: 1, maxMutatingRequestsInflight: 1 },
    });
  });
  afterAll(async () => {
    gate.release();
    await t?.stop();
    hook?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const asBob = { anonymous: true, headers: { Authorization: 'Bearer tok-bob' } };

  it('a known token over the limit gets 429 and Retry-After before its body, without authentication or authorization', async () => {
    const held = t.request('GET', '/api/v1/namespaces/held/configmaps', asBob);
    await until(() => gate.arrived === 1);
    // holding the seat authenticated the token once
    expect(reviewed).toEqual(['tok-bob']);
    const calls = gate.calls;
    const s = tlsConnect({ host: '127.0.0.1', port: t.server.port, ca: t.server.caPem });
    const got = { text: '' };
    s.on('data', (d: Buffer) => (got.text += d.toString('latin1')));
    await new Promise((r) => s.once('secureConnect', r));
    const body = JSON.stringify({ kind: 'DeleteOptions', apiVersion: 'v1', padding: 'x'.repeat(64 * 1024) });
    s.write(`GET /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer tok-bob\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 100)}`);
    await readUntil(s, got, /\r\n\r\n\{[^]*\}\n?$/);
    s.destroy();
    expect(got.text).toMatch(/^HTTP\/1\.1 429 /);
    expect(got.text).toMatch(/\r\nRetry-After: 1\r\n/i);
    expect(reviewed).toEqual(['tok-bob']);
    expect(gate.calls).toBe(calls);
    // a token the server has not accepted is not classified: it is authenticated (and refused 401), not shed
    expect((await t.request('GET', '/api/v1/namespaces/default/configmaps', { anonymous: true, headers: { Authorization: 'Bearer tok-unknown' } })).status).toBe(401);
    expect(reviewed).toEqual(['tok-bob', 'tok-unknown']);
    gate.release();
    expect((await held).status).toBe(200);
  });

  it('a token revoked after it was accepted is refused 401: the cache never authenticates', async () => {
    expect((await t.request('GET', '/api/v1/namespaces/default/configmaps', asBob)).status).toBe(200);
    revoked.add('tok-bob');
    const n = reviewed.length;
    expect((await t.request('GET', '/api/v1/namespaces/default/configmaps', asBob)).status).toBe(401);
    expect(reviewed.length).toBe(n + 1);
  });
});
