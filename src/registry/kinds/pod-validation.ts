// A pod's spec validation (kube's ValidatePodSpec, the parts orch checks;
// spec 000 §2.6), shared by pods and by every workload's pod template
// (workload-validation.ts validates a template's spec as a pod's).

import { isDNS1123Label, isDNS1123Subdomain, validateLabelsAndAnnotations } from '../../machinery/schema/object-meta.js';
import type { ApiObject, FieldError, JSONValue } from '../types.js';
import { get, getArray, getObject, getString } from './columns.js';
import { validateContainerResources } from './pod-resources.js';
import { validateEphemeralContainers } from './pod-ephemeral.js';
import { validateContainerRestartPolicies } from './pod-sidecars.js';
import { validateSysctls } from './pod-sysctls.js';
import { checkHostPortConflicts, validateContainerPorts, validateProbesAndHooks } from './pod-container-checks.js';
import { validateVolumes } from './pod-volume-validation.js';
import { validateToleration } from './node-runtime.js';
import { validateAffinity, validateAppArmorProfile, validateResizePolicy, validateTopologySpread, validateVolumeDevices } from './pod-scheduling-validation.js';

type Obj = Record<string, JSONValue>;

export function containersOf(o: ApiObject, field: 'containers' | 'initContainers' | 'ephemeralContainers'): Obj[] {
  return getArray(o, 'spec', field).filter((c): c is Obj => c !== null && typeof c === 'object' && !Array.isArray(c));
}

