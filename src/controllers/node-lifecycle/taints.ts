// Node taints and pod tolerations (spec 002 §3): the taints the node
// lifecycle controller owns, how a toleration matches a taint, and how long a
// pod may stay on a node with NoExecute taints it tolerates. Kubernetes'
// rules (k8s.io/api core/v1 toleration.go, the taint manager's
// getMinTolerationTime), written for this project. Pure functions.

export type TaintEffect = 'NoExecute' | 'NoSchedule' | 'PreferNoSchedule';

export interface Taint {
  key: string;
  value?: string;
  effect: TaintEffect | string;
  timeAdded?: string;
}

export interface Toleration {
  key?: string;
  operator?: 'Exists' | 'Equal' | string;
  value?: string;
  effect?: TaintEffect | string;
  tolerationSeconds?: number;
}

// the taint keys, `node.<label domain>/<name>` (spec 002 §3: `node.orch.io/unreachable`), shared with
// the scheduler, the DaemonSet controller and the DefaultTolerationSeconds admission
export { type NodeTaintKeys, nodeTaintKeys } from '../../machinery/node-taints.js';
import type { NodeTaintKeys } from '../../machinery/node-taints.js';

/** every key the controller owns: other taints on a node are never touched */
export function ownedTaintKeys(keys: NodeTaintKeys): ReadonlySet<string> {
  // planned on every Node write (each status heartbeat): built once per key set
  let owned = ownedCache.get(keys);
  if (!owned) ownedCache.set(keys, (owned = new Set(Object.values(keys))));
  return owned;
}
const ownedCache = new WeakMap<NodeTaintKeys, ReadonlySet<string>>();

/** Kubernetes' Toleration.ToleratesTaint */
export function tolerates(t: Toleration, taint: Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.key && t.key !== taint.key) return false;
  if (t.operator === 'Exists') return true;
  if (!t.key) return false; // an empty key is only valid with Exists
  return (t.value ?? '') === (taint.value ?? '');
}

/**
 * When a pod on a node with these taints must go (ms since the epoch): at
 * once (-Infinity) when some NoExecute taint is not tolerated, never
 * (undefined) when every one is tolerated without a time limit. Per taint the
 * first toleration that matches counts (kube's GetMatchingTolerations); a
 * taint tolerated for `tolerationSeconds` (≤ 0: not at all) is tolerated
 * until that long after the taint was added (`addedAt`, from its
 * `timeAdded`), so the deadline does not move when the controller restarts.
 */
export function evictionDue(taints: readonly Taint[], tolerations: readonly Toleration[], addedAt: (t: Taint) => number): number | undefined {
  let due = Infinity;
  for (const taint of taints) {
    if (taint.effect !== 'NoExecute') continue;
    const used = tolerations.find((t) => tolerates(t, taint));
    if (!used) return -Infinity;
    if (typeof used.tolerationSeconds === 'number') due = Math.min(due, addedAt(taint) + Math.max(0, used.tolerationSeconds) * 1000);
  }
  return due === Infinity ? undefined : due;
}

/** the same taint (key and effect identify a taint on a node) */
export const sameTaint = (a: Taint, b: Taint): boolean => a.key === b.key && a.effect === b.effect;
