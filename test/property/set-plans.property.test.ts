// The DaemonSet and StatefulSet controllers' plans
// (src/controllers/sets/daemonset-plan.ts, statefulset-plan.ts) against
// simple models: placement is exactly the eligible nodes; a simulated rolling
// update (pods turning available at random) never leaves its maxUnavailable /
// maxSurge bounds and always finishes; OrderedReady never has ordinal n + 1
// before n is Ready, scales down from the top one at a time; a StatefulSet
// rolling update stays within maxUnavailable and the partition.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type DaemonNode, type DaemonPod, daemonCounts, daemonFenceposts, daemonTolerations, nodeShouldRun, pinnedSpec, planManage, planRollingUpdate, targetNode,
} from '../../src/controllers/sets/daemonset-plan.js';
import { type SetPod, type SetView, claimVolumes, ordinalOf, planSet } from '../../src/controllers/sets/statefulset-plan.js';
import { revisionsToPrune } from '../../src/controllers/sets/history.js';
import { matchesNodeAffinity } from '../../src/controllers/scheduler/fit.js';
import type { ApiObject, JSONValue } from '../../src/registry/types.js';

type Obj = Record<string, JSONValue>;

const KEYS = ['a', 'b', 'c'];
const nodeArb = fc.record({
  labels: fc.dictionary(fc.constantFrom(...KEYS), fc.constantFrom('1', '2')),
  taints: fc.array(fc.record({ key: fc.constantFrom('x', 'y', 'node.kubernetes.io/unschedulable', 'node.kubernetes.io/not-ready'), effect: fc.constantFrom('NoSchedule', 'NoExecute', 'PreferNoSchedule') }), { maxLength: 2 }),
});

describe('DaemonSet placement', () => {
  it('should-run is exactly: the selector matches and every NoSchedule/NoExecute taint is tolerated (by the template or the daemon tolerations)', () => {
    fc.assert(
      fc.property(
        fc.array(nodeArb, { minLength: 1, maxLength: 6 }),
        fc.dictionary(fc.constantFrom(...KEYS), fc.constantFrom('1', '2'), { maxKeys: 2 }),
        fc.subarray(['x', 'y']),
        (nodes, selector, tolerated) => {
          const template: Obj = { spec: { nodeSelector: selector, tolerations: tolerated.map((key) => ({ key, operator: 'Exists' })), containers: [] } };
          const daemonKeys = new Set(daemonTolerations({}).map((t) => `${String(t.key)}:${String(t.effect)}`));
          const objs = nodes.map((n, i) => ({ metadata: { name: `n${i}`, labels: n.labels }, spec: { taints: n.taints } }) as unknown as ApiObject);
          const views: DaemonNode[] = objs.map((o) => ({ name: o.metadata!.name!, ...nodeShouldRun(template, o) }));
          nodes.forEach((n, i) => {
            const selected = Object.entries(selector).every(([k, v]) => n.labels[k] === v);
            const ok = (t: { key: string; effect: string }): boolean => t.effect === 'PreferNoSchedule' || tolerated.includes(t.key) || daemonKeys.has(`${t.key}:${t.effect}`);
            expect(views[i]!.shouldRun).toBe(selected && n.taints.every(ok));
            expect(views[i]!.shouldContinueRunning).toBe(selected && n.taints.every((t) => t.effect !== 'NoExecute' || ok(t)));
          });
          // from no pods, the per-node loop creates exactly on those nodes, and a pinned pod fits only its node
          expect(planManage(views, [], false)).toEqual({ create: views.filter((v) => v.shouldRun).map((v) => v.name), delete: [] });
          for (const v of views.filter((x) => x.shouldRun)) {
            const pod = { spec: pinnedSpec((template.spec ?? {}) as Obj, v.name) } as unknown as ApiObject;
            expect(targetNode(pod)).toBe(v.name);
            expect(objs.filter((o) => matchesNodeAffinity(pod, o)).map((o) => o.metadata!.name)).toEqual([v.name]);
          }
        },
      ),
    );
  });
});

