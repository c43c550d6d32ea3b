// Validation of the workload kinds' pod templates and rollout fields, as
// kube-apiserver 1.32's pkg/apis/apps/validation and ValidatePodTemplateSpecFor*
// state it (spec 000 §2.6: a bad object is a 422 naming every bad field). A
// template's pod spec is validated as a pod's (pod.ts validatePod) under the
// template's path, so a Deployment with a container kube would refuse is
// refused at once rather than failing later in its controller's pod creates.

import type { ApiObject, FieldError, JSONValue } from '../types.js';
import { get, getObject, getString } from './columns.js';
import { forbidden, invalid, notSupported, required } from './field-errors.js';
import { allowsHostSysctls } from './pod-sysctls.js';
import { validatePod } from './pod-validation.js';

type Obj = Record<string, JSONValue>;

/** the kind named in kube's "activeDeadlineSeconds in <Kind> is not Supported" (Deployments use ReplicaSet's rule) */
export type TemplateOwner = 'ReplicaSet' | 'DaemonSet' | 'StatefulSet' | 'ReplicationController' | 'Job' | 'PodTemplate';

/**
 * kube's ValidatePodTemplateSpec (+ ForReplicaSet, ForStatefulSet, ForRC, the
 * DaemonSet's checks): the pod spec as a pod's, no ephemeral containers, and
 * for the long-running kinds restartPolicy Always and no activeDeadlineSeconds.
 * `at` is the template's path (`spec.template`, `spec.jobTemplate.spec.template`);
 * `old`, on an update, the template before it (kube's GetValidationOptionsFromPodTemplate).
 */
export function validatePodTemplate(tmpl: Obj, at: string, owner: TemplateOwner, old?: Obj): FieldError[] {
  const spec = getObject(tmpl, 'spec');
  if (!spec) return [];
  const errs: FieldError[] = [];
  // kube leaves a StatefulSet's pod spec unchecked: its volumeClaimTemplates add volumes the mounts may name
  if (owner !== 'StatefulSet') {
    errs.push(...validatePod({ spec } as unknown as ApiObject, { allowHostSysctls: allowsHostSysctls(getObject(old, 'spec')), template: true })
      .filter((e) => !e.field.startsWith('spec.ephemeralContainers'))
      .map((e) => ({ ...e, field: `${at}.${e.field}` })));
    if (Array.isArray(spec.ephemeralContainers) && spec.ephemeralContainers.length > 0) {
      errs.push(forbidden(`${at}.spec.ephemeralContainers`, 'ephemeral containers not allowed in pod template'));
    }
  }
  // a Job's and a PodTemplate object's template take any restart policy (kube's ValidatePodTemplateSpec alone)
  if (owner === 'Job' || owner === 'PodTemplate') return errs;
  const rp = getString(spec, 'restartPolicy');
  if (rp !== undefined && rp !== 'Always') errs.push(notSupported(`${at}.spec.restartPolicy`, rp, ['Always']));
  const ads = get(spec, 'activeDeadlineSeconds');
  if (ads !== undefined && ads !== null) errs.push(forbidden(`${at}.spec.activeDeadlineSeconds`, `activeDeadlineSeconds in ${owner} is not Supported`));
  return errs;
}

const nonNegative = (field: string, v: unknown): FieldError[] => (typeof v === 'number' && v < 0 ? [invalid(field, v, 'must be greater than or equal to 0')] : []);

/** kube prints an IntOrString value with Go's %#v (it is no Stringer by value) */
function intOrStringValue(v: JSONValue): string {
  return typeof v === 'string' ? `intstr.IntOrString{Type:1, IntVal:0, StrVal:${JSON.stringify(v)}}` : `intstr.IntOrString{Type:0, IntVal:${String(v)}, StrVal:""}`;
}
const intOrStringInvalid = (field: string, v: JSONValue, m: string): FieldError => ({ field, type: 'FieldValueInvalid', message: `Invalid value: ${intOrStringValue(v)}: ${m}` });

const PERCENT = /^[0-9]+%$/;
const PERCENT_MSG = "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')";

/** kube's ValidatePositiveIntOrPercent */
export function validateIntOrPercent(v: JSONValue | undefined, field: string): FieldError[] {
  if (typeof v === 'string') return PERCENT.test(v) ? [] : [intOrStringInvalid(field, v, PERCENT_MSG)];
  return nonNegative(field, v);
}

