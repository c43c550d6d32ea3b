// Kubernetes' sig-node e2e tests of the NoExecute taint manager
// (test/e2e/node/taints.go): the two [Conformance] ones — a taint removed
// before the toleration runs out cancels the eviction; two pods tolerating the
// taint for 5 s and 25 s are both evicted — and "pods evicted from tainted
// nodes have pod disruption condition". On orch with kube's API domain and a
// real node agent; the taint eviction controller runs on a JumpClock
// (`nodeLifecycle.clock`), so the tolerations' seconds pass with a jump
// instead of kube's waits of up to 115 s. A taint PATCH returns after the
// controller has seen it (its informers are fed synchronously from the
// store's applied feed), so an eviction is scheduled by then. The tests are
// [Serial] in kube (they taint the one node): here they run one after another.

import { afterEach, describe, expect, it } from 'vitest';
import { type Obj, e2eEnv, namespace, updateWithRetries } from '../helpers/e2e-apps.js';
import { PODS, podEvents } from '../helpers/e2e-node-output.js';
import { JumpClock } from '../helpers/jump-clock.js';

const NODE = 'taints-node';
const clock = new JumpClock();
const env = e2eEnv(NODE, {}, { nodeLifecycle: { clock } });
const PAUSE = 'registry.k8s.io/pause:3.10';
const TAINT = { key: 'kubernetes.io/e2e-evict-taint-key', value: 'evictTaintVal', effect: 'NoExecute' };
const ns = (base: string) => namespace(env, `${base}-${Math.random().toString(36).slice(2, 8)}`);

/** createPodForTaintsTest: a pause pod labelled `group`, tolerating the test taint (for `seconds`, or for ever) or not */
function taintsTestPod(name: string, group: string, toleration: boolean, seconds?: number): Obj {
  const tolerations = toleration ? [{ ...TAINT, ...(seconds ? { tolerationSeconds: seconds } : {}) }] : undefined;
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { group } }, spec: { containers: [{ name: 'pause', image: PAUSE }], ...(tolerations ? { tolerations } : {}) } };
}

/** testutils.RunPodAndGetNodeName: created, Running, its node */
async function runPod(n: string, pod: Obj): Promise<string> {
  await env.call('POST', PODS(n), pod);
  const p = await env.eventually(async () => {
    const cur = await env.get(`${PODS(n)}/${pod.metadata.name}`);
    return cur.status?.phase === 'Running' && cur;
  }, `${pod.metadata.name} Running`);
  return p.spec.nodeName;
}

const NODE_PATH = (name: string) => `/api/v1/nodes/${name}`;
/** e2enode.AddOrUpdateTaintOnNode (timeAdded now: the controller's clock, which the jumps moved ahead), then ExpectNodeHasTaint */
async function addTaint(node: string): Promise<void> {
  await updateWithRetries(env, NODE_PATH(node), (o) => void (o.spec.taints = [...(o.spec.taints ?? []).filter((t: Obj) => t.key !== TAINT.key), { ...TAINT, timeAdded: new Date(clock.now()).toISOString().replace(/\.\d+Z$/, 'Z') }]));
  expect((await env.get(NODE_PATH(node))).spec.taints).toContainEqual(expect.objectContaining(TAINT));
}
/** e2enode.RemoveTaintOffNode */
async function removeTaint(node: string): Promise<void> {
  await updateWithRetries(env, NODE_PATH(node), (o) => void (o.spec.taints = (o.spec.taints ?? []).filter((t: Obj) => t.key !== TAINT.key)));
}
afterEach(() => removeTaint(NODE));

const gone = (n: string, name: string) =>
  env.eventually(async () => (await env.ts().request('GET', `${PODS(n)}/${name}`)).status === 404, `${name} deleted`);
/** the pod is there, not being deleted, for a while (kube's "wasn't evicted" waits, shortened: the time was jumped) */
async function stays(n: string, name: string, ms = 1_500): Promise<void> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 250))) {
    const p = await env.get(`${PODS(n)}/${name}`);
    expect(p.metadata.deletionTimestamp, `${name} was evicted`).toBeUndefined();
  }
}
const evictionEvents = async (n: string, name: string): Promise<string[]> =>
  (await podEvents(env, n, name)).filter((e) => e.reason === 'TaintManagerEviction').map((e) => e.message);

