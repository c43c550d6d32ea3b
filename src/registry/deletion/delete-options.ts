// The DeleteOptions fields both the DELETE verb (src/endpoints/handlers/delete.ts: query and body)
// and an Eviction's embedded `deleteOptions` (src/registry/kinds/pod-eviction.ts) validate, with
// kube's messages; `field` is the path the message names (spec 000 §2.6).

import { badRequest } from '../../core/errors.js';
import type { PropagationPolicy } from '../../lifecycles/deletion.js';

const POLICIES: readonly string[] = ['Orphan', 'Background', 'Foreground'];

/** a propagation policy, or 400 naming `field` */
export function checkPropagationPolicy(value: unknown, field: string): PropagationPolicy {
  if (typeof value !== 'string' || !POLICIES.includes(value)) throw badRequest(`${field}: Unsupported value: ${JSON.stringify(value)}: supported values: "Foreground", "Background", "Orphan"`);
  return value as PropagationPolicy;
}

/** a grace period in seconds, or 400 naming `field` when it is negative */
export function checkGracePeriod(seconds: number, field: string): number {
  if (seconds < 0) throw badRequest(`${field}: Invalid value: must be greater than or equal to 0`);
  return seconds;
}
