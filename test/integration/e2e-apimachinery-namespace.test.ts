// Ports of Kubernetes' e2e conformance tests "[sig-api-machinery] Namespaces"
// and "OrderedNamespaceDeletion" (test/e2e/apimachinery/namespace.go) to orch,
// on a server with a node agent (simulated runtime) so pods really run:
// deleting a namespace removes its pods and services and lets the name be
// created again empty; a namespace is patched, updated, its status read,
// patched and updated through /status, its spec.finalizers changed through
// /finalize; and a namespace's pods are deleted before anything else in it.

import { describe, expect, it } from 'vitest';
import { type Obj, api } from '../helpers/e2e.js';
import { eventually } from '../helpers/eventually.js';
import { serverWithAgent } from '../helpers/nodeagent.js';

const NODE = 'e2e-ns-node';
const env = serverWithAgent(NODE);
const k = api(env.ts);
const NS = '/api/v1/namespaces';

const pod = (name: string, extra: Obj = {}) => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name, ...extra },
  spec: { containers: [{ name: 'nginx', image: 'registry.k8s.io/pause:3.10' }] },
});

/** the framework's CreateNamespace (a generated name from `base-`) and WaitForDefaultServiceAccountInNamespace */
async function createNamespace(base: string): Promise<string> {
  const ns = await k.namespace(`${base}-`);
  await eventually(async () => (await env.ts().request('GET', `${NS}/${ns}/serviceaccounts/default`)).status === 200, `default ServiceAccount in ${ns}`);
  return ns;
}

const podRunning = (ns: string, name: string) =>
  eventually(async () => (await k.get(`${NS}/${ns}/pods/${name}`)).status?.phase === 'Running', `${ns}/${name} Running`, { timeoutMs: 60_000, context: () => env.agent().output().slice(-2000) });

const namespaceGone = (ns: string) =>
  eventually(async () => (await env.ts().request('GET', `${NS}/${ns}`)).status === 404, `namespace ${ns} removed`, 60_000);

/** a namespace of the same name again (the e2e recreates "nsdeletetest"): the old contents must not come back */
async function recreate(ns: string): Promise<void> {
  await k.send('POST', NS, { metadata: { name: ns } });
}

