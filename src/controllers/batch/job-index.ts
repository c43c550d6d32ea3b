// Per-index decisions of Indexed Jobs, pure: kube's backoff limit per index
// (KEP-3850: failure counts carried on the pods' annotations, failed indexes)
// and the success policy (KEP-3998: rules on succeeded indexes and counts).

import type { ApiObject, JSONValue } from '../../registry/types.js';
import { type FailureMatch, backoffDelay, indexOf, parseIndexes } from './job-plan.js';

export const INDEX_FAILURE_COUNT = 'batch.kubernetes.io/job-index-failure-count';
export const INDEX_IGNORED_FAILURE_COUNT = 'batch.kubernetes.io/job-index-ignored-failure-count';

export interface IndexCounts {
  /** failures counted against backoffLimitPerIndex */
  failures: number;
  /** failures a podFailurePolicy Ignore rule matched */
  ignored: number;
}

const count = (pod: ApiObject, key: string): number => {
  const v = pod.metadata?.annotations?.[key];
  return v !== undefined && /^\d+$/.test(v) ? Number(v) : 0;
};

/** the counts a pod was created with (its annotations; absent or malformed = 0, as kube) */
export function countsOf(pod: ApiObject): IndexCounts {
  return { failures: count(pod, INDEX_FAILURE_COUNT), ignored: count(pod, INDEX_IGNORED_FAILURE_COUNT) };
}

/**
 * kube's isIndexFailed: a counted failure of an index fails it when a
 * FailIndex rule matched, or when the failures before it (its own
 * annotation) already reached backoffLimitPerIndex.
 */
export function failsIndex(pod: ApiObject, match: FailureMatch | undefined, backoffLimitPerIndex: number): boolean {
  if (match?.action === 'FailIndex') return true;
  return countsOf(pod).failures >= backoffLimitPerIndex;
}

/**
 * kube's getNewIndexFailureCounts: a replacement of an index carries the
 * counts of the failed pod it replaces plus that pod's own failure (in
 * `ignored` when an Ignore rule matched it). With several failed pods of the
 * index still present the highest counts win: each was made from the last.
 */
export function nextCounts(failed: { pod: ApiObject; ignored: boolean }[]): IndexCounts {
  const out: IndexCounts = { failures: 0, ignored: 0 };
  for (const { pod, ignored } of failed) {
    const c = countsOf(pod);
    const f = c.failures + (ignored ? 0 : 1);
    const g = c.ignored + (ignored ? 1 : 0);
    if (f + g > out.failures + out.ignored) {
      out.failures = f;
      out.ignored = g;
    }
  }
  return out;
}

/** the back-off still to wait before an index's replacement: 10 s × 2^(failures − 1) from its last counted failure */
export function indexBackoffLeft(failures: number, lastFailureAt: number | undefined, now: number): number {
  if (lastFailureAt === undefined) return 0;
  return Math.max(0, backoffDelay(failures) - (now - lastFailureAt));
}

/** the failed pods of each index (for nextCounts) */
export function failedByIndex(pods: ApiObject[], completions: number, isFailed: (p: ApiObject) => boolean, ignored: (p: ApiObject) => boolean): Map<number, { pod: ApiObject; ignored: boolean }[]> {
  const out = new Map<number, { pod: ApiObject; ignored: boolean }[]>();
  for (const p of pods) {
    if (!isFailed(p)) continue;
    const i = indexOf(p, completions);
    if (i === undefined) continue;
    const list = out.get(i) ?? [];
    list.push({ pod: p, ignored: ignored(p) });
    out.set(i, list);
  }
  return out;
}

interface SuccessRule {
  succeededIndexes?: string;
  succeededCount?: number;
}

/**
 * kube's matchSuccessPolicy: the first rule met, or undefined. A rule with
 * succeededIndexes only is met when all those indexes succeeded; with
 * succeededCount only, when that many indexes succeeded; with both, when that
 * many of those indexes succeeded.
 */
export function matchSuccessPolicy(policy: JSONValue | undefined, completions: number, completed: Set<number>): { rule: number; message: string } | undefined {
  const rules = ((policy as { rules?: SuccessRule[] } | undefined)?.rules ?? []);
  for (const [i, r] of rules.entries()) {
    let met: boolean;
    if (r.succeededIndexes !== undefined) {
      const want = parseIndexes(r.succeededIndexes, completions);
      let got = 0;
      for (const x of want) if (completed.has(x)) got++;
      met = r.succeededCount !== undefined ? got >= r.succeededCount : got === want.size;
    } else if (r.succeededCount !== undefined) met = completed.size >= r.succeededCount;
    else continue;
    if (met) return { rule: i, message: `Matched rules at index ${i}` };
  }
  return undefined;
}
