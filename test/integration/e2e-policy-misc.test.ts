// Kubernetes' e2e tests of PodDisruptionBudgets (test/e2e/apps/disruption.go,
// "[sig-apps] DisruptionController", the `[Conformance]` ones and the
// unmanaged-pods one), on orch with its controllers (the disruption and
// ReplicaSet controllers, the scheduler) and one real node agent on the
// simulated runtime: list and deleteCollection across namespaces; create,
// update, patch and delete; the controller's status (disruptionsAllowed);
// update and merge patch of /status (disruptedPods); evictions refused with a
// DisruptionBudget cause until the budget allows them, and the eviction
// cases (bare pods, ReplicaSets, percentages, host-port pods that one node
// cannot all run); no SyncFailed for pods without a controller when
// minAvailable is a number.

import { describe, expect, it } from 'vitest';
import { type Obj, MERGE, PAUSE, e2eEnv, namespace } from '../helpers/e2e-apps.js';

const env = e2eEnv('disruption-node');
const PDBS = (ns: string) => `/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets`;
const PODS = (ns: string) => `/api/v1/namespaces/${ns}/pods`;
const DEFAULT_LABELS = { foo: 'bar' };
let seq = 0;
const ns = (base: string) => namespace(env, `${base}-${++seq}-${Math.random().toString(36).slice(2, 7)}`);

/** waitForPdbToBeProcessed: the controller has seen the budget's generation */
const processed = (n: string, name: string): Promise<Obj> =>
  env.eventually(async () => {
    const p = await env.get(`${PDBS(n)}/${name}`);
    return (p.status?.observedGeneration ?? 0) >= p.metadata.generation ? p : undefined;
  }, `${name} processed`);

/** createPDBMinAvailableOrDie / createPDBMaxUnavailableOrDie: selector foo=bar */
async function createPdb(n: string, name: string, spec: Obj, labels?: Record<string, string>): Promise<void> {
  await env.call('POST', PDBS(n), {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name, ...(labels ? { labels } : {}) },
    spec: { selector: { matchLabels: DEFAULT_LABELS }, ...spec },
  });
  await processed(n, name);
}

/** updatePDBOrDie: get, change, put (to the object or its /status), retried on a conflict */
async function updatePdb(n: string, name: string, change: (p: Obj) => void, sub = ''): Promise<Obj> {
  const updated = await env.eventually(async () => {
    const cur = await env.get(`${PDBS(n)}/${name}`);
    change(cur);
    const r = await env.ts().request('PUT', `${PDBS(n)}/${name}${sub}`, { body: cur });
    if (r.status === 409) return undefined;
    expect(r.status, r.text).toBe(200);
    return r.json<Obj>();
  }, `update of ${name}`);
  await processed(n, name);
  return updated;
}

/** patchPDBOrDie: a merge patch made from the object read through /status */
async function patchPdb(n: string, name: string, patch: (old: Obj) => Obj, sub = ''): Promise<Obj> {
  const old = await env.get(`${PDBS(n)}/${name}/status`);
  const patched = await env.call('PATCH', `${PDBS(n)}/${name}${sub}`, patch(old), MERGE);
  await processed(n, name);
  return patched;
}

/** deletePDBOrDie: delete, then wait for a 404 */
async function deletePdb(n: string, name: string): Promise<void> {
  await env.call('DELETE', `${PDBS(n)}/${name}`);
  await env.eventually(async () => (await env.ts().request('GET', `${PDBS(n)}/${name}`)).status === 404, `${name} deleted`);
}

/** createPodsOrDie: pod-0 … pod-(n-1), labels foo=bar, the pause image */
async function createPods(n: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    await env.call('POST', PODS(n), { apiVersion: 'v1', kind: 'Pod', metadata: { name: `pod-${i}`, labels: DEFAULT_LABELS }, spec: { containers: [{ name: 'donothing', image: PAUSE }], restartPolicy: 'Always' } });
  }
}

/** createReplicaSetOrDie: "rs", selector and template labels foo=bar, the pause image */
async function createReplicaSet(n: string, replicas: number, exclusive = false): Promise<void> {
  // exclusive: host port 5555, so one pod per node
  const container = { name: 'donothing', image: PAUSE, ...(exclusive ? { ports: [{ hostPort: 5555, containerPort: 5555 }] } : {}) };
  await env.call('POST', `/apis/apps/v1/namespaces/${n}/replicasets`, {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name: 'rs' },
    spec: { replicas, selector: { matchLabels: DEFAULT_LABELS }, template: { metadata: { labels: DEFAULT_LABELS }, spec: { containers: [container] } } },
  });
}

const ready = (p: Obj): boolean => !p.metadata.deletionTimestamp && ((p.status?.conditions ?? []) as Obj[]).some((c) => c.type === 'Ready' && c.status === 'True');

/** waitForPodsOrDie: at least `count` ready pods foo=bar not being deleted */
const waitForPods = (n: string, count: number): Promise<unknown> =>
  env.eventually(async () => ((await env.list(PODS(n), 'foo=bar')).items as Obj[]).filter(ready).length >= count, `${count} ready pods`);

