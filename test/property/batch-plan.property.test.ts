// The batch controllers' pure parts against simple references: the cron
// next time (src/machinery/cron.ts) against a minute-by-minute walk
// of UTC fields (and of a zone's fields read through Intl), and the Job plan
// (job-plan.ts): never more than parallelism active after a step, Indexed
// pods only for pending indexes, each index once, and a run of steps
// completes every index exactly once.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type CronSchedule, type FieldSchedule, isConstantDelay, nextAfter, parseCron, parseGoDuration, wallTime } from '../../src/machinery/cron.js';
import { mostRecentSchedule, nextSchedule } from '../../src/controllers/batch/cronjob-plan.js';
import { COMPLETION_INDEX, formatIndexes, indexOf, parseIndexes, planPods } from '../../src/controllers/batch/job-plan.js';
import type { ApiObject } from '../../src/registry/types.js';

/** the reference: every minute after `after` until a match, fields read one by one */
function reference(sched: CronSchedule, after: number, limitMinutes: number): number | undefined {
  if (isConstantDelay(sched)) throw new Error('a field schedule was expected');
  const s: FieldSchedule = sched;
  let t = Math.floor(after / 60_000) * 60_000 + 60_000;
  for (let i = 0; i < limitMinutes; i++, t += 60_000) {
    const w = wallTime(t, s.timeZone);
    const dom = s.dom.bits.has(w.day);
    const dow = s.dow.bits.has(w.weekday);
    const day = s.dom.star || s.dow.star ? dom && dow : dom || dow;
    if (s.minute.bits.has(w.minute) && s.hour.bits.has(w.hour) && s.month.bits.has(w.month) && day) return t;
  }
  return undefined;
}

const part = (lo: number, hi: number): fc.Arbitrary<string> =>
  fc.oneof(
    fc.constant('*'),
    fc.integer({ min: lo, max: hi }).map(String),
    fc.tuple(fc.integer({ min: lo, max: hi }), fc.integer({ min: lo, max: hi })).map(([a, b]) => `${Math.min(a, b)}-${Math.max(a, b)}`),
    fc.integer({ min: 2, max: 7 }).map((n) => `*/${n}`),
    fc.tuple(fc.integer({ min: lo, max: hi }), fc.integer({ min: 2, max: 5 })).map(([a, n]) => `${a}/${n}`),
  );
const fieldArb = (lo: number, hi: number): fc.Arbitrary<string> => fc.array(part(lo, hi), { minLength: 1, maxLength: 3 }).map((xs) => (xs.includes('*') ? '*' : xs.join(',')));
// months and days of month kept wide enough that a match comes within the reference's window
const scheduleArb = fc.tuple(fieldArb(0, 59), fieldArb(0, 23), fc.constantFrom('*', '1-15', '*/2', '10,20', '?'), fc.constantFrom('*', '1-6', '*/3', 'JAN-JUN', '?'), fc.constantFrom('*', '1-5', 'MON,FRI', '0', '?'))
  .map((f) => f.join(' '));
const timeArb = fc.integer({ min: Date.parse('2025-01-01T00:00:00Z'), max: Date.parse('2030-01-01T00:00:00Z') });

