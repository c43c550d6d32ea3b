// Leadership transfer (thesis §3.10): the leader catches the target up,
// sends TimeoutNow, and the target wins an immediate election.

import { describe, expect, it } from 'vitest';
import { Sim } from './sim.js';

const ABC = ['a', 'b', 'c'];

function electedSim(seed: number): { sim: Sim; leader: string } {
  const sim = new Sim({ ids: ABC, seed, checkQuorum: true, preVote: true });
  if (!sim.runUntil(() => sim.stableLeader() !== undefined, 300)) throw new Error('no leader');
  sim.run(5);
  return { sim, leader: sim.stableLeader()! };
}

describe('raft leadership transfer', () => {
  it('moves leadership to an up-to-date target at once, without waiting for an election timeout', () => {
    const { sim, leader } = electedSim(51);
    const target = ABC.find((id) => id !== leader)!;
    const term = sim.node(leader).raw.status().term;
    sim.net.log = [];
    sim.node(leader).raw.transferLeadership(target);
    // no ticks: only message exchanges
    sim.stabilize();
    expect(sim.node(target).raw.status().role).toBe('leader');
    expect(sim.node(target).raw.status().term).toBe(term + 1);
    expect(sim.node(leader).raw.status().role).toBe('follower');
    expect(sim.net.log.some((m) => m.type === 'timeoutNow' && m.to === target)).toBe(true);
    // the transfer's election skips pre-vote and overrides the followers' lease
    expect(sim.net.log.some((m) => m.type === 'vote' && m.transfer)).toBe(true);
    expect(sim.stableLeader()).toBe(target);
  });

  it('catches a lagging target up before handing over', () => {
    const { sim, leader } = electedSim(52);
    const target = ABC.find((id) => id !== leader)!;
    sim.crash(target);
    for (let i = 0; i < 10; i++) sim.propose(leader, `w${i}`);
    sim.run(3);
    sim.restart(target);
    sim.net.log = [];
    sim.node(leader).raw.transferLeadership(target);
    sim.stabilize();
    // appends came before TimeoutNow
    const kinds = sim.net.log.filter((m) => m.to === target).map((m) => m.type);
    expect(kinds.indexOf('append')).toBeGreaterThanOrEqual(0);
    expect(kinds.indexOf('append')).toBeLessThan(kinds.indexOf('timeoutNow'));
    expect(sim.node(target).raw.status().role).toBe('leader');
    sim.run(3);
    for (const id of ABC) expect(sim.appliedData(id)).toEqual(Array.from({ length: 10 }, (_, i) => `w${i}`));
  });

  it('drops proposals while a transfer is in progress', () => {
    const { sim, leader } = electedSim(53);
    const target = ABC.find((id) => id !== leader)!;
    sim.net.partition([[target], ABC.filter((id) => id !== target)]);
    sim.node(leader).raw.transferLeadership(target);
    sim.settle();
    expect(sim.node(leader).raw.status().leadTransferee).toBe(target);
    expect(sim.propose(leader, 'during')).toBe(false);
  });

  it('abandons a transfer to an unreachable target after an election timeout', () => {
    const { sim, leader } = electedSim(54);
    const target = ABC.find((id) => id !== leader)!;
    sim.crash(target);
    sim.node(leader).raw.transferLeadership(target);
    sim.settle();
    expect(sim.node(leader).raw.status().leadTransferee).toBe(target);
    sim.run(10);
    expect(sim.node(leader).raw.status().leadTransferee).toBe('');
    expect(sim.node(leader).raw.status().role).toBe('leader');
    expect(sim.propose(leader, 'after')).toBe(true);
    const other = ABC.find((id) => id !== leader && id !== target)!;
    expect(sim.runUntil(() => sim.appliedData(other).includes('after'), 100)).toBe(true);
  });

  it('a transfer requested on a follower is forwarded to the leader', () => {
    const { sim, leader } = electedSim(55);
    const [f1, f2] = ABC.filter((id) => id !== leader);
    sim.node(f1!).raw.transferLeadership(f2!);
    sim.stabilize();
    expect(sim.stableLeader()).toBe(f2);
  });

  it('ignores a transfer to a non-member or to the leader itself', () => {
    const { sim, leader } = electedSim(56);
    const rn = sim.node(leader).raw;
    rn.transferLeadership('zz');
    rn.transferLeadership(leader);
    sim.stabilize();
    expect(rn.status().leadTransferee).toBe('');
    expect(sim.stableLeader()).toBe(leader);
  });
});
