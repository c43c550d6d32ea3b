// A namespace's new enforce level checked against the pods already in it
// (kube's EvaluatePodsInNamespace): one warning line per distinct set of
// reasons, naming the first pod (by name) and how many others share it.
// At most 3000 pods are checked, one per controller before the other replicas.

import type { ApiObject } from '../types.js';
import { evaluatePod, forbiddenReason } from './evaluator.js';
import { type LevelVersion, levelVersionString } from './policy.js';
import { podOf } from './templates.js';

/** kube checks at most this many pods */
const MAX_PODS = 3000;

/** one pod per controller first, the other replicas after them (kube's prioritizePods): the limit cuts replicas */
function prioritized(pods: ApiObject[]): ApiObject[] {
  const first: ApiObject[] = [];
  const rest: ApiObject[] = [];
  const seen = new Set<string>();
  for (const pod of pods) {
    const owner = pod.metadata?.ownerReferences?.find((r) => r.controller === true)?.uid;
    if (typeof owner !== 'string') first.push(pod);
    else if (seen.has(owner)) rest.push(pod);
    else {
      seen.add(owner);
      first.push(pod);
    }
  }
  return [...first, ...rest];
}

export function existingPodWarnings(namespace: string, enforce: LevelVersion, pods: ApiObject[]): string[] {
  const byReason = new Map<string, { first: string; count: number }>();
  const checked = prioritized(pods).slice(0, MAX_PODS);
  for (const pod of checked) {
    const { meta, spec } = podOf(pod);
    const violations = evaluatePod(enforce, meta, spec);
    if (violations.length === 0) continue;
    const reason = forbiddenReason(violations);
    const name = pod.metadata?.name ?? '';
    const seen = byReason.get(reason);
    if (!seen) byReason.set(reason, { first: name, count: 1 });
    else {
      seen.count++;
      if (name < seen.first) seen.first = name;
    }
  }
  const warnings: string[] = [];
  if (checked.length < pods.length) warnings.push(`new PodSecurity enforce level only checked against the first ${checked.length} of ${pods.length} existing pods`);
  if (byReason.size > 0) warnings.push(`existing pods in namespace "${namespace}" violate the new PodSecurity enforce level "${levelVersionString(enforce)}"`);
  const lines = [...byReason].map(([reason, { first, count }]) => {
    if (count === 1) return `${first}: ${reason}`;
    return `${first} (and ${count - 1} other ${count === 2 ? 'pod' : 'pods'}): ${reason}`;
  });
  return [...warnings, ...lines.sort((x, y) => (x < y ? -1 : x > y ? 1 : 0))];
}
