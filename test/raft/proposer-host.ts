// A host for the simulated nodes (sim.ts) that proposes as RaftStore does
// (src/store/raft-store.ts, docs/raft.md "Re-proposing lost proposals"): each
// proposal is an id (its entry's data) that its node waits for until it
// applies it; the real ProposalTerms says which were lost to a leader change,
// and those are proposed again in the new term. A proposal the core drops at
// once (no leader) was in no log: it stays queued and is tried again.

import { ProposalTerms } from '../../src/raft/proposal-terms.js';
import { ProposalDroppedError, type Message, type NodeId } from '../../src/raft/types.js';
import { text, type AppliedEntry, type Sim, type SimNode } from './sim.js';

const idOf = (e: AppliedEntry): string | undefined => (e.type === 'normal' && e.data.length > 0 ? Buffer.from(e.data, 'hex').toString('utf8') : undefined);

interface Member {
  /** ids proposed on this node and not yet applied on it */
  pending: Set<string>;
  /** ids to hand to the core at the next flush (new, dropped at once, or lost) */
  queued: string[];
  /** the term of each pending id's attempt in the core */
  termOf: Map<string, number>;
  terms: ProposalTerms<string>;
}

export class ProposerHost {
  private readonly members = new Map<NodeId, Member>();
  /** every id proposed, with its proposer */
  readonly proposed = new Map<string, NodeId>();
  /** ids that were in a propose message the network dropped (cut, lost, or sent to a down node) */
  readonly cutOff = new Set<string>();
  /** ids whose proposer crashed while they were pending (its host forgot them) */
  readonly forgotten = new Set<string>();
  /** ids the host gave up on: proposed maxAttempts times, or possibly inside an installed snapshot */
  readonly gaveUp = new Set<string>();
  /** ids pending in the term of a snapshot their node installed, or an earlier one: outcome unknown (504 at the deadline in the store) */
  readonly inSnapshot = new Set<string>();
  /** times an id was handed to a core */
  readonly attempts = new Map<string, number>();
  private seq = 0;

  constructor(
    private readonly sim: Sim,
    private readonly maxAttempts = Infinity,
  ) {
    for (const id of sim.nodes.keys()) this.members.set(id, this.fresh());
    sim.onApply = (n, e) => this.applied(n, e);
    sim.onSnapshot = (n, s) => {
      const m = this.member(n.id);
      m.terms.snapshotInstalled(s.metadata.term);
      for (const [x, term] of m.termOf) if (term <= s.metadata.term) this.inSnapshot.add(x);
    };
    const dropped = sim.net.dropped.bind(sim.net);
    sim.net.dropped = (m: Message) => {
      if (m.type === 'propose') for (const e of m.entries) this.cutOff.add(Buffer.from(e.data).toString('utf8'));
      dropped(m);
    };
  }

  private fresh(): Member {
    return { pending: new Set(), queued: [], termOf: new Map(), terms: new ProposalTerms(this.maxAttempts) };
  }

  private member(id: NodeId): Member {
    const m = this.members.get(id);
    if (!m) throw new Error(`no member ${id}`);
    return m;
  }

  /** a new proposal on `node` (handed to its core at the next flush) */
  propose(node: NodeId): string {
    const id = `${node}#${++this.seq}`;
    const m = this.member(node);
    this.proposed.set(id, node);
    m.pending.add(id);
    m.queued.push(id);
    return id;
  }

  pending(node: NodeId): ReadonlySet<string> {
    return this.member(node).pending;
  }

  /** hands every up node's queued proposals to its core, as one batch (the driver's group commit) */
  flush(): void {
    for (const [id, m] of this.members) {
      const n = this.sim.node(id);
      if (!n.rn || m.queued.length === 0) continue;
      const ids = m.queued;
      let term: number;
      try {
        term = n.rn.proposeBatch(ids.map((x) => text(x)));
      } catch (err) {
        if (err instanceof ProposalDroppedError) continue; // in no log: tried again next time
        throw err;
      }
      m.queued = [];
      for (const x of ids) {
        m.terms.proposed(x, term);
        m.termOf.set(x, term);
        this.attempts.set(x, (this.attempts.get(x) ?? 0) + 1);
      }
    }
    this.sim.settle();
  }

  /** the node crashed: its host's memory is gone (call after Sim.crash) */
  crashed(node: NodeId): void {
    for (const x of this.member(node).pending) this.forgotten.add(x);
    this.members.set(node, this.fresh());
  }

  private applied(n: SimNode, e: AppliedEntry): void {
    const m = this.member(n.id);
    const id = idOf(e);
    if (id !== undefined && m.pending.delete(id)) {
      m.terms.settled(id);
      m.termOf.delete(id);
    }
    const lost = m.terms.applied(e.term);
    if (!lost) return;
    m.queued.push(...lost.retry);
    for (const x of lost.retry) m.termOf.delete(x);
    for (const x of [...lost.exhausted, ...lost.unknown]) {
      m.pending.delete(x);
      m.termOf.delete(x);
      this.gaveUp.add(x);
    }
  }

  /** how many times each id is in the node's applied log */
  appliedCounts(node: NodeId): Map<string, number> {
    const counts = new Map<string, number>();
    for (const e of this.sim.node(node).sm) {
      const id = idOf(e);
      if (id !== undefined) counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    return counts;
  }
}
