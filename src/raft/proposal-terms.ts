// Which of a member's proposals a Raft log can no longer commit, so that the
// host may propose them again without ever applying one twice (docs/raft.md
// "Re-proposing lost proposals"). Pure bookkeeping, no timers: the host
// reports what the core accepted (with the term RawNode.propose returned),
// what it applied, and snapshots it installed.
//
// The rule: the core appends a proposal only in the term it was proposed in
// (raft.ts, ProposeMessage.proposalTerm), so an entry holding it has that
// term. Terms never decrease along a log and the committed log is the same on
// every member (Raft §5.3, §5.4.3): once a member applied an entry of a later
// term, every entry of the proposal's term that will ever commit is behind it,
// already applied. A proposal of that term it has not seen applied is lost.

export interface LostProposals<K> {
  /** certainly not in the log: may be proposed again (report proposed() when the core takes it) */
  retry: K[];
  /** certainly not in the log, and proposed maxAttempts times already */
  exhausted: K[];
  /** may be inside a snapshot this member installed: outcome unknown, never propose again */
  unknown: K[];
}

interface Tracked {
  /** the term of the attempt in the core; undefined while the host holds it (not in any log) */
  term: number | undefined;
  attempts: number;
  /** a snapshot that may hold it was installed (its entry was not seen) */
  uncertain: boolean;
}

export class ProposalTerms<K> {
  private readonly tracked = new Map<K, Tracked>();
  /** at most the lowest term in `tracked`: applied() does nothing below it (one comparison per entry) */
  private lowest = Infinity;

  constructor(readonly maxAttempts: number) {
    if (!(maxAttempts >= 1)) throw new Error('ProposalTerms: maxAttempts must be at least 1');
  }

  get size(): number {
    return this.tracked.size;
  }

  /** the core accepted proposal `key` in `term` (first attempt or a retry) */
  proposed(key: K, term: number): void {
    const t = this.tracked.get(key);
    if (t) {
      t.term = term;
      t.attempts += 1;
    } else this.tracked.set(key, { term, attempts: 1, uncertain: false });
    if (term < this.lowest) this.lowest = term;
  }

  /** proposal `key` was applied, failed or given up: forget it */
  settled(key: K): void {
    this.tracked.delete(key);
  }

  /** a snapshot whose last entry has `term` replaced the state: proposals of that term or earlier may be in it */
  snapshotInstalled(term: number): void {
    for (const t of this.tracked.values()) if (t.term !== undefined && t.term <= term) t.uncertain = true;
  }

  /**
   * An entry of `term` was applied (after the entries before it, and after
   * settled() for its own proposal): the proposals of earlier terms still
   * tracked were lost. Undefined when there are none (the common case).
   */
  applied(term: number): LostProposals<K> | undefined {
    if (term <= this.lowest) return undefined;
    const out: LostProposals<K> = { retry: [], exhausted: [], unknown: [] };
    let lowest = Infinity;
    for (const [key, t] of this.tracked) {
      if (t.term === undefined) continue;
      if (t.term >= term) {
        lowest = Math.min(lowest, t.term);
        continue;
      }
      if (t.uncertain) {
        this.tracked.delete(key);
        out.unknown.push(key);
      } else if (t.attempts >= this.maxAttempts) {
        this.tracked.delete(key);
        out.exhausted.push(key);
      } else {
        t.term = undefined;
        out.retry.push(key);
      }
    }
    this.lowest = lowest;
    return out;
  }
}
