// The scheduler's preemption (kube's DefaultPreemption) against a started
// server with fake nodes: the test plays the node agent where it must (it
// finishes the graceful deletion of a victim). Each test has nodes of its own
// (a `group` label the pods select), so they run concurrently. No timing is
// asserted: `eventually` only bounds a failure. A reason count may follow
// others in a message: another test's Node, created but not yet Ready, counts
// as unreachable until its status arrives.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { NO_NODE_LIFECYCLE, type TestServer, startTestServer } from '../helpers/server.js';
import { type WObj, workloadApi } from '../helpers/workload-api.js';

let ts: TestServer;
const NS = 'default';
const PODS = `/api/v1/namespaces/${NS}/pods`;
const PCS = '/apis/scheduling.orch.io/v1/priorityclasses';
const HOLD = 'example.com/hold';
const { list, get, send, readyNode } = workloadApi(() => ts);

beforeAll(async () => {
  // the test plays the node agent; without leases the lifecycle controller would taint the nodes
  ts = await startTestServer(NO_NODE_LIFECYCLE);
  for (const [name, value, policy] of [['low', 1], ['mid', 50], ['high', 1000], ['high-never', 1000, 'Never']] as const) {
    await send('POST', PCS, { apiVersion: 'scheduling.orch.io/v1', kind: 'PriorityClass', metadata: { name }, value, ...(policy ? { preemptionPolicy: policy } : {}) });
  }
});

afterAll(async () => {
  await ts?.stop();
});

/** a pod of the class asking `cpu`, on the nodes of `group` (bound to `node` when given, as a running pod) */
async function runPod(name: string, cls: string, group: string, o: { cpu?: string; node?: string; labels?: Record<string, string>; hold?: boolean } = {}): Promise<WObj> {
  return send('POST', PODS, {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name, labels: { group, ...o.labels }, ...(o.hold ? { finalizers: [HOLD] } : {}) },
    spec: {
      priorityClassName: cls, nodeSelector: { group }, ...(o.node ? { nodeName: o.node } : {}),
      containers: [{ name: 'c', image: 'pause', resources: { requests: { cpu: o.cpu ?? '1' } } }],
    },
  });
}

const pod = (name: string): Promise<WObj | undefined> => get(`${PODS}/${name}`);
const nominated = (p: WObj | undefined): string | undefined => p?.status?.nominatedNodeName as string | undefined;
const scheduledCond = (p: WObj | undefined) => p?.status?.conditions?.find((c) => c.type === 'PodScheduled');

/** one full node of `group` running a low-priority pod held by a finalizer, and a high-priority pod nominated there */
async function nominatedOverHeldVictim(group: string): Promise<void> {
  await readyNode(`${group}-1`, { group }, '1');
  await runPod(`${group}-low`, 'low', group, { node: `${group}-1`, hold: true });
  await runPod(`${group}-high`, 'high', group);
  await eventually(async () => nominated(await pod(`${group}-high`)) === `${group}-1`, `${group}-high nominated`);
}

/** the node agent's part for a victim: the hold dropped, the graceful deletion finished */
async function finishDeletion(name: string): Promise<void> {
  await send('PATCH', `${PODS}/${name}`, { metadata: { finalizers: null } });
  const r = await ts.request('DELETE', `${PODS}/${name}`, { body: { gracePeriodSeconds: 0 } });
  expect([200, 404], r.text).toContain(r.status);
  await eventually(async () => (await pod(name)) === undefined, `${name} gone`);
}

