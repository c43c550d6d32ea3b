// Ports of Kubernetes' "[sig-scheduling] SchedulerPreemption [Serial]"
// conformance tests (test/e2e/scheduling/preemption.go, v1.32) to orch: its
// scheduler and one real node agent (simulated runtime). As kube's tests do,
// the node advertises an extended resource (`scheduling.k8s.io/foo`,
// `example.com/fakecpu`) patched into its status, which the agent's own status
// updates keep (merge patches), and the pods ask for it. Serial as in kube:
// the tests share the node. "PriorityClass endpoints verify PriorityClass
// endpoints can be operated with different HTTP methods" is ported in
// e2e-policy-api.test.ts. Left out: kube's 5-second "state is stable" sleep of
// the ReplicaSet test (no timing here); instead the re-created pods are seen
// unschedulable before the counts are checked, so a later preemption would
// already have happened.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Obj, PAUSE, STRATEGIC, e2eEnv, namespace } from '../helpers/e2e-apps.js';
import { openWatch } from '../helpers/watch-stream.js';

const nodeName = 'preemption-node';
const env = e2eEnv(nodeName);
const PODS = (ns: string) => `/api/v1/namespaces/${ns}/pods`;
const PCS = '/apis/scheduling.k8s.io/v1/priorityclasses';
const NODE_STATUS = `/api/v1/nodes/${nodeName}/status`;
const FOO = 'scheduling.k8s.io/foo';
const FAKECPU = 'example.com/fakecpu';
const FINALIZER = 'example.com/test-finalizer';
let seq = 0;
/** the test's namespace: the framework deletes it after the test, and the next test waits for its pods to be gone */
let current: string | undefined;
const ns = async (base: string): Promise<string> => (current = await namespace(env, `${base}-${++seq}-${Math.random().toString(36).slice(2, 7)}`));

/** the e2e framework's namespace deletion after each test; the pods of a [Serial] test must be off the node before the next */
async function deleteTestNamespace(): Promise<void> {
  if (!current) return;
  const n = current;
  current = undefined;
  await env.call('DELETE', `/api/v1/namespaces/${n}`);
  await env.eventually(async () => ((await env.list(PODS(n))).items as Obj[]).length === 0, `the pods of ${n} gone`, 60_000);
}

interface PausePodConfig {
  name: string;
  namespace: string;
  priorityClassName?: string;
  labels?: Record<string, string>;
  nodeSelector?: Record<string, string>;
  /** requests = limits */
  resources?: Record<string, string>;
  affinityToNode?: string;
  finalizers?: string[];
}

/** kube's initPausePod */
function pausePod(c: PausePodConfig): Obj {
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name: c.name, labels: c.labels ?? {}, ...(c.finalizers ? { finalizers: c.finalizers } : {}) },
    spec: {
      containers: [{ name: c.name, image: PAUSE, ...(c.resources ? { resources: { requests: c.resources, limits: c.resources } } : {}) }],
      ...(c.priorityClassName ? { priorityClassName: c.priorityClassName } : {}),
      ...(c.nodeSelector ? { nodeSelector: c.nodeSelector } : {}),
      ...(c.affinityToNode
        ? { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [c.affinityToNode] }] }] } } } }
        : {}),
    },
  };
}

const getPod = async (n: string, name: string): Promise<Obj | undefined> => {
  const r = await env.ts().request('GET', `${PODS(n)}/${name}`);
  return r.status === 200 ? r.json<Obj>() : undefined;
};

/** e2epod.WaitForPodRunningInNamespace */
const waitRunning = (n: string, name: string): Promise<Obj> =>
  env.eventually(async () => {
    const p = await getPod(n, name);
    return p?.status?.phase === 'Running' ? p : undefined;
  }, `${name} running`);

/** createPausePod */
const createPausePod = (c: PausePodConfig): Promise<Obj> => env.call('POST', PODS(c.namespace), pausePod(c));

/** runPausePod: created, then running */
async function runPausePod(c: PausePodConfig): Promise<Obj> {
  await createPausePod(c);
  return waitRunning(c.namespace, c.name);
}

