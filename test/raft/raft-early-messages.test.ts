// What may leave while a Ready is being persisted (RawNode.ready's
// sendBeforePersist and RawNode.takeMessagesNow; docs/raft.md "Messages
// before the fsync", "Heartbeats while the leader fsyncs"): a ReadIndex
// round runs during the leader's fsync, and no message ever tells a follower
// that an entry is committed before the leader has it on disk; committed
// entries already on disk apply during the write (RawNode.takeCommittedNow),
// and on a leader so do entries both followers made durable (the commit index
// counts durable copies only).

import { describe, expect, it } from 'vitest';
import type { Message, Ready } from '../../src/raft/types.js';
import { Sim, text } from './sim.js';

const ABC = ['a', 'b', 'c'];

function elected(seed: number): { sim: Sim; leader: string; followers: string[] } {
  const sim = new Sim({ ids: ABC, seed, checkQuorum: true });
  if (!sim.runUntil(() => sim.stableLeader() !== undefined, 300)) throw new Error('no leader');
  sim.run(5);
  sim.stabilize();
  const leader = sim.stableLeader()!;
  return { sim, leader, followers: ABC.filter((id) => id !== leader) };
}

/** a follower takes an append and persists it at once: its Ready's messages (the acknowledgement) */
function followerTakes(sim: Sim, id: string, m: Message): Message[] {
  const rn = sim.node(id).raw;
  rn.step(m);
  const out: Message[] = [];
  for (let rd: Ready | undefined = rn.ready(); rd; rd = rn.ready()) {
    out.push(...rd.messages);
    rn.advance(rd);
  }
  return out;
}