describe('scheduler preemption', () => {
  it.concurrent('a higher-priority pod preempts the lower-priority pod of a full node: nomination, DisruptionTarget, Preempted Event, then the binding', async () => {
    await readyNode('a-1', { group: 'a' }, '1');
    await readyNode('a-2', { group: 'a' }, '1');
    const victim = await runPod('a-low', 'low', 'a', { node: 'a-1', hold: true });
    // a pod of the preemptor's own priority is never a victim, wherever it runs
    await runPod('a-peer', 'high', 'a', { node: 'a-2' });
    const preemptor = await runPod('a-high', 'high', 'a');

    const nominee = await eventually(async () => {
      const p = await pod('a-high');
      return nominated(p) ? p : undefined;
    }, 'a-high nominated');
    expect(nominated(nominee)).toBe('a-1');
    expect(nominee!.spec.nodeName).toBeUndefined();
    // preemption made room: the message has no preemption part
    expect(scheduledCond(nominee)).toMatchObject({ status: 'False', reason: 'Unschedulable' });
    expect(scheduledCond(nominee)?.message).toMatch(/^0\/\d+ nodes are available: (?:.*, )?2 Insufficient cpu[,.]/);
    expect(scheduledCond(nominee)?.message).not.toContain('preemption:');

    const v = (await pod('a-low'))!;
    expect(v.metadata.deletionTimestamp).toBeTruthy();
    expect(v.status?.conditions?.find((c) => c.type === 'DisruptionTarget')).toMatchObject({ status: 'True', reason: 'PreemptionByScheduler', message: 'default-scheduler: preempting to accommodate a higher priority pod' });
    expect((await pod('a-peer'))!.metadata.deletionTimestamp).toBeUndefined();
    const events = await eventually(async () => {
      const es = (await list(`/api/v1/namespaces/${NS}/events`)) as unknown as { reason: string; message: string; type: string; involvedObject: { name: string; uid: string }; source: { component: string } }[];
      return es.filter((e) => e.reason === 'Preempted' && e.involvedObject.name === 'a-low');
    }, 'Preempted event');
    expect(events[0]).toMatchObject({ type: 'Normal', message: `Preempted by pod ${preemptor.metadata.uid} on node a-1`, involvedObject: { uid: victim.metadata.uid }, source: { component: 'default-scheduler' } });

    // the victim still holds the node while it terminates: no second round of preemption, no binding yet
    expect((await pod('a-high'))!.spec.nodeName).toBeUndefined();
    await finishDeletion('a-low');
    const bound = await eventually(async () => (await pod('a-high'))?.spec.nodeName, 'a-high bound');
    expect(bound).toBe('a-1');
    expect((await pod('a-peer'))!.metadata.deletionTimestamp).toBeUndefined();
  });

  it.concurrent('a pod with preemptionPolicy Never never preempts', async () => {
    await readyNode('b-1', { group: 'b' }, '1');
    await runPod('b-low', 'low', 'b', { node: 'b-1' });
    await runPod('b-never', 'high-never', 'b');
    const p = await eventually(async () => {
      const x = await pod('b-never');
      return scheduledCond(x)?.reason === 'Unschedulable' ? x : undefined;
    }, 'b-never unschedulable');
    expect(scheduledCond(p)?.message).toMatch(/^0\/\d+ nodes are available: (?:.*, )?1 Insufficient cpu[,.].* preemption: not eligible due to preemptionPolicy=Never\.$/);
    expect(nominated(p)).toBeUndefined();
    expect((await pod('b-low'))!.metadata.deletionTimestamp).toBeUndefined();
  });

  it.concurrent('a node whose victims no PodDisruptionBudget protects is chosen over one with lower-priority victims a budget protects', async () => {
    await readyNode('c-1', { group: 'c' }, '1');
    await readyNode('c-2', { group: 'c' }, '1');
    // minAvailable 1 of a pod that is not Ready: no disruption allowed
    await send('POST', `/apis/policy/v1/namespaces/${NS}/poddisruptionbudgets`, { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'c-guard' }, spec: { minAvailable: 1, selector: { matchLabels: { app: 'c-guarded' } } } });
    await runPod('c-guarded', 'low', 'c', { node: 'c-1', labels: { app: 'c-guarded' } });
    await runPod('c-mid', 'mid', 'c', { node: 'c-2', hold: true });
    await runPod('c-high', 'high', 'c');
    const p = await eventually(async () => {
      const x = await pod('c-high');
      return nominated(x) ? x : undefined;
    }, 'c-high nominated');
    expect(nominated(p)).toBe('c-2');
    expect((await pod('c-mid'))!.metadata.deletionTimestamp).toBeTruthy();
    expect((await pod('c-guarded'))!.metadata.deletionTimestamp).toBeUndefined();
    await finishDeletion('c-mid');
    expect(await eventually(async () => (await pod('c-high'))?.spec.nodeName, 'c-high bound')).toBe('c-2');
  });

  it.concurrent('a nominated pod counts on its node for lower-priority pods, which cannot take the room it made', async () => {
    await nominatedOverHeldVictim('d');
    // a pod between the two: the victim is already going, and the nominated pod's room is not its to take
    await runPod('d-mid', 'mid', 'd');
    const mid = await eventually(async () => {
      const x = await pod('d-mid');
      return scheduledCond(x)?.reason === 'Unschedulable' ? x : undefined;
    }, 'd-mid unschedulable');
    expect(scheduledCond(mid)?.message).toMatch(/ preemption: 0\/\d+ nodes are available: (?:.*, )?1 Insufficient cpu[,.]/);
    expect(nominated(mid)).toBeUndefined();
    await finishDeletion('d-low');
    expect(await eventually(async () => (await pod('d-high'))?.spec.nodeName, 'd-high bound')).toBe('d-1');
    expect((await pod('d-mid'))!.spec.nodeName).toBeUndefined();
    // room elsewhere: the waiting pod goes there
    await readyNode('d-2', { group: 'd' }, '1');
    expect(await eventually(async () => (await pod('d-mid'))?.spec.nodeName, 'd-mid bound')).toBe('d-2');
  });

  it.concurrent('the nomination is cleared when the pod is bound to another node', async () => {
    await nominatedOverHeldVictim('e');
    // a new node with room before the victim is gone
    await readyNode('e-2', { group: 'e' }, '1');
    const p = await eventually(async () => {
      const x = await pod('e-high');
      return x?.spec.nodeName && !nominated(x) ? x : undefined;
    }, 'e-high bound, nomination cleared');
    expect(p.spec.nodeName).toBe('e-2');
    await finishDeletion('e-low');
  });
});
