// kube-scheduler's DefaultPreemption decisions (src/controllers/scheduler/
// preemption.ts): victims on one node against a brute-force reference (the
// smallest-by-kube's-order set whose removal makes room), the budget split,
// the candidate node's order of criteria, eligibility and kube's messages.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { filterNode, nodeState } from '../../src/controllers/scheduler/fit.js';
import {
  type Budget,
  type Candidate,
  budgetOf,
  byImportance,
  eligibleToPreempt,
  findPreemption,
  numCandidates,
  pickCandidate,
  podPriority,
  selectVictims,
  splitByBudgets,
} from '../../src/controllers/scheduler/preemption.js';
import type { ApiObject } from '../../src/registry/types.js';

function node(name: string, cpu = '4', extra: Record<string, string> = {}, o: { unschedulable?: boolean } = {}): ApiObject {
  return {
    apiVersion: 'v1', kind: 'Node', metadata: { name, labels: {} },
    spec: o.unschedulable ? { unschedulable: true } : {},
    status: { allocatable: { cpu, memory: '8Gi', pods: '110', ...extra }, conditions: [{ type: 'Ready', status: 'True' }] },
  } as unknown as ApiObject;
}

let seq = 0;
function pod(o: { name?: string; node?: string; priority?: number; cpu?: string; foo?: string; labels?: Record<string, string>; start?: string; never?: boolean; deleting?: boolean; condition?: string } = {}): ApiObject {
  const requests = { ...(o.cpu ? { cpu: o.cpu } : {}), ...(o.foo ? { 'example.com/foo': o.foo } : {}) };
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name: o.name ?? `p${++seq}`, namespace: 'default', uid: `u${seq}`, labels: o.labels ?? {}, ...(o.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
    spec: { containers: [{ name: 'c', resources: { requests } }], ...(o.node ? { nodeName: o.node } : {}), ...(o.priority !== undefined ? { priority: o.priority } : {}), ...(o.never ? { preemptionPolicy: 'Never' } : {}) },
    status: { phase: o.node ? 'Running' : 'Pending', ...(o.start ? { startTime: o.start } : {}), ...(o.condition ? { conditions: [{ type: 'DisruptionTarget', status: 'True', reason: o.condition }] } : {}) },
  } as unknown as ApiObject;
}

const names = (ps: readonly ApiObject[]): string[] => ps.map((p) => p.metadata!.name!);
const pdb = (labels: Record<string, string>, allowed: number, disrupted: string[] = []): Budget =>
  budgetOf({ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'b', namespace: 'default' }, spec: { selector: { matchLabels: labels } }, status: { disruptionsAllowed: allowed, disruptedPods: Object.fromEntries(disrupted.map((d) => [d, '2026-01-01T00:00:00Z'])) } } as unknown as ApiObject);

