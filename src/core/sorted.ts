// The one binary search of the tree, for sorted arrays in the store (key
// index, key history, the change log) and the watch windows. In core because
// both layers may import it and it imports nothing.

/**
 * The first index in [lo, hi) at which `before(i)` is false, for a predicate
 * that is true on a prefix of the range and false after it (hi when it is
 * true throughout). O(log n) calls of `before`.
 */
export function partitionPoint(lo: number, hi: number, before: (i: number) => boolean): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (before(mid)) lo = mid + 1; // lo <= mid < hi
    else hi = mid;
  }
  return lo;
}
