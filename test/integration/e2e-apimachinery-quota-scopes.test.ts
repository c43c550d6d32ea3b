// Ports of the API-only, non-conformance tests of Kubernetes' e2e
// "[sig-api-machinery] ResourceQuota" (test/e2e/apimachinery/resource_quota.go)
// to orch: quotas selecting pods through spec.scopeSelector (BestEffort,
// Terminating — also a pod moving into the scope by an update —, the
// PriorityClass scope with In, NotIn and Exists, CrossNamespacePodAffinity),
// and the count of a custom resource (count/<plural>.<group>).

import { describe, expect, it } from 'vitest';
import type { Obj } from '../helpers/e2e.js';
import { base, bestEffortScenario, quotaServer, quotas, terminatingScenario, testPod } from '../helpers/e2e-quota.js';
import { eventually } from '../helpers/eventually.js';

const server = quotaServer();
const { k, steps } = server;

const { namespace, waitForUsed, deleteNow } = steps;

/** the e2e's newTestResourceQuotaWithScopeSelector */
function selectorQuota(name: string, scope: string): Obj {
  const hard: Record<string, string> = { pods: '5' };
  if (scope === 'Terminating' || scope === 'NotTerminating') Object.assign(hard, { pods: '1', 'requests.cpu': '1', 'requests.memory': '500Mi', 'limits.cpu': '2', 'limits.memory': '1Gi' });
  return { metadata: { name }, spec: { hard, scopeSelector: { matchExpressions: [{ scopeName: scope, operator: 'Exists' }] } } };
}

/** the e2e's newTestResourceQuotaWithScopeForPriorityClass */
const priorityQuota = (hard: Record<string, string>, operator: string, values: string[]): Obj => ({
  metadata: { name: 'quota-priorityclass' },
  spec: { hard, scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator, ...(values.length ? { values } : {}) }] } },
});

async function priorityClass(name: string): Promise<void> {
  const r = await server.t().request('POST', '/apis/scheduling.k8s.io/v1/priorityclasses', { body: { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name }, value: 1000 } });
  expect([201, 409], r.text).toContain(r.status);
}

describe('[sig-api-machinery] ResourceQuota (scope selectors)', () => {
  it('should verify ResourceQuota with best effort scope using scope-selectors.', async () => {
    await bestEffortScenario(k, steps, selectorQuota);
  });

  it('should verify ResourceQuota with terminating scopes through scope selectors.', async () => {
    await terminatingScenario(k, steps, selectorQuota, async (ns, pod, counted, none) => {
      // the long-running pod gets an active deadline: it moves into the Terminating scope, whose one pod it takes
      const running = await k.get(`${base(ns)}/pods/${pod.name}`);
      running.spec.activeDeadlineSeconds = 3600;
      await k.send('PUT', `${base(ns)}/pods/${pod.name}`, running);
      const refused = await k.send('POST', `${base(ns)}/pods`, pod.terminating, 403);
      expect(refused).toMatchObject({ reason: 'Forbidden', code: 403 });
      expect(refused.message).toContain('exceeded quota: quota-terminating, requested: pods=1, used: pods=1, limited: pods=1');
      await waitForUsed(ns, 'quota-terminating', counted);
      await waitForUsed(ns, 'quota-not-terminating', none);
      await deleteNow(`${base(ns)}/pods/${pod.name}`);
      await waitForUsed(ns, 'quota-terminating', none);
    });
  });

  it('should verify ResourceQuota with cross namespace pod affinity scope using scope-selectors.', async () => {
    const ns = await namespace();
    await k.send('POST', quotas(ns), selectorQuota('quota-cross-namespace-pod-affinity', 'CrossNamespacePodAffinity'));
    await waitForUsed(ns, 'quota-cross-namespace-pod-affinity', { pods: '0' });
    const withAffinity = (name: string, term: Obj) => ({ ...testPod(name), spec: { ...testPod(name).spec, affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'region', ...term }] } } } });
    await k.send('POST', `${base(ns)}/pods`, withAffinity('no-cross-namespace-affinity', {}));
    await k.send('POST', `${base(ns)}/pods`, withAffinity('with-namespaces', { namespaces: ['ns1'] }));
    await waitForUsed(ns, 'quota-cross-namespace-pod-affinity', { pods: '1' });
    await k.send('POST', `${base(ns)}/pods`, withAffinity('with-namespace-selector', { namespaceSelector: { matchExpressions: [{ key: 'team', operator: 'In', values: ['ads'] }] } }));
    await waitForUsed(ns, 'quota-cross-namespace-pod-affinity', { pods: '2' });
    for (const p of ['no-cross-namespace-affinity', 'with-namespaces', 'with-namespace-selector']) await deleteNow(`${base(ns)}/pods/${p}`);
    await waitForUsed(ns, 'quota-cross-namespace-pod-affinity', { pods: '0' });
  });
});

