// partitionPoint (src/core/sorted.ts): the one binary search of the store and
// the watch windows, checked against a linear scan.

import { describe, expect, it } from 'vitest';
import { partitionPoint } from '../../src/core/sorted.js';

const linear = (lo: number, hi: number, before: (i: number) => boolean): number => {
  for (let i = lo; i < hi; i++) if (!before(i)) return i;
  return hi;
};

describe('partitionPoint', () => {
  it('finds the first index where the predicate turns false, as a linear scan does', () => {
    const arr = [1, 2, 2, 2, 5, 8, 8, 13];
    for (let lo = 0; lo <= arr.length; lo++) {
      for (let x = 0; x <= 14; x++) {
        expect(partitionPoint(lo, arr.length, (i) => arr[i]! <= x), `lo=${lo} x=${x}`).toBe(linear(lo, arr.length, (i) => arr[i]! <= x));
        expect(partitionPoint(lo, arr.length, (i) => arr[i]! < x), `lo=${lo} x=${x}`).toBe(linear(lo, arr.length, (i) => arr[i]! < x));
      }
    }
  });

  it('returns lo for an empty range and hi when the predicate holds throughout', () => {
    expect(partitionPoint(3, 3, () => true)).toBe(3);
    expect(partitionPoint(0, 5, () => true)).toBe(5);
    expect(partitionPoint(2, 5, () => false)).toBe(2);
  });
});
