// ReadIndex linearizable reads (thesis §6.4): the leader records its commit
// index, confirms it is still leader with a heartbeat round to a quorum, and
// only then returns the index; followers forward the request to the leader.

import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../src/raft/prng.js';
import { RawNode } from '../../src/raft/raw-node.js';
import type { Ready } from '../../src/raft/types.js';
import { Sim } from './sim.js';

const ABC = ['a', 'b', 'c'];

function electedSim(seed: number): { sim: Sim; leader: string } {
  const sim = new Sim({ ids: ABC, seed, checkQuorum: true });
  if (!sim.runUntil(() => sim.stableLeader() !== undefined, 300)) throw new Error('no leader');
  sim.run(5);
  return { sim, leader: sim.stableLeader()! };
}

describe('raft ReadIndex', () => {
  it('returns an index covering every write acknowledged before the read, on the leader and via followers', () => {
    const { sim, leader } = electedSim(61);
    const follower = ABC.find((id) => id !== leader)!;
    for (let round = 0; round < 5; round++) {
      sim.propose(leader, `w${round}`);
      // the write is acknowledged once the leader applied it
      expect(sim.runUntil(() => sim.appliedData(leader).includes(`w${round}`), 50)).toBe(true);
      const acked = sim.node(leader).appliedIndex;
      for (const id of [leader, follower]) {
        const ctx = `${id}-${round}`;
        sim.node(id).raw.readIndex(ctx);
        expect(sim.runUntil(() => sim.node(id).reads.has(ctx), 50)).toBe(true);
        expect(sim.node(id).reads.get(ctx)!).toBeGreaterThanOrEqual(acked);
      }
    }
    expect(sim.net.sentByType.get('readIndex')).toBeGreaterThan(0);
    expect(sim.net.sentByType.get('readIndexResponse')).toBeGreaterThan(0);
  });

  it('needs a quorum of heartbeat acknowledgements before answering', () => {
    const { sim, leader } = electedSim(62);
    const others = ABC.filter((id) => id !== leader);
    sim.net.partition([[leader], others]);
    sim.node(leader).raw.readIndex('stale');
    sim.settle();
    sim.stabilize();
    // the partitioned leader cannot confirm it is still leader: no answer
    expect(sim.node(leader).reads.has('stale')).toBe(false);
    // meanwhile the majority elects a new leader and commits a write the old one never sees
    expect(sim.runUntil(() => {
      const l = sim.stableLeader();
      return l !== undefined && l !== leader;
    }, 300)).toBe(true);
    const fresh = sim.stableLeader()!;
    sim.propose(fresh, 'new');
    expect(sim.runUntil(() => sim.appliedData(fresh).includes('new'), 50)).toBe(true);
    expect(sim.node(leader).reads.has('stale')).toBe(false);
  });

  it('a new leader answers only after committing an entry of its own term', () => {
    // a leader of term 3 restarted with commit behind its log
    const rn = RawNode.bootstrap({ id: 'a', electionTick: 10, heartbeatTick: 1, random: mulberry32(1) }, ['a', 'b', 'c']);
    const drain = (): Ready[] => {
      const out: Ready[] = [];
      for (let rd = rn.ready(); rd; rd = rn.ready()) {
        out.push(rd);
        rn.advance(rd);
      }
      return out;
    };
    drain();
    rn.campaign();
    rn.step({ type: 'voteResponse', from: 'b', to: 'a', term: 2, reject: false });
    expect(rn.status().role).toBe('leader');
    drain();
    rn.readIndex('r1');
    // no heartbeat round yet: the empty entry of term 2 is not committed
    let out = drain();
    expect(out.flatMap((rd) => rd.messages).filter((m) => m.type === 'heartbeat' && m.context === 'r1')).toEqual([]);
    rn.step({ type: 'appendResponse', from: 'b', to: 'a', term: 2, index: 4, reject: false, rejectHint: 0, logTerm: 0 });
    expect(rn.status().commit).toBe(4);
    out = drain();
    const hbs = out.flatMap((rd) => rd.messages).filter((m) => m.type === 'heartbeat' && m.context === 'r1');
    expect(hbs.map((m) => m.to).sort()).toEqual(['b', 'c']);
    expect(out.flatMap((rd) => rd.readStates)).toEqual([]);
    rn.step({ type: 'heartbeatResponse', from: 'c', to: 'a', term: 2, context: 'r1' });
    out = drain();
    expect(out.flatMap((rd) => rd.readStates)).toEqual([{ index: 4, context: 'r1' }]);
  });

  it('a single-voter cluster answers at once', () => {
    const rn = RawNode.bootstrap({ id: 'a', electionTick: 10, heartbeatTick: 1, random: mulberry32(1) }, ['a']);
    for (let rd = rn.ready(); rd; rd = rn.ready()) rn.advance(rd);
    rn.campaign();
    // the empty entry of its term commits once persisted (its own durable copy is the quorum)
    const own = rn.ready()!;
    expect(own.entries.map((e) => e.index)).toEqual([2]);
    rn.advance(own);
    rn.readIndex('x');
    const rd = rn.ready()!;
    expect(rd.readStates).toEqual([{ index: 2, context: 'x' }]);
    rn.advance(rd);
  });

  it('a read on a follower without a leader gets no answer (the caller retries)', () => {
    const sim = new Sim({ ids: ABC, seed: 63 });
    sim.node('a').raw.readIndex('early');
    sim.stabilize();
    expect(sim.node('a').reads.has('early')).toBe(false);
  });
});
