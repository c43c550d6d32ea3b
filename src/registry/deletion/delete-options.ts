// The DeleteOptions fields both the DELETE verb (src/endpoints/handlers/delete.ts: query and body)
// and an Eviction's embedded `deleteOptions` (src/registry/kinds/pod-eviction.ts) validate, with
// kube's messages; `field` is the path the message names (spec 000 §2.6).

import { badRequest } from '../../core/errors.js';
import type { FieldError } from '../../core/object.js';
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

/**
 * kube's ValidateDeleteOptions (apimachinery meta/v1/validation) of the DELETE verb, without
 * dryRun: both propagation options set, and a policy it does not know, each on
 * `propagationPolicy`; the caller answers them as 422 Invalid on DeleteOptions
 */
export function deleteOptionsErrors(policy: string | undefined, orphanDependents: boolean | undefined): FieldError[] {
  const errs: FieldError[] = [];
  if (policy === undefined) return errs;
  if (orphanDependents !== undefined) {
    errs.push({ field: 'propagationPolicy', type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(policy)}: orphanDependents and deletionPropagation cannot be both set` });
  }
  if (!POLICIES.includes(policy)) {
    errs.push({ field: 'propagationPolicy', type: 'FieldValueNotSupported', message: `Unsupported value: ${JSON.stringify(policy)}: supported values: "Foreground", "Background", "Orphan", "nil"` });
  }
  return errs;
}

/** kube's rest.BeforeDelete: a negative grace period is taken as 1 second, not refused */
export function deleteGracePeriod(seconds: number): number {
  return seconds < 0 ? 1 : seconds;
}
