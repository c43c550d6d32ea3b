// kube 1.32's validateSysctls and ValidateHostSysctl
// (pkg/apis/core/validation): each `spec.securityContext.sysctls[i].name` is
// required, in kube's format (dot- or slash-separated segments, at most 253
// characters), and not repeated; a sysctl of the network namespace is refused
// with `hostNetwork`, one of the IPC namespace with `hostIPC`. The same checks
// run on every workload's pod template (validatePod is shared).
//
// Ratcheting as kube's AllowNamespacedSysctlsForHostNetAndHostIPC: an update
// whose old spec already had such a sysctl keeps the host checks off.

import { isValidSysctlName, SYSCTL_MAX_LENGTH, SYSCTL_REGEXP_SOURCE, sysctlNamespace } from '../../core/sysctl.js';
import type { FieldError, JSONValue } from '../types.js';
import { getArray, getString } from './columns.js';
import { duplicate, invalid, required } from './field-errors.js';

type Obj = Record<string, JSONValue>;

const FORMAT = `must have at most ${SYSCTL_MAX_LENGTH} characters and match regex ${SYSCTL_REGEXP_SOURCE}`;

/** ValidateHostSysctl's message for a sysctl the spec's host namespaces forbid, else undefined */
function hostConflict(name: string, spec: Obj): string | undefined {
  const ns = sysctlNamespace(name).namespace;
  if (spec.hostNetwork === true && ns === 'Net') return "may not be specified when 'hostNetwork' is true";
  if (spec.hostIPC === true && ns === 'IPC') return "may not be specified when 'hostIPC' is true";
  return undefined;
}

const sysctlNames = (spec: Obj): string[] => getArray(spec, 'securityContext', 'sysctls').map((s) => getString(s, 'name') ?? '');

/** kube's pod.GetValidationOptionsFromPodSpecAndMeta: the old spec had a sysctl its host namespaces forbid */
export function allowsHostSysctls(oldSpec: Obj | undefined): boolean {
  return oldSpec !== undefined && sysctlNames(oldSpec).some((n) => hostConflict(n, oldSpec) !== undefined);
}

/** the errors of a pod spec's sysctls, under `at` (`spec`, `spec.template.spec`) */
export function validateSysctls(spec: Obj, at: string, opts: { allowHostSysctls?: boolean } = {}): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  sysctlNames(spec).forEach((name, i) => {
    const field = `${at}.securityContext.sysctls[${i}].name`;
    if (name === '') errs.push(required(field));
    else if (!isValidSysctlName(name)) errs.push(invalid(field, name, FORMAT));
    else if (seen.has(name)) errs.push(duplicate(field, name));
    if (!opts.allowHostSysctls) {
      const conflict = hostConflict(name, spec);
      if (conflict) errs.push(invalid(field, name, conflict));
    }
    seen.add(name);
  });
  return errs;
}
