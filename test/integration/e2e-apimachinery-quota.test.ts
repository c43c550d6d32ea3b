// Ports of Kubernetes' e2e conformance tests "[sig-api-machinery]
// ResourceQuota" (test/e2e/apimachinery/resource_quota.go) to orch, on a
// server with kube's group names (apiDomain k8s.io, so the quota names are
// kube's: gold.storageclass.storage.k8s.io/…): the resourcequota controller
// counts each kind into status.used promptly, the admission plugin refuses
// what exceeds status.hard, deletions give usage back; scopes select pods; a
// quota is updated, patched, deleted (one and by collection) and its /status
// read, updated and patched. The pods are never scheduled (the e2e gives them
// an unsatisfiable node selector), so no node is needed.

import { describe, expect, it } from 'vitest';
import type { Obj } from '../helpers/e2e.js';
import { base, bestEffortScenario, quotaServer, quotas, same, terminatingScenario, testPod } from '../helpers/e2e-quota.js';
import { eventually } from '../helpers/eventually.js';
import { openWatch } from '../helpers/watch-stream.js';

const server = quotaServer();
const { k, steps } = server;
const GOLD_CLAIMS = 'gold.storageclass.storage.k8s.io/persistentvolumeclaims';
const GOLD_STORAGE = 'gold.storageclass.storage.k8s.io/requests.storage';
const DONGLE = 'requests.example.com/dongle';

const { namespace, waitForUsed, deleteNow } = steps;

/** the e2e's newTestResourceQuota */
function testQuota(name: string, extra: Record<string, string> = {}): Obj {
  const hard = {
    pods: '5', services: '10', 'services.nodeports': '1', 'services.loadbalancers': '1', replicationcontrollers: '10', resourcequotas: '1',
    cpu: '1', memory: '500Mi', configmaps: '10', secrets: '10', persistentvolumeclaims: '10', 'requests.storage': '10Gi', 'ephemeral-storage': '50Gi',
    [GOLD_CLAIMS]: '10', [GOLD_STORAGE]: '10Gi', 'count/replicasets.apps': '5', [DONGLE]: '3', ...extra,
  };
  return { metadata: { name }, spec: { hard } };
}

/** the e2e's newTestResourceQuotaWithScope */
function scopedQuota(name: string, scope: string): Obj {
  const hard: Record<string, string> = { pods: '5' };
  if (scope === 'Terminating' || scope === 'NotTerminating') Object.assign(hard, { 'requests.cpu': '1', 'requests.memory': '500Mi', 'limits.cpu': '2', 'limits.memory': '1Gi' });
  return { metadata: { name }, spec: { hard, scopes: [scope] } };
}

async function refused(path: string, body: Obj): Promise<Obj> {
  const s = await k.send('POST', path, body, 403);
  expect(s).toMatchObject({ kind: 'Status', reason: 'Forbidden', code: 403 });
  expect(s.message).toContain('exceeded quota');
  return s;
}

/** quota, namespace and the usage of resourcequotas once counted (c + 1 with c = 0 in a new namespace) */
async function withTestQuota(extra: Record<string, string> = {}, used: Record<string, string> = {}): Promise<string> {
  const ns = await namespace();
  expect((await k.get(quotas(ns))).items).toHaveLength(0);
  await k.send('POST', quotas(ns), testQuota('test-quota', extra));
  await waitForUsed(ns, 'test-quota', { resourcequotas: '1', ...used });
  return ns;
}

