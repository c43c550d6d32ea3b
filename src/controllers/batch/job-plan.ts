// The Job controller's decisions, pure (kube's job_controller.go,
// indexed_job_utils.go, pod_failure_policy.go, backoff_utils.go): how many
// pods to create and which indexes, which pods go when there are too many,
// completed-index sets, the back-off between recreations, pod failure
// policy matching and the restart count of OnFailure pods.

import type { ApiObject, JSONValue } from '../../registry/types.js';
import { podsToDelete } from '../workloads/replicaset-plan.js';

type Obj = Record<string, JSONValue>;

export const COMPLETION_INDEX = 'batch.kubernetes.io/job-completion-index';
export const TRACKING_FINALIZER = 'batch.kubernetes.io/job-tracking';

/** kube's DefaultJobPodFailureBackOff and the cap the Job docs give ("capped at six minutes") */
export const BACKOFF_BASE_MS = 10_000;
export const BACKOFF_MAX_MS = 6 * 60_000;

/** the delay before a replacement after `failures` failures in a row (none before the first) */
export function backoffDelay(failures: number): number {
  if (failures <= 0) return 0;
  return Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** Math.min(failures - 1, 30));
}

/** the pod's completion index, undefined when absent or not a decimal in range */
export function indexOf(pod: ApiObject, completions: number): number | undefined {
  const v = pod.metadata?.annotations?.[COMPLETION_INDEX] ?? pod.metadata?.labels?.[COMPLETION_INDEX];
  if (v === undefined || !/^(0|[1-9]\d*)$/.test(v)) return undefined;
  const n = Number(v);
  return n < completions ? n : undefined;
}

/** parses `status.completedIndexes` ("1,3-5,7"); values at or past `completions` are dropped, as kube does */
export function parseIndexes(s: string | undefined, completions: number): Set<number> {
  const out = new Set<number>();
  for (const part of (s ?? '').split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!m) continue;
    const lo = Number(m[1]);
    const hi = m[2] === undefined ? lo : Number(m[2]);
    for (let i = lo; i <= hi && i < completions; i++) out.add(i);
  }
  return out;
}

/** the interval form kube writes: ascending, runs of consecutive indexes as `a-b` */
export function formatIndexes(set: Iterable<number>): string {
  const xs = [...new Set(set)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < xs.length; ) {
    let j = i;
    while (j + 1 < xs.length && xs[j + 1] === xs[j]! + 1) j++;
    parts.push(j === i ? String(xs[i]) : `${xs[i]}-${xs[j]}`);
    i = j + 1;
  }
  return parts.join(',');
}

export interface PlanInput {
  parallelism: number;
  /** undefined: a work-queue Job (done once any pod succeeded and none is active) */
  completions?: number;
  indexed: boolean;
  /** succeeded pods (NonIndexed) */
  succeeded: number;
  /** completed indexes (Indexed) */
  completed: Set<number>;
  /** failed indexes (Indexed with backoffLimitPerIndex): neither pending nor kept */
  failed?: Set<number>;
  /** the active pods */
  active: ApiObject[];
  /** terminating pods counted as active (podReplacementPolicy Failed) */
  terminating: number;
}

export interface Plan {
  /** how many pods to create (NonIndexed) */
  create: number;
  /** the indexes to create pods for (Indexed; lowest pending first) */
  indexes: number[];
  /** active pods to delete */
  remove: ApiObject[];
}

/**
 * kube's manageJob arithmetic: the active pods wanted are
 * min(completions − succeeded, parallelism) (a work-queue Job keeps
 * parallelism until a pod succeeded, then leaves the rest running); the
 * excess goes (for Indexed first the pods of completed, failed, duplicated
 * or out-of-range indexes), the shortfall is created; a failed index counts
 * as done for the arithmetic and is never pending again (KEP-3850).
 */
