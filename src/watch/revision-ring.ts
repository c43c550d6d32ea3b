// The watch service's recent-writes ring, reduced to what it must decide:
// the floor of the history a watch cache created later may serve (spec 000
// §8: watch history retained, default 5 minutes, bounded by age and count as
// every window is, src/watch/window.ts). It records only the revision and the
// time of each applied write, in two Float64Arrays: the writes themselves
// (events, key-values) are rebuilt from the store's MVCC history when a cache
// is created (RevisionedStore.writesAfter), so they die young instead of
// being promoted and marked for the whole window (issue 14: garbage
// collection was ≈ 27 % of a loaded leader's CPU, and what each stored object
// keeps alive is what major GCs walk).

import { RetainedHistory } from './window.js';

/** the floor of a HistoryWindow of the same writes, without the writes */
export class RevisionRing extends RetainedHistory {
  private revs = new Float64Array(64);
  private times = new Float64Array(64);
  /** the slot of the oldest retained write */
  private head = 0;
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** records an applied write (revisions increase) */
  push(revision: number, time: number): void {
    if (this.count === this.revs.length) this.grow();
    const slot = (this.head + this.count) % this.revs.length;
    this.revs[slot] = revision;
    this.times[slot] = time;
    this.count++;
    if (this.count > this.maxEntries) this.dropOldest();
  }

  /** drops the oldest writes while they are older than the age limit (as HistoryWindow.prune) */
  prune(now: number): void {
    const cutoff = now - this.maxAgeMs;
    while (this.count > 0 && this.times[this.head]! < cutoff) this.dropOldest();
  }

  private dropOldest(): void {
    this.floorRev = Math.max(this.floorRev, this.revs[this.head]!);
    this.head = (this.head + 1) % this.revs.length;
    this.count--;
  }

  /** doubles the capacity, oldest first from slot 0 (at most maxEntries + 1 slots are ever used) */
  private grow(): void {
    const cap = this.revs.length;
    const revs = new Float64Array(cap * 2);
    const times = new Float64Array(cap * 2);
    for (let i = 0; i < this.count; i++) {
      const slot = (this.head + i) % cap;
      revs[i] = this.revs[slot]!;
      times[i] = this.times[slot]!;
    }
    this.revs = revs;
    this.times = times;
    this.head = 0;
  }
}
