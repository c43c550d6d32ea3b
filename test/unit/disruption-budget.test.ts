// The PodDisruptionBudget status computation (src/controllers/disruption/budget.ts)
// against a plain reference written from kube's documented rules, on
// generated pods, controllers, budgets and disruptedPods entries; and the
// properties the controller relies on (a computed status is up to date when
// computed again, so the controller does not write in a loop).

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DELETION_TIMEOUT_MS, computeBudget, scaled, type ScaleFinder } from '../../src/controllers/disruption/budget.js';
import type { ApiObject } from '../../src/registry/types.js';

const NOW = Date.parse('2026-03-01T12:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');

interface PodGen { selected: boolean; ready: boolean; deleting: boolean; owner: number | null; disruptedAgoS: number | null }
const CONTROLLERS = [
  { kind: 'ReplicaSet', name: 'rs', scale: 3 },
  { kind: 'StatefulSet', name: 'sts', scale: 2 },
  { kind: 'ReplicationController', name: 'rc', scale: 4 },
];
const finder: ScaleFinder = (ref) => {
  const c = CONTROLLERS.find((x) => x.kind === ref.kind && x.name === ref.name);
  return c ? { uid: `uid-${c.name}`, scale: c.scale } : undefined;
};

function podOf(g: PodGen, i: number): ApiObject {
  const c = g.owner === null ? undefined : CONTROLLERS[g.owner]!;
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: {
      name: `p${i}`, namespace: 'ns', labels: { app: g.selected ? 'x' : 'y' },
      ...(g.deleting ? { deletionTimestamp: iso(NOW - 1000) } : {}),
      ...(c ? { ownerReferences: [{ apiVersion: c.kind === 'ReplicationController' ? 'v1' : 'apps/v1', kind: c.kind, name: c.name, uid: `uid-${c.name}`, controller: true }] } : {}),
    },
    spec: {},
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: g.ready ? 'True' : 'False' }] },
  };
}

type Spec = { minAvailable?: number | string; maxUnavailable?: number | string };

/** kube's rules, written out plainly */
function reference(spec: Spec, gens: PodGen[]): { expected: number; desired: number; healthy: number; allowed: number; disrupted: string[] } {
  const sel = gens.map((g, i) => ({ ...g, name: `p${i}` })).filter((g) => g.selected);
  const scaleSum = (): number => {
    const seen = new Set<number>();
    for (const g of sel) if (g.owner !== null) seen.add(g.owner);
    return [...seen].reduce((a, o) => a + CONTROLLERS[o]!.scale, 0);
  };
  const pct = (v: number | string, total: number) => (typeof v === 'number' ? v : Math.ceil((parseInt(v, 10) * total) / 100));
  let expected = 0;
  let desired = 0;
  if (spec.maxUnavailable !== undefined) {
    expected = scaleSum();
    desired = Math.max(0, expected - pct(spec.maxUnavailable, expected));
  } else if (typeof spec.minAvailable === 'number') {
    expected = sel.length;
    desired = spec.minAvailable;
  } else if (spec.minAvailable !== undefined) {
    expected = scaleSum();
    desired = pct(spec.minAvailable, expected);
  }
  const recent = (g: PodGen) => g.disruptedAgoS !== null && g.disruptedAgoS * 1000 < DELETION_TIMEOUT_MS;
  const disrupted = sel.filter((g) => !g.deleting && g.disruptedAgoS !== null && g.disruptedAgoS * 1000 <= DELETION_TIMEOUT_MS).map((g) => g.name);
  const healthy = sel.filter((g) => !g.deleting && !recent(g) && g.ready).length;
  const allowed = expected > 0 ? Math.max(0, healthy - desired) : 0;
  return { expected, desired, healthy, allowed, disrupted };
}

const podGen = fc.record({
  selected: fc.boolean(),
  ready: fc.boolean(),
  deleting: fc.boolean(),
  owner: fc.option(fc.integer({ min: 0, max: CONTROLLERS.length - 1 })),
  disruptedAgoS: fc.option(fc.integer({ min: 0, max: 240 })),
});
const intOrPct = fc.oneof(fc.integer({ min: 0, max: 8 }), fc.integer({ min: 0, max: 100 }).map((n) => `${n}%`));
const specGen: fc.Arbitrary<Spec> = fc.oneof(intOrPct.map((v) => ({ minAvailable: v })), intOrPct.map((v) => ({ maxUnavailable: v })));

function budget(spec: Spec, gens: PodGen[], status: Record<string, unknown> = {}): ApiObject {
  const disruptedPods: Record<string, string> = {};
  gens.forEach((g, i) => {
    if (g.disruptedAgoS !== null) disruptedPods[`p${i}`] = iso(NOW - g.disruptedAgoS * 1000);
  });
  return {
    apiVersion: 'policy/v1', kind: 'PodDisruptionBudget',
    metadata: { name: 'b', namespace: 'ns', generation: 3 },
    spec: { ...spec, selector: { matchLabels: { app: 'x' } } },
    status: { ...status, disruptedPods },
  };
}

