// The per-index parts of Indexed Jobs (src/controllers/batch/job-index.ts)
// with the Job plan: random runs of success and failure under
// backoffLimitPerIndex end with every index either completed or failed, no
// index getting more than backoffLimitPerIndex + 1 pods, and the counts on
// each replacement being the failures of its index so far; successPolicy
// against a reading of the rules with plain arrays.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { COMPLETION_INDEX, formatIndexes, indexOf, planPods } from '../../src/controllers/batch/job-plan.js';
import { INDEX_FAILURE_COUNT, type IndexCounts, countsOf, failedByIndex, failsIndex, matchSuccessPolicy, nextCounts } from '../../src/controllers/batch/job-index.js';
import type { ApiObject } from '../../src/registry/types.js';

const pod = (i: number, n: number, c: IndexCounts): ApiObject => ({
  metadata: { name: `p${n}`, uid: `u${n}`, annotations: { [COMPLETION_INDEX]: String(i), [INDEX_FAILURE_COUNT]: String(c.failures) } },
}) as ApiObject;

describe('backoffLimitPerIndex with the Job plan', () => {
  it('every index ends completed or failed; at most limit + 1 pods per index; replacements carry the failures so far', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 4 }), fc.integer({ min: 1, max: 8 }), fc.integer({ min: 0, max: 3 }), fc.array(fc.tuple(fc.nat(), fc.boolean()), { minLength: 80, maxLength: 80 }), (parallelism, completions, limit, picks) => {
        const completed = new Set<number>();
        const failed = new Set<number>();
        const failedPods: ApiObject[] = [];
        const made = new Map<number, number>();
        const failures = new Map<number, number>();
        let active: ApiObject[] = [];
        let n = 0;
        for (const [pick, ok] of picks) {
          const plan = planPods({ parallelism, completions, indexed: true, succeeded: 0, completed, failed, active, terminating: 0 });
          const byIndex = failedByIndex(failedPods, completions, () => true, () => false);
          active = active.filter((p) => !plan.remove.includes(p));
          for (const i of plan.indexes) {
            const c = nextCounts(byIndex.get(i) ?? []);
            expect(c.failures).toBe(failures.get(i) ?? 0);
            made.set(i, (made.get(i) ?? 0) + 1);
            active.push(pod(i, n++, c));
          }
          if (active.length === 0) break;
          const p = active[pick % active.length]!;
          active = active.filter((x) => x !== p);
          const i = indexOf(p, completions)!;
          if (ok) completed.add(i);
          else {
            failures.set(i, (failures.get(i) ?? 0) + 1);
            failedPods.push(p);
            if (failsIndex(p, undefined, limit)) failed.add(i);
          }
        }
        if (active.length > 0) return; // the run was cut short by the pick budget
        for (let i = 0; i < completions; i++) expect(completed.has(i) !== failed.has(i)).toBe(true);
        for (const [i, m] of made) expect(m, `index ${i}`).toBeLessThanOrEqual(limit + 1);
        for (const i of failed) expect(failures.get(i)).toBe(limit + 1);
      }),
      { numRuns: 300 },
    );
  });

  it('counts: malformed annotations read as 0; an ignored failure goes to the ignored count', () => {
    const p = (a: Record<string, string>): ApiObject => ({ metadata: { annotations: a } }) as ApiObject;
    expect(countsOf(p({ [INDEX_FAILURE_COUNT]: '-1' }))).toEqual({ failures: 0, ignored: 0 });
    expect(nextCounts([{ pod: p({ [INDEX_FAILURE_COUNT]: '2' }), ignored: true }])).toEqual({ failures: 2, ignored: 1 });
    expect(nextCounts([{ pod: p({ [INDEX_FAILURE_COUNT]: '1' }), ignored: false }, { pod: p({ [INDEX_FAILURE_COUNT]: '0' }), ignored: false }])).toEqual({ failures: 2, ignored: 0 });
  });
});

describe('successPolicy', () => {
  const ruleArb = fc.record({ idx: fc.option(fc.uniqueArray(fc.integer({ min: 0, max: 9 }), { minLength: 1, maxLength: 6 }), { nil: undefined }), count: fc.option(fc.integer({ min: 1, max: 6 }), { nil: undefined }) })
    .filter((r) => r.idx !== undefined || r.count !== undefined);
  it('the first rule met: all of succeededIndexes, succeededCount of them, or succeededCount overall', () => {
    fc.assert(
      fc.property(fc.array(ruleArb, { minLength: 1, maxLength: 4 }), fc.uniqueArray(fc.integer({ min: 0, max: 9 }), { maxLength: 10 }), (rules, done) => {
        const policy = { rules: rules.map((r) => ({ ...(r.idx ? { succeededIndexes: formatIndexes(r.idx) } : {}), ...(r.count !== undefined ? { succeededCount: r.count } : {}) })) };
        const want = rules.findIndex((r) => {
          const got = r.idx ? r.idx.filter((i) => done.includes(i)).length : done.length;
          return r.count !== undefined ? got >= r.count : got === r.idx!.length;
        });
        const m = matchSuccessPolicy(policy, 10, new Set(done));
        if (want < 0) expect(m).toBeUndefined();
        else expect(m).toEqual({ rule: want, message: `Matched rules at index ${want}` });
      }),
      { numRuns: 300 },
    );
  });
});
