// Snapshots and log compaction (Raft §7): the host compacts at an applied
// index, the leader sends InstallSnapshot to followers that need compacted
// entries, followers restore from it, and restarts rebuild from the snapshot.

import { describe, expect, it } from 'vitest';
import type { InstallSnapshotMessage } from '../../src/raft/types.js';
import { text, Sim } from './sim.js';

const ABC = ['a', 'b', 'c'];

function electedSim(seed = 31): { sim: Sim; leader: string } {
  const sim = new Sim({ ids: ABC, seed });
  if (!sim.runUntil(() => sim.stableLeader() !== undefined, 300)) throw new Error('no leader');
  sim.run(5);
  return { sim, leader: sim.stableLeader()! };
}

describe('raft snapshots', () => {
  it('sends a snapshot to a lagging follower whose entries were compacted, and it catches up', () => {
    const { sim, leader } = electedSim();
    const lagging = ABC.find((id) => id !== leader)!;
    sim.crash(lagging);
    for (let i = 0; i < 20; i++) sim.propose(leader, `w${i}`);
    sim.run(5);
    expect(sim.compact(leader)).toBe(true);
    const first = sim.node(leader).raw.status().firstIndex;
    expect(first).toBeGreaterThan(20);
    for (let i = 20; i < 25; i++) sim.propose(leader, `w${i}`);
    sim.run(3);
    sim.net.log = [];
    sim.restart(lagging);
    expect(sim.runUntil(() => sim.appliedData(lagging).length === 25, 200)).toBe(true);
    const snaps = sim.net.log.filter((m): m is InstallSnapshotMessage => m.type === 'installSnapshot' && m.to === lagging);
    expect(snaps.length).toBeGreaterThanOrEqual(1);
    expect(snaps[0]!.snapshot.metadata.index).toBe(first - 1);
    expect(snaps[0]!.snapshot.metadata.confState.voters).toEqual(ABC);
    // the follower's log now starts after the snapshot; its state machine came from it
    expect(sim.node(lagging).raw.status().firstIndex).toBe(first);
    expect(sim.appliedData(lagging)).toEqual(Array.from({ length: 25 }, (_, i) => `w${i}`));
    // and what it persisted is the snapshot plus the entries after it
    expect(sim.node(lagging).disk.snapshot?.metadata.index).toBe(first - 1);
    sim.checkStateMachines();
  });

  it('retries a snapshot whose delivery failed', () => {
    const { sim, leader } = electedSim(32);
    const lagging = ABC.find((id) => id !== leader)!;
    sim.crash(lagging);
    for (let i = 0; i < 10; i++) sim.propose(leader, `w${i}`);
    sim.run(3);
    sim.compact(leader);
    let dropped = 0;
    sim.net.filter = (m) => {
      if (m.type === 'installSnapshot' && dropped < 2) {
        dropped++;
        return false;
      }
      return true;
    };
    sim.restart(lagging);
    expect(sim.runUntil(() => sim.appliedData(lagging).length === 10, 300)).toBe(true);
    expect(dropped).toBe(2);
    expect(sim.net.sentByType.get('installSnapshot')).toBeGreaterThanOrEqual(3);
  });

  it('re-sends a lost snapshot after snapshotTimeoutTick even when the transport reports nothing', () => {
    const { sim, leader } = electedSim(37);
    sim.net.reportSnapshots = false;
    const lagging = ABC.find((id) => id !== leader)!;
    sim.crash(lagging);
    for (let i = 0; i < 10; i++) sim.propose(leader, `w${i}`);
    sim.run(3);
    sim.compact(leader);
    let dropped = 0;
    sim.net.filter = (m) => !(m.type === 'installSnapshot' && dropped++ < 1);
    sim.restart(lagging);
    sim.run(20);
    // still waiting for the lost snapshot (default timeout: 5 election timeouts = 50 ticks)
    expect(sim.node(leader).raw.status().progress[lagging]!.state).toBe('snapshot');
    expect(sim.runUntil(() => sim.appliedData(lagging).length === 10, 200)).toBe(true);
    expect(sim.net.sentByType.get('installSnapshot')).toBe(2);
  });

  it('restarts a node from its own snapshot and the entries after it', () => {
    const { sim, leader } = electedSim(33);
    const f = ABC.find((id) => id !== leader)!;
    for (let i = 0; i < 12; i++) sim.propose(leader, `w${i}`);
    sim.run(5);
    expect(sim.compact(f)).toBe(true);
    for (let i = 12; i < 15; i++) sim.propose(leader, `w${i}`);
    sim.run(5);
    const snapIndex = sim.node(f).disk.snapshot!.metadata.index;
    expect(sim.node(f).disk.entries.every((e) => e.index > snapIndex)).toBe(true);
    sim.crash(f);
    sim.restart(f);
    expect(sim.node(f).raw.status().firstIndex).toBe(snapIndex + 1);
    sim.run(5);
    expect(sim.appliedData(f)).toEqual(Array.from({ length: 15 }, (_, i) => `w${i}`));
    sim.checkStateMachines();
  });

  it('a follower whose log already covers the snapshot keeps its log and only advances commit', () => {
    const { sim, leader } = electedSim(34);
    const f = ABC.find((id) => id !== leader)!;
    for (let i = 0; i < 5; i++) sim.propose(leader, `w${i}`);
    sim.run(5);
    const rl = sim.node(leader).raw;
    const snap = rl.compact(rl.status().applied, text('image'));
    const rf = sim.node(f).raw;
    const before = rf.status();
    rf.step({ type: 'installSnapshot', from: leader, to: f, term: rl.status().term, snapshot: snap });
    const rd = rf.ready()!;
    expect(rd.snapshot).toBeUndefined();
    expect(rd.messages).toMatchObject([{ type: 'appendResponse', reject: false, index: before.commit }]);
    rf.advance(rd);
    expect(rf.status().firstIndex).toBe(before.firstIndex);
  });

  it('refuses to compact beyond the applied index or at or before the last snapshot', () => {
    const { sim, leader } = electedSim(35);
    const rn = sim.node(leader).raw;
    const applied = rn.status().applied;
    expect(() => rn.compact(applied + 1, text('x'))).toThrow();
    rn.compact(applied, text('x'));
    expect(() => rn.compact(applied, text('x'))).toThrow();
  });

  it('keeps the configuration in the snapshot so a restored node knows its peers', () => {
    const { sim, leader } = electedSim(36);
    const lagging = ABC.find((id) => id !== leader)!;
    sim.stop(lagging);
    // a brand-new node joins after the log was compacted: it learns the
    // configuration only from the snapshot
    for (let i = 0; i < 5; i++) sim.propose(leader, `w${i}`);
    sim.run(3);
    sim.compact(leader);
    sim.addNode('d');
    expect(sim.proposeConfChange(leader, { type: 'addNode', nodeId: 'd' })).toBe(true);
    expect(sim.runUntil(() => sim.appliedData('d').length === 5 && sim.node('d').raw.status().voters.includes('d'), 300)).toBe(true);
    expect(sim.node('d').raw.status().voters).toEqual(['a', 'b', 'c', 'd']);
    expect(sim.node('d').raw.status().firstIndex).toBeGreaterThan(1);
  });
});