describe('victims on a node', () => {
  it('reprieves the most important first and takes only what makes room', () => {
    const n = node('a', '1');
    // kube's PreemptionExecutionPath: 200 + 300 + 450 of 1000, a 500 preemptor: the 450 stays
    const pods = [pod({ node: 'a', priority: 1, cpu: '200m' }), pod({ node: 'a', priority: 2, cpu: '300m' }), pod({ node: 'a', priority: 3, cpu: '450m' })];
    const out = selectVictims(pod({ priority: 4, cpu: '500m' }), nodeState(n, pods), pods, []);
    expect('victims' in out && names(out.victims.pods)).toEqual([names(pods)[1], names(pods)[0]]);
  });

  it('never takes a pod of equal or higher priority', () => {
    const n = node('a', '1');
    const pods = [pod({ node: 'a', priority: 5, cpu: '600m' }), pod({ node: 'a', priority: 9, cpu: '400m' })];
    expect(selectVictims(pod({ priority: 5, cpu: '500m' }), nodeState(n, pods), pods, [])).toEqual({ status: { reasons: ['No preemption victims found for incoming pod'], resolvable: false } });
    // removing every lower one is not enough: the filter's reason
    const mixed = [pod({ node: 'a', priority: 1, cpu: '100m' }), pod({ node: 'a', priority: 9, cpu: '800m' })];
    expect(selectVictims(pod({ priority: 5, cpu: '500m' }), nodeState(n, mixed), mixed, [])).toEqual({ status: { reasons: ['Insufficient cpu'], resolvable: true } });
  });

  it('counts extended resources', () => {
    const n = node('a', '4', { 'example.com/foo': '5' });
    const pods = [pod({ node: 'a', priority: 1, foo: '2' }), pod({ node: 'a', priority: 100, foo: '2' })];
    expect(filterNode(pod({ priority: 1000, foo: '2' }), nodeState(n, pods)).reasons).toEqual(['Insufficient example.com/foo']);
    const out = selectVictims(pod({ priority: 1000, foo: '2' }), nodeState(n, pods), pods, []);
    expect('victims' in out && names(out.victims.pods)).toEqual([names(pods)[0]]);
  });

  it('reprieves budget-violating pods before the others, and counts the violations', () => {
    const n = node('a', '1');
    const guarded = pod({ node: 'a', priority: 1, cpu: '500m', labels: { app: 'db' } });
    const free = pod({ node: 'a', priority: 2, cpu: '500m' });
    const pods = [guarded, free];
    // without a budget the more important (priority 2) stays
    const plain = selectVictims(pod({ priority: 10, cpu: '500m' }), nodeState(n, pods), pods, []);
    expect('victims' in plain && plain.victims).toEqual({ pods: [guarded], pdbViolations: 0 });
    // a budget allowing no disruption: the guarded pod is reprieved first
    const out = selectVictims(pod({ priority: 10, cpu: '500m' }), nodeState(n, pods), pods, [pdb({ app: 'db' }, 0)]);
    expect('victims' in out && out.victims).toEqual({ pods: [free], pdbViolations: 0 });
    // both must go: one violation
    const both = selectVictims(pod({ priority: 10, cpu: '1' }), nodeState(n, pods), pods, [pdb({ app: 'db' }, 0)]);
    expect('victims' in both && both.victims).toEqual({ pods: [free, guarded], pdbViolations: 1 });
  });

  it('matches a brute-force reference: the victims are the set kube reprieves greedily', () => {
    const podArb = fc.record({ priority: fc.integer({ min: 0, max: 5 }), cpu: fc.integer({ min: 1, max: 1000 }), start: fc.integer({ min: 0, max: 1000 }) });
    fc.assert(
      fc.property(fc.array(podArb, { maxLength: 8 }), fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 2000 }), fc.integer({ min: 500, max: 4000 }), (specs, prio, want, cap) => {
        const n = node('a', `${cap}m`);
        const pods = specs.map((s, i) => pod({ name: `v${i}`, node: 'a', priority: s.priority, cpu: `${s.cpu}m`, start: new Date(s.start * 1000).toISOString() }));
        const preemptor = pod({ priority: prio, cpu: `${want}m` });
        const out = selectVictims(preemptor, nodeState(n, pods), pods, []);
        // the reference: lower-priority pods by importance; keep each one that still lets the preemptor fit
        const cpuOf = (p: ApiObject): number => specs[Number(p.metadata!.name!.slice(1))]!.cpu;
        const lower = pods.filter((p) => podPriority(p) < prio).sort(byImportance);
        const higherCpu = pods.filter((p) => podPriority(p) >= prio).reduce((s, p) => s + cpuOf(p), 0);
        if (lower.length === 0) {
          expect('status' in out).toBe(true);
          return;
        }
        if (higherCpu + want > cap) {
          expect('status' in out).toBe(true);
          return;
        }
        let used = higherCpu + want;
        const victims: ApiObject[] = [];
        for (const p of lower) {
          if (used + cpuOf(p) <= cap) used += cpuOf(p);
          else victims.push(p);
        }
        expect('victims' in out && names(out.victims.pods)).toEqual(names(victims));
        if ('victims' in out) {
          // what is left fits, and never a pod of the preemptor's priority or above
          expect(out.victims.pods.every((p) => podPriority(p) < prio)).toBe(true);
          const left = pods.filter((p) => !out.victims.pods.includes(p));
          expect(filterNode(preemptor, nodeState(n, left)).reasons).toEqual([]);
        }
      }),
    );
  });
});

describe('budgets', () => {
  it('spends each budget in the order given; disrupted pods and other namespaces spend nothing; empty selectors match nothing', () => {
    const a = pod({ name: 'a', labels: { app: 'x' } });
    const b = pod({ name: 'b', labels: { app: 'x' } });
    const c = pod({ name: 'c', labels: { app: 'x' } });
    expect(splitByBudgets([a, b, c], [pdb({ app: 'x' }, 1)])).toEqual({ violating: [b, c], nonViolating: [a] });
    expect(splitByBudgets([a, b, c], [pdb({ app: 'x' }, 1, ['a'])])).toEqual({ violating: [c], nonViolating: [a, b] });
    const other = { ...a, metadata: { ...a.metadata, namespace: 'other' } } as ApiObject;
    expect(splitByBudgets([other], [pdb({ app: 'x' }, 0)]).violating).toEqual([]);
    expect(splitByBudgets([a], [pdb({}, 0)]).violating).toEqual([]);
    expect(splitByBudgets([pod({ name: 'nolabels' })], [pdb({ app: 'x' }, 0)]).violating).toEqual([]);
  });
});

