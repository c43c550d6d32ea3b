// The disruption controller (src/controllers/disruption/controller.ts) on a
// real LocalStore with a simulated clock: budgets follow their pods and the
// owning workloads' scale (Deployment → ReplicaSet chain), a disruptedPods
// entry expires after 2 minutes of simulated time (a delayed add on the
// clock), and the status write never overwrites an eviction's entry.

import { afterEach, describe, expect, it } from 'vitest';
import type { GenericStore } from '../../src/registry/generic-store.js';
import type { ApiObject } from '../../src/registry/types.js';
import { DisruptionController } from '../../src/controllers/disruption/controller.js';
import { ManualClock } from '../../src/core/clock.js';
import { openLocalRegistry } from '../helpers/local-registry.js';

const D = 'orch.io';
const T0 = Date.parse('2026-01-01T00:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');

interface Env {
  clock: ManualClock;
  gs(resource: string, group?: string): GenericStore;
  c: DisruptionController;
}

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const f of cleanup.reverse()) await f();
  cleanup = [];
});

async function env(): Promise<Env> {
  const { store, gs, close } = await openLocalRegistry(D, 'orch-pdb-');
  const clock = new ManualClock(T0);
  await gs('namespaces').create('', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } }, { dryRun: false });
  const c = new DisruptionController({
    store,
    pdbs: () => gs('poddisruptionbudgets', 'policy'),
    pods: () => gs('pods'),
    deployments: () => gs('deployments', 'apps'),
    replicaSets: () => gs('replicasets', 'apps'),
    statefulSets: () => gs('statefulsets', 'apps'),
    replicationControllers: () => gs('replicationcontrollers'),
    clock,
  });
  c.start();
  cleanup.push(async () => {
    c.stop();
    await close();
  });
  return { clock, gs, c };
}

async function settled(e: Env): Promise<void> {
  // the handlers run inside the store's publish; a turn lets the workers pick the keys up
  for (let i = 0; i < 3; i++) {
    await e.c.settled();
    await new Promise((r) => setImmediate(r));
  }
}

async function pod(e: Env, name: string, o: { ready?: boolean; owner?: ApiObject; labels?: Record<string, string> } = {}): Promise<void> {
  const meta = o.owner ? { ownerReferences: [{ apiVersion: String(o.owner.apiVersion), kind: String(o.owner.kind), name: o.owner.metadata!.name!, uid: o.owner.metadata!.uid!, controller: true }] } : {};
  await e.gs('pods').create('default', { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: o.labels ?? { app: 'web' }, ...meta }, spec: { containers: [{ name: 'c', image: 'busybox:1' }] } }, { dryRun: false });
  await e.gs('pods').guaranteedUpdate('default', name, { dryRun: false }, (cur) => ({ ...cur!, status: { phase: 'Running', conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }] } }));
}

async function workload(e: Env, resource: string, group: string, kind: string, name: string, replicas: number, owner?: ApiObject): Promise<ApiObject> {
  const apiVersion = group ? `${group}/v1` : 'v1';
  const meta = owner ? { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: owner.metadata!.name!, uid: owner.metadata!.uid!, controller: true }] } : {};
  const r = await e.gs(resource, group).create('default', {
    apiVersion, kind, metadata: { name, ...meta },
    spec: { replicas, selector: kind === 'ReplicationController' ? { app: 'web' } : { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'busybox:1' }] } }, ...(kind === 'StatefulSet' ? { serviceName: 'web' } : {}) },
  }, { dryRun: false });
  return r.object;
}

async function budget(e: Env, name: string, spec: Record<string, unknown>): Promise<void> {
  await e.gs('poddisruptionbudgets', 'policy').create('default', { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name }, spec: { selector: { matchLabels: { app: 'web' } }, ...spec } }, { dryRun: false });
}

type St = { observedGeneration?: number; disruptionsAllowed: number; currentHealthy: number; desiredHealthy: number; expectedPods: number; disruptedPods?: Record<string, string>; conditions?: { type: string; status: string; reason: string; message?: string }[] };
const status = async (e: Env, name: string) => (await e.gs('poddisruptionbudgets', 'policy').get('default', name)).status as St;