describe('[sig-api-machinery] ResourceQuota', () => {
  it('should create a ResourceQuota and ensure its status is promptly calculated. [Conformance]', async () => {
    await withTestQuota();
  });

  it('should create a ResourceQuota and capture the life of a service. [Conformance]', async () => {
    const ns = await withTestQuota();
    const svc = (name: string, type: string) => ({
      metadata: { name }, spec: { type, ports: [{ port: 80, targetPort: 80 }], ...(type === 'LoadBalancer' ? { allocateLoadBalancerNodePorts: true } : {}) },
    });
    await k.send('POST', `${base(ns)}/services`, svc('test-service', 'ClusterIP'));
    await k.send('POST', `${base(ns)}/services`, svc('test-service-np', 'NodePort'));
    await refused(`${base(ns)}/services`, svc('test-service-lb', 'LoadBalancer'));
    await waitForUsed(ns, 'test-quota', { resourcequotas: '1', services: '2', 'services.nodeports': '1' });
    await k.send('DELETE', `${base(ns)}/services/test-service`);
    await k.send('DELETE', `${base(ns)}/services/test-service-np`);
    await waitForUsed(ns, 'test-quota', { services: '0', 'services.nodeports': '0' });
  });

  it('should create a ResourceQuota and capture the life of a secret. [Conformance]', async () => {
    const ns = await namespace();
    const found = (await k.get(`${base(ns)}/secrets`)).items.length as number;
    await k.send('POST', quotas(ns), testQuota('test-quota', { secrets: String(found + 1) }));
    await waitForUsed(ns, 'test-quota', { resourcequotas: '1', secrets: String(found) });
    await k.send('POST', `${base(ns)}/secrets`, { metadata: { name: 'test-secret' }, data: { 'data-1': 'dmFsdWUtMQo=', 'data-2': 'dmFsdWUtMgo=', 'data-3': 'dmFsdWUtMwo=' } });
    await waitForUsed(ns, 'test-quota', { secrets: String(found + 1) });
    await k.send('DELETE', `${base(ns)}/secrets/test-secret`);
    await waitForUsed(ns, 'test-quota', { secrets: String(found) });
  });

  it('should create a ResourceQuota and capture the life of a pod. [Conformance]', async () => {
    const ns = await withTestQuota();
    const requests = { cpu: '500m', memory: '252Mi', 'ephemeral-storage': '30Gi', 'example.com/dongle': '2' };
    const pod = await k.send('POST', `${base(ns)}/pods`, testPod('test-pod', requests, { 'example.com/dongle': '2' }));
    const used = { resourcequotas: '1', pods: '1', cpu: '500m', memory: '252Mi', 'ephemeral-storage': '30Gi', [DONGLE]: '2' };
    await waitForUsed(ns, 'test-quota', used);

    await refused(`${base(ns)}/pods`, testPod('fail-pod', { cpu: '600m', memory: '100Mi' }));
    await refused(`${base(ns)}/pods`, testPod('fail-pod-for-extended-resource', { cpu: '500m', memory: '100Mi', 'ephemeral-storage': '30Gi', 'example.com/dongle': '2' }, { 'example.com/dongle': '2' }));

    // a pod cannot change its resource requirements: the e2e's object is stale by now (409), the current one is Invalid
    const resized = { cpu: '100m', memory: '100Mi', 'ephemeral-storage': '10Gi' };
    pod.spec.containers[0].resources.requests = resized;
    expect((await server.t().request('PUT', `${base(ns)}/pods/test-pod`, { body: pod })).status).toBe(409);
    const current = await k.get(`${base(ns)}/pods/test-pod`);
    current.spec.containers[0].resources.requests = resized;
    const invalid = await k.send('PUT', `${base(ns)}/pods/test-pod`, current, 422);
    expect(invalid.reason).toBe('Invalid');
    expect(invalid.message).toContain('spec: Forbidden: pod updates may not change fields other than');
    await waitForUsed(ns, 'test-quota', used);

    await deleteNow(`${base(ns)}/pods/test-pod`);
    await waitForUsed(ns, 'test-quota', { resourcequotas: '1', pods: '0', cpu: '0', memory: '0', 'ephemeral-storage': '0', [DONGLE]: '0' });
  });

  it('should create a ResourceQuota and capture the life of a configMap. [Conformance]', async () => {
    const ns = await namespace();
    // the root CA ConfigMap arrives with the namespace
    await eventually(async () => (await server.t().request('GET', `${base(ns)}/configmaps/kube-root-ca.crt`)).status === 200, 'kube-root-ca.crt');
    const found = (await k.get(`${base(ns)}/configmaps`)).items.length as number;
    await k.send('POST', quotas(ns), testQuota('test-quota', { configmaps: String(found + 1) }));
    await waitForUsed(ns, 'test-quota', { resourcequotas: '1', configmaps: String(found) });
    await k.send('POST', `${base(ns)}/configmaps`, { metadata: { name: 'test-configmap' }, data: { a: 'b' } });
    await waitForUsed(ns, 'test-quota', { resourcequotas: '1', configmaps: String(found + 1) });
    await k.send('DELETE', `${base(ns)}/configmaps/test-configmap`);
    await waitForUsed(ns, 'test-quota', { configmaps: String(found) });
  });

  it('should create a ResourceQuota and capture the life of a replication controller. [Conformance]', async () => {
    const ns = await withTestQuota({}, { replicationcontrollers: '0' });
    await k.send('POST', `${base(ns)}/replicationcontrollers`, {
      metadata: { name: 'test-rc' },
      spec: { replicas: 0, selector: { name: 'test-rc' }, template: { metadata: { labels: { name: 'test-rc' } }, spec: { containers: [{ name: 'test-rc', image: 'nginx' }] } } },
    });
    await waitForUsed(ns, 'test-quota', { replicationcontrollers: '1' });
    await k.send('DELETE', `${base(ns)}/replicationcontrollers/test-rc`, { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background' });
    await waitForUsed(ns, 'test-quota', { replicationcontrollers: '0' });
  });

  it('should create a ResourceQuota and capture the life of a replica set. [Conformance]', async () => {
    const ns = await withTestQuota({}, { 'count/replicasets.apps': '0' });
    const rs = `/apis/apps/v1/namespaces/${ns}/replicasets`;
    await k.send('POST', rs, {
      metadata: { name: 'test-rs' },
      spec: { replicas: 0, selector: { matchLabels: { name: 'test-rs' } }, template: { metadata: { labels: { name: 'test-rs' } }, spec: { terminationGracePeriodSeconds: 0, containers: [{ name: 'test-rs', image: 'nginx' }] } } },
    });
    await waitForUsed(ns, 'test-quota', { 'count/replicasets.apps': '1' });
    await k.send('DELETE', `${rs}/test-rs`);
    await waitForUsed(ns, 'test-quota', { 'count/replicasets.apps': '0' });
  });

  it('should create a ResourceQuota and capture the life of a persistent volume claim (with and without a storage class)', async () => {
    const ns = await withTestQuota({}, { persistentvolumeclaims: '0', 'requests.storage': '0', [GOLD_CLAIMS]: '0', [GOLD_STORAGE]: '0' });
    const claim = (name: string, cls?: string) => ({
      metadata: { name }, spec: { accessModes: ['ReadWriteOnce', 'ReadOnlyMany'], resources: { requests: { storage: '1Gi' } }, ...(cls ? { storageClassName: cls } : {}) },
    });
    await k.send('POST', `${base(ns)}/persistentvolumeclaims`, claim('test-claim'));
    await waitForUsed(ns, 'test-quota', { persistentvolumeclaims: '1', 'requests.storage': '1Gi' });
    await k.send('DELETE', `${base(ns)}/persistentvolumeclaims/test-claim`);
    await waitForUsed(ns, 'test-quota', { persistentvolumeclaims: '0', 'requests.storage': '0' });

    await k.send('POST', `${base(ns)}/persistentvolumeclaims`, claim('test-claim-gold', 'gold'));
    await waitForUsed(ns, 'test-quota', { persistentvolumeclaims: '1', 'requests.storage': '1Gi', [GOLD_CLAIMS]: '1', [GOLD_STORAGE]: '1Gi' });
    await k.send('DELETE', `${base(ns)}/persistentvolumeclaims/test-claim-gold`);
    await waitForUsed(ns, 'test-quota', { persistentvolumeclaims: '0', 'requests.storage': '0', [GOLD_CLAIMS]: '0', [GOLD_STORAGE]: '0' });
  });

  it('should verify ResourceQuota with terminating scopes. [Conformance]', async () => {
    await terminatingScenario(k, steps, scopedQuota, async (ns, pod, _counted, none) => {
      await deleteNow(`${base(ns)}/pods/${pod.name}`);
      await waitForUsed(ns, 'quota-not-terminating', none);
    });
  });

  it('should verify ResourceQuota with best effort scope. [Conformance]', async () => {
    await bestEffortScenario(k, steps, scopedQuota);
  });

  it('should be able to update and delete ResourceQuota. [Conformance]', async () => {
    const ns = await namespace();
    const quota = { metadata: { name: 'test-quota' }, spec: { hard: { cpu: '1', memory: '500Mi' } } };
    await k.send('POST', quotas(ns), quota);
    expect((await k.get(`${quotas(ns)}/test-quota`)).spec.hard).toEqual({ cpu: '1', memory: '500Mi' });

    // the e2e sends its own object again, without a resourceVersion: an unconditional update
    quota.spec.hard = { cpu: '2', memory: '1Gi' };
    expect((await k.send('PUT', `${quotas(ns)}/test-quota`, quota)).spec.hard).toEqual({ cpu: '2', memory: '1Gi' });
    expect((await k.get(`${quotas(ns)}/test-quota`)).spec.hard).toEqual({ cpu: '2', memory: '1Gi' });

    await k.send('DELETE', `${quotas(ns)}/test-quota`);
    expect((await k.get(`${quotas(ns)}/test-quota`, 404)).reason).toBe('NotFound');
  });

  it('should manage the lifecycle of a ResourceQuota [Conformance]', async () => {
    const ns = await namespace();
    const rqName = `e2e-quota-${Math.random().toString(36).slice(2, 7)}`;
    const selector = encodeURIComponent(`e2e-rq-label=${rqName}`);
    await k.send('POST', quotas(ns), { metadata: { name: rqName, labels: { 'e2e-rq-label': rqName } }, spec: { hard: { cpu: '1', memory: '500Mi' } } });
    const got = await k.get(`${quotas(ns)}/${rqName}`);
    expect(got.spec.hard).toEqual({ cpu: '1', memory: '500Mi' });
    expect(got.metadata.resourceVersion).toMatch(/^[1-9][0-9]*$/);

    const all = await k.get(`/api/v1/resourcequotas?labelSelector=${selector}`);
    expect(all.items).toHaveLength(1);

    const patched = await k.patch(`${quotas(ns)}/${rqName}`, { metadata: { labels: { [rqName]: 'patched' } }, spec: { hard: { memory: '750Mi' } } }, 'strategic');
    expect(patched.metadata.labels[rqName]).toBe('patched');
    expect(same(patched.spec.hard.memory, '750Mi')).toBe(true);
    expect(BigInt(patched.metadata.resourceVersion)).toBeGreaterThan(BigInt(all.items[0].metadata.resourceVersion));

    await k.send('DELETE', `${quotas(ns)}?labelSelector=${selector}`);
    await k.get(`${quotas(ns)}/${rqName}`, 404);
  });

  it('should apply changes to a resourcequota status [Conformance]', async () => {
    const ns = await namespace();
    const rqName = `e2e-rq-status-${Math.random().toString(36).slice(2, 7)}`;
    const selector = encodeURIComponent(`e2e-rq-label=${rqName}`);
    const listRV = async () => (await k.get(`/api/v1/resourcequotas?labelSelector=${selector}`)).metadata.resourceVersion as string;
    /** the e2e's watchtools.Until from a list's resourceVersion: some event's quota has this status.hard */
    const seeHard = async (rv: string, hard: Record<string, string>): Promise<void> => {
      const w = openWatch(server.t().server, `${quotas(ns)}?watch=1&labelSelector=${selector}&resourceVersion=${rv}`);
      try {
        await w.waitUntil((e) => {
          const h = ((e.object.status as Obj | undefined)?.hard ?? {}) as Record<string, string>;
          return e.object.metadata?.name === rqName && Object.keys(h).length === Object.keys(hard).length && Object.entries(hard).every(([r, v]) => same(h[r], v));
        });
      } finally {
        w.close();
      }
    };
    let rv = await listRV();
    await k.send('POST', quotas(ns), { metadata: { name: rqName, labels: { 'e2e-rq-label': rqName } }, spec: { hard: { cpu: '500m', memory: '500Mi' } } });
    const initial = await k.get(`${quotas(ns)}/${rqName}`);
    expect(initial.spec.hard).toEqual({ cpu: '500m', memory: '500Mi' });

    const toUpdate = await k.get(`${quotas(ns)}/${rqName}`);
    toUpdate.status = { hard: initial.spec.hard };
    const updated = await k.send('PUT', `${quotas(ns)}/${rqName}/status`, toUpdate);
    await seeHard(rv, updated.spec.hard);

    rv = await listRV();
    const x = await k.patch(`${quotas(ns)}/${rqName}`, { spec: { hard: { cpu: '1', memory: '1Gi' } } }, 'strategic');
    const patched = await k.patch(`${quotas(ns)}/${rqName}/status`, { status: { hard: x.spec.hard } }, 'strategic');
    await seeHard(rv, patched.spec.hard);

    const status = await k.get(`${quotas(ns)}/${rqName}/status`);
    expect(same(status.status.hard.cpu, '1') && same(status.status.hard.memory, '1Gi')).toBe(true);

    rv = await listRV();
    const repatched = await k.patch(`${quotas(ns)}/${rqName}/status`, { status: { hard: { cpu: '2', memory: '2Gi' } } }, 'strategic');
    expect(same(repatched.status.hard.cpu, '2') && same(repatched.status.hard.memory, '2Gi')).toBe(true);
    expect(repatched.spec.hard).toEqual({ cpu: '1', memory: '1Gi' });
    await seeHard(rv, { cpu: '2', memory: '2Gi' });

    // the controller puts status.hard back to spec.hard (kube: at its next full resync; orch: at once)
    await eventually(async () => {
      const q = await k.get(`${quotas(ns)}/${rqName}`);
      return same(q.status.hard.cpu, '1') && same(q.status.hard.memory, '1Gi') && q.spec.hard.cpu === '1';
    }, 'status.hard reset to spec.hard', 20_000);
  });
});
