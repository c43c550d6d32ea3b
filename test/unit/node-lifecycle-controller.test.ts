// The node lifecycle and taint eviction controllers
// (src/controllers/node-lifecycle/) on a real LocalStore, with a simulated
// clock: heartbeats are Lease and Node writes made here, time moves only when
// the test says so.

import { afterEach, describe, expect, it } from 'vitest';
import type { GenericStore } from '../../src/registry/generic-store.js';
import type { ApiObject } from '../../src/registry/types.js';
import { EventRecorder } from '../../src/controllers/event-recorder.js';
import { NodeLifecycleController } from '../../src/controllers/node-lifecycle/controller.js';
import { TaintEvictionController } from '../../src/controllers/node-lifecycle/eviction.js';
import { ManualClock } from '../../src/core/clock.js';
import type { LocalStore } from '../../src/store/local-store.js';
import { runWhileLeader } from '../../src/controllers/leader-gate.js';
import { INLINE_ITEMS, sharedInformers } from '../../src/controllers/runtime/informer-factory.js';
import { openLocalRegistry } from '../helpers/local-registry.js';

const D = 'orch.io';
const UNREACHABLE = 'node.orch.io/unreachable';
const NOT_READY = 'node.orch.io/not-ready';
const T0 = Date.parse('2026-01-01T00:00:00Z');

interface Env {
  clock: ManualClock;
  store: LocalStore;
  gs(resource: string, group?: string): GenericStore;
  lifecycle: NodeLifecycleController;
  eviction: TaintEvictionController;
  events: { reason: string; message: string; kind: string }[];
  restart(): void;
}

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

async function env(o: { graceMs?: number; notReadyGraceMs?: number; rate?: number; saturated?: () => boolean; maxBlindMs?: number } = {}): Promise<Env> {
  const { store, gs, close } = await openLocalRegistry(D, 'orch-nlc-');
  const clock = new ManualClock(T0);
  const events: Env['events'] = [];
  const recorder = new EventRecorder(
    {
      async create(_ns, e) {
        events.push({ reason: String(e.reason), message: String(e.message), kind: String((e.involvedObject as { kind: string }).kind) });
        return `e${events.length}`;
      },
      async update() {
        return true;
      },
    },
    { component: 'test', now: () => clock.now() },
  );
  const make = () => ({
    lifecycle: new NodeLifecycleController({
      store,
      nodes: () => gs('nodes'),
      leases: () => gs('leases', `coordination.${D}`),
      apiDomain: D,
      clock,
      monitorGracePeriodMs: o.graceMs ?? 10_000,
      notReadyGracePeriodMs: o.notReadyGraceMs,
      monitorPeriodMs: 1_000,
      zoneRules: o.rate === undefined ? {} : { evictionRate: o.rate },
      saturated: o.saturated,
      maxBlindMs: o.maxBlindMs,
      events: recorder,
    }),
    eviction: new TaintEvictionController({ store, nodes: () => gs('nodes'), pods: () => gs('pods'), clock, events: recorder }),
  });
  const e: Env = {
    clock,
    store,
    gs,
    events,
    ...make(),
    restart() {
      e.lifecycle.stop();
      e.eviction.stop();
      Object.assign(e, make());
      e.lifecycle.start();
      e.eviction.start();
    },
  };
  await gs('namespaces').create('', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'orch-node-lease' } }, { dryRun: false });
  await gs('namespaces').create('', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } }, { dryRun: false });
  cleanup.push(async () => {
    e.lifecycle.stop();
    e.eviction.stop();
    await close();
  });
  return e;
}

const iso = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');

/** what a node agent writes: its Node with the five conditions */
async function postStatus(e: Env, name: string, ready: 'True' | 'False', labels: Record<string, string> = {}): Promise<void> {
  const now = iso(e.clock.now());
  const cond = (type: string, status: string) => ({ type, status, reason: 'Agent', message: 'from the agent', lastHeartbeatTime: now, lastTransitionTime: now });
  const status = { conditions: [cond('Ready', ready), cond('MemoryPressure', 'False'), cond('DiskPressure', 'False'), cond('PIDPressure', 'False'), cond('NetworkUnavailable', 'False')] };
  await e.gs('nodes').guaranteedUpdate('', name, { dryRun: false, createIfAbsent: true }, (cur) => ({
    ...(cur ?? { apiVersion: 'v1', kind: 'Node', metadata: { name, labels } }),
    status,
  }));
}