describe('computeBudget', () => {
  it('matches the reference on generated pods and budgets', () => {
    fc.assert(
      fc.property(specGen, fc.array(podGen, { maxLength: 12 }), (spec, gens) => {
        const pods = gens.map(podOf);
        // pods of another namespace never count
        pods.push({ ...podOf({ selected: true, ready: true, deleting: false, owner: 0, disruptedAgoS: null }, 99), metadata: { name: 'other', namespace: 'elsewhere', labels: { app: 'x' } } });
        const out = computeBudget(budget(spec, gens), pods, finder, NOW);
        const want = reference(spec, gens);
        expect(out.failed).toBeUndefined();
        expect(out.status).toMatchObject({ expectedPods: want.expected, desiredHealthy: want.desired, currentHealthy: want.healthy, disruptionsAllowed: want.allowed, observedGeneration: 3 });
        expect(Object.keys((out.status!.disruptedPods as Record<string, string> | undefined) ?? {}).sort()).toEqual(want.disrupted.sort());
        const cond = (out.status!.conditions as { type: string; status: string; reason: string; observedGeneration: number }[]).find((c) => c.type === 'DisruptionAllowed');
        expect(cond).toMatchObject(want.allowed > 0 ? { status: 'True', reason: 'SufficientPods', observedGeneration: 3 } : { status: 'False', reason: 'InsufficientPods' });
      }),
      { numRuns: 300 },
    );
  });

  it('a computed status is up to date when computed again (no write loop), and never allows more than are healthy', () => {
    fc.assert(
      fc.property(specGen, fc.array(podGen, { maxLength: 12 }), (spec, gens) => {
        const pods = gens.map(podOf);
        const first = computeBudget(budget(spec, gens), pods, finder, NOW);
        const st = first.status!;
        expect(st.disruptionsAllowed as number).toBeGreaterThanOrEqual(0);
        expect(st.disruptionsAllowed as number).toBeLessThanOrEqual(st.currentHealthy as number);
        const again = computeBudget({ ...budget(spec, gens), status: st }, pods, finder, NOW);
        expect(again.status).toBeUndefined();
      }),
      { numRuns: 200 },
    );
  });

  it('the recheck time is when the earliest live disruptedPods entry runs out', () => {
    const gens: PodGen[] = [
      { selected: true, ready: true, deleting: false, owner: null, disruptedAgoS: 30 },
      { selected: true, ready: true, deleting: false, owner: null, disruptedAgoS: 90 },
      { selected: true, ready: true, deleting: false, owner: null, disruptedAgoS: 200 },
    ];
    const out = computeBudget(budget({ minAvailable: 1 }, gens), gens.map(podOf), finder, NOW);
    expect(out.recheckAt).toBe(NOW - 90_000 + DELETION_TIMEOUT_MS);
    // the 200 s old entry expired: that pod counts as healthy again
    expect(out.status).toMatchObject({ currentHealthy: 1, disruptionsAllowed: 0, disruptedPods: { p0: iso(NOW - 30_000), p1: iso(NOW - 90_000) } });
  });

  it('a pod whose controller is unknown fails safe: SyncFailed, nothing allowed, the rest kept', () => {
    const pod = podOf({ selected: true, ready: true, deleting: false, owner: null, disruptedAgoS: null }, 0);
    pod.metadata!.ownerReferences = [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'gone', uid: 'u', controller: true }];
    const prior = { observedGeneration: 2, disruptionsAllowed: 4, currentHealthy: 5, desiredHealthy: 1, expectedPods: 5 };
    const out = computeBudget(budget({ maxUnavailable: 1 }, [], prior), [pod], finder, NOW);
    expect(out.failed).toBe('found no controllers for pod "p0"');
    expect(out.status).toMatchObject({ ...prior, disruptionsAllowed: 0 });
    expect((out.status!.conditions as unknown[])[0]).toMatchObject({ type: 'DisruptionAllowed', status: 'False', reason: 'SyncFailed', message: 'found no controllers for pod "p0"', observedGeneration: 2 });
  });

  it('pods without a controller are unmanaged for percentage budgets and counted by integer minAvailable', () => {
    const gens: PodGen[] = [{ selected: true, ready: true, deleting: false, owner: null, disruptedAgoS: null }, { selected: true, ready: true, deleting: false, owner: 1, disruptedAgoS: null }];
    const pct = computeBudget(budget({ minAvailable: '50%' }, gens), gens.map(podOf), finder, NOW);
    expect(pct.unmanaged).toEqual(['p0']);
    expect(pct.status).toMatchObject({ expectedPods: 2, desiredHealthy: 1, currentHealthy: 2, disruptionsAllowed: 1 });
    const int = computeBudget(budget({ minAvailable: 1 }, gens), gens.map(podOf), finder, NOW);
    expect(int.unmanaged).toEqual([]);
    expect(int.status).toMatchObject({ expectedPods: 2, desiredHealthy: 1 });
  });

  it('percentages round up (apimachinery GetScaledValueFromIntOrPercent)', () => {
    expect(scaled('50%', 3)).toBe(2);
    expect(scaled('1%', 3)).toBe(1);
    expect(scaled('0%', 3)).toBe(0);
    expect(scaled(2, 10)).toBe(2);
    expect(() => scaled('abc', 3)).toThrow(/not a percentage/);
  });
});
