// The in-memory Raft log of one node: a snapshot boundary followed by the
// entries after it, plus the bookkeeping of what the host has persisted
// (`unstableFrom`) and applied (`applied`). The core keeps every entry since
// the last compaction in memory; the host's disk holds the same entries
// (docs/raft.md "Ready/advance contract").

import type { Entry, Snapshot } from './types.js';

/** Approximate encoded size of an entry, for batching limits. */
export function entrySize(e: Entry): number {
  return e.data.byteLength + 16;
}

export class RaftLog {
  /** index and term of the last entry covered by the snapshot (0/0: none) */
  snapIndex: number;
  snapTerm: number;
  /** ents[i].index === snapIndex + 1 + i */
  private ents: Entry[];
  committed: number;
  applied: number;
  /** first index not yet handed to the host for persistence */
  unstableFrom: number;
  /** snapshot received from a leader, not yet handed to the host */
  pendingSnapshot: Snapshot | undefined;
  /** the latest snapshot (with data), sent to followers that are too far behind */
  snapshot: Snapshot | undefined;

  constructor(snapshot: Snapshot | undefined, entries: Entry[], commit: number, applied: number | undefined) {
    this.snapshot = snapshot;
    this.snapIndex = snapshot?.metadata.index ?? 0;
    this.snapTerm = snapshot?.metadata.term ?? 0;
    this.ents = entries.filter((e) => e.index > this.snapIndex);
    for (const [i, e] of this.ents.entries()) {
      if (e.index !== this.snapIndex + 1 + i) throw new Error('raft log: persisted entries are not contiguous with the snapshot');
    }
    this.committed = Math.max(commit, this.snapIndex);
    if (this.committed > this.lastIndex()) throw new Error(`raft log: commit ${commit} beyond last index ${this.lastIndex()}`);
    this.applied = Math.min(Math.max(applied ?? this.snapIndex, this.snapIndex), this.committed);
    this.unstableFrom = this.lastIndex() + 1;
    this.pendingSnapshot = undefined;
  }

  firstIndex(): number {
    return this.snapIndex + 1;
  }

  lastIndex(): number {
    return this.snapIndex + this.ents.length;
  }

  lastTerm(): number {
    return this.term(this.lastIndex()) ?? 0;
  }

  /** term of entry i; undefined when compacted away or beyond the end */
  term(i: number): number | undefined {
    if (i === this.snapIndex) return this.snapTerm;
    return this.entry(i)?.term; // undefined when compacted away or beyond the end
  }

  matchTerm(i: number, t: number): boolean {
    return this.term(i) === t;
  }

  /** Raft §5.4.1: is a log ending at (lastIndex, lastTerm) at least as up-to-date as ours? */
  isUpToDate(lastIndex: number, lastTerm: number): boolean {
    const myTerm = this.lastTerm();
    return lastTerm > myTerm || (lastTerm === myTerm && lastIndex >= this.lastIndex());
  }

  entry(i: number): Entry | undefined {
    if (i <= this.snapIndex || i > this.lastIndex()) return undefined;
    return this.ents[i - this.snapIndex - 1];
  }

  /** entries [lo, hi) (hi exclusive), at most maxBytes (but at least one); undefined when lo was compacted */
  slice(lo: number, hi: number, maxBytes = Infinity): Entry[] | undefined {
    if (lo <= this.snapIndex) return undefined;
    hi = Math.min(hi, this.lastIndex() + 1);
    const out: Entry[] = [];
    let size = 0;
    for (let i = lo; i < hi; i++) {
      const e = this.ents[i - this.snapIndex - 1]!; // snapIndex < lo <= i < hi <= lastIndex + 1
      size += entrySize(e);
      if (out.length > 0 && size > maxBytes) break;
      out.push(e);
    }
    return out;
  }

  /** Append (truncating any suffix from ents[0].index on). Never truncates committed entries. */
  append(ents: Entry[]): void {
    const first = ents[0]?.index;
    if (first === undefined) return;
    if (first <= this.committed) throw new Error(`raft log: append at ${first} would overwrite committed ${this.committed}`);
    if (first > this.lastIndex() + 1) throw new Error(`raft log: gap appending ${first} after ${this.lastIndex()}`);
    this.ents.length = first - this.snapIndex - 1;
    for (const e of ents) this.ents.push(e);
    if (first < this.unstableFrom) this.unstableFrom = first;
  }

