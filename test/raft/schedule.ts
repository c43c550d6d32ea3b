// Fault schedules for the Raft property test (raft-safety.property.test.ts):
// the action language, its fast-check generator and the interpreter that
// runs a schedule on the simulation and then checks liveness.

import fc from 'fast-check';
import { Sim } from './sim.js';

export type Action =
  | { k: 'steps'; n: number }
  | { k: 'tickOne'; node: number; n: number }
  | { k: 'propose'; node: number; count: number }
  | { k: 'crash'; node: number; midReady: boolean }
  | { k: 'restart'; node: number }
  | { k: 'partition'; mask: number }
  | { k: 'heal' }
  | { k: 'net'; drop: number; dup: number; delay: number }
  | { k: 'compact'; node: number }
  | { k: 'transfer'; node: number; to: number }
  | { k: 'read'; node: number }
  | { k: 'conf'; node: number; target: number; add: boolean };

export function actionArb(size: number): fc.Arbitrary<Action> {
  const node = fc.integer({ min: 0, max: size - 1 });
  return fc.oneof(
    { weight: 10, arbitrary: fc.record({ k: fc.constant('steps' as const), n: fc.integer({ min: 1, max: 30 }) }) },
    { weight: 2, arbitrary: fc.record({ k: fc.constant('tickOne' as const), node, n: fc.integer({ min: 1, max: 12 }) }) },
    { weight: 8, arbitrary: fc.record({ k: fc.constant('propose' as const), node, count: fc.integer({ min: 1, max: 6 }) }) },
    { weight: 2, arbitrary: fc.record({ k: fc.constant('crash' as const), node, midReady: fc.boolean() }) },
    { weight: 3, arbitrary: fc.record({ k: fc.constant('restart' as const), node }) },
    { weight: 2, arbitrary: fc.record({ k: fc.constant('partition' as const), mask: fc.integer({ min: 1, max: (1 << size) - 2 }) }) },
    { weight: 2, arbitrary: fc.record({ k: fc.constant('heal' as const) }) },
    {
      weight: 2,
      arbitrary: fc.record({
        k: fc.constant('net' as const),
        drop: fc.constantFrom(0, 0.05, 0.2, 0.4),
        dup: fc.constantFrom(0, 0.1, 0.3),
        delay: fc.integer({ min: 0, max: 4 }),
      }),
    },
    { weight: 2, arbitrary: fc.record({ k: fc.constant('compact' as const), node }) },
    { weight: 1, arbitrary: fc.record({ k: fc.constant('transfer' as const), node, to: node }) },
    { weight: 1, arbitrary: fc.record({ k: fc.constant('read' as const), node }) },
    { weight: 1, arbitrary: fc.record({ k: fc.constant('conf' as const), node, target: node, add: fc.boolean() }) },
  );
}

/** protocol options varied by the generator */
export interface Variant {
  preVote: boolean;
  checkQuorum: boolean;
  maxInflightMsgs: number;
  /** whether the simulated transport reports snapshot delivery (else the core's timeout recovers) */
  reportSnapshots?: boolean;
  /** probability that a Ready's write stays in progress while the node keeps working (Sim asyncPersist) */
  asyncPersist?: number;
}

export const variantArb: fc.Arbitrary<Variant> = fc.record({
  preVote: fc.boolean(),
  checkQuorum: fc.boolean(),
  maxInflightMsgs: fc.constantFrom(1, 4, 64),
  reportSnapshots: fc.boolean(),
  asyncPersist: fc.constantFrom(0, 0.3, 0.8),
});

/** the network actions of the property tests (this one and raft-reproposal.property.test.ts) */
export function networkAction(sim: Sim, ids: string[], a: { k: 'partition'; mask: number } | { k: 'heal' } | { k: 'net'; drop: number; dup?: number; delay: number }): void {
  switch (a.k) {
    case 'partition': {
      const left = ids.filter((_, i) => a.mask & (1 << i));
      const right = ids.filter((_, i) => !(a.mask & (1 << i)));
      sim.net.partition([left, right]);
      return;
    }
    case 'heal':
      sim.net.heal();
      return;
    case 'net':
      sim.net.dropRate = a.drop;
      sim.net.dupRate = a.dup ?? 0;
      sim.net.maxExtraDelay = a.delay;
      return;
  }
}

