// Property test of re-proposing (docs/raft.md "Re-proposing lost proposals"):
// fast-check generates schedules of proposals from every member, random
// partitions, leaders cut off until the others elect a new one, message loss
// and delay, forwards held up for many election timeouts, crashes and
// restarts, and compaction, on a 3- or 5-node
// simulated cluster (sim.ts, which checks Raft's safety properties as it
// runs) whose host proposes again what ProposalTerms says a leader change
// lost (proposer-host.ts). Reference model: the set of proposed ids.
//   - at most once: no id is ever in the applied log twice;
//   - applied: after the network heals, every id whose proposer stayed
//     connected is applied — i.e. none of its propose messages was dropped by
//     the network, its proposer did not crash while it was pending, and no
//     installed snapshot made its outcome unknown (those may or may not be).
// The network does not duplicate messages (the gRPC peer streams do not
// resend; a duplicated forward would append a proposal twice in one term).

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ProposerHost } from './proposer-host.js';
import { networkAction } from './schedule.js';
import { Sim } from './sim.js';

type Action =
  | { k: 'steps'; n: number }
  | { k: 'propose'; node: number; count: number }
  | { k: 'depose'; after: number }
  | { k: 'partition'; mask: number }
  | { k: 'heal' }
  | { k: 'net'; drop: number; delay: number }
  | { k: 'slowForwards'; delay: number }
  | { k: 'crash'; node: number }
  | { k: 'restart'; node: number }
  | { k: 'compact'; node: number };

function actionArb(size: number): fc.Arbitrary<Action> {
  const node = fc.integer({ min: 0, max: size - 1 });
  return fc.oneof(
    { weight: 8, arbitrary: fc.record({ k: fc.constant('steps' as const), n: fc.integer({ min: 1, max: 25 }) }) },
    { weight: 10, arbitrary: fc.record({ k: fc.constant('propose' as const), node, count: fc.integer({ min: 1, max: 4 }) }) },
    { weight: 4, arbitrary: fc.record({ k: fc.constant('depose' as const), after: fc.integer({ min: 0, max: 3 }) }) },
    { weight: 2, arbitrary: fc.record({ k: fc.constant('partition' as const), mask: fc.integer({ min: 1, max: (1 << size) - 2 }) }) },
    { weight: 3, arbitrary: fc.record({ k: fc.constant('heal' as const) }) },
    { weight: 1, arbitrary: fc.record({ k: fc.constant('net' as const), drop: fc.constantFrom(0, 0, 0.05, 0.2), delay: fc.integer({ min: 0, max: 3 }) }) },
    { weight: 2, arbitrary: fc.record({ k: fc.constant('slowForwards' as const), delay: fc.constantFrom(0, 20, 40, 80) }) },
    { weight: 1, arbitrary: fc.record({ k: fc.constant('crash' as const), node }) },
    { weight: 2, arbitrary: fc.record({ k: fc.constant('restart' as const), node }) },
    { weight: 1, arbitrary: fc.record({ k: fc.constant('compact' as const), node }) },
  );
}

function run(size: number, seed: number, actions: Action[], preVote: boolean, checkQuorum: boolean): void {
  const ids = Array.from({ length: size }, (_, i) => `n${i}`);
  const sim = new Sim({ ids, seed, electionTick: 10, heartbeatTick: 2, maxSizePerMsg: 256, preVote, checkQuorum, maxInflightMsgs: 8 });
  const host = new ProposerHost(sim);
  const step = (): void => {
    sim.step();
    host.flush();
  };
  for (const a of actions) {
    switch (a.k) {
      case 'steps':
        for (let i = 0; i < a.n; i++) step();
        break;
      case 'propose': {
        const id = ids[a.node]!;
        if (!sim.node(id).up) break;
        for (let i = 0; i < a.count; i++) host.propose(id);
        host.flush();
        break;
      }
      case 'depose': {
        // the leader is cut off (with what it took in) until the others elect a new one
        const old = sim.leader();
        if (!old) break;
        const term = sim.node(old).raw.raft.term;
        const rest = ids.filter((id) => id !== old);
        sim.net.partition([[old], rest]);
        for (let i = 0; i < a.after; i++) step();
        for (let i = 0; i < 400 && !rest.some((id) => sim.node(id).up && sim.node(id).raw.raft.role === 'leader' && sim.node(id).raw.raft.term > term); i++) step();
        break;
      }
      case 'crash': {
        const id = ids[a.node]!;
        if (!sim.node(id).up) break;
        sim.crash(id);
        host.crashed(id);
        break;
      }
      case 'restart':
        sim.restart(ids[a.node]!);
        break;
      case 'compact':
        sim.compact(ids[a.node]!);
        break;
      case 'slowForwards':
        // forwards arrive long after a leader change (to a leader re-elected in a later term, say)
        sim.net.extraDelay = a.delay === 0 ? undefined : (m) => (m.type === 'propose' ? Math.floor(sim.rand() * a.delay) : 0);
        break;
      default:
        // partition, heal, net
        networkAction(sim, ids, a);
    }
  }
  // heal, restart everyone, and let every proposal still pending settle
  sim.healAll();
  sim.net.maxExtraDelay = 0;
  sim.net.extraDelay = undefined;
  // (one whose forward the network dropped, or that a snapshot may hold, may wait for ever: in the store it times out, 504)
  const leaderOfAll = (): string | undefined => {
    const l = sim.stableLeader();
    if (l === undefined) return undefined;
    const term = sim.node(l).raw.raft.term;
    return ids.every((id) => sim.node(id).raw.raft.lead === l && sim.node(id).raw.raft.term === term) ? l : undefined;
  };
  const settled = (): boolean => ids.every((id) => [...host.pending(id)].every((x) => host.cutOff.has(x) || host.inSnapshot.has(x))) && leaderOfAll() !== undefined && sim.allApplied();
  for (let i = 0; i < 3000 && !settled(); i++) step();
  expect(settled()).toBe(true);
  sim.checkStateMachines();

  const leader = leaderOfAll()!;
  const counts = host.appliedCounts(leader);
  for (const [id, n] of counts) {
    expect(host.proposed.has(id)).toBe(true);
    if (n !== 1) throw new Error(`${id} applied ${n} times (attempts ${host.attempts.get(id)})`);
  }
  for (const id of host.proposed.keys()) {
    if (host.cutOff.has(id) || host.forgotten.has(id) || host.gaveUp.has(id) || host.inSnapshot.has(id)) continue;
    if (!counts.has(id)) throw new Error(`${id} (proposer stayed connected) was never applied (attempts ${host.attempts.get(id)})`);
  }
}

// CI budget: a few seconds. RAFT_PROPERTY_RUNS=2000 for a deeper search.
const EXTRA = Number(process.env.RAFT_PROPERTY_RUNS ?? 0);
/** a turn of the event loop between runs: a deep search would keep the worker from answering vitest's RPC */
const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('re-proposing under generated leader changes', () => {
  for (const size of [3, 5]) {
    it(`${size}-node clusters: every proposal applied at most once, every one of a connected proposer applied`, async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1, max: 2 ** 31 - 1 }),
          fc.array(actionArb(size), { minLength: 10, maxLength: 60, size: 'max' }),
          fc.boolean(),
          fc.boolean(),
          async (seed, actions, preVote, checkQuorum) => {
            await yieldToLoop();
            run(size, seed, actions, preVote, checkQuorum);
          },
        ),
        { numRuns: EXTRA || (size === 3 ? 150 : 60) },
      );
    }, 60_000 + EXTRA * 500);
  }
});
