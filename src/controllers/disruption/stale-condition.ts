// The disruption controller's second duty (kube's stale pod disruption
// cleanup): pods/eviction marks a pod `DisruptionTarget=True` before deleting
// it; if the delete did not follow (a conflict, a refused admission), the pod
// would carry the condition for ever. Two minutes after the condition's
// lastTransitionTime a pod that is still not being deleted has it set back to
// False. Conditions the node agent sets (reason TerminationByKubelet) and pods
// in a terminal phase are left alone, as kube does.

import type { ApiObject, JSONValue } from '../../registry/types.js';

/** kube's stalePodDisruptionTimeout */
export const STALE_DISRUPTION_MS = 2 * 60 * 1000;

type Cond = Record<string, JSONValue>;

function disruptionTarget(pod: ApiObject): Cond | undefined {
  const conds = (pod.status as { conditions?: unknown } | undefined)?.conditions;
  return Array.isArray(conds) ? (conds as Cond[]).find((c) => c && c.type === 'DisruptionTarget') : undefined;
}

/** ms until the pod's DisruptionTarget condition is stale (0 = now); undefined = nothing to clean */
export function staleDisruptionWait(pod: ApiObject, now: number): number | undefined {
  if (pod.metadata?.deletionTimestamp) return undefined;
  const phase = (pod.status as { phase?: string } | undefined)?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') return undefined;
  const c = disruptionTarget(pod);
  if (!c || c.status !== 'True' || c.reason === 'TerminationByKubelet') return undefined;
  const since = typeof c.lastTransitionTime === 'string' ? Date.parse(c.lastTransitionTime) : NaN;
  const wait = Number.isNaN(since) ? 0 : since + STALE_DISRUPTION_MS - now;
  return Math.max(0, wait);
}

/** the pod with its DisruptionTarget condition set to False at `nowIso` */
export function clearDisruptionTarget(pod: ApiObject, nowIso: string): ApiObject {
  const status = (pod.status ??= {}) as { conditions?: Cond[] };
  status.conditions = (status.conditions ?? []).map((c) =>
    c.type === 'DisruptionTarget' ? { type: 'DisruptionTarget', status: 'False', lastProbeTime: null, lastTransitionTime: nowIso } : c,
  );
  return pod;
}
