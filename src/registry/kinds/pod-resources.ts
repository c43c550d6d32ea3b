// Rules kube applies to every PodSpec, in pods and in pod templates alike:
// the deprecated `serviceAccount` alias, a volume with no source reading as
// an emptyDir, container resource requirements
// (kube's ValidateContainerResourceRequirements), and — for pods only — the
// requests a limit implies and a host-network pod's host ports (SetDefaults_Pod).

import { parseQuantity } from '../../core/quantity.js';
import type { FieldError, JSONValue } from '../types.js';

type Obj = Record<string, JSONValue>;

const isObj = (v: JSONValue | undefined): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

function containers(spec: Obj, field: string): Obj[] {
  const list = spec[field];
  return Array.isArray(list) ? list.filter(isObj) : [];
}

/**
 * `serviceAccount` is the deprecated alias of `serviceAccountName`: kube's v1
 * conversion reads it when the name is empty and always writes it back equal
 * to the name (Convert_v1_PodSpec_To_core_PodSpec and back), so `kubectl set
 * serviceaccount` and manifests using either field show both.
 */
export function aliasServiceAccount(spec: Obj | undefined): void {
  if (!spec) return;
  if (!spec.serviceAccountName && typeof spec.serviceAccount === 'string' && spec.serviceAccount !== '') {
    spec.serviceAccountName = spec.serviceAccount;
  }
  if (typeof spec.serviceAccountName === 'string' && spec.serviceAccountName !== '') spec.serviceAccount = spec.serviceAccountName;
  else delete spec.serviceAccount;
}

/**
 * A volume that names no source is an emptyDir (kube's SetDefaults_Volume),
 * so `volumes: [{name: x}]` in a manifest is stored as `emptyDir: {}`.
 */
export function defaultVolumeSources(spec: Obj | undefined): void {
  const list = spec?.volumes;
  if (!Array.isArray(list)) return;
  for (const v of list) {
    if (!isObj(v) || !Object.keys(v).every((k) => k === 'name' || v[k] === null)) continue;
    for (const k of Object.keys(v)) if (k !== 'name') delete v[k];
    v.emptyDir = {};
  }
}

/**
 * A container with a limit and no request for that resource requests the
 * limit (kube's SetDefaults_Pod; pods only, never templates, so a template
 * change does not show up as a spec difference).
 */
export function defaultRequestsFromLimits(spec: Obj | undefined): void {
  if (!spec) return;
  for (const field of ['containers', 'initContainers']) {
    for (const c of containers(spec, field)) {
      const res = c.resources;
      if (!isObj(res) || !isObj(res.limits)) continue;
      const requests = isObj(res.requests) ? res.requests : (res.requests = {});
      for (const [name, q] of Object.entries(res.limits)) if (!(name in requests)) requests[name] = q;
    }
  }
}

/**
 * A host-network pod's container ports are host ports: an unset hostPort is
 * the containerPort (kube's SetDefaults_Pod; pods only since 1.28, templates
 * keep theirs).
 */
export function defaultHostNetworkPorts(spec: Obj | undefined): void {
  if (!spec || spec.hostNetwork !== true) return;
  for (const field of ['containers', 'initContainers']) {
    for (const c of containers(spec, field)) {
      for (const port of Array.isArray(c.ports) ? c.ports : []) {
        if (isObj(port) && !port.hostPort && typeof port.containerPort === 'number') port.hostPort = port.containerPort;
      }
    }
  }
}

const PROBE_ZERO_DEFAULTS: [string, number][] = [['timeoutSeconds', 1], ['periodSeconds', 10], ['successThreshold', 1], ['failureThreshold', 3]];

/** an httpGet handler's empty path is "/" (kube's SetDefaults_HTTPGetAction; the schema's default covers an absent one) */
function defaultHandlerPath(h: JSONValue | undefined): void {
  if (isObj(h) && isObj(h.httpGet) && h.httpGet.path === '') h.httpGet.path = '/';
}

/**
 * What the schema's defaults cannot see, Go's zero values written out in JSON: a probe's 0 counters
 * (kube's SetDefaults_Probe) and an empty httpGet path; pods and templates alike
 */
export function defaultProbeZeros(spec: Obj | undefined): void {
  if (!spec) return;
  for (const field of ['containers', 'initContainers']) {
    const list = spec[field];
    if (!Array.isArray(list)) continue;
    for (const c of list) {
      if (!isObj(c)) continue;
      for (const k of ['livenessProbe', 'readinessProbe', 'startupProbe']) {
        const probe = c[k];
        if (!isObj(probe)) continue;
        for (const [f, d] of PROBE_ZERO_DEFAULTS) if (probe[f] === 0) probe[f] = d;
        defaultHandlerPath(probe);
      }
      const lc = c.lifecycle;
      if (isObj(lc)) {
        defaultHandlerPath(lc.postStart);
        defaultHandlerPath(lc.preStop);
      }
    }
  }
}

/** compared in nano units, so `0.1` and `100m` are equal */
const nano = (q: JSONValue): number => Math.round((parseQuantity(q) ?? 0) * 1e9);

/** kube's IsNativeResource && !IsHugePageResourceName: requests may be below limits */
function overcommitAllowed(name: string): boolean {
  return (!name.includes('/') || name.includes('kubernetes.io/')) && !name.startsWith('hugepages-');
}

const invalid = (field: string, value: JSONValue, message: string): FieldError => ({ field, type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(value)}: ${message}` });

/**
 * kube's ValidateContainerResourceRequirements for each container of a pod
 * spec at `at` (`spec`, `spec.template.spec`, …): no negative quantity; a
 * request at most its limit (equal to it for extended resources, which need
 * a limit). Quantities are shown as written (orch stores them so).
 */
export function validateContainerResources(spec: Obj | undefined, at: string): FieldError[] {
  if (!spec) return [];
  const errs: FieldError[] = [];
  for (const field of ['initContainers', 'containers']) {
    containers(spec, field).forEach((c, i) => {
      const res = c.resources;
      if (!isObj(res)) return;
      const p = `${at}.${field}[${i}].resources`;
      const limits = isObj(res.limits) ? res.limits : {};
      const requests = isObj(res.requests) ? res.requests : {};
      for (const [name, q] of Object.entries(limits)) {
        if ((parseQuantity(q) ?? 0) < 0) errs.push(invalid(`${p}.limits[${name}]`, q, 'must be greater than or equal to 0'));
      }
      for (const [name, q] of Object.entries(requests)) {
        const v = nano(q);
        if (v < 0) errs.push(invalid(`${p}.requests[${name}]`, q, 'must be greater than or equal to 0'));
        const limit = limits[name];
        if (limit === undefined) {
          if (!overcommitAllowed(name)) errs.push({ field: `${p}.limits`, type: 'FieldValueRequired', message: 'Required value: Limit must be set for non overcommitable resources' });
          continue;
        }
        const l = nano(limit);
        if (v !== l && !overcommitAllowed(name)) errs.push(invalid(`${p}.requests`, q, `must be equal to ${name} limit of ${String(limit)}`));
        else if (v > l) errs.push(invalid(`${p}.requests`, q, `must be less than or equal to ${name} limit of ${String(limit)}`));
      }
    });
  }
  return errs;
}
