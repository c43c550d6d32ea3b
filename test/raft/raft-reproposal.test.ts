// A proposal lost to a leader change is proposed again in the new term, and
// committed exactly once (docs/raft.md "Re-proposing lost proposals"): the
// core appends a proposal only in the term it was proposed in, a follower
// forwards only its own proposals of its current term, and the host
// (ProposerHost, with the real ProposalTerms) proposes again what an entry of
// a later term shows was lost.

import { describe, expect, it } from 'vitest';
import { ProposalTerms } from '../../src/raft/proposal-terms.js';
import { Sim, text } from './sim.js';
import { ProposerHost } from './proposer-host.js';

const ABC = ['a', 'b', 'c'];

function elected(seed: number): { sim: Sim; host: ProposerHost; leader: string; others: string[] } {
  const sim = new Sim({ ids: ABC, seed, checkQuorum: true, preVote: true });
  const host = new ProposerHost(sim);
  if (!sim.runUntil(() => sim.stableLeader() !== undefined, 300)) throw new Error('no leader');
  sim.run(5);
  const leader = sim.stableLeader()!;
  return { sim, host, leader, others: ABC.filter((id) => id !== leader) };
}

/** steps (the host flushing its queue after each) until `pred` holds */
function stepUntil(sim: Sim, host: ProposerHost, pred: () => boolean, max = 1000): void {
  for (let i = 0; i < max && !pred(); i++) {
    sim.step();
    host.flush();
  }
  expect(pred()).toBe(true);
}

/** the entries with data `id` in a node's applied log, as their terms */
const appliedTerms = (sim: Sim, node: string, id: string): number[] => sim.node(node).sm.filter((e) => e.data === Buffer.from(id).toString('hex')).map((e) => e.term);

const logHas = (sim: Sim, node: string, id: string): boolean => {
  const log = sim.node(node).raw.raft.log;
  for (let i = log.firstIndex(); i <= log.lastIndex(); i++) if (Buffer.from(log.entry(i)!.data).toString('utf8') === id) return true;
  return false;
};

