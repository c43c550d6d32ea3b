// The DaemonSet and StatefulSet controllers (src/controllers/sets/) on a real
// LocalStore with a simulated clock: minReadySeconds holds OrderedReady back
// and keeps daemon pods unavailable until the clock has moved past it (the
// controllers look again on a delayed add on that clock); no sleeps.

import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { DaemonSetController } from '../../src/controllers/sets/daemonset.js';
import { StatefulSetController } from '../../src/controllers/sets/statefulset.js';
import type { GenericStore } from '../../src/registry/generic-store.js';
import type { ApiObject } from '../../src/registry/types.js';
import { openLocalRegistry } from '../helpers/local-registry.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');

interface Env {
  clock: ManualClock;
  gs(resource: string, group?: string): GenericStore;
  settled(): Promise<void>;
}

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const f of cleanup.reverse()) await f();
  cleanup = [];
});

async function env(): Promise<Env> {
  const { store, gs, close } = await openLocalRegistry('orch.io', 'orch-sets-');
  const clock = new ManualClock(T0);
  await gs('namespaces').create('', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } }, { dryRun: false });
  const common = { store, pods: () => gs('pods'), revisions: () => gs('controllerrevisions', 'apps'), clock };
  const ds = new DaemonSetController({ ...common, daemonSets: () => gs('daemonsets', 'apps'), nodes: () => gs('nodes') });
  const sts = new StatefulSetController({ ...common, statefulSets: () => gs('statefulsets', 'apps'), claims: () => gs('persistentvolumeclaims') });
  ds.start();
  sts.start();
  cleanup.push(async () => {
    ds.stop();
    sts.stop();
    await close();
  });
  const settled = async (): Promise<void> => {
    // the handlers run inside the store's publish; a turn lets the workers pick the keys up
    for (let i = 0; i < 4; i++) {
      await ds.settled();
      await sts.settled();
      await new Promise((r) => setImmediate(r));
    }
  };
  return { clock, gs, settled };
}

const names = async (e: Env, app: string): Promise<string[]> => (await e.gs('pods').list('default')).filter((p) => p.metadata?.labels?.app === app).map((p) => p.metadata!.name!).sort();

/** the scheduler's and the node agent's part: the pod is bound (as pods/binding writes it), Running and Ready since `at` */
async function readyPod(e: Env, name: string, at: number, node = 'n1'): Promise<void> {
  await e.gs('pods').guaranteedUpdate('default', name, { dryRun: false, subresource: 'binding' }, (cur) => ({
    ...cur!, spec: { ...(cur!.spec as object), nodeName: node }, status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: iso(at) }] },
  }));
}

/** node n1 and the DaemonSet `agent` on it */
async function nodeAndDaemonSet(e: Env, spec: Record<string, unknown> = {}): Promise<void> {
  await e.gs('nodes').create('', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } }, { dryRun: false });
  await e.gs('daemonsets', 'apps').create('default', {
    apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: 'agent' },
    spec: { ...spec, selector: { matchLabels: { app: 'agent' } }, template: { metadata: { labels: { app: 'agent' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } } },
  }, { dryRun: false });
}

