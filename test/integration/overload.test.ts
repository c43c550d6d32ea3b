// Overload protection and deadlines against a started server (issue #15):
// what exceeds a priority level's concurrency is answered 429 with
// Retry-After before any work; the admin identity and watches are not
// limited; a request that outlives its deadline is answered 504 Timeout.
// Requests are held in flight deterministically by an authorizer that waits
// for the test (authorization runs after admission, as in kube).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Authorizer, Decision, RequestAttributes } from '../../src/auth/authz/types.js';
import { type TestServer, startTestServer } from '../helpers/server.js';
import { request as httpsRequest } from 'node:https';

/** holds requests for namespace "held" until released */
class GateAuthorizer implements Authorizer {
  private waiting: (() => void)[] = [];
  arrived = 0;
  async authorize(attrs: RequestAttributes): Promise<Decision> {
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
