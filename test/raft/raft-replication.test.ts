// Log replication: the consistency check, repair of divergent logs, fast
// backtracking, batching, pipelining and flow control, commitment rules
// (Raft §5.3, §5.4.2) and the Ready contract.

import { pack, unpack } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { RaftLog } from '../../src/raft/log.js';
import { mulberry32 } from '../../src/raft/prng.js';
import { RawNode } from '../../src/raft/raw-node.js';
import { encodeConfChange, type AppendMessage, type Entry, type Message, type RaftConfig } from '../../src/raft/types.js';
import { Sim, text } from './sim.js';

const ABC = ['a', 'b', 'c'];

function electedSim(opts: Partial<ConstructorParameters<typeof Sim>[0]> = {}): { sim: Sim; leader: string } {
  const sim = new Sim({ ids: ABC, seed: 21, ...opts });
  if (!sim.runUntil(() => sim.stableLeader() !== undefined, 300)) throw new Error('no leader');
  sim.run(5);
  return { sim, leader: sim.stableLeader()! };
}

describe('raft log replication', () => {
  it('replicates proposals, made on the leader or forwarded by a follower, in one order everywhere', () => {
    const { sim, leader } = electedSim();
    const follower = ABC.find((id) => id !== leader)!;
    for (let i = 0; i < 10; i++) {
      expect(sim.propose(leader, `L${i}`)).toBe(true);
      expect(sim.propose(follower, `F${i}`)).toBe(true);
    }
    sim.run(20);
    const applied = sim.appliedData(leader);
    expect(applied).toHaveLength(20);
    expect(applied.filter((d) => d.startsWith('L'))).toEqual(Array.from({ length: 10 }, (_, i) => `L${i}`));
    for (const id of ABC) expect(sim.appliedData(id)).toEqual(applied);
    sim.checkStateMachines();
  });

  it('hands entries out for persistence before their messages, and for applying only once committed', () => {
    const { sim, leader } = electedSim();
    const rn = sim.node(leader).raw;
    rn.propose(text('x'));
    const rd = rn.ready()!;
    // the new entry is to be persisted; it is not committed yet (no follower has it)
    expect(rd.entries.map((e) => e.index)).toEqual([rn.status().lastIndex]);
    expect(rd.committedEntries).toEqual([]);
    expect(rd.messages.filter((m) => m.type === 'append')).toHaveLength(2);
    // ready() may not be called again before advance()
    expect(() => rn.ready()).toThrow();
    rn.advance(rd);
    expect(rn.ready()).toBeUndefined();
  });

  it('repairs a divergent log: uncommitted entries of a deposed leader are overwritten', () => {
    const { sim, leader: old } = electedSim({ checkQuorum: true });
    const rest = ABC.filter((id) => id !== old);
    sim.net.partition([[old], rest]);
    // the old leader accepts proposals it can never commit
    for (let i = 0; i < 5; i++) sim.propose(old, `lost${i}`);
    const oldLast = sim.node(old).raw.status().lastIndex;
    expect(sim.runUntil(() => {
      const l = sim.stableLeader();
      return l !== undefined && l !== old;
    }, 300)).toBe(true);
    const fresh = sim.stableLeader()!;
    for (let i = 0; i < 8; i++) sim.propose(fresh, `kept${i}`);
    sim.run(10);
    sim.net.heal();
    expect(sim.runUntil(() => sim.allApplied() && sim.appliedData(old).length === 8, 300)).toBe(true);
    for (const id of ABC) expect(sim.appliedData(id)).toEqual(Array.from({ length: 8 }, (_, i) => `kept${i}`));
    // the old leader's divergent entries are gone from its log
    const log = sim.node(old).raw.raft.log;
    for (let i = oldLast - 4; i <= oldLast; i++) {
      expect(new TextDecoder().decode(log.entry(i)!.data)).not.toMatch(/^lost/);
    }
    sim.checkStateMachines();
  });

  it('fast backtracking needs a few round trips, not one per divergent entry', () => {
    const { sim, leader: old } = electedSim({ checkQuorum: true });
    const rest = ABC.filter((id) => id !== old);
    sim.net.partition([[old], rest]);
    for (let i = 0; i < 60; i++) sim.propose(old, `lost${i}`);
    expect(sim.runUntil(() => {
      const l = sim.stableLeader();
      return l !== undefined && l !== old;
    }, 300)).toBe(true);
    const fresh = sim.stableLeader()!;
    for (let i = 0; i < 30; i++) sim.propose(fresh, `kept${i}`);
    sim.run(5);
    // a second leader change: the next leader starts probing the old leader
    // at its own last index, 30 entries past where the logs diverge
    const third = rest.find((id) => id !== fresh)!;
    sim.node(fresh).raw.transferLeadership(third);
    expect(sim.runUntil(() => sim.stableLeader() === third, 100)).toBe(true);
    sim.net.log = [];
    sim.net.heal();
    expect(sim.runUntil(() => sim.appliedData(old).length === 30, 300)).toBe(true);
    const rejections = sim.net.log.filter((m) => m.type === 'appendResponse' && m.from === old && m.reject);
    expect(rejections.length).toBeGreaterThan(0);
    expect(rejections.length).toBeLessThanOrEqual(3);
    sim.checkStateMachines();
  });

  it('batches entries into appends of at most maxSizePerMsg bytes', () => {
    const { sim, leader } = electedSim({ maxSizePerMsg: 200 });
    const lagging = ABC.find((id) => id !== leader)!;
    sim.crash(lagging);
    for (let i = 0; i < 30; i++) sim.propose(leader, `${'x'.repeat(60)}${i}`);
    sim.run(5);
    sim.net.log = [];
    sim.restart(lagging);
    expect(sim.runUntil(() => sim.appliedData(lagging).length === 30, 300)).toBe(true);
    const appends = sim.net.log.filter((m): m is AppendMessage => m.type === 'append' && m.to === lagging && m.entries.length > 0);
    // 30 entries of ~78 bytes (plus overhead) in messages of <= 200 bytes: at least 15 messages of <= 2 entries
    expect(appends.length).toBeGreaterThanOrEqual(15);
    for (const m of appends) expect(m.entries.length).toBeLessThanOrEqual(2);
  });

  it('pipelines appends to a follower in the replicate state, bounded by maxInflightMsgs', () => {
    const { sim, leader } = electedSim({ maxInflightMsgs: 4 });
    const follower = ABC.find((id) => id !== leader)!;
    sim.net.log = [];
    // propose 10 entries one by one, delivering nothing
    for (let i = 0; i < 10; i++) sim.propose(leader, `p${i}`);
    const appends = sim.net.log.filter((m) => m.type === 'append' && m.to === follower);
    expect(appends).toHaveLength(4);
    const pr = sim.node(leader).raw.status().progress[follower];
    expect(pr!.state).toBe('replicate');
    // optimistic: next moved past what the follower acknowledged
    expect(pr!.next).toBeGreaterThan(pr!.match + 1);
    sim.run(10);
    for (const id of ABC) expect(sim.appliedData(id)).toHaveLength(10);
  });

  it('probes a follower that does not answer with at most one append per heartbeat', () => {
    const { sim, leader } = electedSim({ checkQuorum: false });
    const down = ABC.find((id) => id !== leader)!;
    sim.crash(down);
    sim.net.log = [];
    for (let i = 0; i < 10; i++) sim.propose(leader, `p${i}`);
    sim.run(10);
    // the pipeline stops when full, and falls back to probing after failures
    const appends = sim.net.log.filter((m) => m.type === 'append' && m.to === down);
    expect(appends.length).toBeLessThanOrEqual(256);
    sim.node(leader).raw.reportUnreachable(down);
    expect(sim.node(leader).raw.status().progress[down]!.state).toBe('probe');
    sim.net.log = [];
    sim.run(10);
    const probes = sim.net.log.filter((m) => m.type === 'append' && m.to === down);
    // 10 ticks, heartbeat every tick, but no response: a single probe
    expect(probes.length).toBeLessThanOrEqual(1);
  });

  it('commits an entry of an earlier term only together with one of the current term (Raft §5.4.2)', () => {
    // node a restarts with an uncommitted entry of term 2 at index 4
    const ents: Entry[] = ['a', 'b', 'c'].map((id, i) => ({ term: 1, index: i + 1, type: 'confChange', data: encodeConfChange({ type: 'addNode', nodeId: id }) }));
    ents.push({ term: 2, index: 4, type: 'normal', data: text('old') });
    const cfg: RaftConfig = { id: 'a', electionTick: 10, heartbeatTick: 1, random: mulberry32(1) };
    const rn = new RawNode(cfg, { hardState: { term: 2, vote: 'a', commit: 3 }, entries: ents, snapshot: undefined });
    // apply the committed membership entries first (a node does not campaign with unapplied conf changes)
    const rd = rn.ready()!;
    expect(rd.committedEntries).toHaveLength(3);
    rn.advance(rd);
    rn.campaign();
    rn.step({ type: 'voteResponse', from: 'b', to: 'a', term: 3, reject: false });
    expect(rn.status().role).toBe('leader');
    expect(rn.status().lastIndex).toBe(5); // the empty entry of term 3
    // b acknowledges index 4 (term 2): a majority has it, but it is not of term 3
    rn.step({ type: 'appendResponse', from: 'b', to: 'a', term: 3, index: 4, reject: false, rejectHint: 0, logTerm: 0 });
    expect(rn.status().commit).toBe(3);
    // b acknowledges index 5 (term 3): a majority has it, but only b's copy is durable yet
    // (the commit index counts durable copies only, docs/raft.md "Committing on a quorum of durable copies")
    rn.step({ type: 'appendResponse', from: 'b', to: 'a', term: 3, index: 5, reject: false, rejectHint: 0, logTerm: 0 });
    expect(rn.status().commit).toBe(3);
    // a persists its own copy: now both commit
    const own = rn.ready()!;
    expect(own.entries.map((e) => e.index)).toEqual([5]);
    rn.advance(own);
    expect(rn.status().commit).toBe(5);
  });

  it('RaftLog: consistency check, conflict truncation and term-based conflict search', () => {
    const e = (index: number, term: number): Entry => ({ index, term, type: 'normal', data: text(`${index}.${term}`) });
    const log = new RaftLog(undefined, [e(1, 1), e(2, 1), e(3, 2), e(4, 2), e(5, 2)], 2, undefined);
    // previous entry (5, 3) does not match: rejected
    expect(log.maybeAppend(5, 3, 5, [e(6, 3)])).toBeUndefined();
    // a conflicting suffix from 4 on is replaced
    expect(log.maybeAppend(3, 2, 4, [e(4, 3), e(5, 3)])).toBe(5);
    expect(log.term(4)).toBe(3);
    expect(log.committed).toBe(4);
    // committed entries cannot be overwritten
    expect(() => log.append([e(3, 9)])).toThrow();
    // largest index <= 5 with term <= 2
    expect(log.findConflictByTerm(5, 2)).toBe(3);
    expect(log.findConflictByTerm(5, 0)).toBe(0);
    expect(log.isUpToDate(5, 3)).toBe(true);
    expect(log.isUpToDate(9, 2)).toBe(false);
  });

  it('messages survive a msgpackr round trip unchanged', () => {
    const { sim } = electedSim({ serialize: true });
    sim.net.log = [];
    const leader = sim.stableLeader()!;
    for (let i = 0; i < 3; i++) sim.propose(leader, `p${i}`);
    sim.run(5);
    const msgs: Message[] = sim.net.log;
    expect(msgs.length).toBeGreaterThan(0);
    // Uint8Array comes back as a Buffer (a Uint8Array): compare the bytes
    const norm = (v: unknown): unknown => {
      if (v instanceof Uint8Array) return `bytes:${Buffer.from(v).toString('hex')}`;
      if (Array.isArray(v)) return v.map(norm);
      if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, norm(x)]));
      return v;
    };
    for (const m of msgs) {
      const back = unpack(pack(m)) as Message;
      expect(norm(back)).toEqual(norm(m));
      if (back.type === 'append') for (const e of back.entries) expect(e.data).toBeInstanceOf(Uint8Array);
    }
  });
});