/** locateRunningPod: a ready pod not being deleted */
const locateRunningPod = (n: string): Promise<Obj> =>
  env.eventually(async () => ((await env.list(PODS(n))).items as Obj[]).find(ready), 'a running pod');

/** EvictV1: the answer, for the test to check */
const evict = (n: string, name: string) =>
  env.ts().request('POST', `${PODS(n)}/${name}/eviction`, { body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace: n } } });

/**
 * apierrors.HasStatusCause(err, policyv1.DisruptionBudgetCause), and the rest of kube's answer:
 * 429 TooManyRequests, its message, and the cause naming the budget's numbers
 */
async function expectDisruptionBudgetCause(n: string, name: string, healthy?: number): Promise<void> {
  const r = await evict(n, name);
  expect([r.status, r.json<Obj>().reason, r.json<Obj>().message], r.text).toEqual([429, 'TooManyRequests', "Cannot evict pod as it would violate the pod's disruption budget."]);
  const causes = (r.json<Obj>().details?.causes ?? []) as Obj[];
  expect(causes.map((c) => c.reason), r.text).toContain('DisruptionBudget');
  if (healthy !== undefined) expect(causes, r.text).toContainEqual({ reason: 'DisruptionBudget', message: `The disruption budget foo needs ${healthy} healthy pods and has ${healthy} currently` });
}

/** the tests' common start: a namespace, budget "foo" (minAvailable 1) and `count` bare pods, ready */
async function budgetOverPods(count: number): Promise<string> {
  const n = await ns('disruption');
  await createPdb(n, 'foo', { minAvailable: 1 }, DEFAULT_LABELS);
  await createPods(n, count);
  await waitForPods(n, count);
  return n;
}

/** `count` pods the scheduler left pending for want of the host port (kube's message, with its preemption part) */
const unschedulableForPorts = (n: string, count: number): Promise<unknown> =>
  env.eventually(async () => {
    const pending = ((await env.list(PODS(n), 'foo=bar')).items as Obj[]).filter((p) =>
      ((p.status?.conditions ?? []) as Obj[]).some((c) => c.type === 'PodScheduled' && c.status === 'False' && c.reason === 'Unschedulable' && c.message === "0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod ports. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."),
    );
    return pending.length === count;
  }, `${count} pods unschedulable for the host port`);

const names = (items: Obj[]) => items.map((i) => i.metadata.name as string).sort();