/** patchNode on the status sub-resource: extended resources in capacity and allocatable (null removes) */
async function setNodeResource(name: string, value: string | null): Promise<void> {
  await env.call('PATCH', NODE_STATUS, { status: { capacity: { [name]: value }, allocatable: { [name]: value } } }, STRATEGIC);
}

async function createPriorityClasses(pairs: [string, number][]): Promise<void> {
  for (const [name, value] of pairs) {
    const r = await env.ts().request('POST', PCS, { body: { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name }, value } });
    expect([201, 409], r.text).toContain(r.status);
  }
}

async function deletePriorityClasses(names: string[]): Promise<void> {
  for (const name of names) await env.ts().request('DELETE', `${PCS}/${name}`, { body: { gracePeriodSeconds: 0 } });
}

/** preempted: gone, or being deleted */
const preempted = (p: Obj | undefined): boolean => p === undefined || !!p.metadata.deletionTimestamp;

describe('[sig-scheduling] SchedulerPreemption [Serial]', () => {
  const base = 'sched-preemption';
  const [low, medium, high] = [`${base}-low-priority`, `${base}-medium-priority`, `${base}-high-priority`];

  beforeEach(async () => {
    await createPriorityClasses([[low, 1], [medium, 100], [high, 1000]]);
  });

  afterEach(async () => {
    await deleteTestNamespace();
    await deletePriorityClasses([low, medium, high]);
    await setNodeResource(FOO, null);
  });

  /** two pods on the node taking 4/5 of the extended resource: the first low, the other medium priority */
  async function fillNode(n: string): Promise<Obj[]> {
    await setNodeResource(FOO, '5');
    const pods: Obj[] = [];
    for (const j of [0, 1]) {
      const priorityName = pods.length === 0 ? low : medium;
      pods.push(await createPausePod({ name: `pod0-${j}-${priorityName}`, namespace: n, priorityClassName: priorityName, resources: { [FOO]: '2' }, affinityToNode: nodeName }));
    }
    for (const p of pods) await waitRunning(n, p.metadata.name);
    return pods;
  }

  it('validates basic preemption works [Conformance]', async () => {
    const n = await ns(base);
    const pods = await fillNode(n);
    await runPausePod({ name: 'preemptor-pod', namespace: n, priorityClassName: high, resources: { [FOO]: '2' } });
    expect(preempted(await getPod(n, pods[0]!.metadata.name)), 'the low priority pod is preempted').toBe(true);
    for (const p of pods.slice(1)) expect((await getPod(n, p.metadata.name))?.metadata.deletionTimestamp).toBeUndefined();
  });

  it('validates lower priority pod preemption by critical pod [Conformance]', async () => {
    const n = await ns(base);
    const pods = await fillNode(n);
    try {
      await runPausePod({ name: 'critical-pod', namespace: 'kube-system', priorityClassName: 'system-cluster-critical', resources: { [FOO]: '2' } });
      expect(preempted(await getPod(n, pods[0]!.metadata.name)), 'the lowest priority pod is preempted').toBe(true);
      for (const p of pods.slice(1)) expect((await getPod(n, p.metadata.name))?.metadata.deletionTimestamp).toBeUndefined();
    } finally {
      const r = await env.ts().request('DELETE', `${PODS('kube-system')}/critical-pod`, { body: { gracePeriodSeconds: 0 } });
      expect([200, 404], r.text).toContain(r.status);
    }
  });

  it('validates pod disruption condition is added to the preempted pod [Conformance]', async () => {
    const n = await ns(base);
    await setNodeResource(FOO, '1');
    const res = { [FOO]: '1' };
    await createPausePod({ name: 'victim-pod', namespace: n, priorityClassName: low, resources: res, finalizers: [FINALIZER], affinityToNode: nodeName });
    await waitRunning(n, 'victim-pod');
    try {
      await createPausePod({ name: 'preemptor-pod', namespace: n, priorityClassName: high, resources: res, affinityToNode: nodeName });
      // e2epod.WaitForPodTerminatingInNamespaceTimeout
      const victim = await env.eventually(async () => {
        const p = await getPod(n, 'victim-pod');
        return p?.metadata.deletionTimestamp ? p : undefined;
      }, 'victim-pod terminating');
      // e2epod.VerifyPodHasConditionWithType
      expect(((victim.status?.conditions ?? []) as Obj[]).map((c) => c.type)).toContain('DisruptionTarget');
    } finally {
      await env.call('PATCH', `${PODS(n)}/victim-pod`, { metadata: { finalizers: null } });
    }
  });

  describe('PreemptionExecutionPath', () => {
    const classes: [string, number][] = [['p1', 1], ['p2', 2], ['p3', 3], ['p4', 4]];

    beforeEach(async () => {
      await setNodeResource(FAKECPU, '1000');
      await createPriorityClasses(classes);
    });

    afterEach(async () => {
      await deleteTestNamespace();
      await setNodeResource(FAKECPU, null);
      await deletePriorityClasses(classes.map(([c]) => c));
    });

    it('runs ReplicaSets to verify preemption running path [Conformance]', async () => {
      const n = await ns('sched-preemption-path');
      const node = await env.get(`/api/v1/nodes/${nodeName}`);
      const hostname = node.metadata.labels?.['kubernetes.io/hostname'] as string | undefined;
      expect(hostname, 'the kubernetes.io/hostname label of the node').toBeTruthy();
      const rv = (await env.list(PODS(n))).metadata.resourceVersion as string;
      // kube counts the pods each ReplicaSet creates with an informer: here the ADDED events of a watch
      const w = openWatch(env.ts().server, `${PODS(n)}?watch=1&resourceVersion=${rv}`);
      try {
        const seen = (i: number): number => w.events.filter((e) => e.type === 'ADDED' && (e.object.metadata?.name ?? '').startsWith(`rs-pod${i}`)).length;
        const conf = (i: number, fakecpu: string): PausePodConfig => ({
          name: `pod${i}`, namespace: n, labels: { name: `pod${i}` }, priorityClassName: `p${i}`, nodeSelector: { 'kubernetes.io/hostname': hostname! }, resources: { [FAKECPU]: fakecpu },
        });
        // ReplicaSets 1, 2, 3 take 950 of the 1000 fake CPUs (runPauseRS: each waits for its available replica)
        for (const [i, fakecpu] of [[1, '200'], [2, '300'], [3, '450']] as const) {
          const pod = pausePod(conf(i, fakecpu));
          await env.call('POST', `/apis/apps/v1/namespaces/${n}/replicasets`, {
            apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: `rs-pod${i}` },
            spec: { replicas: 1, selector: { matchLabels: pod.metadata.labels }, template: { metadata: { labels: pod.metadata.labels }, spec: pod.spec } },
          });
          await env.eventually(async () => (await env.get(`/apis/apps/v1/namespaces/${n}/replicasets/rs-pod${i}`)).status?.availableReplicas === 1, `rs-pod${i} available`);
        }
        // the preemptor asks 500: ReplicaSets 1 and 2 lose their pods, 3 keeps its own
        await createPausePod(conf(4, '500'));
        // waitForPreemptingWithTimeout: the preemptor gets a node
        await env.eventually(async () => (await getPod(n, 'pod4'))?.spec.nodeName, 'pod4 scheduled');
        await env.eventually(async () => seen(1) >= 2 && seen(2) >= 2, 'the replacement pods of ReplicaSets 1 and 2');
        // the replacements find no room and preempt nothing (they are the lowest priorities there)
        await env.eventually(async () => {
          const pending = ((await env.list(PODS(n))).items as Obj[]).filter((p) => !p.spec.nodeName && !p.metadata.deletionTimestamp);
          return pending.length === 2 && pending.every((p) => ((p.status?.conditions ?? []) as Obj[]).some((c) => c.type === 'PodScheduled' && c.reason === 'Unschedulable'));
        }, 'the replacements unschedulable');
        // "*2": the pods of ReplicaSets 1 and 2 were preempted exactly once
        expect([seen(1), seen(2), seen(3)]).toEqual([2, 2, 1]);
        expect((await getPod(n, 'pod4'))?.spec.nodeName).toBe(nodeName);
      } finally {
        w.close();
      }
    });
  });
});
