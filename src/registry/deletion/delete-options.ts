// The DeleteOptions checks both the DELETE verb (src/endpoints/handlers/delete.ts: query and body)
// and an Eviction's embedded `deleteOptions` (src/registry/kinds/pod-eviction.ts) make, with
// kube's messages (apimachinery's ValidateDeleteOptions, ValidateDryRun; rest.BeforeDelete).
// The callers answer them as 422 Invalid on DeleteOptions (spec 000 §2.6).

import type { FieldError } from '../../core/object.js';

const POLICIES: readonly string[] = ['Orphan', 'Background', 'Foreground'];

/**
 * kube's ValidateDryRun: every value `All`, the list printed as Go's %#v of a slice;
 * `emptyAllowed`: a query's `dryRun=` (no value) passes
 */
export function dryRunError(values: readonly string[], emptyAllowed = false): FieldError | undefined {
  if (values.every((v) => v === 'All' || (emptyAllowed && v === ''))) return undefined;
  const slice = `[]string{${values.map((v) => JSON.stringify(v)).join(', ')}}`;
  return { field: 'dryRun', type: 'FieldValueNotSupported', message: `Unsupported value: ${slice}: supported values: "All"` };
}

/**
 * kube's ValidateDeleteOptions without dryRun (dryRunError): both propagation options set,
 * and a policy it does not know, each on `propagationPolicy`
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