describe('[sig-apps] DisruptionController', () => {
  it('Listing PodDisruptionBudgets for all namespaces should list and delete a collection of PodDisruptionBudgets [Conformance]', async () => {
    const n = await ns('disruption');
    const other = await ns('disruption-2');
    const special = { foo_pdb: 'bar_pdb' };
    await createPdb(n, 'foo', { minAvailable: 2 }, special);
    await createPdb(n, 'foo2', { minAvailable: '1%' }, special);
    await createPdb(other, 'foo3', { minAvailable: 2 }, special);
    expect(names((await env.list('/apis/policy/v1/poddisruptionbudgets', 'foo_pdb=bar_pdb')).items)).toEqual(['foo', 'foo2', 'foo3']);
    expect(names((await env.list(PDBS(n), 'foo_pdb=bar_pdb')).items)).toEqual(['foo', 'foo2']);
    await env.call('DELETE', PDBS(n));
    await env.eventually(async () => (await env.list(PDBS(n))).items.length === 0, 'the collection deleted');
    // only the namespace's collection went
    expect(names((await env.list(PDBS(other))).items)).toEqual(['foo3']);
  });

  it('should create a PodDisruptionBudget [Conformance]', async () => {
    const n = await ns('disruption');
    await createPdb(n, 'foo', { minAvailable: '1%' }, DEFAULT_LABELS);
    const updated = await updatePdb(n, 'foo', (p) => (p.spec.minAvailable = '2%'));
    expect(updated.spec.minAvailable).toBe('2%');
    const patched = await patchPdb(n, 'foo', () => ({ spec: { minAvailable: '3%' } }));
    expect(patched.spec.minAvailable).toBe('3%');
    await deletePdb(n, 'foo');
  });

  it('should observe PodDisruptionBudget status updated [Conformance]', async () => {
    const n = await budgetOverPods(3);
    // disruptionsAllowed starts at 0: once positive, the controller works
    await env.eventually(async () => (await env.get(`${PDBS(n)}/foo`)).status?.disruptionsAllowed > 0, 'disruptionsAllowed > 0');
  });

  it('should update/patch PodDisruptionBudget status [Conformance]', async () => {
    const n = await budgetOverPods(1);
    const pod = await locateRunningPod(n);
    const podName = pod.metadata.name as string;
    await updatePdb(n, 'foo', (p) => (p.status.disruptedPods = { [podName]: new Date().toISOString().replace(/\.\d+Z$/, 'Z') }), '/status');
    const updated = await env.get(`${PDBS(n)}/foo/status`);
    expect(Object.keys(updated.status.disruptedPods ?? {})).toContain(podName);
    // jsonpatch.CreateMergePatch of the object and a copy with no disruptedPods (omitempty drops the empty map)
    const patched = await patchPdb(n, 'foo', () => ({ status: { disruptedPods: null } }), '/status');
    expect(patched.status.disruptedPods ?? {}).toEqual({});
  });

  it('should observe that the PodDisruptionBudget status is not updated for unmanaged pods', async () => {
    const n = await budgetOverPods(3);
    // kube watches for a minute (gomega.Consistently); here: once the budget has counted the three pods
    const pdb = await env.eventually(async () => {
      const p = await env.get(`${PDBS(n)}/foo`);
      return p.status?.currentHealthy === 3 && p.status.expectedPods === 3 ? p : undefined;
    }, 'the budget counts 3 pods');
    const erroring = ((pdb.status.conditions ?? []) as Obj[]).some((c) => String(c.reason).includes('SyncFailed') && String(c.message).includes('found no controller ref for pod'));
    expect(erroring, JSON.stringify(pdb.status)).toBe(false);
    expect(pdb.status.disruptionsAllowed).toBe(2);
  });

  // evictionCases (exclusive ones: one node takes one of the host-port pods, as on a cluster of fewer than 10 nodes)
  const evictionCases: { description: string; minAvailable?: number | string; maxUnavailable?: number | string; podCount?: number; replicaSetSize?: number; exclusive?: boolean; shouldDeny: boolean }[] = [
    { description: 'no PDB', podCount: 1, shouldDeny: false },
    { description: 'too few pods, absolute', minAvailable: 2, podCount: 2, shouldDeny: true },
    { description: 'enough pods, absolute', minAvailable: 2, podCount: 3, shouldDeny: false },
    { description: 'enough pods, replicaSet, percentage', minAvailable: '90%', replicaSetSize: 10, shouldDeny: false },
    { description: 'too few pods, replicaSet, percentage', minAvailable: '90%', replicaSetSize: 10, exclusive: true, shouldDeny: true },
    { description: 'maxUnavailable allow single eviction, percentage', maxUnavailable: '10%', replicaSetSize: 10, shouldDeny: false },
    { description: 'maxUnavailable deny evictions, integer', maxUnavailable: 1, replicaSetSize: 10, exclusive: true, shouldDeny: true },
  ];
  for (const c of evictionCases) {
    it(`evictions: ${c.description} => should ${c.shouldDeny ? 'not allow' : 'allow'} an eviction`, async () => {
      const n = await ns('disruption');
      try {
        await createPods(n, c.podCount ?? 0);
        if (c.replicaSetSize) await createReplicaSet(n, c.replicaSetSize, c.exclusive);
        if (c.minAvailable !== undefined) await createPdb(n, 'foo', { minAvailable: c.minAvailable }, DEFAULT_LABELS);
        if (c.maxUnavailable !== undefined) await createPdb(n, 'foo', { maxUnavailable: c.maxUnavailable });
        const pod = await locateRunningPod(n);
        // the case's premise: the node runs one host-port pod, the scheduler leaves the others pending
        if (c.exclusive) await unschedulableForPorts(n, c.replicaSetSize! - 1);
        if (c.shouldDeny) return await expectDisruptionBudgetCause(n, pod.metadata.name);
        await waitForPods(n, (c.podCount ?? 0) + (c.replicaSetSize ?? 0));
        // disruptionsAllowed starts at 0: an eviction once allowed shows the controller works
        await env.eventually(async () => (await evict(n, pod.metadata.name)).status === 201, `eviction of ${pod.metadata.name}`);
      } finally {
        // the framework deletes the test's namespace: its host-port pods free the node's port for the next case
        await env.call('DELETE', `/api/v1/namespaces/${n}`);
      }
    });
  }

  it('should block an eviction until the PDB is updated to allow it [Conformance]', async () => {
    const n = await ns('disruption');
    await createPdb(n, 'foo', { minAvailable: 3 }, DEFAULT_LABELS);
    await createReplicaSet(n, 3);
    await waitForPods(n, 3);
    const pod = await locateRunningPod(n);
    await expectDisruptionBudgetCause(n, pod.metadata.name, 3);

    await updatePdb(n, 'foo', (p) => (p.spec.minAvailable = 2));
    await waitForPods(n, 3);
    // waitForPdbToObserveHealthyPods(3, 2)
    await env.eventually(async () => {
      const s = (await env.get(`${PDBS(n)}/foo`)).status ?? {};
      return s.currentHealthy === 3 && s.desiredHealthy === 2;
    }, 'the budget observes 3 healthy pods, 2 desired');
    const allowed = await evict(n, pod.metadata.name);
    expect(allowed.status, allowed.text).toBe(201);

    // a merge patch from the object to one with maxUnavailable 0 and no minAvailable
    await patchPdb(n, 'foo', () => ({ spec: { minAvailable: null, maxUnavailable: 0 } }));
    await waitForPods(n, 3);
    const next = await locateRunningPod(n);
    await expectDisruptionBudgetCause(n, next.metadata.name, 3);

    await deletePdb(n, 'foo');
    await waitForPods(n, 3);
    const last = await evict(n, next.metadata.name);
    expect(last.status, last.text).toBe(201);
  });
});
