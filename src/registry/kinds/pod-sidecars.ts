// kube 1.32's rules for the container-level restartPolicy (KEP-753 sidecar
// containers, SidecarContainers on by default since 1.29), from ValidatePodSpec
// (pkg/apis/core/validation: validateInitContainers, validateContainers):
// an init container may set `restartPolicy` and only to `Always` (a
// "restartable init container", a sidecar); a regular container may not set
// it. Lifecycle hooks and probes are allowed on regular containers and on
// sidecars, but forbidden on the other init containers. (Ephemeral containers
// refuse all of these through their allow list, pod-ephemeral.ts.)

import type { ApiObject, FieldError, JSONValue } from '../types.js';
import { getArray } from './columns.js';
import { forbidden, notSupported } from './field-errors.js';

type Obj = Record<string, JSONValue>;
const containersOf = (o: ApiObject, field: string): Obj[] => getArray(o, 'spec', field).filter((c): c is Obj => c !== null && typeof c === 'object' && !Array.isArray(c));

const HOOKS_AND_PROBES = ['lifecycle', 'livenessProbe', 'readinessProbe', 'startupProbe'] as const;

export function validateContainerRestartPolicies(o: ApiObject): FieldError[] {
  const errs: FieldError[] = [];
  containersOf(o, 'initContainers').forEach((c, i) => {
    const p = `spec.initContainers[${i}]`;
    const policy = c.restartPolicy;
    if (policy !== undefined && policy !== null && policy !== 'Always') errs.push(notSupported(`${p}.restartPolicy`, policy, ['Always']));
    if (policy === 'Always') return;
    for (const f of HOOKS_AND_PROBES) {
      if (c[f] !== undefined && c[f] !== null) errs.push(forbidden(`${p}.${f}`, 'may not be set for init containers without restartPolicy=Always'));
    }
  });
  containersOf(o, 'containers').forEach((c, i) => {
    if (c.restartPolicy !== undefined && c.restartPolicy !== null) errs.push(forbidden(`spec.containers[${i}].restartPolicy`, 'may not be set for non-init containers'));
  });
  return errs;
}