describe('[sig-api-machinery] ResourceQuota [Feature:PodPriority]', () => {
  it("should verify ResourceQuota's priority class scope (quota set to pod count: 1) against a pod with same priority class, and 2 pods", async () => {
    const ns = await namespace();
    await priorityClass('pclass1');
    await k.send('POST', quotas(ns), priorityQuota({ pods: '1' }, 'In', ['pclass1']));
    await waitForUsed(ns, 'quota-priorityclass', { pods: '0' });
    await k.send('POST', `${base(ns)}/pods`, testPod('testpod-pclass1', {}, {}, { priorityClassName: 'pclass1' }));
    await waitForUsed(ns, 'quota-priorityclass', { pods: '1' });
    await k.send('POST', `${base(ns)}/pods`, testPod('testpod-pclass1-2', {}, {}, { priorityClassName: 'pclass1' }), 403);
    await deleteNow(`${base(ns)}/pods/testpod-pclass1`);
    await waitForUsed(ns, 'quota-priorityclass', { pods: '0' });
  });

  it("should verify ResourceQuota's priority class scope (quota set to pod count: 1) against 2 pods with different priority class.", async () => {
    const ns = await namespace();
    await priorityClass('pclass3');
    await k.send('POST', quotas(ns), priorityQuota({ pods: '1' }, 'In', ['pclass4']));
    await waitForUsed(ns, 'quota-priorityclass', { pods: '0' });
    await k.send('POST', `${base(ns)}/pods`, testPod('testpod-pclass3-1', {}, {}, { priorityClassName: 'pclass3' }));
    await k.send('POST', `${base(ns)}/pods`, testPod('testpod-pclass2-2', {}, {}, { priorityClassName: 'pclass3' }));
    await waitForUsed(ns, 'quota-priorityclass', { pods: '0' });
  });

  it("should verify ResourceQuota's multiple priority class scope (quota set to pod count: 2) against 2 pods with same priority classes.", async () => {
    const ns = await namespace();
    await priorityClass('pclass5');
    await priorityClass('pclass6');
    await k.send('POST', quotas(ns), priorityQuota({ pods: '2' }, 'In', ['pclass5', 'pclass6']));
    await waitForUsed(ns, 'quota-priorityclass', { pods: '0' });
    await k.send('POST', `${base(ns)}/pods`, testPod('testpod-pclass5', {}, {}, { priorityClassName: 'pclass5' }));
    await waitForUsed(ns, 'quota-priorityclass', { pods: '1' });
    await k.send('POST', `${base(ns)}/pods`, testPod('testpod-pclass6', {}, {}, { priorityClassName: 'pclass6' }));
    await waitForUsed(ns, 'quota-priorityclass', { pods: '2' });
    await deleteNow(`${base(ns)}/pods/testpod-pclass5`);
    await deleteNow(`${base(ns)}/pods/testpod-pclass6`);
    await waitForUsed(ns, 'quota-priorityclass', { pods: '0' });
  });

  it("should verify ResourceQuota's priority class scope against a pod with different priority class (ScopeSelectorOpNotIn) and any class (ScopeSelectorOpExists).", async () => {
    const ns = await namespace();
    await priorityClass('pclass7');
    await k.send('POST', quotas(ns), priorityQuota({ pods: '1' }, 'NotIn', ['pclass7']));
    await waitForUsed(ns, 'quota-priorityclass', { pods: '0' });
    await k.send('POST', `${base(ns)}/pods`, testPod('testpod-pclass7', {}, {}, { priorityClassName: 'pclass7' }));
    await waitForUsed(ns, 'quota-priorityclass', { pods: '0' });
    await deleteNow(`${base(ns)}/pods/testpod-pclass7`);
    await k.send('DELETE', `${quotas(ns)}/quota-priorityclass`);

    await priorityClass('pclass8');
    await k.send('POST', quotas(ns), priorityQuota({ pods: '1' }, 'Exists', []));
    await waitForUsed(ns, 'quota-priorityclass', { pods: '0' });
    await k.send('POST', `${base(ns)}/pods`, testPod('testpod-pclass8', {}, {}, { priorityClassName: 'pclass8' }));
    await waitForUsed(ns, 'quota-priorityclass', { pods: '1' });
    await deleteNow(`${base(ns)}/pods/testpod-pclass8`);
    await waitForUsed(ns, 'quota-priorityclass', { pods: '0' });
  });

  it("should verify ResourceQuota's priority class scope (cpu, memory quota set) against a pod with same priority class.", async () => {
    const ns = await namespace();
    await priorityClass('pclass9');
    await k.send('POST', quotas(ns), priorityQuota({ pods: '1', 'requests.cpu': '1', 'requests.memory': '1Gi', 'limits.cpu': '3', 'limits.memory': '3Gi' }, 'In', ['pclass9']));
    const none = { pods: '0', 'requests.cpu': '0', 'requests.memory': '0Gi', 'limits.cpu': '0', 'limits.memory': '0Gi' };
    await waitForUsed(ns, 'quota-priorityclass', none);
    await k.send('POST', `${base(ns)}/pods`, testPod('testpod-pclass9', { cpu: '1', memory: '1Gi' }, { cpu: '2', memory: '2Gi' }, { priorityClassName: 'pclass9' }));
    await waitForUsed(ns, 'quota-priorityclass', { pods: '1', 'requests.cpu': '1', 'requests.memory': '1Gi', 'limits.cpu': '2', 'limits.memory': '2Gi' });
    await deleteNow(`${base(ns)}/pods/testpod-pclass9`);
    await waitForUsed(ns, 'quota-priorityclass', none);
  });
});

