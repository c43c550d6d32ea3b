// The watch service's recent-writes ring (src/watch/revision-ring.ts): the
// floor it keeps must be the one the former ring of whole writes (a
// HistoryWindow) kept, bounded by age and by count (spec 000 §8).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RevisionRing } from '../../src/watch/revision-ring.js';
import { HistoryWindow } from '../../src/watch/window.js';

describe('RevisionRing', () => {
  it('raises its floor past writes older than the age limit and beyond the count limit', () => {
    const r = new RevisionRing(10, 100, 3);
    expect(r.floor).toBe(10);
    r.push(11, 1000);
    r.push(12, 1050);
    r.push(13, 1100);
    expect(r.size).toBe(3);
    r.prune(1120); // cutoff 1020: 11 is older
    expect(r.floor).toBe(11);
    expect(r.size).toBe(2);
    r.push(14, 1100);
    r.push(15, 1100); // four retained: the oldest goes
    expect(r.floor).toBe(12);
    expect(r.size).toBe(3);
    r.prune(10_000);
    expect(r.floor).toBe(15);
    expect(r.size).toBe(0);
    r.prune(20_000); // nothing left: unchanged
    expect(r.floor).toBe(15);
  });

  it('keeps the floor a HistoryWindow of the same writes keeps, through growth and wrap-around', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.record({ gap: fc.integer({ min: 1, max: 3 }), dt: fc.integer({ min: -5, max: 40 }) }), fc.record({ prune: fc.integer({ min: 0, max: 300 }) })), { maxLength: 400 }),
        fc.integer({ min: 1, max: 150 }),
        (steps, maxEntries) => {
          const ring = new RevisionRing(5, 100, maxEntries);
          const model = new HistoryWindow<{ revision: number; time: number }>(5, 100, maxEntries);
          let rev = 5;
          let time = 1000;
          for (const s of steps) {
            if ('prune' in s) {
              ring.prune(time + s.prune);
              model.prune(time + s.prune);
            } else {
              rev += s.gap; // a snapshot install skips revisions
              time += s.dt; // another leader's clock may be behind
              ring.push(rev, time);
              model.push({ revision: rev, time });
            }
            expect(ring.floor).toBe(model.floor);
            expect(ring.size).toBe(model.size);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
