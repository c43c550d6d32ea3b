// Ports of Kubernetes' e2e tests "[sig-api-machinery] Servers with support for
// API chunking" (test/e2e/apimachinery/chunking.go) to orch: 400 PodTemplates
// listed in pages of random sizes keep one resourceVersion, come in name
// order and count the rest in remainingItemCount; a continue token whose
// snapshot is gone (compacted, as in kube; or too old) is a 410 Expired whose
// Status carries an inconsistent continue token, which goes on from the same
// key at a newer resourceVersion.

import { Agent } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProtobufCatalog } from '../../src/registry/protobuf-catalog.js';
import { type Obj, api } from '../helpers/e2e.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

const TOTAL = 400;
const agent = new Agent({ keepAlive: true, maxSockets: 20 });
let t: TestServer;
let short: TestServer;
const k = api(() => t);

interface List {
  metadata: { resourceVersion: string; continue?: string; remainingItemCount?: number };
  items: { metadata: { name: string } }[];
}

const templates = (ns: string) => `/api/v1/namespaces/${ns}/podtemplates`;
const name = (i: number) => `template-${String(i).padStart(4, '0')}`;

/** the e2e's BeforeEach: 400 PodTemplates, 20 at a time */
async function createTemplates(s: TestServer, ns: string, total = TOTAL): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < total; i = next++) {
      const body = { metadata: { name: name(i) }, template: { spec: { containers: [{ name: 'test', image: 'test2' }] } } };
      const r = await s.request('POST', templates(ns), { body, agent });
      expect(r.status, r.text).toBe(201);
    }
  };
  await Promise.all(Array.from({ length: 20 }, worker));
}

async function list(s: TestServer, ns: string, limit: number, token?: string): Promise<{ status: number; body: Obj }> {
  const r = await s.request('GET', `${templates(ns)}?limit=${limit}${token ? `&continue=${encodeURIComponent(token)}` : ''}`, { agent });
  return { status: r.status, body: r.json<Obj>() };
}

/** remainingItemCount is set exactly when there is a continue token, and counts what is left */
function checkRemaining(l: List, found: number): void {
  if (!l.metadata.continue) expect(l.metadata.remainingItemCount).toBeUndefined();
  else expect(l.metadata.remainingItemCount! + l.items.length + found).toBe(TOTAL);
}

beforeAll(async () => {
  [t, short] = await Promise.all([startTestServer(), startTestServer({ continueTokenTtlMs: 1000 })]);
});
afterAll(async () => {
  agent.destroy();
  await Promise.all([t?.stop(), short?.stop()]);
});

describe('[sig-api-machinery] Servers with support for API chunking', () => {
  it('should return chunks of results for list calls', async () => {
    const ns = await k.namespace('chunking-');
    await createTemplates(t, ns);
    for (let round = 0; round < 3; round++) {
      let found = 0;
      let lastRV = '';
      let token: string | undefined;
      for (;;) {
        const limit = Math.floor(Math.random() * (TOTAL / 10)) + 1;
        const r = await list(t, ns, limit, token);
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        const l = r.body as List;
        expect(l.items.length).toBeLessThanOrEqual(limit);
        lastRV ||= l.metadata.resourceVersion;
        expect(l.metadata.resourceVersion).toBe(lastRV);
        checkRemaining(l, found);
        for (const item of l.items) expect(item.metadata.name).toBe(name(found++));
        if (!l.metadata.continue) break;
        token = l.metadata.continue;
      }
      expect(found).toBe(TOTAL);
    }
    const all = await list(t, ns, TOTAL + 1);
    expect(all.body.items).toHaveLength(TOTAL);
    expect(all.body.metadata.continue).toBeUndefined();
  });

  /** the second half of the e2e: go on with the token of the 410 and read to the end */
  async function continueInconsistently(s: TestServer, ns: string, expired: { status: number; body: Obj }, firstRV: string): Promise<void> {
    const oneTenth = TOTAL / 10;
    expect(expired.status).toBe(410);
    expect(expired.body).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Expired', code: 410 });
    expect(expired.body.message).toMatch(/^The provided continue parameter is too old to display a consistent list result\. .*use the continue token in this response/);
    const inconsistent = expired.body.metadata?.continue as string;
    expect(inconsistent).toBeTruthy();

    const second = await list(s, ns, oneTenth, inconsistent);
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    let l = second.body as List;
    expect(l.metadata.resourceVersion).not.toBe(firstRV);
    expect(l.items).toHaveLength(oneTenth);
    let found = oneTenth;
    checkRemaining(l, found);
    for (const item of l.items) expect(item.metadata.name).toBe(name(found++));
    const lastRV = l.metadata.resourceVersion;
    while (l.metadata.continue) {
      const r = await list(s, ns, oneTenth, l.metadata.continue);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      l = r.body as List;
      checkRemaining(l, found);
      expect(l.items.length).toBeLessThanOrEqual(oneTenth);
      expect(l.metadata.resourceVersion).toBe(lastRV);
      for (const item of l.items) expect(item.metadata.name).toBe(name(found++));
    }
    expect(found).toBe(TOTAL);
  }

  it('should support continue listing from the last key if the original version has been compacted away, though the list is inconsistent [Slow]', async () => {
    const ns = await k.namespace('chunking-');
    await createTemplates(t, ns);
    const first = await list(t, ns, TOTAL / 10);
    const l = first.body as List;
    checkRemaining(l, 0);
    expect(l.items.map((i) => i.metadata.name)).toEqual(Array.from({ length: TOTAL / 10 }, (_, i) => name(i)));
    // a write after the first page, then compaction past the first page's revision
    await k.send('POST', '/api/v1/namespaces/default/configmaps', { metadata: { generateName: 'chunking-' } });
    await t.server.store.compact(t.server.store.revision);
    // the e2e's clientset speaks protobuf: the Status there carries the token too
    const pb = await t.request('GET', `${templates(ns)}?limit=${TOTAL / 10}&continue=${encodeURIComponent(l.metadata.continue!)}`, { agent, headers: { Accept: 'application/vnd.kubernetes.protobuf' } });
    expect(pb.status).toBe(410);
    const status = new ProtobufCatalog(t.server.registry).decodeBody(pb.raw, t.server.registry.lookupKind('', 'v1', 'PodTemplate')!, 'Status') as Obj;
    expect(status).toMatchObject({ reason: 'Expired', code: 410 });
    expect(status.metadata?.continue).toBeTruthy();
    const expired = await list(t, ns, TOTAL / 10, l.metadata.continue);
    await continueInconsistently(t, ns, expired, l.metadata.resourceVersion);
  });

  it('a continue token past its lifetime is the same 410 with an inconsistent continue token (orch expires tokens by age too)', async () => {
    const ns = (await short.request('POST', '/api/v1/namespaces', { body: { metadata: { generateName: 'chunking-' } } })).json<Obj>().metadata.name as string;
    await createTemplates(short, ns);
    const first = (await list(short, ns, TOTAL / 10)).body as List;
    await new Promise((r) => setTimeout(r, 1100));
    await short.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { generateName: 'chunking-' } } });
    const expired = await list(short, ns, TOTAL / 10, first.metadata.continue);
    await continueInconsistently(short, ns, expired, first.metadata.resourceVersion);
  });
});