describe('cron next time', () => {
  it('matches the minute-by-minute reference in UTC', () => {
    fc.assert(
      fc.property(scheduleArb, timeArb, (expr, t) => {
        const s = parseCron(expr);
        const want = reference(s, t, 200 * 24 * 60);
        if (want !== undefined) expect(nextAfter(s, t)).toBe(want);
      }),
      { numRuns: 150 },
    );
  });

  it('matches the reference on a zone with DST (wall clock read through Intl)', () => {
    fc.assert(
      fc.property(fc.tuple(fieldArb(0, 59), fieldArb(0, 23)).map(([m, h]) => `${m} ${h} * * *`), fc.integer({ min: Date.parse('2026-03-27T00:00:00Z'), max: Date.parse('2026-03-30T00:00:00Z') }), (expr, t) => {
        const s = parseCron(expr, 'Europe/Berlin');
        expect(nextAfter(s, t)).toBe(reference(s, t, 3 * 24 * 60));
      }),
      { numRuns: 60 },
    );
  });

  it('descriptors and names are the fields they stand for; bad schedules are refused', () => {
    const t = Date.parse('2026-05-05T10:10:00Z');
    expect(nextAfter(parseCron('@hourly'), t)).toBe(Date.parse('2026-05-05T11:00:00Z'));
    expect(nextAfter(parseCron('@daily'), t)).toBe(Date.parse('2026-05-06T00:00:00Z'));
    expect(nextAfter(parseCron('@weekly'), t)).toBe(Date.parse('2026-05-10T00:00:00Z'));
    expect(nextAfter(parseCron('@monthly'), t)).toBe(Date.parse('2026-06-01T00:00:00Z'));
    expect(nextAfter(parseCron('@yearly'), t)).toBe(Date.parse('2027-01-01T00:00:00Z'));
    expect(nextAfter(parseCron('0 12 * JUL SAT'), t)).toBe(Date.parse('2026-07-04T12:00:00Z'));
    expect(nextAfter(parseCron('TZ=America/New_York 0 9 * * *'), t)).toBe(Date.parse('2026-05-05T13:00:00Z'));
    // day of month OR day of week when both are restricted
    expect(nextAfter(parseCron('0 0 13 * 5'), Date.parse('2026-02-01T00:00:00Z'))).toBe(Date.parse('2026-02-06T00:00:00Z'));
    expect(nextAfter(parseCron('0 0 30 2 *'), t)).toBeUndefined();
    for (const bad of ['* * * *', '60 * * * *', '* * * * 8', '5-1 * * * *', '*/0 * * * *', '@every', '@every 5', '@every 5d', '@Daily', 'TZ=Nowhere/City * * * * *', 'a b c d e', '']) {
      expect(() => parseCron(bad), bad).toThrow();
    }
    // robfig's texts, which the API returns (spec.schedule)
    expect(() => parseCron('60 * * * *')).toThrow('end of range (60) above maximum (59): 60');
    expect(() => parseCron('5-1 * * * *')).toThrow('beginning of range (5) beyond end of range (1): 5-1');
    expect(() => parseCron('*/0 * * * *')).toThrow('step of range should be a positive number: */0');
    expect(() => parseCron('x * * * *')).toThrow('failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax');
    expect(() => parseCron('* * * *')).toThrow('expected exactly 5 fields, found 4: [* * * *]');
    expect(() => parseCron('@every 5d')).toThrow('failed to parse duration @every 5d: time: unknown unit "d" in duration "5d"');
    expect(() => parseCron('@every 5')).toThrow('failed to parse duration @every 5: time: missing unit in duration "5"');
  });

  it('@every is a constant delay of whole seconds from the start of the previous second', () => {
    const t = Date.parse('2026-05-05T10:10:07.250Z');
    expect(nextAfter(parseCron('@every 5m'), t)).toBe(Date.parse('2026-05-05T10:15:07Z'));
    expect(nextAfter(parseCron('@every 1h30m'), t)).toBe(Date.parse('2026-05-05T11:40:07Z'));
    // below a second is a second; fractions of a second are dropped
    expect(nextAfter(parseCron('@every 10ms'), t)).toBe(Date.parse('2026-05-05T10:10:08Z'));
    expect(nextAfter(parseCron('@every 2.9s'), t)).toBe(Date.parse('2026-05-05T10:10:09Z'));
    expect(nextAfter(parseCron('@every -3m'), t)).toBe(Date.parse('2026-05-05T10:10:08Z'));
    expect(nextAfter(parseCron('TZ=Europe/Berlin @every 1m'), t)).toBe(Date.parse('2026-05-05T10:11:07Z'));
  });

  it('@every: the most recent missed time and the next time are the walk of the delay from the anchor', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 600 }), timeArb, fc.integer({ min: 0, max: 3_000_000 }), fc.option(fc.integer({ min: 0, max: 3000 }), { nil: undefined }), (secs, earliest, span, deadline) => {
        const s = parseCron(`@every ${secs}s`);
        const now = earliest + span;
        const from = deadline !== undefined ? Math.max(earliest, now - deadline * 1000) : earliest;
        let t = from;
        let mostRecent: number | undefined;
        let missed = 0;
        for (let n = nextAfter(s, t)!; n <= now; n = nextAfter(s, t)!) [mostRecent, missed, t] = [n, missed + 1, n];
        expect(mostRecentSchedule(s, earliest, now, deadline)).toEqual({ ...(mostRecent !== undefined ? { mostRecent } : {}), missed });
        let next = nextAfter(s, earliest)!;
        while (next <= now) next = nextAfter(s, next)!;
        expect(nextSchedule(s, earliest, now)).toBe(next);
      }),
      { numRuns: 200 },
    );
  });

  it("Go's duration syntax: sums of signed decimal numbers with units", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 10_000 }), fc.constantFrom('ns', 'us', 'µs', 'ms', 's', 'm', 'h')), { minLength: 1, maxLength: 4 }), (parts) => {
        const scale: Record<string, number> = { ns: 1, us: 1e3, 'µs': 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9 };
        const text = parts.map(([n, u]) => `${n}${u}`).join('');
        expect(parseGoDuration(text)).toBe(parts.reduce((a, [n, u]) => a + n * scale[u]!, 0));
        expect(parseGoDuration(`-${text}`)).toBe(-parseGoDuration(text));
      }),
      { numRuns: 200 },
    );
    expect(parseGoDuration('1.5h')).toBe(5400e9);
    expect(parseGoDuration('.5s')).toBe(0.5e9);
    expect(parseGoDuration('0')).toBe(0);
    for (const bad of ['', '-', '.s', 's', '1.5', '1x', '5 m', '9999999999h']) expect(() => parseGoDuration(bad), bad).toThrow(/^time: /);
  });
});

