// The MVCC state's change records by column (src/store/change-log.ts),
// checked against an array of record objects (what MvccState kept before).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ChangeLog, type ChangeRecord } from '../../src/store/change-log.js';

describe('ChangeLog', () => {
  it('keeps index times monotonic and answers time lookups by them', () => {
    const log = new ChangeLog();
    log.push(1, 1000, 'a');
    log.push(2, 900, ['a', 'b']); // an older clock: the index time stays 1000
    log.push(3, 1100, 'b');
    expect(log.records()).toEqual([
      { rev: 1, time: 1000, indexTime: 1000, keys: 'a' },
      { rev: 2, time: 900, indexTime: 1000, keys: ['a', 'b'] },
      { rev: 3, time: 1100, indexTime: 1100, keys: 'b' },
    ]);
    expect(log.countIndexedAtOrBefore(999)).toBe(0);
    expect(log.countIndexedAtOrBefore(1000)).toBe(2);
    expect(log.countIndexedAtOrBefore(5000)).toBe(3);
    log.dropOldest(2);
    expect(log.length).toBe(1);
    expect(log.rev(0)).toBe(3);
    log.dropOldest(5);
    expect(log.length).toBe(0);
    log.push(4, 800, 'c'); // nothing retained: the index time restarts from the write's time
    expect(log.indexTime(0)).toBe(800);
  });

  it('agrees with an array of records through pushes, drops, growth and moves', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.record({ dt: fc.integer({ min: -50, max: 100 }), multi: fc.boolean() }), fc.record({ drop: fc.nat(80) })), { maxLength: 600 }),
        (steps) => {
          const log = new ChangeLog();
          let model: ChangeRecord[] = [];
          let rev = 0;
          let time = 1.7e12; // ms since the epoch: not small integers
          for (const s of steps) {
            if ('drop' in s) {
              log.dropOldest(s.drop);
              model = model.slice(s.drop);
            } else {
              rev++;
              time += s.dt;
              const keys = s.multi ? [`k${rev}`, 'x'] : `k${rev}`;
              log.push(rev, time, keys);
              model.push({ rev, time, indexTime: Math.max(model[model.length - 1]?.indexTime ?? 0, time), keys });
            }
            expect(log.length).toBe(model.length);
          }
          expect(log.records()).toEqual(model);
          const cols = log.columns();
          expect([...cols.revs]).toEqual(model.map((r) => r.rev));
          expect([...cols.times]).toEqual(model.map((r) => r.time));
          expect([...cols.indexTimes]).toEqual(model.map((r) => r.indexTime));
          expect(cols.keys).toEqual(model.map((r) => r.keys));
          for (const r of model) expect(log.countIndexedAtOrBefore(r.indexTime)).toBe(model.filter((m) => m.indexTime <= r.indexTime).length);
        },
      ),
      { numRuns: 200 },
    );
  });
});