describe('re-proposing proposals lost to a leader change', () => {
  it('commits a forwarded proposal exactly once under the new leader when the old one took it in and was deposed', () => {
    const { sim, host, leader: old, others } = elected(61);
    const [f, x] = others as [string, string];
    const term = sim.node(old).raw.raft.term;
    // the old leader takes the forward in but replicates nothing (its heartbeats still flow)
    sim.net.filter = (m) => !(m.from === old && m.type === 'append');
    const id = host.propose(f);
    host.flush();
    sim.stabilize();
    expect(logHas(sim, old, id)).toBe(true);
    expect(logHas(sim, x, id)).toBe(false);
    expect(host.pending(f).has(id)).toBe(true);
    // deposed: cut off from both followers, which elect a leader of a later term
    sim.net.filter = undefined;
    sim.net.partition([[old], [f, x]]);
    stepUntil(sim, host, () => host.pending(f).size === 0);
    const newLeader = sim.leader()!;
    expect(newLeader).not.toBe(old);
    const newTerm = sim.node(newLeader).raw.raft.term;
    expect(newTerm).toBeGreaterThan(term);
    // proposed a second time, in the new term, and applied once
    expect(host.attempts.get(id)).toBe(2);
    expect(appliedTerms(sim, f, id)).toEqual([newTerm]);
    // the old leader rejoins: its uncommitted copy is overwritten, every member has it once
    sim.net.heal();
    stepUntil(sim, host, () => sim.allApplied() && ABC.every((n) => appliedTerms(sim, n, id).length === 1));
    sim.run(20);
    for (const n of ABC) expect(appliedTerms(sim, n, id)).toEqual([newTerm]);
    expect(logHas(sim, old, id)).toBe(true);
  });

  it('does not propose again a forwarded proposal the new leader already had: it commits in its own term, once', () => {
    const { sim, host, leader: old, others } = elected(62);
    const [f, x] = others as [string, string];
    const term = sim.node(old).raw.raft.term;
    // the old leader replicates to x only; f forwards to it and hears nothing back
    sim.net.filter = (m) => !(m.from === old && m.to === f && m.type === 'append');
    const id = host.propose(f);
    host.flush();
    sim.stabilize();
    expect(logHas(sim, x, id)).toBe(true);
    // the old leader is cut off before f learns the entry committed; x has the longer log and wins
    sim.net.filter = undefined;
    sim.net.partition([[old], [f, x]]);
    stepUntil(sim, host, () => host.pending(f).size === 0);
    expect(sim.leader()).toBe(x);
    expect(host.attempts.get(id)).toBe(1);
    expect(appliedTerms(sim, f, id)).toEqual([term]);
    sim.net.heal();
    stepUntil(sim, host, () => sim.allApplied());
    for (const n of ABC) expect(appliedTerms(sim, n, id)).toEqual([term]);
  });

  it("proposes again the old leader's own proposal it appended but never got committed", () => {
    const { sim, host, leader: old, others } = elected(63);
    const term = sim.node(old).raw.raft.term;
    sim.net.partition([[old], others]);
    const id = host.propose(old);
    host.flush();
    expect(logHas(sim, old, id)).toBe(true);
    // the others elect a leader; the old one learns of it when the partition heals
    stepUntil(sim, host, () => others.some((n) => sim.node(n).raw.raft.role === 'leader'));
    sim.net.heal();
    stepUntil(sim, host, () => host.pending(old).size === 0);
    const newTerm = sim.node(sim.leader()!).raw.raft.term;
    expect(newTerm).toBeGreaterThan(term);
    expect(host.attempts.get(id)).toBe(2);
    stepUntil(sim, host, () => sim.allApplied());
    for (const n of ABC) expect(appliedTerms(sim, n, id)).toEqual([newTerm]);
  });

  it('the leader drops a forwarded proposal of an earlier term, and a follower never forwards another member’s', () => {
    const { sim, leader, others } = elected(64);
    const [f, x] = others as [string, string];
    const term = sim.node(leader).raw.raft.term;
    const last = sim.node(leader).raw.raft.log.lastIndex();
    sim.node(leader).raw.step({ type: 'propose', from: f, to: leader, term: 0, entries: [{ term: 0, index: 0, type: 'normal', data: text('old') }], proposalTerm: term - 1 });
    sim.settle();
    expect(sim.node(leader).raw.raft.log.lastIndex()).toBe(last);
    // of its own term: appended
    sim.node(leader).raw.step({ type: 'propose', from: f, to: leader, term: 0, entries: [{ term: 0, index: 0, type: 'normal', data: text('now') }], proposalTerm: term });
    sim.settle();
    expect(sim.node(leader).raw.raft.log.lastIndex()).toBe(last + 1);
    // a follower given x's proposal (x took it for the leader) drops it
    sim.net.log = [];
    sim.node(f).raw.step({ type: 'propose', from: x, to: f, term: 0, entries: [{ term: 0, index: 0, type: 'normal', data: text('stray') }], proposalTerm: term });
    sim.settle();
    expect(sim.net.log.filter((m) => m.type === 'propose')).toEqual([]);
    // its own proposal goes to the leader, tagged with its term
    expect(sim.node(f).raw.propose(text('mine'))).toBe(term);
    sim.settle();
    expect(sim.net.log.filter((m) => m.type === 'propose').map((m) => [m.to, m.type === 'propose' ? m.proposalTerm : undefined])).toEqual([[leader, term]]);
  });
});

describe('ProposalTerms', () => {
  it('reports lost only the proposals of earlier terms, retries up to maxAttempts, and never retries one a snapshot may hold', () => {
    const t = new ProposalTerms<string>(2);
    t.proposed('a', 3);
    t.proposed('b', 3);
    t.proposed('c', 4);
    expect(t.applied(3)).toBeUndefined();
    t.settled('b');
    expect(t.applied(4)).toEqual({ retry: ['a'], exhausted: [], unknown: [] });
    t.proposed('a', 4);
    expect(t.applied(4)).toBeUndefined();
    // a snapshot up to an entry of term 4 may hold a and c
    t.snapshotInstalled(4);
    t.proposed('d', 5);
    expect(t.applied(5)).toEqual({ retry: [], exhausted: [], unknown: ['a', 'c'] });
    t.proposed('e', 5);
    t.settled('d');
    expect(t.applied(6)).toEqual({ retry: ['e'], exhausted: [], unknown: [] });
    // not reported again while the host holds it
    expect(t.applied(7)).toBeUndefined();
    t.proposed('e', 7);
    expect(t.applied(8)).toEqual({ retry: [], exhausted: ['e'], unknown: [] });
    expect(t.size).toBe(0);
  });
});