const pod = (i?: number, n = 0): ApiObject => ({ metadata: { name: `p${n}`, uid: `u${n}`, ...(i !== undefined ? { annotations: { [COMPLETION_INDEX]: String(i) } } : {}) } }) as ApiObject;

describe('job plan', () => {
  it('never more than parallelism active after a step; indexes created are pending, distinct and not already running', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 8 }), fc.integer({ min: 1, max: 12 }), fc.boolean(),
        fc.array(fc.integer({ min: 0, max: 14 }), { maxLength: 12 }), fc.array(fc.integer({ min: 0, max: 11 }), { maxLength: 12 }), fc.integer({ min: 0, max: 3 }),
        (parallelism, completions, indexed, activeIdx, done, terminating) => {
          const completed = new Set(done.filter((i) => i < completions));
          const active = activeIdx.map((i, n) => pod(indexed ? i : undefined, n));
          const plan = planPods({ parallelism, completions, indexed, succeeded: indexed ? 0 : completed.size, completed, active, terminating });
          const after = active.length - plan.remove.length + plan.create;
          expect(after).toBeLessThanOrEqual(parallelism);
          if (plan.create > 0) expect(after + terminating).toBeLessThanOrEqual(parallelism);
          for (const r of plan.remove) expect(active).toContain(r);
          if (indexed) {
            expect(new Set(plan.indexes).size).toBe(plan.indexes.length);
            const running = active.filter((p) => !plan.remove.includes(p)).map((p) => indexOf(p, completions));
            for (const i of plan.indexes) {
              expect(i).toBeLessThan(completions);
              expect(completed.has(i)).toBe(false);
              expect(running).not.toContain(i);
            }
            // what stays: in range, not completed, one pod per index
            expect(new Set(running).size).toBe(running.length);
            for (const i of running) expect(i !== undefined && !completed.has(i)).toBe(true);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('steps of create / finish in random order complete every index exactly once', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5 }), fc.integer({ min: 1, max: 10 }), fc.array(fc.nat(), { minLength: 60, maxLength: 60 }), (parallelism, completions, picks) => {
        const completed = new Set<number>();
        let active: ApiObject[] = [];
        const succeededPerIndex = new Map<number, number>();
        let n = 0;
        for (const pick of picks) {
          const plan = planPods({ parallelism, completions, indexed: true, succeeded: 0, completed, active, terminating: 0 });
          active = active.filter((p) => !plan.remove.includes(p)).concat(plan.indexes.map((i) => pod(i, n++)));
          expect(active.length).toBeLessThanOrEqual(parallelism);
          if (active.length === 0) break;
          // one active pod succeeds
          const done = active[pick % active.length]!;
          active = active.filter((p) => p !== done);
          const i = indexOf(done, completions)!;
          succeededPerIndex.set(i, (succeededPerIndex.get(i) ?? 0) + 1);
          completed.add(i);
        }
        expect(completed.size).toBe(completions);
        for (const c of succeededPerIndex.values()) expect(c).toBe(1);
      }),
      { numRuns: 200 },
    );
  });

  it('completed indexes round-trip through kube\'s interval form', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 40 })), (xs) => {
        const s = formatIndexes(xs);
        expect([...parseIndexes(s, 41)].sort((a, b) => a - b)).toEqual([...new Set(xs)].sort((a, b) => a - b));
        // runs are merged: each part starts past the previous part's end + 1
        const parts = s === '' ? [] : s.split(',').map((x) => x.split('-').map(Number));
        for (let k = 1; k < parts.length; k++) expect(parts[k]![0]!).toBeGreaterThan(parts[k - 1]!.at(-1)! + 1);
      }),
    );
    expect(formatIndexes([0, 1, 2, 4, 6, 7])).toBe('0-2,4,6-7');
  });
});