describe('the candidate node', () => {
  const c = (node: string, victims: { priority: number; start?: string }[], pdbViolations = 0): Candidate => ({
    node,
    victims: { pods: victims.map((v) => pod({ node, priority: v.priority, ...(v.start ? { start: v.start } : {}) })).sort(byImportance), pdbViolations },
  });

  it("follows kube's criteria in order", () => {
    // 1. fewest budget violations, even with higher-priority victims
    expect(pickCandidate([c('a', [{ priority: 1 }], 1), c('b', [{ priority: 9 }])])?.node).toBe('b');
    // 2. the lowest highest-priority victim
    expect(pickCandidate([c('a', [{ priority: 5 }]), c('b', [{ priority: 1 }, { priority: 1 }, { priority: 1 }])])?.node).toBe('b');
    // 3. the smallest sum of priorities (negative priorities do not favour more victims)
    expect(pickCandidate([c('a', [{ priority: 3 }, { priority: 2 }]), c('b', [{ priority: 3 }, { priority: 1 }])])?.node).toBe('b');
    expect(pickCandidate([c('a', [{ priority: -5 }, { priority: -5 }]), c('b', [{ priority: -5 }])])?.node).toBe('b');
    // 4. the fewest victims
    expect(pickCandidate([c('a', [{ priority: 0 }, { priority: 0 }]), c('b', [{ priority: 0 }])])?.node).toBe('b');
    // 5. the latest start among the highest-priority victims
    expect(pickCandidate([c('a', [{ priority: 1, start: '2026-01-01T00:00:00Z' }]), c('b', [{ priority: 1, start: '2026-01-02T00:00:00Z' }])])?.node).toBe('b');
    // 6. the first
    expect(pickCandidate([c('a', [{ priority: 1 }]), c('b', [{ priority: 1 }])])?.node).toBe('a');
    expect(pickCandidate([])).toBeUndefined();
  });

  it('the pick is never beaten on the first criterion that tells the candidates apart', () => {
    const cand = fc.record({ pdb: fc.integer({ min: 0, max: 2 }), prios: fc.array(fc.integer({ min: -3, max: 3 }), { minLength: 1, maxLength: 4 }) });
    fc.assert(
      fc.property(fc.array(cand, { minLength: 1, maxLength: 6 }), (specs) => {
        const cands = specs.map((s, i) => c(`n${i}`, s.prios.map((priority) => ({ priority })), s.pdb));
        const picked = pickCandidate(cands)!;
        const key = (x: Candidate): number[] => [x.victims.pdbViolations, podPriority(x.victims.pods[0]!), x.victims.pods.reduce((s, p) => s + podPriority(p) + 2 ** 31, 0), x.victims.pods.length];
        for (const other of cands) {
          const [a, b] = [key(picked), key(other)];
          const i = a.findIndex((v, j) => v !== b[j]);
          if (i >= 0) expect(a[i]!).toBeLessThan(b[i]!);
        }
      }),
    );
  });

  it('dry-runs at least 100 nodes or 10%', () => {
    expect(numCandidates(5)).toBe(5);
    expect(numCandidates(500)).toBe(100);
    expect(numCandidates(5000)).toBe(500);
  });
});

describe('the search over nodes', () => {
  it('skips nodes preemption cannot help, touches only the chosen node, and writes kube’s message without candidates', () => {
    const a = node('a', '1');
    const b = node('b', '1', {}, { unschedulable: true });
    const onA = [pod({ node: 'a', priority: 5, cpu: '1' })];
    const onB = [pod({ node: 'b', priority: 0, cpu: '1' })];
    const preemptor = pod({ priority: 10, cpu: '500m' });
    const nodes = [{ state: nodeState(a, onA), pods: onA }, { state: nodeState(b, onB), pods: onB }];
    const statuses = new Map(nodes.map((n) => [n.state.node.metadata!.name!, filterNode(preemptor, n.state)]));
    const found = findPreemption(preemptor, nodes, statuses, [], () => 0);
    expect(found).toEqual({ candidate: { node: 'a', victims: { pods: onA, pdbViolations: 0 } } });
    // nothing lower than the preemptor anywhere
    const low = pod({ priority: 0, cpu: '500m' });
    const lowStatuses = new Map(nodes.map((n) => [n.state.node.metadata!.name!, filterNode(low, n.state)]));
    expect(findPreemption(low, nodes, lowStatuses, [], () => 0)).toEqual({
      message: '0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling.',
    });
  });
});

describe('eligibility', () => {
  it('Never does not preempt; a terminating victim on the nominated node makes it wait', () => {
    expect(eligibleToPreempt(pod({ priority: 9, never: true }), undefined)).toBe('not eligible due to preemptionPolicy=Never.');
    expect(eligibleToPreempt(pod({ priority: 9 }), undefined)).toBeUndefined();
    const terminating = pod({ node: 'a', priority: 1, deleting: true, condition: 'PreemptionByScheduler' });
    expect(eligibleToPreempt(pod({ priority: 9 }), { status: { reasons: ['Insufficient cpu'], resolvable: true }, pods: [terminating] })).toBe('not eligible due to a terminating pod on the nominated node.');
    // deleted for another reason, or the nominated node ruled out for good: preempt again
    expect(eligibleToPreempt(pod({ priority: 9 }), { pods: [pod({ node: 'a', priority: 1, deleting: true, condition: 'EvictionByEvictionAPI' })] })).toBeUndefined();
    expect(eligibleToPreempt(pod({ priority: 9 }), { status: { reasons: ['node(s) were unschedulable'], resolvable: false }, pods: [terminating] })).toBeUndefined();
  });
});
