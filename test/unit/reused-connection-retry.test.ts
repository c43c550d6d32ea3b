// The API server's clients of webhooks and aggregated API servers against a real
// HTTPS server that closes a kept-alive connection just as the next request goes
// out on it (test/helpers/idle-closing-server.ts): as Go's transport does, a
// replayable request goes once more on a new connection instead of failing with
// "connection reset by peer"; the proxy never sends a POST twice
// (src/core/reused-connection.ts).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import type { ProxiedRequest } from '../../src/endpoints/filters/aggregator.js';
import type { PlainResponse } from '../../src/endpoints/http.js';
import { parseRequestInfo } from '../../src/endpoints/request-info.js';
import { WebhookAgents, postReview } from '../../src/registry/admission/webhook-client.js';
import { aggregatorProxy, getDiscoveryDocument } from '../../src/server/aggregator/proxy.js';
import type { AggregatorProxyOptions } from '../../src/server/aggregator/service-request.js';
import { type Pki, ensurePki } from '../../src/server/pki.js';
import { type IdleClosingServer, startIdleClosingServer } from '../helpers/idle-closing-server.js';

let dir: string;
let pki: Pki;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'orch-reused-conn-'));
  pki = await ensurePki(join(dir, 'pki'), { hosts: ['127.0.0.1'] });
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function withServer(run: (s: IdleClosingServer) => Promise<void>): Promise<void> {
  const s = await startIdleClosingServer(pki.serving, (req, res, body) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ method: req.method, url: req.url, body }));
  });
  try {
    await run(s);
  } finally {
    await s.close();
  }
}

describe('webhook reviews', () => {
  it('a review whose kept-alive connection is closed under it is posted again on a new connection', async () => {
    await withServer(async (s) => {
      const agents = new WebhookAgents();
      const o = { resolver: () => ({ host: '', port: 0, serverName: '' }), timeoutMs: 5000, agents, clock: systemClock };
      const cc = { url: `https://127.0.0.1:${s.port}/validate`, caPem: pki.ca.certPem };
      try {
        expect(await postReview(cc, { n: 1 }, o)).toMatchObject({ method: 'POST', body: '{"n":1}' });
        // the pooled connection is reused and closed by the "webhook": answered on a second connection
        expect(await postReview(cc, { n: 2 }, o)).toMatchObject({ method: 'POST', body: '{"n":2}' });
        expect(s.connections()).toBe(2);
        expect(s.served).toEqual(['POST /validate?timeout=5s', 'POST /validate?timeout=5s']);
      } finally {
        agents.close();
      }
    });
  });
});

describe('aggregated API servers', () => {
  const target = { name: 'v1alpha1.wardle.example.com', group: 'wardle.example.com', version: 'v1alpha1', service: { namespace: 'ns', name: 'api', port: 443 }, insecureSkipTLSVerify: true, available: true };
  const options = (s: IdleClosingServer, agents: WebhookAgents): AggregatorProxyOptions => ({
    resolver: () => ({ host: '127.0.0.1', port: s.port, serverName: 'api.ns.svc' }),
    agents,
    clientCert: () => pki.admin,
    clock: systemClock,
  });
  const proxied = (method: string, path: string, body = ''): ProxiedRequest => ({
    http: { method, path, query: new URLSearchParams(), headers: new Map(), proxiedAddress: '', body: new TextEncoder().encode(body), signal: new AbortController().signal },
    info: parseRequestInfo(method, path, new URLSearchParams()),
    user: { username: 'alice', groups: ['system:authenticated'] },
    target,
  });
  const text = (r: unknown) => new TextDecoder().decode((r as PlainResponse).body as Uint8Array);

  it('the proxy sends a GET again on a new connection; a POST is never sent twice (503)', async () => {
    await withServer(async (s) => {
      const agents = new WebhookAgents();
      const proxy = aggregatorProxy(options(s, agents));
      try {
        const path = '/apis/wardle.example.com/v1alpha1/namespaces/default/flunders';
        expect(JSON.parse(text(await proxy(proxied('GET', path))))).toMatchObject({ method: 'GET', url: path });
        const again = await proxy(proxied('GET', `${path}/a`));
        expect(again.status).toBe(200);
        expect(JSON.parse(text(again))).toMatchObject({ method: 'GET', url: `${path}/a` });
        expect(s.connections()).toBe(2);
        // the second connection's second request is a POST: it fails rather than being sent twice
        await expect(proxy(proxied('POST', path, '{}'))).rejects.toMatchObject({ code: 503, message: expect.stringContaining('connection reset by peer') });
        expect(s.served.filter((x) => x.startsWith('POST'))).toEqual([]);
      } finally {
        agents.close();
      }
    });
  });

  it('the availability probe asks again on a new connection rather than marking the APIService unavailable', async () => {
    await withServer(async (s) => {
      const agents = new WebhookAgents();
      const o = options(s, agents);
      try {
        expect(JSON.parse(await getDiscoveryDocument(target, o, systemClock))).toMatchObject({ url: '/apis/wardle.example.com/v1alpha1' });
        expect(JSON.parse(await getDiscoveryDocument(target, o, systemClock))).toMatchObject({ url: '/apis/wardle.example.com/v1alpha1' });
        expect(s.connections()).toBe(2);
      } finally {
        agents.close();
      }
    });
  });
});