describe('[sig-node] NoExecuteTaintManager Single Pod [Serial]', () => {
  it('removing taint cancels eviction [Disruptive] [Conformance]', async () => {
    const n = await ns('taint-single-pod');
    // 1. a pod tolerating the taint for 10 s
    const name = 'taint-eviction-4';
    const node = await runPod(n, taintsTestPod(name, name, true, 10));
    expect(node).toBe(NODE);
    // 2. taint its node: the eviction is scheduled 10 s after the taint's timeAdded
    await addTaint(node);
    // 3. a short time later the pod is still there
    clock.jump(5_000);
    await stays(n, name, 500);
    // 4. removing the taint cancels the scheduled eviction, with kube's Event
    await removeTaint(node);
    const cancel = `Cancelling deletion of Pod ${n}/${name}`;
    await env.eventually(async () => (await evictionEvents(n, name)).includes(cancel), 'the Cancelling deletion event');
    // 5. well past the toleration the pod is not evicted
    clock.jump(15_000);
    await stays(n, name);
    expect(await evictionEvents(n, name)).toEqual([cancel]);
    expect((await env.get(`${PODS(n)}/${name}`)).status.phase).toBe('Running');
  });

  it('pods evicted from tainted nodes have pod disruption condition', async () => {
    const n = await ns('taint-single-pod-disruption');
    const name = 'taint-eviction-pod-disruption';
    const pod = taintsTestPod(name, name, false);
    // kube's test holds the pod with a finalizer to read its conditions after the deletion
    pod.metadata.finalizers = ['example.com/test-finalizer'];
    await runPod(n, pod);
    await addTaint(NODE);
    // e2epod.WaitForPodTerminatingInNamespaceTimeout, then VerifyPodHasConditionWithType
    const p = await env.eventually(async () => {
      const cur = await env.get(`${PODS(n)}/${name}`);
      return cur.metadata.deletionTimestamp && cur;
    }, `${name} terminating`);
    expect((p.status.conditions as Obj[]).find((c) => c.type === 'DisruptionTarget')).toMatchObject({ status: 'True', reason: 'DeletionByTaintManager', message: 'Taint manager: deleting due to NoExecute taint' });
    expect(await evictionEvents(n, name)).toEqual([`Marking for deletion Pod ${n}/${name}`]);
    await updateWithRetries(env, `${PODS(n)}/${name}`, (o) => void (o.metadata.finalizers = []));
    await gone(n, name);
  });
});

describe('[sig-node] NoExecuteTaintManager Multiple Pods [Serial]', () => {
  it('evicts pods with minTolerationSeconds [Disruptive] [Conformance]', async () => {
    const n = await ns('taint-multiple-pods');
    const group = 'taint-eviction-b';
    // 1. two pods tolerating the taint, for 5 s and for 25 s, on the same node
    const nodeName = await runPod(n, taintsTestPod(`${group}1`, group, true, 5));
    const node = await env.get(NODE_PATH(nodeName));
    const hostname = node.metadata.labels['kubernetes.io/hostname'];
    expect(hostname, 'the kubernetes.io/hostname label of the node').toBeTruthy();
    const pod2 = taintsTestPod(`${group}2`, group, true, 25);
    pod2.spec.nodeSelector = { 'kubernetes.io/hostname': hostname };
    expect(await runPod(n, pod2)).toBe(nodeName);
    // 2. taint the node
    await addTaint(nodeName);
    // 3. both are evicted as their tolerations run out: the 5 s one first
    clock.jump(6_000);
    await gone(n, `${group}1`);
    expect((await env.get(`${PODS(n)}/${group}2`)).metadata.deletionTimestamp).toBeUndefined();
    clock.jump(20_000);
    await gone(n, `${group}2`);
    for (const p of [`${group}1`, `${group}2`]) expect(await evictionEvents(n, p)).toEqual([`Marking for deletion Pod ${n}/${p}`]);
  });
});