export function planPods(p: PlanInput): Plan {
  const active = p.active.length;
  const failedIdx = p.failed ?? new Set<number>();
  const done = p.indexed ? p.completed.size + failedIdx.size : p.succeeded;
  let want: number;
  if (p.completions === undefined) want = done > 0 ? active : p.parallelism;
  else want = Math.max(0, Math.min(p.completions - done, p.parallelism));
  const remove: ApiObject[] = [];
  let keep = p.active;
  if (p.indexed) {
    const seen = new Set<number>();
    keep = [];
    for (const pod of p.active) {
      const i = indexOf(pod, p.completions ?? 0);
      if (i === undefined || p.completed.has(i) || failedIdx.has(i) || seen.has(i)) remove.push(pod);
      else {
        seen.add(i);
        keep.push(pod);
      }
    }
  }
  const excess = keep.length - want;
  if (excess > 0) remove.push(...podsToDelete(keep, excess));
  const left = keep.length - Math.max(0, excess) + p.terminating;
  const short = Math.max(0, want - left);
  if (!p.indexed) return { create: short, indexes: [], remove };
  const busy = new Set(keep.filter((x) => !remove.includes(x)).map((x) => indexOf(x, p.completions ?? 0)!));
  const indexes: number[] = [];
  for (let i = 0; i < (p.completions ?? 0) && indexes.length < short; i++) if (!p.completed.has(i) && !failedIdx.has(i) && !busy.has(i)) indexes.push(i);
  return { create: indexes.length, indexes, remove };
}

export type FailureAction = 'FailJob' | 'Ignore' | 'Count' | 'FailIndex';

export interface FailureMatch {
  action: FailureAction;
  /** kube's message for a FailJob match */
  message: string;
}

interface Rule {
  action?: string;
  onExitCodes?: { containerName?: string; operator?: string; values?: number[] };
  onPodConditions?: { type?: string; status?: string }[];
}

const statuses = (pod: ApiObject): Obj[] => {
  const st = (pod.status ?? {}) as Obj;
  return [...((st.initContainerStatuses ?? []) as Obj[]), ...((st.containerStatuses ?? []) as Obj[])];
};

/** the first rule of spec.podFailurePolicy a failed pod matches (kube's matchPodFailurePolicy); undefined = none (Count) */
export function matchFailurePolicy(policy: JSONValue | undefined, pod: ApiObject): FailureMatch | undefined {
  const rules = ((policy as Obj | undefined)?.rules ?? []) as Rule[];
  const who = `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
  for (const [i, r] of rules.entries()) {
    const action = (r.action ?? 'Count') as FailureAction;
    if (r.onExitCodes) {
      const req = r.onExitCodes;
      for (const cs of statuses(pod)) {
        if (req.containerName && cs.name !== req.containerName) continue;
        const code = ((cs.state as Obj | undefined)?.terminated as Obj | undefined)?.exitCode;
        if (typeof code !== 'number' || code === 0) continue;
        const listed = (req.values ?? []).includes(code);
        if (req.operator === 'NotIn' ? !listed : listed) {
          return { action, message: `Container ${String(cs.name)} for pod ${who} failed with exit code ${code} matching ${action} rule at index ${i}` };
        }
      }
    }
    for (const c of r.onPodConditions ?? []) {
      const conds = ((pod.status as Obj | undefined)?.conditions ?? []) as Obj[];
      if (conds.some((x) => x.type === c.type && x.status === (c.status ?? 'True'))) {
        return { action, message: `Pod ${who} has condition ${String(c.type)} matching ${action} rule at index ${i}` };
      }
    }
  }
  return undefined;
}

/** kube's pastBackoffLimitOnFailure: container restarts of the active pods of an OnFailure Job reach backoffLimit */
export function pastBackoffLimitOnFailure(active: ApiObject[], backoffLimit: number): boolean {
  let restarts = 0;
  for (const pod of active) for (const cs of statuses(pod)) restarts += Number(cs.restartCount ?? 0);
  return backoffLimit === 0 ? restarts > 0 : restarts >= backoffLimit;
}
