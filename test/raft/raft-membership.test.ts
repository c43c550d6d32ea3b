// Single-member membership changes (thesis §4.1, applied when committed and
// applied, one at a time): adding a node, removing a follower, removing the
// leader.

import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../src/raft/prng.js';
import { RawNode } from '../../src/raft/raw-node.js';
import { ProposalDroppedError } from '../../src/raft/types.js';
import { Sim } from './sim.js';

const ABC = ['a', 'b', 'c'];

function electedSim(seed = 41): { sim: Sim; leader: string } {
  const sim = new Sim({ ids: ABC, seed });
  if (!sim.runUntil(() => sim.stableLeader() !== undefined, 300)) throw new Error('no leader');
  sim.run(5);
  return { sim, leader: sim.stableLeader()! };
}

const votersOf = (sim: Sim, id: string): string[] => sim.node(id).raw.status().voters;

describe('raft membership changes', () => {
  it('adds a fourth node that catches up from the log and then counts in the quorum', () => {
    const { sim, leader } = electedSim();
    for (let i = 0; i < 5; i++) sim.propose(leader, `w${i}`);
    sim.run(3);
    sim.addNode('d');
    // before the change is applied, d knows no configuration and never campaigns
    sim.run(40);
    expect(sim.node('d').raw.status().role).toBe('follower');
    expect(sim.node('d').raw.status().term).toBe(0);
    expect(sim.proposeConfChange(leader, { type: 'addNode', nodeId: 'd' })).toBe(true);
    expect(sim.runUntil(() => [...ABC, 'd'].every((id) => votersOf(sim, id).length === 4), 200)).toBe(true);
    expect(sim.runUntil(() => sim.appliedData('d').length === 5, 200)).toBe(true);
    // d learned the whole history, including the bootstrap membership entries
    expect(sim.node('d').sm[0]).toMatchObject({ index: 1, type: 'confChange' });
    // with 4 voters the quorum is 3: two nodes down stop progress
    const others = ABC.filter((id) => id !== leader);
    sim.crash(others[0]!);
    sim.crash(others[1]!);
    sim.propose(leader, 'blocked');
    sim.run(5);
    expect(sim.appliedData(leader)).not.toContain('blocked');
    // d is one of the three: with one back, the write commits
    sim.restart(others[0]!);
    expect(sim.runUntil(() => sim.appliedData('d').includes('blocked'), 300)).toBe(true);
    sim.checkStateMachines();
  });

  it('a new node can become leader once it is a member', () => {
    const { sim, leader } = electedSim(42);
    sim.addNode('d');
    sim.proposeConfChange(leader, { type: 'addNode', nodeId: 'd' });
    expect(sim.runUntil(() => votersOf(sim, 'd').includes('d') && sim.allApplied(), 200)).toBe(true);
    sim.node(leader).raw.transferLeadership('d');
    expect(sim.runUntil(() => sim.stableLeader() === 'd', 200)).toBe(true);
    expect(sim.propose('d', 'from-d')).toBe(true);
    expect(sim.runUntil(() => ABC.every((id) => sim.appliedData(id).includes('from-d')), 200)).toBe(true);
  });

  it('removes a follower: the rest keep committing with the smaller quorum', () => {
    const { sim, leader } = electedSim(43);
    const [gone, stay] = ABC.filter((id) => id !== leader);
    expect(sim.proposeConfChange(leader, { type: 'removeNode', nodeId: gone! })).toBe(true);
    expect(sim.runUntil(() => votersOf(sim, leader).length === 2 && votersOf(sim, stay!).length === 2, 200)).toBe(true);
    sim.stop(gone!);
    // 2 voters: both needed
    for (let i = 0; i < 3; i++) sim.propose(leader, `w${i}`);
    expect(sim.runUntil(() => sim.appliedData(stay!).length === 3, 200)).toBe(true);
    expect(Object.keys(sim.node(leader).raw.status().progress).sort()).toEqual([leader, stay].sort());
  });

  it('removes the leader: it steps down and the remaining nodes elect a new one', () => {
    const { sim, leader } = electedSim(44);
    const rest = ABC.filter((id) => id !== leader);
    sim.propose(leader, 'before');
    expect(sim.proposeConfChange(leader, { type: 'removeNode', nodeId: leader })).toBe(true);
    expect(sim.runUntil(() => sim.node(leader).raw.status().role !== 'leader', 200)).toBe(true);
    expect(votersOf(sim, leader)).toEqual(rest);
    // the removed node is not a voter and never campaigns again
    sim.run(40);
    expect(sim.node(leader).raw.status().role).toBe('follower');
    expect(sim.runUntil(() => {
      const l = sim.stableLeader();
      return l !== undefined && rest.includes(l);
    }, 300)).toBe(true);
    sim.stop(leader);
    const fresh = sim.stableLeader()!;
    expect(votersOf(sim, fresh)).toEqual(rest);
    sim.propose(fresh, 'after');
    expect(sim.runUntil(() => rest.every((id) => sim.appliedData(id).includes('after')), 300)).toBe(true);
    for (const id of rest) expect(sim.appliedData(id)).toEqual(['before', 'after']);
  });

  it('accepts only one pending configuration change at a time', () => {
    const { sim, leader } = electedSim(45);
    sim.addNode('d');
    sim.addNode('e');
    const rn = sim.node(leader).raw;
    rn.proposeConfChange({ type: 'addNode', nodeId: 'd' });
    expect(() => rn.proposeConfChange({ type: 'addNode', nodeId: 'e' })).toThrow(ProposalDroppedError);
    // once the first is applied on the leader, the next one is accepted
    expect(sim.runUntil(() => votersOf(sim, leader).includes('d'), 200)).toBe(true);
    expect(sim.proposeConfChange(leader, { type: 'addNode', nodeId: 'e' })).toBe(true);
    expect(sim.runUntil(() => [...ABC, 'd', 'e'].every((id) => votersOf(sim, id).length === 5), 300)).toBe(true);
  });

  it('a new leader does not accept a conf change before it has applied its log', () => {
    const rn = RawNode.bootstrap({ id: 'a', electionTick: 10, heartbeatTick: 1, random: mulberry32(1) }, ['a']);
    const drain = (): void => {
      for (let rd = rn.ready(); rd; rd = rn.ready()) rn.advance(rd);
    };
    drain();
    rn.campaign();
    expect(rn.status().role).toBe('leader');
    // the empty entry of the new term is committed (single voter) but not applied
    expect(rn.status().applied).toBeLessThan(rn.status().lastIndex);
    expect(() => rn.proposeConfChange({ type: 'addNode', nodeId: 'b' })).toThrow(ProposalDroppedError);
    drain();
    rn.proposeConfChange({ type: 'addNode', nodeId: 'b' });
    drain();
    expect(rn.status().voters).toEqual(['a', 'b']);
  });
});