describe('[sig-api-machinery] Namespaces [Serial]', () => {
  it('should ensure that all pods are removed when a namespace is deleted [Conformance]', async () => {
    const ns = await createNamespace('nsdeletetest');
    const created = await k.send('POST', `${NS}/${ns}/pods`, pod('test-pod'));
    expect(created.spec.terminationGracePeriodSeconds).toBe(30);
    await podRunning(ns, 'test-pod');
    await k.send('DELETE', `${NS}/${ns}`);
    await namespaceGone(ns);
    await recreate(ns);
    await k.get(`${NS}/${ns}/pods/test-pod`, 404);
  });

  it('should ensure that all services are removed when a namespace is deleted [Conformance]', async () => {
    const ns = await createNamespace('nsdeletetest');
    await k.send('POST', `${NS}/${ns}/services`, {
      metadata: { name: 'test-service' },
      spec: { selector: { foo: 'bar', baz: 'blah' }, ports: [{ port: 80, targetPort: 80 }] },
    });
    await k.send('DELETE', `${NS}/${ns}`);
    await namespaceGone(ns);
    await recreate(ns);
    await k.get(`${NS}/${ns}/services/test-service`, 404);
  });

  it('should delete fast enough (90 percent of 100 namespaces in 150 seconds) — all of them here', async () => {
    const names = Array.from({ length: 100 }, (_, n) => `nslifetest-${n}`);
    for (let i = 0; i < names.length; i += 20) await Promise.all(names.slice(i, i + 20).map((n) => k.send('POST', NS, { metadata: { name: n } })));
    // the e2e's DeleteNamespaces: every namespace whose name contains the filter
    const listed = (await k.get(NS)).items.map((n: Obj) => n.metadata.name as string).filter((n: string) => n.includes('nslifetest'));
    expect(listed).toHaveLength(100);
    for (let i = 0; i < listed.length; i += 20) await Promise.all(listed.slice(i, i + 20).map((n: string) => k.send('DELETE', `${NS}/${n}`)));
    const started = Date.now();
    await eventually(async () => (await k.get(NS)).items.every((n: Obj) => !String(n.metadata.name).includes('nslifetest')), 'all nslifetest namespaces gone', 150_000);
    expect(Date.now() - started).toBeLessThan(150_000);
  }, 240_000);

  it('should patch a Namespace [Conformance]', async () => {
    const ns = await k.send('POST', NS, { metadata: { name: `nspatchtest-${crypto.randomUUID()}` } });
    expect(Number(ns.metadata.resourceVersion)).toBeGreaterThan(0);
    const patched = await k.patch(`${NS}/${ns.metadata.name}`, { metadata: { labels: { testLabel: 'testValue' } } }, 'strategic');
    expect(BigInt(patched.metadata.resourceVersion)).toBeGreaterThan(BigInt(ns.metadata.resourceVersion));
    expect((await k.get(`${NS}/${ns.metadata.name}`)).metadata.labels).toMatchObject({ testLabel: 'testValue' });
  });

  it('should apply changes to a namespace status [Conformance]', async () => {
    const ns = await createNamespace('namespaces');
    const status = await k.get(`${NS}/${ns}/status`);
    expect(status).toMatchObject({ kind: 'Namespace', apiVersion: 'v1', status: { phase: 'Active' } });

    const condition = { type: 'StatusPatch', status: 'True', reason: 'E2E', message: 'Patched by an e2e test' };
    const patched = await k.patch(`${NS}/${ns}/status`, { metadata: { annotations: { 'e2e-patched-ns-status': ns } }, status: { conditions: [condition] } });
    expect(patched.metadata.annotations).toMatchObject({ 'e2e-patched-ns-status': ns });
    expect(patched.status.conditions.at(-1)).toMatchObject({ reason: 'E2E', message: 'Patched by an e2e test' });

    const toUpdate = await k.get(`${NS}/${ns}/status`);
    toUpdate.status.conditions = [...(toUpdate.status.conditions ?? []), { type: 'StatusUpdate', status: 'True', reason: 'E2E', message: 'Updated by an e2e test' }];
    const updated = await k.send('PUT', `${NS}/${ns}/status`, toUpdate);
    expect(updated.status.conditions.at(-1)).toMatchObject({ type: 'StatusUpdate', message: 'Updated by an e2e test' });
    expect(updated.status.conditions.map((c: Obj) => c.type)).toEqual(['StatusPatch', 'StatusUpdate']);
    expect(updated.status.phase).toBe('Active');
  });

  it('should apply an update to a Namespace [Conformance]', async () => {
    const ns = await createNamespace('namespaces');
    const current = await k.get(`${NS}/${ns}`);
    current.metadata.labels[ns] = 'updated';
    const updated = await k.send('PUT', `${NS}/${ns}`, current);
    expect(updated.metadata.labels).toMatchObject({ [ns]: 'updated' });
  });

  it('should apply a finalizer to a Namespace [Conformance]', async () => {
    const fake = 'e2e.example.com/fakeFinalizer';
    const name = `e2e-ns-${Math.random().toString(36).slice(2, 7)}`;
    const created = await k.send('POST', NS, { metadata: { name } });
    expect(created.spec.finalizers).toEqual(['kubernetes']);

    const ns = await k.get(`${NS}/${name}`);
    ns.spec.finalizers = [...ns.spec.finalizers, fake];
    const added = await k.send('PUT', `${NS}/${name}/finalize`, ns);
    expect(added.spec.finalizers).toContain(fake);

    const again = await k.get(`${NS}/${name}`);
    again.spec.finalizers = again.spec.finalizers.filter((f: string) => f !== fake);
    const removed = await k.send('PUT', `${NS}/${name}/finalize`, again);
    expect(removed.spec.finalizers ?? []).not.toContain(fake);
    expect((await k.get(`${NS}/${name}`)).spec.finalizers).toEqual(['kubernetes']);
  });

  it('ignores spec.finalizers written through the namespace itself (kube namespace strategy PrepareForUpdate)', async () => {
    const name = `e2e-ns-${Math.random().toString(36).slice(2, 7)}`;
    await k.send('POST', NS, { metadata: { name } });
    const ns = await k.get(`${NS}/${name}`);
    ns.spec.finalizers = ['e2e.example.com/other'];
    expect((await k.send('PUT', `${NS}/${name}`, ns)).spec.finalizers).toEqual(['kubernetes']);
    expect((await k.patch(`${NS}/${name}`, { spec: { finalizers: [] } })).spec.finalizers).toEqual(['kubernetes']);
  });
});