/** the value of an int or a valid percent (kube's getIntOrPercentValue); NaN for anything else */
function intOrPercent(v: JSONValue | undefined): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && PERCENT.test(v)) return Number(v.slice(0, -1));
  return Number.NaN;
}

/** kube's IsNotMoreThan100Percent */
export function notMoreThan100(v: JSONValue | undefined, field: string): FieldError[] {
  return typeof v === 'string' && PERCENT.test(v) && intOrPercent(v) > 100 ? [intOrStringInvalid(field, v, 'must not be greater than 100%')] : [];
}

/** kube's ValidateRollingUpdateDeployment */
export function validateRollingUpdate(ru: Obj, at: string): FieldError[] {
  const errs = [...validateIntOrPercent(ru.maxUnavailable, `${at}.maxUnavailable`), ...validateIntOrPercent(ru.maxSurge, `${at}.maxSurge`)];
  if (intOrPercent(ru.maxUnavailable) === 0 && intOrPercent(ru.maxSurge) === 0) {
    errs.push(intOrStringInvalid(`${at}.maxUnavailable`, ru.maxUnavailable ?? 0, 'may not be 0 when `maxSurge` is 0'));
  }
  errs.push(...notMoreThan100(ru.maxUnavailable, `${at}.maxUnavailable`));
  return errs;
}

/** kube's ValidateDeploymentSpec beyond the selector and template: strategy and the counters */
export function validateDeploymentRollout(o: ApiObject): FieldError[] {
  const spec = getObject(o, 'spec');
  if (!spec) return [];
  const errs: FieldError[] = [];
  const strategy = getObject(spec, 'strategy');
  if (strategy) {
    const ru = getObject(strategy, 'rollingUpdate');
    if (strategy.type === 'Recreate' && strategy.rollingUpdate !== undefined && strategy.rollingUpdate !== null) {
      errs.push(forbidden('spec.strategy.rollingUpdate', "may not be specified when strategy `type` is 'Recreate'"));
    } else if (strategy.type === 'RollingUpdate') {
      if (!ru) errs.push(required('spec.strategy.rollingUpdate', 'this should be defaulted and never be nil'));
      else errs.push(...validateRollingUpdate(ru, 'spec.strategy.rollingUpdate'));
    }
  }
  errs.push(...nonNegative('spec.minReadySeconds', spec.minReadySeconds));
  errs.push(...nonNegative('spec.revisionHistoryLimit', spec.revisionHistoryLimit));
  const pds = spec.progressDeadlineSeconds;
  if (typeof pds === 'number') {
    errs.push(...nonNegative('spec.progressDeadlineSeconds', pds));
    const mrs = typeof spec.minReadySeconds === 'number' ? spec.minReadySeconds : 0;
    if (pds <= mrs) errs.push(invalid('spec.progressDeadlineSeconds', pds, 'must be greater than minReadySeconds'));
  }
  return errs;
}

/** minReadySeconds and revisionHistoryLimit of the other apps kinds (ValidateReplicaSetSpec, ValidateDaemonSetSpec, …) */
export function validateCounters(o: ApiObject, fields: string[]): FieldError[] {
  const spec = getObject(o, 'spec');
  return spec ? fields.flatMap((f) => nonNegative(`spec.${f}`, spec[f])) : [];
}

/** kube's ValidateRollingUpdateDaemonSet: exactly one of maxUnavailable and maxSurge is non-zero */
export function validateRollingUpdateDaemonSet(ru: Obj, at: string): FieldError[] {
  const errs = [
    ...validateIntOrPercent(ru.maxUnavailable, `${at}.maxUnavailable`), ...validateIntOrPercent(ru.maxSurge, `${at}.maxSurge`),
    ...notMoreThan100(ru.maxUnavailable, `${at}.maxUnavailable`), ...notMoreThan100(ru.maxSurge, `${at}.maxSurge`),
  ];
  // an absent or unparsable value counts as 0 (Go's IntValue of a bad string)
  const unavailable = (intOrPercent(ru.maxUnavailable) || 0) !== 0;
  const surge = (intOrPercent(ru.maxSurge) || 0) !== 0;
  if (unavailable && surge) errs.push(intOrStringInvalid(`${at}.maxSurge`, ru.maxSurge ?? 0, 'may not be set when maxUnavailable is non-zero'));
  if (!unavailable && !surge) errs.push(required(`${at}.maxUnavailable`, 'cannot be 0 when maxSurge is 0'));
  return errs;
}
