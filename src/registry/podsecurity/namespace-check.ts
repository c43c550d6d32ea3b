// A namespace's new enforce level checked against the pods already in it
// (kube's EvaluatePodsInNamespace): one warning line per distinct set of
// reasons, naming the first pod (by name) and how many others share it.

import type { ApiObject } from '../types.js';
import { evaluatePod, forbiddenReason } from './evaluator.js';
import { type LevelVersion, levelVersionString } from './policy.js';
import { podOf } from './templates.js';

/** kube checks at most this many pods */
const MAX_PODS = 3000;

export function existingPodWarnings(namespace: string, enforce: LevelVersion, pods: ApiObject[]): string[] {
  const byReason = new Map<string, { first: string; count: number }>();
  const checked = pods.slice(0, MAX_PODS);
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