/** a simulated cluster: pods deleted go at once, created ones start unavailable */
function simulateDaemonRollout(n: number, surge: number, unavailable: number, coin: boolean[]): { worstUnavailable: number; worstSurge: number; steps: number; done: boolean } {
  const nodes: DaemonNode[] = Array.from({ length: n }, (_, i) => ({ name: `n${i}`, shouldRun: true, shouldContinueRunning: true }));
  let pods: DaemonPod[] = nodes.map((x, i) => ({ name: `old-${i}`, node: x.name, updated: false, available: true, ready: true, failed: false, deleting: false, created: i }));
  let seq = 0;
  let worstUnavailable = 0;
  let worstSurge = 0;
  let c = 0;
  for (let step = 0; step < 400; step++) {
    const apply = (a: { create: string[]; delete: string[] }): void => {
      pods = pods.filter((p) => !a.delete.includes(p.name));
      for (const node of a.create) pods.push({ name: `new-${seq++}`, node, updated: true, available: false, ready: false, failed: false, deleting: false, created: 1000 + seq });
    };
    apply(planManage(nodes, pods, surge > 0));
    apply(planRollingUpdate(nodes, pods, surge, unavailable));
    const withAvailable = new Set(pods.filter((p) => p.available).map((p) => p.node));
    worstUnavailable = Math.max(worstUnavailable, n - withAvailable.size);
    worstSurge = Math.max(worstSurge, pods.length - n);
    const counts = daemonCounts(nodes, pods);
    if (counts.updatedNumberScheduled === n && counts.numberAvailable === n && pods.length === n) return { worstUnavailable, worstSurge, steps: step, done: true };
    // some of the new pods turn available (at least one now and then, so it ends)
    for (const p of pods) if (!p.available && (coin[c++ % coin.length] || step % 5 === 4)) Object.assign(p, { available: true, ready: true });
  }
  return { worstUnavailable, worstSurge, steps: 400, done: false };
}

describe('DaemonSet rolling update (simulated)', () => {
  it('never has more than maxUnavailable nodes without an available pod, nor more than maxSurge extra pods, and finishes', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 12 }),
        fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 4 }), fc.constantFrom('25%', '50%')),
        fc.oneof(fc.integer({ min: 0, max: 4 }), fc.constantFrom('10%', '50%')),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 50 }),
        (n, maxSurge, maxUnavailable, coin) => {
          // the model for a surge: maxUnavailable 0, old pods stay until their replacement is available
          const { surge, unavailable } = daemonFenceposts(maxSurge, maxSurge === 0 ? maxUnavailable : 0, n);
          const r = simulateDaemonRollout(n, surge, unavailable, coin);
          expect(r.done).toBe(true);
          expect(r.worstUnavailable).toBeLessThanOrEqual(surge > 0 ? 0 : unavailable);
          expect(r.worstSurge).toBeLessThanOrEqual(surge);
        },
      ),
    );
  });
});

const view = (over: Partial<SetView>): SetView => ({ replicas: 3, start: 0, parallel: false, rolling: true, partition: 0, currentRevision: 'r1', updateRevision: 'r1', ...over });

/** applies a plan: deletions go at once, creations start not ready */
function applySet(pods: SetPod[], s: SetView): SetPod[] {
  let out = [...pods];
  for (const a of planSet(s, out)) {
    if (a.op === 'delete') out = out.filter((p) => p.name !== a.name);
    else out.push({ name: `s-${a.ordinal}`, ordinal: a.ordinal, revision: a.revision, ready: false, available: false, finished: false, deleting: false });
  }
  return out;
}