export function runSchedule(size: number, seed: number, actions: Action[], variant: Variant = { preVote: true, checkQuorum: true, maxInflightMsgs: 4 }): void {
  const ids = Array.from({ length: size }, (_, i) => `n${i}`);
  const { reportSnapshots = true, ...options } = variant;
  const sim = new Sim({ ids, seed, electionTick: 10, heartbeatTick: 2, maxSizePerMsg: 64, ...options });
  sim.net.reportSnapshots = reportSnapshots;
  let reads = 0;
  const readFloor = new Map<string, number>();
  const checkReads = (): void => {
    for (const n of sim.nodes.values()) {
      for (const [ctx, index] of n.reads) {
        const floor = readFloor.get(ctx);
        if (floor !== undefined && index < floor) throw new Error(`ReadIndex ${ctx} on ${n.id} returned ${index} < committed ${floor}`);
      }
    }
  };
  const added: string[] = [];
  const removed = new Set<string>();
  for (const a of actions) {
    switch (a.k) {
      case 'steps':
        sim.run(a.n);
        break;
      case 'tickOne':
        // clock skew: one node's clock runs ahead
        for (let i = 0; i < a.n; i++) {
          sim.deliverDue();
          sim.tick([ids[a.node]!]);
        }
        break;
      case 'propose':
        for (let i = 0; i < a.count; i++) sim.propose(ids[a.node]!);
        break;
      case 'crash': {
        const n = sim.node(ids[a.node]!);
        // never take down more than a minority at once
        const down = ids.filter((id) => !sim.node(id).up).length;
        if (!n.up || (down + 1) * 2 >= size + 1) break;
        if (a.midReady) n.crashAfterNextPersist = true;
        else sim.crash(n.id);
        break;
      }
      case 'restart':
        sim.restart(ids[a.node]!);
        break;
      case 'partition':
      case 'heal':
      case 'net':
        networkAction(sim, ids, a);
        break;
      case 'compact':
        sim.compact(ids[a.node]!);
        break;
      case 'transfer': {
        const n = sim.node(ids[a.node]!);
        if (n.up) n.raw.transferLeadership(ids[a.to]!);
        sim.settle();
        break;
      }
      case 'read': {
        const n = sim.node(ids[a.node]!);
        if (n.up) {
          // linearizability of ReadIndex: the answer must cover every entry
          // already known committed when the read was issued
          const ctx = `r${reads++}`;
          readFloor.set(ctx, Math.max(0, ...sim.committed.keys()));
          n.raw.readIndex(ctx);
        }
        sim.settle();
        break;
      }
      case 'conf': {
        // membership changes: add a brand-new node, or remove one of the
        // original nodes (at most size-2 of them)
        const proposer = ids[a.node]!;
        if (!sim.node(proposer).up) break;
        if (a.add) {
          if (added.length >= 2) break;
          const id = `x${added.length}`;
          added.push(id);
          sim.addNode(id);
          sim.proposeConfChange(proposer, { type: 'addNode', nodeId: id });
        } else {
          const target = ids[a.target]!;
          if (removed.has(target) || removed.size >= size - 2) break;
          removed.add(target);
          sim.proposeConfChange(proposer, { type: 'removeNode', nodeId: target });
        }
        break;
      }
    }
    sim.checkInvariants();
    checkReads();
  }

  // liveness: heal everything and let the cluster converge
  sim.healAll();
  sim.net.maxExtraDelay = 1;
  // the members: the configuration of the stable leader
  const members = (): string[] => {
    const l = sim.stableLeader();
    return l === undefined ? [] : sim.node(l).raw.status().voters;
  };
  // an operator shuts down nodes once they are removed (a removed node that
  // missed its removal would otherwise keep campaigning, thesis §4.2.3)
  const decommission = (): void => {
    const m = members();
    if (m.length === 0) return;
    for (const id of removed) if (!m.includes(id) && !sim.node(id).stopped) sim.stop(id);
  };
  const converged = sim.runUntil(() => {
    decommission();
    const m = members();
    return m.length > 0 && sim.allApplied(m);
  }, 1500);
  if (!converged) {
    throw new Error(`no convergence: ${describeCluster(sim)}`);
  }
  sim.checkStateMachines(members());
  // and the cluster still makes progress
  // A proposal may be dropped (a transfer is in progress) or lost (its
  // leader is deposed before committing it): a client retries.
  let done = false;
  for (let attempt = 0; attempt < 10 && !done; attempt++) {
    const proposed = sim.runUntil(() => {
      decommission();
      const l = sim.stableLeader();
      return l !== undefined && sim.propose(l, `final${attempt}`);
    }, 100);
    if (!proposed) continue;
    done = sim.runUntil(() => {
      decommission();
      const m = members();
      return m.length > 0 && sim.allApplied(m) && m.every((id) => sim.appliedData(id).some((d) => d.startsWith('final')));
    }, 100);
  }
  if (!done) throw new Error(`a proposal after convergence was not applied everywhere: ${describeCluster(sim)}`);
  checkReads();
  sim.checkStateMachines(members());
}

function describeCluster(sim: Sim): string {
  const st = sim.upNodes().map((n) => n.raw.status());
  return JSON.stringify(
    st.map((s) => ({ id: s.id, term: s.term, role: s.role, lead: s.leader, commit: s.commit, applied: s.applied, first: s.firstIndex, last: s.lastIndex, progress: s.progress })),
  );
}
