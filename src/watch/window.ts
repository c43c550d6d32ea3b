// The history window of one watch cache: the recent changes of one resource
// type, in revision order, so a watch can start "after resourceVersion N"
// (spec 000 §4.5, §4.6 watch table) without reading the store.
//
// Retention is bounded twice (spec 000 §8 "Watch history retained: default
// 5 minutes"): by age and by count. The window always knows its `floor`: every
// change with a revision greater than the floor is in the window, so a watch
// from N is servable exactly when N >= floor; older is 410 Expired.

import { partitionPoint } from '../core/sorted.js';

/** The smallest shape the window needs to order and age its entries. */
export interface Revisioned {
  readonly revision: number;
  /** wall-clock ms of the write (the store's log time) */
  readonly time: number;
}

/** the retention bounds and the floor every history of the watch layer keeps (this window, revision-ring.ts) */
export abstract class RetainedHistory {
  protected floorRev: number;

  constructor(
    floor: number,
    readonly maxAgeMs: number,
    readonly maxEntries: number,
  ) {
    this.floorRev = floor;
  }

  /** every change with revision > floor is retained */
  get floor(): number {
    return this.floorRev;
  }
}

export class HistoryWindow<E extends Revisioned> extends RetainedHistory {
  /** entries[head..] are live; the prefix is garbage awaiting compaction of the array */
  private entries: E[] = [];
  private head = 0;

  get size(): number {
    return this.entries.length - this.head;
  }

  /** the newest retained revision, or the floor when empty */
  get newest(): number {
    return this.size > 0 ? this.entries[this.entries.length - 1]!.revision : this.floorRev;
  }

  push(e: E): void {
    this.entries.push(e);
    if (this.size > this.maxEntries) this.dropOldest(this.size - this.maxEntries);
  }

  /**
   * Drops entries older than the age limit. Entries of one revision go
   * together, so the floor never splits a multi-key write.
   */
  prune(now: number): void {
    const cutoff = now - this.maxAgeMs;
    let n = 0;
    const total = this.size;
    while (n < total && this.entries[this.head + n]!.time < cutoff) n++;
    if (n > 0) this.dropOldest(n);
  }

  private dropOldest(n: number): void {
    let end = this.head + n;
    // extend to the end of the revision so a write is kept or dropped whole
    const lastRev = this.entries[end - 1]!.revision;
    while (end < this.entries.length && this.entries[end]!.revision === lastRev) end++;
    this.floorRev = Math.max(this.floorRev, lastRev);
    this.head = end;
    // compact the backing array once the dead prefix dominates (amortised O(1))
    if (this.head > 1024 && this.head * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
  }

  /** entries with revision > rev, oldest first; undefined when rev is older than the floor */
  since(rev: number): E[] | undefined {
    if (rev < this.floorRev) return undefined;
    // the first entry with revision > rev
    const e = this.entries;
    return e.slice(partitionPoint(this.head, e.length, (i) => e[i]!.revision <= rev));
  }
}
