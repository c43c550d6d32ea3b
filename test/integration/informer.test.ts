// @kubernetes/client-node's informer (list, then watch from the list's
// resourceVersion; re-list on 410, spec 000 §4.5) keeps an exact mirror of the
// server's objects through 10,000 random creates, updates and deletes,
// including a forced 410 in the middle.

import { Agent, request as httpsRequest } from 'node:https';
import * as k8s from '@kubernetes/client-node';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestServer, startTestServer } from '../helpers/server.js';
import { eventually } from '../helpers/eventually.js';

let t: TestServer;
let agent: Agent;
const NS = 'informer';
const base = `/api/v1/namespaces/${NS}/configmaps`;

/** a keep-alive HTTPS request (10,000 writes must not pay a TLS handshake each) */
function send(method: string, path: string, body?: object, contentType = 'application/json'): Promise<number> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        port: t.server.port,
        method,
        path,
        agent,
        headers: data === undefined ? {} : { 'Content-Type': contentType, 'Content-Length': String(Buffer.byteLength(data)) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (data !== undefined) req.write(data);
    req.end();
  });
}

beforeAll(async () => {
  t = await startTestServer();
  agent = new Agent({
    keepAlive: true,
    maxSockets: 32,
    ca: t.server.caPem,
    cert: t.server.adminCertPem,
    key: t.server.adminKeyPem,
  });
  expect((await t.request('POST', '/api/v1/namespaces', { body: { metadata: { name: NS } } })).status).toBe(201);
});

afterAll(async () => {
  agent?.destroy();
  await t?.stop();
});

type Change = { op: 'create' | 'update' | 'delete'; name: number; value: number };

describe('client-node informer', () => {
  it('mirrors the server exactly through 10,000 random changes and a forced re-list', async () => {
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(t.server.kubeconfigPath);
    const core = kc.makeApiClient(k8s.CoreV1Api);
    let lists = 0;
    // makeInformer builds a ListWatch, which is also the informer's object cache
    const informer = k8s.makeInformer(kc, base, () => {
      lists++;
      return core.listNamespacedConfigMap({ namespace: NS });
    }) as k8s.Informer<k8s.V1ConfigMap> & k8s.ObjectCache<k8s.V1ConfigMap>;
    const errors: unknown[] = [];
    informer.on('error', (e) => errors.push(e));
    await informer.start();
    expect(lists).toBe(1);

    const changes = fc.sample(
      fc.record({
        op: fc.constantFrom<Change['op']>('create', 'create', 'update', 'update', 'delete'),
        name: fc.integer({ min: 0, max: 299 }),
        value: fc.integer({ min: 0, max: 1_000_000 }),
      }),
      { numRuns: 10_000, seed: 4242 },
    );
    let applied = 0;
    let expired = false;
    const statuses = new Map<number, number>();
    const CONCURRENCY = 32;
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < changes.length) {
        const c = changes[next++]!;
        const name = `cm-${c.name}`;
        let status: number;
        if (c.op === 'create') {
          status = await send('POST', base, { metadata: { name, labels: { v: String(c.value % 7) } }, data: { v: String(c.value) } });
        } else if (c.op === 'update') {
          status = await send('PATCH', `${base}/${name}`, { data: { v: String(c.value) } }, 'application/merge-patch+json');
        } else {
          status = await send('DELETE', `${base}/${name}`);
        }
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        applied++;
        // half way: every watch is ended with 410 Expired, so the informer must re-list
        if (applied === 5_000 && !expired) {
          expired = true;
          expect(t.server.watch.expireWatchers()).toBeGreaterThanOrEqual(1);
        }
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    expect(applied).toBe(10_000);
    // every change was a real write or a refused one (409 exists, 404 missing); nothing else
    expect([...statuses.keys()].every((s) => [200, 201, 404, 409].includes(s))).toBe(true);
    expect((statuses.get(200) ?? 0) + (statuses.get(201) ?? 0)).toBeGreaterThan(5_000);

    const server = await core.listNamespacedConfigMap({ namespace: NS });
    const want = new Map(server.items.map((o) => [o.metadata!.name!, `${o.metadata!.resourceVersion}|${o.data?.v}`]));
    const mirror = (): Map<string, string> =>
      new Map(informer.list(NS).map((o) => [o.metadata!.name!, `${o.metadata!.resourceVersion}|${o.data?.v}`]));
    const same = (): boolean => {
      const m = mirror();
      if (m.size !== want.size) return false;
      for (const [k, v] of want) if (m.get(k) !== v) return false;
      return true;
    };
    await eventually(same, 'the informer to catch up', 20_000);
    expect(Object.fromEntries(mirror())).toEqual(Object.fromEntries(want));
    expect(want.size).toBeGreaterThan(0);
    // the 410 made it list again
    expect(lists).toBeGreaterThanOrEqual(2);
    expect(errors).toEqual([]);
    await informer.stop();
    await eventually(() => t.server.watch.stats().watchers === 0, 'the informer watch to be freed');
  }, 90_000);
});
