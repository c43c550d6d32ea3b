// Pod conditions the agent owns and those it does not (kubelet's status
// manager, spec 002): the agent computes PodReadyToStartContainers,
// Initialized, Ready, ContainersReady and PodScheduled; any other condition
// (a readiness gate's, set by an external controller; DisruptionTarget, set by
// the disruption and eviction machinery) belongs to whoever wrote it. The
// agent keeps those in its view of the pod, counts them for the readiness
// gates, and never sends them: its status writes are strategic merge patches
// in which the conditions merge by type, so it cannot drop or roll back a
// condition someone else set meanwhile (a JSON merge patch replaces the list).

/** the conditions kubelet owns (pkg/kubelet/types PodConditionsByKubelet, PodReadyToStartContainers on in 1.32) */
export const KUBELET_CONDITIONS: ReadonlySet<string> = new Set(['PodScheduled', 'Ready', 'Initialized', 'ContainersReady', 'PodReadyToStartContainers']);

export interface PodCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  [field: string]: unknown;
}

const conditionsOf = (status: Record<string, unknown> | undefined): PodCondition[] =>
  Array.isArray(status?.conditions) ? (status.conditions as PodCondition[]) : [];

/** the conditions of a status that the agent does not own, in their order */
export const othersConditions = (status: Record<string, unknown> | undefined): PodCondition[] => conditionsOf(status).filter((c) => !KUBELET_CONDITIONS.has(c.type));

/**
 * The agent's status with the others' conditions of `api` (a newer pod from the API): what the
 * agent computed stands for its own conditions, the API for everyone else's.
 */
export function withOthersConditions(own: Record<string, unknown>, api: Record<string, unknown> | undefined): Record<string, unknown> {
  const others = othersConditions(api);
  const mine = conditionsOf(own).filter((c) => KUBELET_CONDITIONS.has(c.type));
  if (others.length === 0 && mine.length === conditionsOf(own).length) return own;
  return { ...own, conditions: [...others, ...mine] };
}

/**
 * kubelet's GeneratePodReadyCondition for pods whose containers are ready: every readiness gate's
 * condition must be there and True; undefined when they are (or there are none), else why not
 */
export function readinessGatesUnready(gates: readonly { conditionType?: string }[] | undefined, conditions: readonly PodCondition[]): string | undefined {
  const unready: string[] = [];
  for (const g of gates ?? []) {
    const type = g.conditionType ?? '';
    const c = conditions.find((x) => x.type === type);
    if (!c) unready.push(`corresponding condition of pod readiness gate ${JSON.stringify(type)} does not exist.`);
    else if (c.status !== 'True') unready.push(`the status of pod readiness gate ${JSON.stringify(type)} is not "True", but ${c.status}`);
  }
  return unready.length > 0 ? unready.join(', ') : undefined;
}

/**
 * The body of the agent's strategic merge patch of `status` (its whole view of the pod's status):
 * its own conditions merged by type and the ones it no longer reports deleted, the others' left
 * out; the address lists (merged by `ip` otherwise) replaced whole; everything else as a merge
 * patch has it (null clears a field).
 */
export function statusPatch(status: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(status)) {
    if (k === 'conditions') continue;
    out[k] = (k === 'podIPs' || k === 'hostIPs') && Array.isArray(v) ? [{ $patch: 'replace' }, ...v] : v;
  }
  const mine = conditionsOf(status).filter((c) => KUBELET_CONDITIONS.has(c.type));
  const reported = new Set(mine.map((c) => c.type));
  out.conditions = [...mine, ...[...KUBELET_CONDITIONS].filter((t) => !reported.has(t)).map((type) => ({ type, $patch: 'delete' }))];
  return out;
}
