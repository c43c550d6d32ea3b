// The ordered key index of the MVCC state: a sorted list of sorted chunks
// (the layout of Python's sortedcontainers, a two-level B+tree in effect).
//
// Why this shape: range reads (`[key, end)`, list by prefix) need ordered
// scans, and point lookups need O(log n). A binary search over the chunk
// maxima, then over one chunk, finds a position in O(log n); inserting or
// removing touches one chunk of at most 2*LOAD keys, and only a split/merge
// touches the chunk directory (n/LOAD entries, a cheap memmove). Scans walk
// chunks in order without allocation per step.
//
// Keys compare as JavaScript strings (UTF-16 code units), the same order
// `prefixEnd` in types.ts relies on.

import { partitionPoint } from '../core/sorted.js';

const LOAD = 256;

export class SortedKeyIndex {
  /** chunks of keys; every chunk is non-empty and sorted, chunks in order */
  private chunks: string[][] = [];
  /** maxes[i] = last key of chunks[i] */
  private maxes: string[] = [];
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Inserts `key`; returns false when it was already present. */
  insert(key: string): boolean {
    if (this.chunks.length === 0) {
      this.chunks.push([key]);
      this.maxes.push(key);
      this.count = 1;
      return true;
    }
    let ci = this.chunkFor(key);
    if (ci === this.chunks.length) ci -= 1; // beyond every max: append to the last chunk
    const chunk = this.chunkAt(ci);
    const pos = lowerBound(chunk, key);
    if (pos < chunk.length && chunk[pos] === key) return false;
    chunk.splice(pos, 0, key);
    if (pos === chunk.length - 1) this.maxes[ci] = key;
    this.count += 1;
    if (chunk.length > 2 * LOAD) this.split(ci);
    return true;
  }

  /** Removes `key`; returns false when it was absent. */
  delete(key: string): boolean {
    const ci = this.chunkFor(key);
    if (ci === this.chunks.length) return false;
    const chunk = this.chunkAt(ci);
    const pos = lowerBound(chunk, key);
    if (pos >= chunk.length || chunk[pos] !== key) return false;
    chunk.splice(pos, 1);
    this.count -= 1;
    if (chunk.length === 0) {
      this.chunks.splice(ci, 1);
      this.maxes.splice(ci, 1);
      return true;
    }
    if (pos === chunk.length) this.maxes[ci] = lastKey(chunk);
    // Merge small neighbours so the directory stays proportional to n/LOAD.
    if (chunk.length < LOAD / 4 && ci + 1 < this.chunks.length) this.mergeWithNext(ci);
    return true;
  }

  has(key: string): boolean {
    const ci = this.chunkFor(key);
    if (ci === this.chunks.length) return false;
    const chunk = this.chunkAt(ci);
    const pos = lowerBound(chunk, key);
    return pos < chunk.length && chunk[pos] === key;
  }

  /**
   * Visits keys k with start <= k < end (end undefined = no upper bound) in
   * order; the visitor returns false to stop early. The index must not be
   * modified during the visit.
   */
  scan(start: string, end: string | undefined, visit: (key: string) => boolean | void): void {
    let ci = this.chunkFor(start);
    if (ci === this.chunks.length) return;
    let pos = lowerBound(this.chunkAt(ci), start);
    for (; ci < this.chunks.length; ci++, pos = 0) {
      const chunk = this.chunkAt(ci);
      for (; pos < chunk.length; pos++) {
        const k = chunk[pos]!; // pos < chunk.length
        if (end !== undefined && k >= end) return;
        if (visit(k) === false) return;
      }
    }
  }

  /** All keys in order (tests, snapshots). */
  keys(): string[] {
    const out: string[] = [];
    for (const c of this.chunks) for (const k of c) out.push(k);
    return out;
  }

  /** Index of the first chunk whose max >= key (chunks.length when none). */
  private chunkFor(key: string): number {
    return lowerBound(this.maxes, key);
  }

  /** chunks[ci] for an index the caller has bounds-checked; out of range is a bug in this class. */
  private chunkAt(ci: number): string[] {
    const chunk = this.chunks[ci];
    if (chunk === undefined) throw new Error(`SortedKeyIndex: chunk ${ci} of ${this.chunks.length} does not exist`);
    return chunk;
  }

  private split(ci: number): void {
    const chunk = this.chunkAt(ci);
    const right = chunk.splice(LOAD);
    this.chunks.splice(ci + 1, 0, right);
    this.maxes.splice(ci, 1, lastKey(chunk), lastKey(right));
  }

  private mergeWithNext(ci: number): void {
    const merged = this.chunkAt(ci).concat(this.chunkAt(ci + 1));
    this.chunks.splice(ci, 2, merged);
    this.maxes.splice(ci, 2, lastKey(merged));
    if (merged.length > 2 * LOAD) this.split(ci);
  }
}

/** First index i with arr[i] >= key (arr sorted). */
export function lowerBound(arr: readonly string[], key: string): number {
  return partitionPoint(0, arr.length, (i) => arr[i]! < key);
}

/** The last key of a chunk; every chunk is non-empty (an empty one is removed at once). */
function lastKey(chunk: readonly string[]): string {
  const key = chunk[chunk.length - 1];
  if (key === undefined) throw new Error('SortedKeyIndex: empty chunk');
  return key;
}