const inv = (field: string, value: unknown, m: string): FieldError => ({ field, type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(value)}: ${m}` });
const dup = (field: string, value: unknown): FieldError => ({ field, type: 'FieldValueDuplicate', message: `Duplicate value: ${JSON.stringify(value)}` });

const MAX_INT32 = 2147483647;

/**
 * `allowHostSysctls`: an update whose old spec already had sysctls its host namespaces forbid (pod-sysctls.ts);
 * `template`: a workload's pod template, which kube does not hold to the pod-only checks (validateContainersOnlyForPod)
 */
export function validatePod(o: ApiObject, opts: { allowHostSysctls?: boolean; template?: boolean } = {}): FieldError[] {
  const errs: FieldError[] = [];
  const spec = getObject(o, 'spec');
  if (!spec) return [{ field: 'spec', type: 'FieldValueRequired', message: 'Required value' }];
  const volumes = validateVolumes(spec.volumes, 'spec', errs);
  if (getArray(spec, 'containers').length === 0) errs.push({ field: 'spec.containers', type: 'FieldValueRequired', message: 'Required value' });
  const names = new Set<string>();
  for (const field of ['initContainers', 'containers', 'ephemeralContainers'] as const) {
    const list = containersOf(o, field);
    list.forEach((c, i) => {
      const p = `spec.${field}[${i}]`;
      const name = typeof c.name === 'string' ? c.name : '';
      if (name) {
        for (const m of isDNS1123Label(name)) errs.push(inv(`${p}.name`, name, m));
        if (names.has(name)) errs.push(dup(`${p}.name`, name));
        names.add(name);
      }
      // kube's validateContainerCommon (an empty image) and validateContainerOnlyForPod (pods, ephemeral containers)
      if (typeof c.image !== 'string' || c.image === '') errs.push({ field: `${p}.image`, type: 'FieldValueRequired', message: 'Required value' });
      else if ((!opts.template || field === 'ephemeralContainers') && c.image.trim() !== c.image) errs.push(inv(`${p}.image`, c.image, 'must not have leading or trailing whitespace'));
      errs.push(...validateEnv(c, p));
      validateContainerPorts(c.ports, p, errs);
      validateVolumeDevices(c, spec.volumes, p, errs);
      if (field !== 'ephemeralContainers') validateResizePolicy(c.resizePolicy, `${p}.resizePolicy`, errs);
      validateAppArmorProfile(getObject(c, 'securityContext', 'appArmorProfile'), `${p}.securityContext.appArmorProfile`, errs);
      // probes and hooks of regular containers and sidecars (pod-sidecars.ts forbids them on other init containers)
      if (field === 'containers' || (field === 'initContainers' && c.restartPolicy === 'Always')) validateProbesAndHooks(c, p, errs);
      // init containers run one by one: each one's host ports alone
      if (field === 'initContainers') checkHostPortConflicts(list, `spec.${field}`, errs, i, i + 1);
      const mountPaths = new Set<string>();
      getArray(c, 'volumeMounts').forEach((m, j) => {
        const vname = getString(m, 'name');
        if (vname && !volumes.has(vname)) {
          errs.push({ field: `${p}.volumeMounts[${j}].name`, type: 'FieldValueNotFound', message: `Not found: ${JSON.stringify(vname)}` });
        }
        const mp = getString(m, 'mountPath');
        if (mp) {
          if (mountPaths.has(mp)) errs.push(inv(`${p}.volumeMounts[${j}].mountPath`, mp, 'must be unique'));
          mountPaths.add(mp);
        }
      });
    });
    if (field === 'containers') checkHostPortConflicts(list, 'spec.containers', errs);
  }
  errs.push(...validateSysctls(spec, 'spec', opts));
  errs.push(...validateSeccomp(getObject(spec, 'securityContext', 'seccompProfile'), 'spec.securityContext.seccompProfile'));
  for (const field of ['initContainers', 'containers', 'ephemeralContainers'] as const) {
    containersOf(o, field).forEach((c, i) => errs.push(...validateSeccomp(getObject(c, 'securityContext', 'seccompProfile'), `spec.${field}[${i}].securityContext.seccompProfile`)));
  }
  errs.push(...validateContainerRestartPolicies(o));
  errs.push(...validateContainerResources(spec, 'spec'));
  const nodeSelector = getObject(spec, 'nodeSelector');
  if (nodeSelector) errs.push(...validateLabelsAndAnnotations({ labels: nodeSelector as Record<string, string> }, 'spec').map((e) => ({ ...e, field: 'spec.nodeSelector' })));
  errs.push(...validateEphemeralContainers(o));
  const tgps = spec.terminationGracePeriodSeconds;
  if (typeof tgps === 'number' && tgps < 0) errs.push(inv('spec.terminationGracePeriodSeconds', tgps, 'must be greater than or equal to 0'));
  validateSpecFields(spec, errs);
  validateAppArmorProfile(getObject(spec, 'securityContext', 'appArmorProfile'), 'spec.securityContext.appArmorProfile', errs);
  validateAffinity(spec.affinity, 'spec.affinity', errs);
  validateTopologySpread(spec.topologySpreadConstraints, 'spec.topologySpreadConstraints', errs);
  return errs;
}

/** ValidatePodSpec's checks of single fields: nodeName, activeDeadlineSeconds, hostname, subdomain, tolerations */
function validateSpecFields(spec: Obj, errs: FieldError[]): void {
  const nodeName = spec.nodeName;
  if (typeof nodeName === 'string' && nodeName !== '') for (const m of isDNS1123Subdomain(nodeName)) errs.push(inv('spec.nodeName', nodeName, m));
  const ads = spec.activeDeadlineSeconds;
  if (typeof ads === 'number' && (ads < 1 || ads > MAX_INT32)) errs.push(inv('spec.activeDeadlineSeconds', ads, `must be between 1 and ${MAX_INT32}, inclusive`));
  for (const f of ['hostname', 'subdomain'] as const) {
    const v = spec[f];
    if (typeof v === 'string' && v !== '') for (const m of isDNS1123Label(v)) errs.push(inv(`spec.${f}`, v, m));
  }
  const tolerations = spec.tolerations;
  if (Array.isArray(tolerations)) tolerations.forEach((t, i) => errs.push(...validateToleration(t, `spec.tolerations[${i}]`)));
}

/** spec 002 §2.5: localhostProfile is required for and only for type Localhost, a relative path below the seccomp directory */
function validateSeccomp(sp: Obj | undefined, p: string): FieldError[] {
  if (!sp) return [];
  const profile = sp.localhostProfile;
  if (sp.type === 'Localhost') {
    if (typeof profile !== 'string' || profile === '') return [{ field: `${p}.localhostProfile`, type: 'FieldValueRequired', message: 'Required value: must be set when seccomp type is Localhost' }];
    if (profile.startsWith('/')) return [inv(`${p}.localhostProfile`, profile, 'must be a relative path')];
    if (profile.split('/').includes('..')) return [inv(`${p}.localhostProfile`, profile, "must not contain '..'")];
    return [];
  }
  if (profile !== undefined) return [inv(`${p}.localhostProfile`, profile, 'can only be set when seccomp type is Localhost')];
  return [];
}

const RELAXED_ENV_NAME = "a valid environment variable name must consist only of printable ASCII characters other than '='";
const VALUE_SOURCES = ['fieldRef', 'resourceFieldRef', 'configMapKeyRef', 'secretKeyRef'];

/**
 * kube's ValidateEnv as 1.32 runs it (RelaxedEnvironmentVariableValidation on
 * by default): a name of printable ASCII other than '=', and a valueFrom with
 * exactly one source and no `value` beside it
 */
function validateEnv(c: Obj, p: string): FieldError[] {
  const errs: FieldError[] = [];
  getArray(c, 'env').forEach((ev, i) => {
    const at = `${p}.env[${i}]`;
    const name = getString(ev, 'name') ?? '';
    if (name === '') errs.push({ field: `${at}.name`, type: 'FieldValueRequired', message: 'Required value' });
    else if ([...name].some((ch) => ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) > 0x7e || ch === '=')) errs.push(inv(`${at}.name`, name, RELAXED_ENV_NAME));
    const from = getObject(ev, 'valueFrom');
    if (!from) return;
    const sources = VALUE_SOURCES.filter((k) => from[k] !== undefined && from[k] !== null).length;
    if (sources === 0) errs.push(inv(`${at}.valueFrom`, '', 'must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`'));
    else if (sources > 1) errs.push(inv(`${at}.valueFrom`, '', 'may not have more than one field specified at a time'));
    const value = getString(ev, 'value') ?? '';
    if (value !== '' && sources !== 0) errs.push(inv(`${at}.valueFrom`, '', 'may not be specified when `value` is not empty'));
  });
  return errs;
}