describe('messages while a Ready is persisted', () => {
  it('a ReadIndex heartbeat round leaves and completes while the leader writes a batch', () => {
    const { sim, leader, followers } = elected(71);
    const l = sim.node(leader).raw;
    l.propose(text('w1'));
    const rd = l.ready()!; // being persisted: no advance yet
    expect(rd.entries.length).toBe(1);
    l.readIndex('r1');
    const now = l.takeMessagesNow();
    const beats = now.filter((m) => m.type === 'heartbeat');
    expect(beats.map((m) => m.to).sort()).toEqual([...followers].sort());
    expect(beats.every((m) => m.type === 'heartbeat' && m.context === 'r1')).toBe(true);
    // the followers answer; the leader confirms the read before its write completes
    for (const b of beats) for (const resp of followerTakes(sim, b.to, b)) l.step(resp);
    expect(l.raft.readStates.map((s) => s.context)).toContain('r1');
    l.advance(rd);
  });

  it('never announces an entry committed before the leader persisted it', () => {
    const { sim, leader, followers } = elected(72);
    const l = sim.node(leader).raw;
    l.propose(text('w2'));
    const rd = l.ready()!;
    const index = rd.entries[0]!.index;
    // the entry's appends leave before the leader's fsync (thesis §10.2.1), with an older commit index
    const appends = rd.sendBeforePersist.filter((m) => m.type === 'append');
    expect(appends.length).toBe(2);
    for (const m of appends) expect(m.type === 'append' && m.commit < index).toBe(true);
    // one follower persists and acknowledges before the leader's write completes: the leader's
    // own copy is not durable yet, so one durable copy of three commits nothing
    const ack = followerTakes(sim, followers[0]!, appends.find((m) => m.to === followers[0])!).filter((m) => m.type === 'appendResponse');
    for (const m of ack) l.step(m);
    expect(l.raft.log.committed).toBeLessThan(index);
    // the other follower too: durable on a quorum without the leader, so committed (thesis §10.2.1)
    const ack2 = followerTakes(sim, followers[1]!, appends.find((m) => m.to === followers[1])!).filter((m) => m.type === 'appendResponse');
    for (const m of ack2) l.step(m);
    expect(l.raft.log.committed).toBe(index);
    // a heartbeat now (a tick, a ReadIndex) leaves at once but does not carry that commit index
    l.readIndex('r2');
    const now = l.takeMessagesNow();
    expect(now.some((m) => m.type === 'heartbeat')).toBe(true);
    for (const m of now) {
      if (m.type === 'heartbeat' || m.type === 'append') expect(m.commit).toBeLessThan(index);
    }
    // the commit notices wait for the next Ready, after the write
    expect(now.some((m) => m.type === 'append')).toBe(false);
    l.advance(rd);
    const next = l.ready()!;
    const notices = next.messages.filter((m) => m.type === 'append');
    expect(notices.length).toBeGreaterThan(0);
    for (const m of notices) expect(m.type === 'append' && m.commit).toBe(index);
    // ...and by then the entry is durable on the leader, so they may leave early again
    expect(next.sendBeforePersist.filter((m) => m.type === 'append').length).toBe(notices.length);
    l.advance(next);
  });

  it('applies an earlier batch acknowledged during the next write, and the batch being written once both followers have it on disk', () => {
    const { sim, leader, followers } = elected(73);
    const l = sim.node(leader).raw;
    l.propose(text('b1'));
    const rd1 = l.ready()!;
    const i1 = rd1.entries[0]!.index;
    const appends1 = rd1.sendBeforePersist.filter((m) => m.type === 'append');
    l.advance(rd1); // batch 1 is on the leader's disk
    // batch 2 is being written when a follower acknowledges batch 1
    l.propose(text('b2'));
    const rd2 = l.ready()!;
    const i2 = rd2.entries[0]!.index;
    expect(rd2.committedEntries).toEqual([]);
    expect(l.takeCommittedNow()).toEqual([]); // nothing committed yet
    for (const m of followerTakes(sim, followers[0]!, appends1.find((m) => m.to === followers[0])!)) if (m.type === 'appendResponse') l.step(m);
    expect(l.raft.log.committed).toBe(i1);
    // batch 1 is committed and durable here: it applies now, not after batch 2's write
    const early = l.takeCommittedNow();
    expect(early.map((e) => e.index)).toEqual([i1]);
    expect(l.takeCommittedNow()).toEqual([]); // handed out once
    // batch 2 on one follower's disk but not on the leader's: one durable copy, not committed
    const to = (f: string) => rd2.sendBeforePersist.filter((m) => m.type === 'append' && m.to === f);
    for (const m of followerTakes(sim, followers[1]!, { ...appends1.find((m) => m.to === followers[1])! })) if (m.type === 'appendResponse') l.step(m);
    for (const a of to(followers[1]!)) for (const m of followerTakes(sim, followers[1]!, a)) if (m.type === 'appendResponse') l.step(m);
    expect(l.raft.log.committed).toBe(i1);
    expect(l.takeCommittedNow()).toEqual([]);
    // ...and on the other follower's: durable on a quorum, committed and applied before the
    // leader's own write of it ends (docs/raft.md "Committing on a quorum of durable copies")
    for (const a of to(followers[0]!)) for (const m of followerTakes(sim, followers[0]!, a)) if (m.type === 'appendResponse') l.step(m);
    expect(l.raft.log.committed).toBe(i2);
    expect(l.raft.log.unstableFrom).toBeLessThanOrEqual(i2); // not on the leader's disk
    expect(l.takeCommittedNow().map((e) => e.index)).toEqual([i2]);
    l.advance(rd2);
    // no later Ready hands batch 2 out again
    for (let rd = l.ready(); rd; rd = l.ready()) {
      expect(rd.committedEntries).toEqual([]);
      l.advance(rd);
    }
    expect(l.takeCommittedNow()).toEqual([]); // no Ready outstanding
  });

  /** a leader with one entry whose append to each follower is in flight; `persist`: the leader's own Ready advanced */
  function oneEntryInFlight(seed: number, persist: boolean) {
    const { sim, leader, followers } = elected(seed);
    const [f0, f1] = [followers[0]!, followers[1]!];
    const l = sim.node(leader).raw;
    l.propose(text(`e${seed}`));
    const rd = l.ready()!;
    if (persist) l.advance(rd);
    const appendTo = (id: string) => rd.sendBeforePersist.find((m) => m.type === 'append' && m.to === id)!;
    return { sim, leader, f0, f1, l, rd, index: rd.entries[0]!.index, appendTo };
  }

  it('a commit notice is answered by no follower in replicate state, with or without entries in flight', () => {
    const { sim, f0, f1, l, index, appendTo } = oneEntryInFlight(74, true);
    for (const m of followerTakes(sim, f0, appendTo(f0))) l.step(m);
    expect(l.raft.log.committed).toBe(index);
    const notices = l.ready()!.messages.filter((m) => m.type === 'append');
    const to = (id: string) => notices.find((m) => m.to === id)!;
    expect(to(f0).type === 'append' && to(f0).noAck).toBe(true);
    // f1's entry is still in flight: the acknowledgement of that append carries its match
    expect(to(f1).type === 'append' && to(f1).noAck).toBe(true);
    // f0 applies the commit and sends nothing back
    expect(followerTakes(sim, f0, to(f0))).toEqual([]);
    expect(sim.node(f0).raw.raft.log.committed).toBe(index);
    // f1 acknowledges its entry only, and commits on the notice
    const acks = [...followerTakes(sim, f1, appendTo(f1)), ...followerTakes(sim, f1, to(f1))];
    expect(acks.filter((m) => m.type === 'appendResponse').length).toBe(1);
    expect(sim.node(f1).raw.raft.log.committed).toBe(index);
    for (const m of acks) l.step(m);
    expect(l.raft.prs.get(f1)!.match).toBe(index);
  });

  it("the notices of a commit made by the leader's own persist are not answered either", () => {
    const { sim, f0, f1, l, rd, index, appendTo } = oneEntryInFlight(76, false);
    // f0 acknowledges while the leader is still writing: one durable copy, not a quorum
    for (const m of followerTakes(sim, f0, appendTo(f0))) l.step(m);
    expect(l.raft.log.committed).toBeLessThan(index);
    l.advance(rd); // the leader's copy is durable: committed
    expect(l.raft.log.committed).toBe(index);
    const notices = l.ready()!.messages.filter((m) => m.type === 'append' && m.entries.length === 0);
    expect(notices.map((m) => m.to).sort()).toEqual([f0, f1].sort());
    for (const m of notices) expect(m.type === 'append' && m.noAck).toBe(true);
  });

  it('a lost acknowledgement is repaired by the append a heartbeat response triggers, which is answered', () => {
    const { sim, leader, f0, f1, l, index, appendTo } = oneEntryInFlight(75, true);
    for (const m of followerTakes(sim, f0, appendTo(f0))) l.step(m);
    // f1 gets its entry and the (unanswered) notice, but its acknowledgement is lost
    followerTakes(sim, f1, appendTo(f1));
    const rdNotice = l.ready()!;
    l.advance(rdNotice);
    const notice = rdNotice.messages.find((m) => m.type === 'append' && m.to === f1)!;
    expect(notice.type === 'append' && notice.noAck).toBe(true);
    expect(followerTakes(sim, f1, notice)).toEqual([]);
    expect(l.raft.prs.get(f1)!.match).toBeLessThan(index);
    // the next heartbeat round: f1's answer makes the leader send an append that is answered
    l.step({ type: 'heartbeatResponse', from: f1, to: leader, term: l.raft.term });
    const rdRepair = l.ready()!;
    l.advance(rdRepair);
    const repair = rdRepair.messages.filter((m) => m.type === 'append' && m.to === f1);
    expect(repair.length).toBe(1);
    expect(repair[0]!.type === 'append' && repair[0]!.noAck).toBeFalsy();
    for (const m of followerTakes(sim, f1, repair[0]!)) l.step(m);
    expect(l.raft.prs.get(f1)!.match).toBe(index);
  });
});