describe('disruption controller', () => {
  it('percentage budgets count the Deployment scale through its ReplicaSet; scaling the Deployment recomputes', async () => {
    const e = await env();
    const d = await workload(e, 'deployments', 'apps', 'Deployment', 'web', 4);
    const rs = await workload(e, 'replicasets', 'apps', 'ReplicaSet', 'web-abc', 4, d);
    for (const n of ['a', 'b', 'c']) await pod(e, n, { owner: rs });
    await budget(e, 'web', { minAvailable: '50%' });
    await settled(e);
    expect(await status(e, 'web')).toMatchObject({ observedGeneration: 1, expectedPods: 4, desiredHealthy: 2, currentHealthy: 3, disruptionsAllowed: 1 });
    await e.gs('deployments', 'apps').guaranteedUpdate('default', 'web', { dryRun: false }, (cur) => ({ ...cur!, spec: { ...(cur!.spec as object), replicas: 6 } }));
    await settled(e);
    expect(await status(e, 'web')).toMatchObject({ expectedPods: 6, desiredHealthy: 3, currentHealthy: 3, disruptionsAllowed: 0 });
    expect((await status(e, 'web')).conditions?.find((c) => c.type === 'DisruptionAllowed')).toMatchObject({ status: 'False', reason: 'InsufficientPods' });
  });

  it('maxUnavailable over a StatefulSet and a ReplicationController; a missing controller fails safe with SyncFailed', async () => {
    const e = await env();
    const sts = await workload(e, 'statefulsets', 'apps', 'StatefulSet', 'db', 2);
    const rc = await workload(e, 'replicationcontrollers', '', 'ReplicationController', 'old', 1);
    await pod(e, 'db-0', { owner: sts });
    await pod(e, 'db-1', { owner: sts });
    await pod(e, 'old-x', { owner: rc });
    await budget(e, 'web', { maxUnavailable: 1 });
    await settled(e);
    expect(await status(e, 'web')).toMatchObject({ expectedPods: 3, desiredHealthy: 2, currentHealthy: 3, disruptionsAllowed: 1 });
    // Background, as kubectl sends it (a core/v1 RC orphans its pods by default, and no collector runs here)
    await e.gs('replicationcontrollers').delete('default', 'old', { dryRun: false, propagationPolicy: 'Background' });
    // a pod change makes the controller look again (the pod's controller is gone now)
    await e.gs('pods').guaranteedUpdate('default', 'old-x', { dryRun: false }, (cur) => ({ ...cur!, metadata: { ...cur!.metadata, labels: { app: 'web', touched: 'yes' } } }));
    await settled(e);
    const st = await status(e, 'web');
    expect(st.disruptionsAllowed).toBe(0);
    expect(st.conditions?.find((c) => c.type === 'DisruptionAllowed')).toMatchObject({ status: 'False', reason: 'SyncFailed', message: 'found no controllers for pod "old-x"' });
  });

  it('a disruptedPods entry keeps its pod out of currentHealthy for 2 minutes of clock time, then expires', async () => {
    const e = await env();
    for (const n of ['a', 'b', 'c']) await pod(e, n);
    await budget(e, 'web', { minAvailable: 1 });
    await settled(e);
    expect(await status(e, 'web')).toMatchObject({ currentHealthy: 3, disruptionsAllowed: 2 });
    // what pods/eviction writes when it spends the budget; the pod is then not deleted (say the delete failed)
    await e.gs('poddisruptionbudgets', 'policy').guaranteedUpdate('default', 'web', { dryRun: false }, (cur) => ({
      ...cur!, status: { ...(cur!.status as object), disruptionsAllowed: 1, disruptedPods: { a: iso(e.clock.now()) } },
    }));
    await settled(e);
    expect(await status(e, 'web')).toMatchObject({ currentHealthy: 2, disruptionsAllowed: 1, disruptedPods: { a: iso(T0) } });
    e.clock.advance(119_000);
    await settled(e);
    expect((await status(e, 'web')).disruptedPods).toEqual({ a: iso(T0) });
    // past the 2 minutes: the delayed add fires, the entry goes, the pod counts again
    e.clock.advance(2_000);
    await settled(e);
    const st = await status(e, 'web');
    expect(st.disruptedPods ?? {}).toEqual({});
    expect(st).toMatchObject({ currentHealthy: 3, disruptionsAllowed: 2 });
  });

  it('a pod being deleted or unready is not healthy; its disruptedPods entry is dropped once it is Terminating', async () => {
    const e = await env();
    await pod(e, 'a');
    await pod(e, 'b', { ready: false });
    await e.gs('pods').guaranteedUpdate('default', 'a', { dryRun: false, subresource: 'binding' }, (cur) => ({ ...cur!, spec: { ...(cur!.spec as object), nodeName: 'n1' } }));
    await budget(e, 'web', { minAvailable: 0 });
    await settled(e);
    expect(await status(e, 'web')).toMatchObject({ expectedPods: 2, currentHealthy: 1, disruptionsAllowed: 1 });
    await e.gs('poddisruptionbudgets', 'policy').guaranteedUpdate('default', 'web', { dryRun: false }, (cur) => ({ ...cur!, status: { ...(cur!.status as object), disruptionsAllowed: 0, disruptedPods: { a: iso(e.clock.now()) } } }));
    // bound to a node: the delete marks it Terminating (graceful)
    await e.gs('pods').delete('default', 'a', { dryRun: false, gracePeriodSeconds: 30 });
    await settled(e);
    const st = await status(e, 'web');
    expect(st.disruptedPods ?? {}).toEqual({});
    expect(st).toMatchObject({ currentHealthy: 0, disruptionsAllowed: 0 });
  });

  it('a DisruptionTarget condition left on a pod that was not deleted is reset to False after 2 minutes', async () => {
    const e = await env();
    await pod(e, 'kept');
    await pod(e, 'going');
    const mark = (name: string) => e.gs('pods').guaranteedUpdate('default', name, { dryRun: false }, (cur) => ({
      ...cur!, status: { ...(cur!.status as object), conditions: [{ type: 'Ready', status: 'True', reason: 'Agent', lastTransitionTime: iso(T0) }, { type: 'DisruptionTarget', status: 'True', reason: 'EvictionByEvictionAPI', lastTransitionTime: iso(e.clock.now()) }] },
    }));
    await mark('kept');
    await mark('going');
    await e.gs('pods').guaranteedUpdate('default', 'going', { dryRun: false, subresource: 'binding' }, (cur) => ({ ...cur!, spec: { ...(cur!.spec as object), nodeName: 'n1' } }));
    await e.gs('pods').delete('default', 'going', { dryRun: false, gracePeriodSeconds: 30 });
    const cond = async (name: string) => ((await e.gs('pods').get('default', name)).status as { conditions: { type: string; status: string }[] }).conditions.find((c) => c.type === 'DisruptionTarget');
    e.clock.advance(119_000);
    await settled(e);
    expect(await cond('kept')).toMatchObject({ status: 'True' });
    e.clock.advance(2_000);
    await settled(e);
    expect(await cond('kept')).toMatchObject({ status: 'False' });
    // the Terminating pod keeps it: it is being deleted, as the condition says
    expect(await cond('going')).toMatchObject({ status: 'True' });
    expect(e.c.staleCleared).toBe(1);
  });
});