describe('StatefulSet plan (simulated)', () => {
  it('OrderedReady: ordinal n + 1 never exists before n is Ready; every pod comes; Parallel makes all at once', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 8 }), fc.integer({ min: 0, max: 3 }), fc.array(fc.boolean(), { minLength: 1, maxLength: 30 }), (replicas, start, coin) => {
        const s = view({ replicas, start });
        let pods: SetPod[] = [];
        let c = 0;
        for (let step = 0; step < 200 && !(pods.length === replicas && pods.every((p) => p.ready)); step++) {
          pods = applySet(pods, s);
          for (const p of pods) {
            if (p.ordinal === start) continue;
            const prev = pods.find((q) => q.ordinal === p.ordinal - 1);
            expect(prev?.ready).toBe(true);
          }
          for (const p of pods) if (!p.ready && (coin[c++ % coin.length] || step % 4 === 3)) Object.assign(p, { ready: true, available: true });
        }
        expect(pods.map((p) => p.ordinal).sort((a, b) => a - b)).toEqual(Array.from({ length: replicas }, (_, i) => start + i));
        expect(applySet([], view({ replicas, start, parallel: true })).length).toBe(replicas);
      }),
    );
  });

  it('scales down from the highest ordinal, one at a time while the rest are healthy', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 8 }), fc.integer({ min: 0, max: 8 }), (from, to) => {
        fc.pre(to < from);
        let pods: SetPod[] = Array.from({ length: from }, (_, i) => ({ name: `s-${i}`, ordinal: i, revision: 'r1', ready: true, available: true, finished: false, deleting: false }));
        const s = view({ replicas: to });
        const order: number[] = [];
        for (let step = 0; step < 20 && pods.length > to; step++) {
          const acts = planSet(s, pods);
          expect(acts.length).toBeLessThanOrEqual(1);
          for (const a of acts) if (a.op === 'delete') order.push(Number(a.name.slice(2)));
          pods = applySet(pods, s);
        }
        expect(order).toEqual(Array.from({ length: from - to }, (_, i) => from - 1 - i));
      }),
    );
  });

  it('a rolling update keeps unhealthy pods within maxUnavailable, touches only ordinals at or above the partition, and finishes', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 0, max: 9 }),
        fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined }),
        fc.boolean(),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 30 }),
        (replicas, partition, maxUnavailable, parallel, coin) => {
          const s = view({ replicas, partition, maxUnavailable, parallel, currentRevision: 'r1', updateRevision: 'r2' });
          let pods: SetPod[] = Array.from({ length: replicas }, (_, i) => ({ name: `s-${i}`, ordinal: i, revision: 'r1', ready: true, available: true, finished: false, deleting: false }));
          const bound = maxUnavailable ?? 1;
          let c = 0;
          for (let step = 0; step < 300; step++) {
            pods = applySet(pods, s);
            const unhealthy = replicas - pods.filter((p) => p.available).length;
            expect(unhealthy).toBeLessThanOrEqual(bound);
            for (const p of pods) if (p.ordinal < partition) expect(p.revision).toBe('r1');
            for (const p of pods) if (!p.ready && (coin[c++ % coin.length] || step % 4 === 3)) Object.assign(p, { ready: true, available: true });
          }
          expect(pods.filter((p) => p.revision === 'r2').map((p) => p.ordinal).sort((a, b) => a - b)).toEqual(Array.from({ length: Math.max(0, replicas - partition) }, (_, i) => partition + i));
        },
      ),
    );
  });
});

describe('StatefulSet identities', () => {
  it('ordinals parse back from pod names; claim volumes replace same-named template volumes', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/), fc.nat(10_000), (name, n) => {
        expect(ordinalOf(name, `${name}-${n}`)).toBe(n);
        expect(ordinalOf(name, `${name}-0${n}`)).toBeUndefined();
        expect(ordinalOf(name, `${name}x-${n}`)).toBeUndefined();
      }),
    );
    expect(claimVolumes({ volumes: [{ name: 'data', emptyDir: {} }, { name: 'cfg', configMap: { name: 'c' } }] }, ['data'], 'web', 2)).toEqual([
      { name: 'data', persistentVolumeClaim: { claimName: 'data-web-2' } },
      { name: 'cfg', configMap: { name: 'c' } },
    ]);
  });
});

describe('revision history', () => {
  it('prunes the oldest revisions beyond the limit, never a live, current or update one', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 15 }), fc.integer({ min: 0, max: 12 }), fc.array(fc.integer({ min: 1, max: 15 }), { maxLength: 4 }), (n, limit, liveNums) => {
        const revs = Array.from({ length: n }, (_, i) => ({ metadata: { name: `r${i + 1}`, labels: { 'controller-revision-hash': `h${i + 1}` } }, revision: i + 1 }) as unknown as ApiObject);
        const live = new Set(liveNums.map((x) => `h${x}`));
        const keep = new Set(n > 0 ? [`r${n}`] : []);
        const gone = revisionsToPrune(revs, live, keep, limit).map((r) => Number(r.metadata!.name!.slice(1)));
        const dead = revs.map((r) => Number(r.metadata!.name!.slice(1))).filter((x) => x !== n && !live.has(`h${x}`));
        expect(gone).toEqual(dead.slice(0, Math.max(0, dead.length - limit)));
      }),
    );
  });
});