describe('[sig-api-machinery] OrderedNamespaceDeletion', () => {
  it('namespace deletion should delete pod first [Conformance]', async () => {
    const ns = await createNamespace('nsdeletetest');
    await k.send('POST', `${NS}/${ns}/pods`, pod('test-pod', { finalizers: ['e2e.example.com/finalizer'] }));
    await podRunning(ns, 'test-pod');
    await k.send('POST', `${NS}/${ns}/configmaps`, { metadata: { name: 'test-configmap' }, data: { key: 'value' } });
    await k.send('DELETE', `${NS}/${ns}`);

    // the namespace controller has been at it: Terminating, with its conditions
    await eventually(async () => {
      const n = await k.get(`${NS}/${ns}`);
      return n.status?.phase === 'Terminating' && (n.status.conditions ?? []).some((c: Obj) => c.type === 'NamespaceDeletionContentFailure');
    }, `${ns} Terminating with NamespaceDeletionContentFailure`, 30_000);
    // the pod is being deleted, and nothing else is while it remains
    await eventually(async () => (await k.get(`${NS}/${ns}/pods/test-pod`)).metadata.deletionTimestamp, 'test-pod deleting');
    await new Promise((r) => setTimeout(r, 1500));
    await k.get(`${NS}/${ns}/configmaps/test-configmap`);
    // kube's five conditions, in its order and words
    const held = await k.get(`${NS}/${ns}`);
    expect(held.status.conditions.map((c: Obj) => [c.type, c.status, c.reason])).toEqual([
      ['NamespaceDeletionDiscoveryFailure', 'False', 'ResourcesDiscovered'],
      ['NamespaceDeletionGroupVersionParsingFailure', 'False', 'ParsedGroupVersions'],
      ['NamespaceDeletionContentFailure', 'False', 'ContentDeleted'],
      ['NamespaceContentRemaining', 'True', 'SomeResourcesRemain'],
      ['NamespaceFinalizersRemaining', 'True', 'SomeFinalizersRemain'],
    ]);
    const message = (type: string) => held.status.conditions.find((c: Obj) => c.type === type).message;
    expect(message('NamespaceContentRemaining')).toBe('Some resources are remaining: pods. has 1 resource instances');
    expect(message('NamespaceFinalizersRemaining')).toBe('Some content in the namespace has finalizers remaining: e2e.example.com/finalizer in 1 resource instances');

    await eventually(async () => {
      const p = await k.get(`${NS}/${ns}/pods/test-pod`);
      p.metadata.finalizers = [];
      return (await env.ts().request('PUT', `${NS}/${ns}/pods/test-pod`, { body: p })).status === 200;
    }, 'finalizer removed from test-pod');
    await eventually(async () => (await env.ts().request('GET', `${NS}/${ns}/pods/test-pod`)).status === 404, 'test-pod gone', 60_000);
    await namespaceGone(ns);
  });
});