describe('minReadySeconds on the simulated clock', () => {
  it('OrderedReady makes web-1 only once web-0 has been Ready for minReadySeconds', async () => {
    const e = await env();
    await e.gs('statefulsets', 'apps').create('default', {
      apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'web' },
      spec: { replicas: 2, minReadySeconds: 30, serviceName: 'web', selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
    }, { dryRun: false });
    await e.settled();
    expect(await names(e, 'web')).toEqual(['web-0']);
    await readyPod(e, 'web-0', T0);
    await e.settled();
    // Ready but not yet available: web-1 waits
    expect(await names(e, 'web')).toEqual(['web-0']);
    const st = (await e.gs('statefulsets', 'apps').get('default', 'web')).status as Record<string, number>;
    expect(st).toMatchObject({ readyReplicas: 1, availableReplicas: 0 });
    e.clock.advance(29_000);
    await e.settled();
    expect(await names(e, 'web')).toEqual(['web-0']);
    e.clock.advance(2_000);
    await e.settled();
    expect(await names(e, 'web')).toEqual(['web-0', 'web-1']);
    expect(((await e.gs('statefulsets', 'apps').get('default', 'web')).status as Record<string, number>).availableReplicas).toBe(1);
  });

  it('a StatefulSet pod Ready while it terminates still counts as ready and available, not as current or updated', async () => {
    const e = await env();
    await e.gs('statefulsets', 'apps').create('default', {
      apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'web' },
      spec: { replicas: 2, serviceName: 'web', selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
    }, { dryRun: false });
    await e.settled();
    await readyPod(e, 'web-0', T0);
    await e.settled();
    await readyPod(e, 'web-1', T0);
    await e.settled();
    const status = async () => (await e.gs('statefulsets', 'apps').get('default', 'web')).status as Record<string, number>;
    expect(await status()).toMatchObject({ replicas: 2, readyReplicas: 2, availableReplicas: 2, currentReplicas: 2 });
    // held by a finalizer and deleted: the agent keeps it Running and Ready through its grace period
    await e.gs('pods').guaranteedUpdate('default', 'web-1', { dryRun: false }, (cur) => ({ ...cur!, metadata: { ...cur!.metadata, finalizers: ['example.com/hold'] } }));
    await e.gs('pods').delete('default', 'web-1', { dryRun: false });
    await e.settled();
    // kube's computeReplicaStatus: ready and available by isRunningAndReady alone; current and updated skip terminating pods
    expect(await status()).toMatchObject({ replicas: 2, readyReplicas: 2, availableReplicas: 2, currentReplicas: 1, updatedReplicas: 1 });
  });

  it('a daemon pod counts as available only after minReadySeconds', async () => {
    const e = await env();
    await nodeAndDaemonSet(e, { minReadySeconds: 10 });
    await e.settled();
    const [pod] = await names(e, 'agent');
    expect(pod).toBeDefined();
    await readyPod(e, pod!, T0);
    await e.settled();
    const status = async (): Promise<Record<string, number>> => (await e.gs('daemonsets', 'apps').get('default', 'agent')).status as Record<string, number>;
    expect(await status()).toMatchObject({ desiredNumberScheduled: 1, numberReady: 1, numberUnavailable: 1 });
    expect(await status()).not.toHaveProperty('numberAvailable');
    e.clock.advance(11_000);
    await e.settled();
    expect(await status()).toMatchObject({ numberReady: 1, numberAvailable: 1, updatedNumberScheduled: 1 });
    expect(await status()).not.toHaveProperty('numberUnavailable');
  });

  it('a failed daemon pod is replaced at once the first time, then only after a doubling backoff', async () => {
    const e = await env();
    await nodeAndDaemonSet(e);
    await e.settled();
    const fail = async (name: string): Promise<void> => {
      await e.gs('pods').guaranteedUpdate('default', name, { dryRun: false, subresource: 'binding' }, (cur) => ({ ...cur!, spec: { ...(cur!.spec as object), nodeName: 'n1' }, status: { phase: 'Failed' } }));
      await e.settled();
    };
    const [first] = await names(e, 'agent');
    await fail(first!);
    const [second] = await names(e, 'agent');
    expect(second).toBeDefined();
    expect(second).not.toBe(first);
    // failed again within the 1 s backoff: it stays
    await fail(second!);
    expect(await names(e, 'agent')).toEqual([second]);
    e.clock.advance(1_100);
    await e.settled();
    const [third] = await names(e, 'agent');
    expect(third).toBeDefined();
    expect(third).not.toBe(second);
    // the next backoff is 2 s
    await fail(third!);
    e.clock.advance(1_100);
    await e.settled();
    expect(await names(e, 'agent')).toEqual([third]);
    e.clock.advance(1_000);
    await e.settled();
    expect(await names(e, 'agent')).not.toEqual([third]);
  });

  it('a NoSchedule taint added under a running daemon pod leaves it (misscheduled); a NoExecute one removes it', async () => {
    const e = await env();
    await nodeAndDaemonSet(e);
    await e.settled();
    const [pod] = await names(e, 'agent');
    await readyPod(e, pod!, T0);
    const taint = async (effect: string): Promise<void> => {
      await e.gs('nodes').guaranteedUpdate('', 'n1', { dryRun: false }, (cur) => ({ ...cur!, spec: { taints: [{ key: 'dedicated', value: 'x', effect }] } }));
      await e.settled();
    };
    await taint('NoSchedule');
    expect(await names(e, 'agent')).toEqual([pod]);
    expect((await e.gs('daemonsets', 'apps').get('default', 'agent')).status).toMatchObject({ desiredNumberScheduled: 0, currentNumberScheduled: 0, numberMisscheduled: 1 });
    await taint('NoExecute');
    const left = await e.gs('pods').list('default');
    expect(left.every((p) => p.metadata?.deletionTimestamp !== undefined)).toBe(true);
  });

  it('a pod of a deleted node goes without a grace period', async () => {
    const e = await env();
    await nodeAndDaemonSet(e);
    await e.settled();
    const [pod] = await names(e, 'agent');
    await readyPod(e, pod!, T0);
    await e.gs('nodes').delete('', 'n1', { dryRun: false });
    await e.settled();
    expect(await names(e, 'agent')).toEqual([]);
    const ds = (await e.gs('daemonsets', 'apps').get('default', 'agent')) as ApiObject;
    expect(ds.status).toMatchObject({ desiredNumberScheduled: 0, currentNumberScheduled: 0 });
  });
});