  /** index of the first entry of `ents` whose term differs from ours (or that we lack); 0 if all match */
  findConflict(ents: Entry[]): number {
    for (const e of ents) {
      if (!this.matchTerm(e.index, e.term)) return e.index;
    }
    return 0;
  }

  /**
   * Fast backtracking (thesis §5.3 optimisation as etcd does it): the largest
   * index <= `index` whose term is <= `term`. Every entry after it has a
   * larger term, so it cannot match a log whose entry at `index` has `term`.
   */
  findConflictByTerm(index: number, term: number): number {
    index = Math.min(index, this.lastIndex());
    if (index < this.snapIndex) return index;
    for (let i = index; i > this.snapIndex; i--) {
      if ((this.term(i) ?? 0) <= term) return i;
    }
    return this.snapIndex;
  }

  /**
   * The follower side of AppendEntries: if our entry at `index` has `logTerm`,
   * append `ents` (dropping a conflicting suffix), advance commit, and return
   * the index of the last new entry. undefined = consistency check failed.
   */
  maybeAppend(index: number, logTerm: number, commit: number, ents: Entry[]): number | undefined {
    if (!this.matchTerm(index, logTerm)) return undefined;
    const lastNew = index + ents.length;
    const ci = this.findConflict(ents);
    const firstNew = ents[0]; // present whenever ci !== 0: findConflict returned one of ents' indexes
    if (ci !== 0 && firstNew) {
      if (ci <= this.committed) throw new Error(`raft log: entry ${ci} conflicts with committed entry (commit ${this.committed})`);
      this.append(ents.slice(ci - firstNew.index));
    }
    this.commitTo(Math.min(commit, lastNew));
    return lastNew;
  }

  commitTo(i: number): void {
    if (i <= this.committed) return;
    if (i > this.lastIndex()) throw new Error(`raft log: commit ${i} beyond last index ${this.lastIndex()}`);
    this.committed = i;
  }

  /** Raft §5.4.2: a leader commits by counting replicas only entries of its own term. */
  maybeCommit(i: number, term: number): boolean {
    if (i > this.committed && this.term(i) === term) {
      this.commitTo(i);
      return true;
    }
    return false;
  }

  unstableEntries(): Entry[] {
    return this.ents.slice(this.unstableFrom - this.snapIndex - 1);
  }

  hasUnstable(): boolean {
    return this.unstableFrom <= this.lastIndex();
  }

  /** the host persisted entries up to (index, term) */
  stableTo(index: number, term: number): void {
    if (this.term(index) === term && index >= this.unstableFrom) this.unstableFrom = index + 1;
  }

  /** first index that may be handed out for applying */
  private nextApplyIndex(): number {
    return Math.max(this.applied + 1, this.firstIndex());
  }

  hasNextCommitted(): boolean {
    return this.committed >= this.nextApplyIndex();
  }

  nextCommitted(maxBytes: number): Entry[] {
    const lo = this.nextApplyIndex();
    if (this.committed < lo) return [];
    return this.slice(lo, this.committed + 1, maxBytes) ?? [];
  }

  appliedTo(i: number): void {
    if (i > this.committed) throw new Error(`raft log: applied ${i} beyond commit ${this.committed}`);
    if (i > this.applied) this.applied = i;
  }

  /** Replace the whole log by a snapshot received from the leader (Raft §7). */
  restore(s: Snapshot): void {
    this.snapIndex = s.metadata.index;
    this.snapTerm = s.metadata.term;
    this.ents = [];
    this.committed = s.metadata.index;
    this.unstableFrom = s.metadata.index + 1;
    this.pendingSnapshot = s;
    this.snapshot = s;
  }

  /** Drop entries up to and including the snapshot's index (host-initiated compaction). */
  compact(s: Snapshot): void {
    const index = s.metadata.index;
    if (index <= this.snapIndex) throw new Error(`raft log: compact index ${index} is not after snapshot ${this.snapIndex}`);
    if (index > this.applied) throw new Error(`raft log: compact index ${index} is after applied ${this.applied}`);
    this.ents = this.ents.slice(index - this.snapIndex);
    this.snapIndex = index;
    this.snapTerm = s.metadata.term;
    this.snapshot = s;
  }
}
