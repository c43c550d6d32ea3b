// Leader election: randomized timeouts, vote rules, pre-vote, check-quorum
// and the leader lease (Raft §5.2, §5.4.1; thesis §3.4, §6.2, §9.6).

import { describe, expect, it } from 'vitest';
import { RawNode } from '../../src/raft/raw-node.js';
import { mulberry32 } from '../../src/raft/prng.js';
import type { Message, RaftConfig, VoteMessage } from '../../src/raft/types.js';
import { Sim } from './sim.js';

function cfg(id: string, seed = 1, extra: Partial<RaftConfig> = {}): RaftConfig {
  return { id, electionTick: 10, heartbeatTick: 1, random: mulberry32(seed), preVote: false, checkQuorum: false, ...extra };
}

/** drain a node's Ready (persist nothing: these unit tests only look at messages) */
function drain(rn: RawNode): Message[] {
  const out: Message[] = [];
  for (let rd = rn.ready(); rd; rd = rn.ready()) {
    out.push(...rd.messages);
    rn.advance(rd);
  }
  return out;
}

describe('raft election', () => {
  for (const size of [3, 5]) {
    it(`elects exactly one leader that every node follows (${size} nodes)`, () => {
      const ids = Array.from({ length: size }, (_, i) => `n${i}`);
      const sim = new Sim({ ids, seed: size });
      expect(sim.runUntil(() => sim.stableLeader() !== undefined, 200)).toBe(true);
      sim.run(30);
      const leader = sim.stableLeader()!;
      const term = sim.node(leader).raw.raft.term;
      const leaders = ids.filter((id) => sim.node(id).raw.raft.role === 'leader');
      expect(leaders).toEqual([leader]);
      for (const id of ids) {
        expect(sim.node(id).raw.raft.lead).toBe(leader);
        expect(sim.node(id).raw.raft.term).toBe(term);
      }
      // the leader's empty entry of its term is committed everywhere
      for (const id of ids) expect(sim.node(id).raw.status().commit).toBe(size + 1);
    });
  }

  it('a single-voter cluster elects itself at once', () => {
    const rn = RawNode.bootstrap(cfg('a'), ['a']);
    drain(rn);
    rn.campaign();
    drain(rn);
    expect(rn.status().role).toBe('leader');
    expect(rn.status().commit).toBe(2);
  });

  it('randomizes the election timeout within [electionTick, 2*electionTick)', () => {
    const seen = new Set<number>();
    for (let seed = 1; seed <= 40; seed++) {
      const rn = RawNode.bootstrap(cfg('a', seed), ['a', 'b', 'c']);
      drain(rn);
      let ticks = 0;
      while (rn.status().role === 'follower') {
        rn.tick();
        ticks++;
        if (ticks > 100) throw new Error('never campaigned');
      }
      expect(ticks).toBeGreaterThanOrEqual(10);
      expect(ticks).toBeLessThan(20);
      seen.add(ticks);
    }
    // the timeouts actually vary
    expect(seen.size).toBeGreaterThan(3);
  });

  it('grants one vote per term and only to candidates with an up-to-date log', () => {
    const rn = RawNode.bootstrap(cfg('a'), ['a', 'b', 'c']);
    drain(rn);
    const vote = (from: string, term: number, index: number, logTerm: number): VoteMessage => ({
      type: 'vote', from, to: 'a', term, index, logTerm, transfer: false,
    });
    // stale log (last index 2 < our 3, same last term): rejected
    rn.step(vote('b', 2, 2, 1));
    let out = drain(rn);
    expect(out).toMatchObject([{ type: 'voteResponse', to: 'b', reject: true, term: 2 }]);
    // up-to-date: granted, and the vote is persisted before the response is sent
    rn.step(vote('c', 2, 3, 1));
    const rd = rn.ready()!;
    expect(rd.hardState).toMatchObject({ term: 2, vote: 'c' });
    expect(rd.messages).toMatchObject([{ type: 'voteResponse', to: 'c', reject: false }]);
    rn.advance(rd);
    // another candidate of the same term: rejected even with a better log
    rn.step(vote('b', 2, 9, 2));
    out = drain(rn);
    expect(out).toMatchObject([{ type: 'voteResponse', to: 'b', reject: true }]);
    // the same candidate asking again (a retransmission): granted again
    rn.step(vote('c', 2, 3, 1));
    out = drain(rn);
    expect(out).toMatchObject([{ type: 'voteResponse', to: 'c', reject: false }]);
  });

  it('pre-vote keeps a partitioned node from disrupting the cluster when it rejoins', () => {
    const sim = new Sim({ ids: ['a', 'b', 'c'], seed: 3, preVote: true, checkQuorum: true });
    expect(sim.runUntil(() => sim.stableLeader() !== undefined, 200)).toBe(true);
    const leader = sim.stableLeader()!;
    const term = sim.node(leader).raw.raft.term;
    const loner = ['a', 'b', 'c'].find((id) => id !== leader)!;
    sim.net.partition([[loner], ['a', 'b', 'c'].filter((id) => id !== loner)]);
    sim.run(100);
    // the loner campaigned (pre-vote) many times but never raised its term
    expect(sim.node(loner).raw.raft.term).toBe(term);
    expect(sim.net.sentByType.get('preVote') ?? 0).toBeGreaterThan(0);
    sim.net.heal();
    sim.run(50);
    expect(sim.stableLeader()).toBe(leader);
    expect(sim.node(leader).raw.raft.term).toBe(term);
  });

  it('without pre-vote the same partition forces a new term on rejoin', () => {
    const sim = new Sim({ ids: ['a', 'b', 'c'], seed: 3, preVote: false, checkQuorum: false });
    expect(sim.runUntil(() => sim.stableLeader() !== undefined, 200)).toBe(true);
    const leader = sim.stableLeader()!;
    const term = sim.node(leader).raw.raft.term;
    const loner = ['a', 'b', 'c'].find((id) => id !== leader)!;
    sim.net.partition([[loner], ['a', 'b', 'c'].filter((id) => id !== loner)]);
    sim.run(100);
    expect(sim.node(loner).raw.raft.term).toBeGreaterThan(term + 2);
    sim.net.heal();
    expect(sim.runUntil(() => sim.stableLeader() !== undefined && sim.node(sim.stableLeader()!).raw.raft.term > term, 200)).toBe(true);
  });

  it('check-quorum: an isolated leader steps down and the majority elects a new one', () => {
    const sim = new Sim({ ids: ['a', 'b', 'c', 'd', 'e'], seed: 11, checkQuorum: true });
    expect(sim.runUntil(() => sim.stableLeader() !== undefined, 200)).toBe(true);
    const old = sim.stableLeader()!;
    const rest = ['a', 'b', 'c', 'd', 'e'].filter((id) => id !== old);
    sim.net.partition([[old], rest]);
    // within two election timeouts the old leader has noticed it lost its quorum
    sim.run(20);
    expect(sim.node(old).raw.raft.role).not.toBe('leader');
    expect(sim.runUntil(() => sim.stableLeader() !== undefined && sim.stableLeader() !== old, 200)).toBe(true);
  });

  it('without check-quorum an isolated leader keeps believing it leads', () => {
    const sim = new Sim({ ids: ['a', 'b', 'c'], seed: 11, checkQuorum: false, preVote: false });
    expect(sim.runUntil(() => sim.stableLeader() !== undefined, 200)).toBe(true);
    const old = sim.stableLeader()!;
    sim.net.partition([[old], ['a', 'b', 'c'].filter((id) => id !== old)]);
    sim.run(60);
    expect(sim.node(old).raw.raft.role).toBe('leader');
  });

  it('leader lease: a follower that hears from its leader ignores vote requests of a higher term', () => {
    const sim = new Sim({ ids: ['a', 'b', 'c'], seed: 5, checkQuorum: true });
    expect(sim.runUntil(() => sim.stableLeader() !== undefined, 200)).toBe(true);
    const leader = sim.stableLeader()!;
    const follower = ['a', 'b', 'c'].find((id) => id !== leader)!;
    const other = ['a', 'b', 'c'].find((id) => id !== leader && id !== follower)!;
    const f = sim.node(follower).raw;
    const term = f.raft.term;
    f.step({ type: 'vote', from: other, to: follower, term: term + 5, index: 100, logTerm: term + 4, transfer: false });
    const rd = f.ready();
    expect(f.raft.term).toBe(term);
    expect(rd?.messages.filter((m) => m.type === 'voteResponse') ?? []).toEqual([]);
    if (rd) f.advance(rd);
    // a leadership transfer overrides the lease
    f.step({ type: 'vote', from: other, to: follower, term: term + 5, index: 100, logTerm: term + 4, transfer: true });
    expect(f.raft.term).toBe(term + 5);
    const rd2 = f.ready()!;
    expect(rd2.messages).toMatchObject([{ type: 'voteResponse', to: other, reject: false }]);
    f.advance(rd2);
  });

  it('a node that crashes after persisting its vote remembers it', () => {
    const sim = new Sim({ ids: ['a', 'b', 'c'], seed: 9 });
    expect(sim.runUntil(() => sim.stableLeader() !== undefined, 200)).toBe(true);
    const leader = sim.stableLeader()!;
    const voter = ['a', 'b', 'c'].find((id) => id !== leader)!;
    const before = sim.node(voter).raw.raft;
    const hs = { term: before.term, vote: before.vote };
    sim.crash(voter);
    sim.restart(voter);
    const after = sim.node(voter).raw.raft;
    expect({ term: after.term, vote: after.vote }).toEqual(hs);
  });
});