/** a Lease renewal */
async function renew(e: Env, name: string): Promise<void> {
  const renewTime = new Date(e.clock.now()).toISOString().replace('Z', '000Z');
  await e.gs('leases', `coordination.${D}`).guaranteedUpdate('orch-node-lease', name, { dryRun: false, createIfAbsent: true }, (cur) => ({
    ...(cur ?? { apiVersion: `coordination.${D}/v1`, kind: 'Lease', metadata: { name, namespace: 'orch-node-lease' } }),
    spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime },
  }));
}

const node = (e: Env, name: string) => e.gs('nodes').get('', name);
const taints = async (e: Env, name: string) => ((((await node(e, name)).spec ?? {}) as { taints?: { key: string; effect: string }[] }).taints ?? []).map((t) => `${t.key}:${t.effect}`).sort();
const ready = async (e: Env, name: string) => ((await node(e, name)).status as { conditions: { type: string; status: string; reason: string; message: string }[] }).conditions.find((c) => c.type === 'Ready')!;

async function settle(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`timed out waiting for ${what}`);
}
/**
 * Lets the controllers' writes finish (they are async; the clock does not move):
 * both report settled twice in a row, with a turn of the event loop between, so
 * writes that a finished one started are waited for too.
 */
async function flush(e: Env): Promise<void> {
  for (let quiet = 0; quiet < 2; ) {
    await new Promise((r) => setImmediate(r));
    const busy = e.lifecycle.busy || e.eviction.busy;
    await Promise.all([e.lifecycle.settled(), e.eviction.settled()]);
    quiet = busy ? 0 : quiet + 1;
  }
}

/** advance the clock in 1 s steps, renewing the Leases of `alive` nodes each step */
async function run(e: Env, ms: number, alive: string[]): Promise<void> {
  for (let t = 0; t < ms; t += 1000) {
    for (const n of alive) await renew(e, n);
    e.clock.advance(Math.min(1000, ms - t));
    await flush(e);
  }
}