describe('[sig-api-machinery] ResourceQuota (custom resources)', () => {
  it('should create a ResourceQuota and capture the life of a custom resource.', async () => {
    const ns = await namespace();
    const group = 'mygroup.example.com';
    const plural = `e2e-test-crd-${Math.random().toString(36).slice(2, 7)}s`;
    const kind = 'E2eTestCrd';
    await k.send('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
      metadata: { name: `${plural}.${group}` },
      spec: {
        group, scope: 'Namespaced', names: { plural, singular: plural.slice(0, -1), kind, listKind: `${kind}List` },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
      },
    });
    const crs = `/apis/${group}/v1/namespaces/${ns}/${plural}`;
    await eventually(async () => (await server.t().request('GET', crs)).status === 200, `${plural} served`);
    const count = `count/${plural}.${group}`;
    // the e2e first makes sure the controller knows the new resource (a quota for it, updated until its usage appears)
    await k.send('POST', quotas(ns), { metadata: { name: `quota-for-${plural}` }, spec: { hard: { [count]: '0' } } });
    await waitForUsed(ns, `quota-for-${plural}`, { [count]: '0' });
    await k.send('DELETE', `${quotas(ns)}/quota-for-${plural}`);

    await k.send('POST', quotas(ns), { metadata: { name: 'test-quota' }, spec: { hard: { resourcequotas: '1', [count]: '1' } } });
    await waitForUsed(ns, 'test-quota', { resourcequotas: '1', [count]: '0' });
    await k.send('POST', crs, { apiVersion: `${group}/v1`, kind, metadata: { name: 'test-cr-1' } });
    await waitForUsed(ns, 'test-quota', { [count]: '1' });
    const refused = await k.send('POST', crs, { apiVersion: `${group}/v1`, kind, metadata: { name: 'test-cr-2' } }, 403);
    expect(refused.message).toContain(`exceeded quota: test-quota, requested: ${count}=1, used: ${count}=1, limited: ${count}=1`);
    await k.send('DELETE', `${crs}/test-cr-1`);
    await waitForUsed(ns, 'test-quota', { [count]: '0' });
  });
});
