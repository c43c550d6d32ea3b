// The ReplicaSet controller's decisions, pure (kube's replica_set.go and
// controller_utils.go): which pods go first when there are too many, how
// creations are batched, and the status a set of pods gives.

import type { ApiObject, JSONValue } from '../../registry/types.js';
import { matchesLabelSelector } from '../../registry/kinds/workload-shared.js';
import { isPodAvailable, isPodReady, labelsOf, readySince } from './pods.js';

type Obj = Record<string, JSONValue>;

/** kube's burstReplicas: at most this many pods created or deleted per sync */
export const BURST_REPLICAS = 500;

/**
 * Sizes of the creation batches for `count` pods: 1, 2, 4, … (kube's
 * slowStartBatch from SlowStartInitialBatchSize 1), so a template that
 * cannot be created fails once instead of `count` times.
 */
export function slowStartBatches(count: number): number[] {
  const out: number[] = [];
  let left = Math.min(count, BURST_REPLICAS);
  for (let size = 1; left > 0; size *= 2) {
    const n = Math.min(size, left);
    out.push(n);
    left -= n;
  }
  return out;
}

const nodeOf = (p: ApiObject): string => String((p.spec as Obj | undefined)?.nodeName ?? '');
const phaseRank = (p: ApiObject): number => ({ Pending: 0, Unknown: 1, Running: 2 } as Record<string, number>)[String((p.status as Obj | undefined)?.phase ?? '')] ?? 0;
const restarts = (p: ApiObject): number => {
  const cs = (p.status as Obj | undefined)?.containerStatuses;
  return Array.isArray(cs) ? Math.max(0, ...cs.map((c) => Number((c as Obj).restartCount ?? 0))) : 0;
};
const created = (p: ApiObject): number => Date.parse(p.metadata?.creationTimestamp ?? '') || 0;
const deletionCost = (p: ApiObject): number => {
  const v = Number(p.metadata?.annotations?.['controller.kubernetes.io/pod-deletion-cost'] ?? 0);
  return Number.isFinite(v) ? v : 0;
};

/**
 * The `count` pods to delete first, in kube's ActivePodsWithRanks order:
 * unscheduled before scheduled; Pending before Unknown before Running; not
 * ready before ready; lower pod-deletion-cost first; more of `related` on the
 * same node first (doubled-up pods); ready for less time first; more
 * restarts first; newer first.
 */
export function podsToDelete(pods: ApiObject[], count: number, related: ApiObject[] = pods): ApiObject[] {
  if (count <= 0) return [];
  const perNode = new Map<string, number>();
  for (const p of related) {
    const n = nodeOf(p);
    if (n !== '') perNode.set(n, (perNode.get(n) ?? 0) + 1);
  }
  const rank = (p: ApiObject): number => perNode.get(nodeOf(p)) ?? 0;
  const sorted = [...pods].sort((a, b) => {
    const sa = nodeOf(a) !== '';
    const sb = nodeOf(b) !== '';
    if (sa !== sb) return sa ? 1 : -1;
    if (phaseRank(a) !== phaseRank(b)) return phaseRank(a) - phaseRank(b);
    const ra = isPodReady(a);
    const rb = isPodReady(b);
    if (ra !== rb) return ra ? 1 : -1;
    if (deletionCost(a) !== deletionCost(b)) return deletionCost(a) - deletionCost(b);
    if (rank(a) !== rank(b)) return rank(b) - rank(a);
    if (ra && rb) {
      const ta = readySince(a) ?? 0;
      const tb = readySince(b) ?? 0;
      if (ta !== tb) return tb - ta;
    }
    if (restarts(a) !== restarts(b)) return restarts(b) - restarts(a);
    return created(b) - created(a);
  });
  return sorted.slice(0, Math.min(count, BURST_REPLICAS));
}

export interface ReplicaCounts {
  replicas: number;
  fullyLabeledReplicas: number;
  readyReplicas: number;
  availableReplicas: number;
}

/** the counts of a ReplicaSet's active pods (kube's calculateStatus) */
export function replicaCounts(pods: ApiObject[], templateLabels: Record<string, JSONValue>, minReadySeconds: number, now: number): ReplicaCounts {
  const out: ReplicaCounts = { replicas: pods.length, fullyLabeledReplicas: 0, readyReplicas: 0, availableReplicas: 0 };
  const full = { matchLabels: templateLabels } as Obj;
  for (const p of pods) {
    if (matchesLabelSelector(full, labelsOf(p))) out.fullyLabeledReplicas++;
    if (isPodReady(p)) {
      out.readyReplicas++;
      if (isPodAvailable(p, minReadySeconds, now)) out.availableReplicas++;
    }
  }
  return out;
}