async function pod(e: Env, name: string, nodeName: string, tolerations?: Record<string, unknown>[]): Promise<void> {
  await e.gs('pods').create('default', { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' }, spec: { nodeName, containers: [{ name: 'c', image: 'busybox' }], ...(tolerations ? { tolerations } : {}) } } as ApiObject, { dryRun: false });
}
const terminating = async (e: Env, name: string) => (await e.gs('pods').get('default', name)).metadata?.deletionTimestamp !== undefined;

describe('node lifecycle controller', () => {
  it('a node silent for the grace period becomes Unknown and unreachable-tainted; its posting Ready again removes the taints', async () => {
    const e = await env();
    await postStatus(e, 'n1', 'True');
    await postStatus(e, 'n2', 'True');
    e.lifecycle.start();
    // Lease renewals alone keep n1 alive
    await run(e, 20_000, ['n1', 'n2']);
    expect((await ready(e, 'n1')).status).toBe('True');
    expect(await taints(e, 'n1')).toEqual([]);
    await run(e, 8_000, ['n2']);
    expect((await ready(e, 'n1')).status).toBe('True');
    await run(e, 3_000, ['n2']);
    await settle(async () => (await ready(e, 'n1')).status === 'Unknown', 'n1 Unknown');
    const r = await ready(e, 'n1');
    expect(r).toMatchObject({ status: 'Unknown', reason: 'NodeStatusUnknown', message: 'Node agent stopped posting node status.' });
    const conds = ((await node(e, 'n1')).status as { conditions: { type: string; status: string }[] }).conditions;
    expect(conds.map((c) => `${c.type}=${c.status}`)).toEqual(['Ready=Unknown', 'MemoryPressure=Unknown', 'DiskPressure=Unknown', 'PIDPressure=Unknown', 'NetworkUnavailable=Unknown']);
    await settle(async () => (await taints(e, 'n1')).length === 2, 'taints');
    expect(await taints(e, 'n1')).toEqual([`${UNREACHABLE}:NoExecute`, `${UNREACHABLE}:NoSchedule`]);
    const added = ((await node(e, 'n1')).spec as { taints: { effect: string; timeAdded?: string }[] }).taints.find((t) => t.effect === 'NoExecute')!;
    expect(added.timeAdded).toBe(iso(T0 + 29_000)); // last renewal at 19 s + 10 s, tainted by the pass at that instant
    expect(await taints(e, 'n2')).toEqual([]);
    expect(e.events.filter((x) => x.reason === 'NodeNotReady').map((x) => x.message)).toEqual(['Node n1 status is now: NodeNotReady']);
    // a Lease renewal alone does not clear the taints: Ready is still Unknown until the agent posts
    await run(e, 2_000, ['n1', 'n2']);
    expect(await taints(e, 'n1')).toHaveLength(2);
    await postStatus(e, 'n1', 'True');
    await settle(async () => (await taints(e, 'n1')).length === 0, 'taints removed');
    await run(e, 30_000, ['n1', 'n2']);
    expect((await ready(e, 'n1')).status).toBe('True');
  });

  it('Ready=False gets not-ready NoSchedule at once and NoExecute once it has persisted', async () => {
    const e = await env({ notReadyGraceMs: 5_000 });
    await postStatus(e, 'n1', 'True');
    await postStatus(e, 'n2', 'True');
    e.lifecycle.start();
    await postStatus(e, 'n1', 'False');
    await settle(async () => (await taints(e, 'n1')).length === 1, 'NoSchedule');
    expect(await taints(e, 'n1')).toEqual([`${NOT_READY}:NoSchedule`]);
    await run(e, 4_000, ['n1', 'n2']);
    expect(await taints(e, 'n1')).toEqual([`${NOT_READY}:NoSchedule`]);
    await run(e, 2_000, ['n1', 'n2']);
    expect(await taints(e, 'n1')).toEqual([`${NOT_READY}:NoExecute`, `${NOT_READY}:NoSchedule`]);
    // a new leader keeps the NoExecute taint of a node that is still not ready
    e.restart();
    await run(e, 2_000, ['n1', 'n2']);
    expect(await taints(e, 'n1')).toEqual([`${NOT_READY}:NoExecute`, `${NOT_READY}:NoSchedule`]);
    await postStatus(e, 'n1', 'True');
    await settle(async () => (await taints(e, 'n1')).length === 0, 'recovered');
  });

  it('a restarted controller (a new leader) gives every node a fresh grace period', async () => {
    const e = await env();
    for (const n of ['n1', 'n2', 'n3']) await postStatus(e, n, 'True');
    e.lifecycle.start();
    await run(e, 3_000, ['n1', 'n2', 'n3']);
    // n1 and n2 go silent (say, the old leader was cut off from them) just before the restart
    await run(e, 8_000, ['n3']);
    e.restart();
    await run(e, 9_000, ['n1', 'n2', 'n3']);
    for (const n of ['n1', 'n2', 'n3']) expect((await ready(e, n)).status).toBe('True');
    expect(e.lifecycle.stats.markedUnknown).toBe(0);
    // but a node that stays silent is judged after the new grace period
    await run(e, 12_000, ['n2', 'n3']);
    await settle(async () => (await ready(e, 'n1')).status === 'Unknown', 'n1 Unknown');
    expect((await ready(e, 'n2')).status).toBe('True');
  });

  it('a new leader starts the machines of many nodes in slices, and a stop retires them without acting', async () => {
    const e = await env();
    const names = Array.from({ length: 600 }, (_, i) => `s${i}`);
    for (const n of names) await postStatus(e, n, 'True');
    e.lifecycle.start();
    const started = () => names.filter((n) => e.lifecycle.nodeView(n) !== undefined).length;
    // the informers' first lists and the machines come over several turns (runtime/informer-factory.ts):
    // none at once, and at the first turn that has some, not all
    expect(started()).toBe(0);
    for (let turn = 0; started() === 0 && turn < 1000; turn++) await new Promise((r) => setImmediate(r));
    expect(started()).toBeGreaterThan(0);
    expect(started()).toBeLessThan(names.length);
    await flush(e);
    expect(started()).toBe(names.length);
    // stopped, nothing of the old run acts: silence past the grace period marks no one
    e.lifecycle.stop();
    e.clock.advance(60_000);
    await flush(e);
    expect(e.lifecycle.stats.markedUnknown).toBe(0);
    for (const n of ['s0', 's599']) expect((await ready(e, n)).status).toBe('True');
  });

  it('leadership lost while the first lists are being sliced: the start stops cleanly, a later one finishes', async () => {
    const e = await env();
    const names = Array.from({ length: 2 * INLINE_ITEMS + 100 }, (_, i) => `m${i}`);
    for (const n of names) await postStatus(e, n, 'True');
    let leader = false;
    const listeners = new Set<(l: boolean) => void>();
    const source = { isLeader: () => leader, onLeadershipChange: (l: (x: boolean) => void) => (listeners.add(l), () => listeners.delete(l)) };
    const set = (l: boolean) => {
      leader = l;
      for (const x of [...listeners]) x(l);
    };
    const gates = [runWhileLeader(source, e.lifecycle), runWhileLeader(source, e.eviction)];
    const nodes = sharedInformers(e.store).informer(e.gs('nodes').rangeKeys(''));
    set(true);
    // the gates start on the next turn; more than a turn's inline share is left for the slices
    await new Promise((r) => setImmediate(r));
    expect(gates.every((g) => g.running)).toBe(true);
    expect(gates.some((g) => g.synced())).toBe(false);
    set(false);
    expect(gates.some((g) => g.running)).toBe(false);
    // the list was dropped with the last user, and nothing of the stopped start goes on
    expect(nodes.hasSynced()).toBe(false);
    expect(nodes.list()).toEqual([]);
    const writes = e.lifecycle.stats.writes;
    for (let i = 0; i < 50; i++) await new Promise((r) => setImmediate(r));
    e.clock.advance(60_000);
    await flush(e);
    expect(names.filter((n) => e.lifecycle.nodeView(n) !== undefined)).toEqual([]);
    expect(nodes.hasSynced()).toBe(false);
    expect(e.lifecycle.stats.writes).toBe(writes);
    expect(e.lifecycle.stats.markedUnknown).toBe(0);
    // leading again: a full start, every node has its machine
    set(true);
    for (let i = 0; i < 2000 && !gates.every((g) => g.synced()); i++) await new Promise((r) => setImmediate(r));
    expect(gates.every((g) => g.synced())).toBe(true);
    await flush(e);
    expect(names.filter((n) => e.lifecycle.nodeView(n) === undefined)).toEqual([]);
    expect(nodes.keys().length).toBe(names.length);
    for (const g of gates) g.stop();
  });

  it('rate-limits NoExecute taints per zone; a partially disrupted small zone gets none; all zones down stops them', async () => {
    const e = await env({ rate: 0.1 });
    const names = Array.from({ length: 10 }, (_, i) => `z${i}`);
    for (const n of names) await postStatus(e, n, 'True', { 'topology.kubernetes.io/zone': 'a' });
    e.lifecycle.start();
    await run(e, 2_000, names);
    // two nodes lost: Normal zone, 0.1 node/s: one tainted at once, the other 10 s later
    await run(e, 11_000, names.slice(2));
    await settle(async () => (await ready(e, 'z1')).status === 'Unknown', 'z1 Unknown');
    const noExec = async () => (await Promise.all(names.map(async (n) => (await taints(e, n)).includes(`${UNREACHABLE}:NoExecute`)))).filter(Boolean).length;
    expect(await noExec()).toBe(1);
    expect(await taints(e, 'z0')).toContain(`${UNREACHABLE}:NoSchedule`);
    expect(await taints(e, 'z1')).toContain(`${UNREACHABLE}:NoSchedule`);
    await run(e, 11_000, names.slice(2));
    expect(await noExec()).toBe(2);
    expect(e.lifecycle.zoneStateOf(':a')).toBe('Normal');
    // four more: 6 of 10 not ready ≥ 0.55 → PartialDisruption; a zone of ≤ 50 nodes gets no new NoExecute taints
    await run(e, 40_000, names.slice(6));
    for (const n of names.slice(2, 6)) await settle(async () => (await ready(e, n)).status === 'Unknown', `${n} Unknown`);
    await run(e, 2_000, names.slice(6));
    expect(e.lifecycle.zoneStateOf(':a')).toBe('PartialDisruption');
    expect(await noExec()).toBe(2);
    // every node silent: the controller assumes it is the one cut off and removes its NoExecute taints
    await run(e, 13_000, []);
    expect(e.lifecycle.inFullDisruption).toBe(true);
    await settle(async () => (await noExec()) === 0, 'NoExecute taints removed');
    expect(await taints(e, 'z9')).toEqual([`${UNREACHABLE}:NoSchedule`]);
  });
});

describe('node lifecycle controller: the control plane behind (blind time)', () => {
  it('a stalled event loop does not mark nodes whose renewals it could not read; a node silent afterwards still goes Unknown', async () => {
    const e = await env();
    const names = ['n1', 'n2', 'n3', 'n4'];
    for (const n of names) await postStatus(e, n, 'True');
    e.lifecycle.start();
    await run(e, 5_000, names);
    // the process blocks for 25 s (2.5 grace periods): no renewal is read, every timer fires late
    e.clock.stall(25_000);
    await flush(e);
    // a pass runs before the backlog of renewals is read
    e.clock.advance(1_500);
    await flush(e);
    // the renewals that queued up are read now
    await run(e, 3_000, names);
    for (const n of names) expect((await ready(e, n)).status).toBe('True');
    expect(e.lifecycle.stats.markedUnknown).toBe(0);
    expect(e.lifecycle.blindMs).toBeGreaterThanOrEqual(23_000);
    expect(e.lifecycle.blindMs).toBeLessThanOrEqual(25_000);
    expect(e.lifecycle.stats.writes).toBe(0);
    // the credit covers the stall only: n1 silent from now is judged after a whole observed grace period
    await run(e, 8_000, ['n2', 'n3', 'n4']);
    expect((await ready(e, 'n1')).status).toBe('True');
    await run(e, 4_000, ['n2', 'n3', 'n4']);
    await settle(async () => (await ready(e, 'n1')).status === 'Unknown', 'n1 Unknown');
    for (const n of ['n2', 'n3', 'n4']) expect((await ready(e, n)).status).toBe('True');
  });

  it('while the process is saturated, silence is not held against nodes, up to maxBlindMs; a dead node is marked after grace + maxBlindMs', async () => {
    let saturated = false;
    const e = await env({ saturated: () => saturated, maxBlindMs: 20_000 });
    for (const n of ['n1', 'n2', 'n3']) await postStatus(e, n, 'True');
    e.lifecycle.start();
    await run(e, 3_000, ['n1', 'n2', 'n3']);
    // saturated for 15 s: n1 and n2's renewals are not read (n3's are, late but read)
    saturated = true;
    await run(e, 15_000, ['n3']);
    saturated = false;
    await run(e, 2_000, ['n1', 'n2', 'n3']);
    for (const n of ['n1', 'n2', 'n3']) expect((await ready(e, n)).status).toBe('True');
    expect(e.lifecycle.stats.markedUnknown).toBe(0);
    // saturated for good, n1 dead: marked once silent for grace (10 s) + maxBlindMs (20 s), not before
    saturated = true;
    await run(e, 28_000, ['n2', 'n3']);
    expect((await ready(e, 'n1')).status).toBe('True');
    await run(e, 4_000, ['n2', 'n3']);
    await settle(async () => (await ready(e, 'n1')).status === 'Unknown', 'n1 Unknown');
    expect((await ready(e, 'n2')).status).toBe('True');
  });
});

describe('taint eviction controller', () => {
  it('evicts pods that do not tolerate a NoExecute taint, after tolerationSeconds for those that tolerate it for a time, never the others', async () => {
    const e = await env();
    await postStatus(e, 'n1', 'True');
    await postStatus(e, 'n2', 'True');
    await pod(e, 'plain', 'n1');
    await pod(e, 'forever', 'n1', [{ key: UNREACHABLE, operator: 'Exists', effect: 'NoExecute' }]);
    await pod(e, 'thirty', 'n1', [{ key: UNREACHABLE, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 30 }]);
    await pod(e, 'elsewhere', 'n2');
    e.lifecycle.start();
    e.eviction.start();
    await run(e, 12_000, ['n2']);
    await settle(() => terminating(e, 'plain'), 'plain evicted');
    expect(await terminating(e, 'forever')).toBe(false);
    expect(await terminating(e, 'thirty')).toBe(false);
    expect(await terminating(e, 'elsewhere')).toBe(false);
    expect(e.events.filter((x) => x.reason === 'TaintManagerEviction').map((x) => x.message)).toEqual(['Marking for deletion Pod default/plain']);
    // kube's controller marks the pod before it deletes it
    const conds = ((await e.gs('pods').get('default', 'plain')).status as { conditions?: Record<string, unknown>[] }).conditions;
    expect(conds?.find((c) => c.type === 'DisruptionTarget')).toMatchObject({ status: 'True', reason: 'DeletionByTaintManager', message: 'Taint manager: deleting due to NoExecute taint' });
    // a leader change does not restart the 30 s: they count from the taint's timeAdded
    await run(e, 15_000, ['n2']);
    e.restart();
    await run(e, 10_000, ['n2']);
    expect(await terminating(e, 'thirty')).toBe(false);
    await run(e, 6_000, ['n2']);
    await settle(() => terminating(e, 'thirty'), 'thirty evicted');
    expect(await terminating(e, 'forever')).toBe(false);
    expect(e.eviction.evicted).toBe(1);
  });

  it('a taint removed in time cancels a pending eviction', async () => {
    const e = await env();
    await postStatus(e, 'n1', 'True');
    await postStatus(e, 'n2', 'True');
    await pod(e, 'sixty', 'n1', [{ key: UNREACHABLE, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 60 }]);
    e.lifecycle.start();
    e.eviction.start();
    await run(e, 12_000, ['n2']);
    await settle(async () => e.eviction.scheduled === 1, 'eviction scheduled');
    await postStatus(e, 'n1', 'True');
    await settle(async () => e.eviction.scheduled === 0, 'eviction cancelled');
    await run(e, 70_000, ['n1', 'n2']);
    expect(await terminating(e, 'sixty')).toBe(false);
  });
});
