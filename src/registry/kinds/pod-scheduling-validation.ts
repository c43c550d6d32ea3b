// kube 1.32's checks of a pod spec's scheduling constraints and the other
// structures whose required members orch's schema leaves optional
// (pkg/apis/core/validation/validation.go: ValidateAffinity, ValidateNodeSelector,
// validateTopologySpreadConstraints, ValidateVolumeDevices,
// validateAppArmorProfileField). kube decodes an absent required member to its
// Go zero value and refuses it here, so an object it stores always carries them
// (a `weight`, a `topologyKey`, a `devicePath`): strict clients (Java, Rust)
// refuse an object without a required member.

import { isDNS1123Label, isDNS1123Subdomain, isQualifiedName } from '../../machinery/schema/object-meta.js';
import { validateLabelSelector } from '../admission/matching.js';
import type { FieldError, JSONValue } from '../types.js';
import { duplicate, forbidden, invalid, notSupported, required } from './field-errors.js';

type Obj = Record<string, JSONValue>;
const isObj = (v: JSONValue | undefined): v is Obj => v !== null && v !== undefined && typeof v === 'object' && !Array.isArray(v);
const objects = (v: JSONValue | undefined): Obj[] => (Array.isArray(v) ? v.map((x) => (isObj(x) ? x : {})) : []);
const str = (v: JSONValue | undefined): string => (typeof v === 'string' ? v : '');
const int = (v: JSONValue | undefined): number => (typeof v === 'number' ? v : 0);
const strings = (v: JSONValue | undefined): string[] => (Array.isArray(v) ? v.map((x) => String(x)) : []);

/** apimachinery's ValidateLabelName: a qualified name */
function labelName(key: string, at: string, errs: FieldError[]): void {
  for (const m of isQualifiedName(key)) errs.push(invalid(at, key, m));
}

/** ValidateAffinity: node affinity, pod affinity and anti-affinity */
export function validateAffinity(affinity: JSONValue | undefined, at: string, errs: FieldError[]): void {
  if (!isObj(affinity)) return;
  const na = affinity.nodeAffinity;
  if (isObj(na)) {
    const p = `${at}.nodeAffinity`;
    const req = na.requiredDuringSchedulingIgnoredDuringExecution;
    if (isObj(req)) validateNodeSelector(req, `${p}.requiredDuringSchedulingIgnoredDuringExecution`, errs);
    objects(na.preferredDuringSchedulingIgnoredDuringExecution).forEach((t, i) => {
      const tp = `${p}.preferredDuringSchedulingIgnoredDuringExecution[${i}]`;
      weight(t.weight, `${tp}.weight`, errs);
      validateNodeSelectorTerm(isObj(t.preference) ? t.preference : {}, `${tp}.preference`, errs);
    });
  }
  for (const kind of ['podAffinity', 'podAntiAffinity'] as const) {
    const pa = affinity[kind];
    if (!isObj(pa)) continue;
    const p = `${at}.${kind}`;
    objects(pa.requiredDuringSchedulingIgnoredDuringExecution).forEach((t, i) => validatePodAffinityTerm(t, `${p}.requiredDuringSchedulingIgnoredDuringExecution[${i}]`, errs));
    objects(pa.preferredDuringSchedulingIgnoredDuringExecution).forEach((t, i) => {
      const tp = `${p}.preferredDuringSchedulingIgnoredDuringExecution[${i}]`;
      weight(t.weight, `${tp}.weight`, errs);
      validatePodAffinityTerm(isObj(t.podAffinityTerm) ? t.podAffinityTerm : {}, `${tp}.podAffinityTerm`, errs);
    });
  }
}

function weight(v: JSONValue | undefined, at: string, errs: FieldError[]): void {
  const w = int(v);
  if (w <= 0 || w > 100) errs.push(invalid(at, w, 'must be in the range 1-100'));
}

/** ValidateNodeSelector: at least one term (a pod's required node affinity, a PersistentVolume's node affinity) */
export function validateNodeSelector(sel: Obj, at: string, errs: FieldError[]): void {
  const terms = objects(sel.nodeSelectorTerms);
  if (terms.length === 0) {
    errs.push(required(`${at}.nodeSelectorTerms`, 'must have at least one node selector term'));
    return;
  }
  terms.forEach((t, i) => validateNodeSelectorTerm(t, `${at}.nodeSelectorTerms[${i}]`, errs));
}

function validateNodeSelectorTerm(term: Obj, at: string, errs: FieldError[]): void {
  objects(term.matchExpressions).forEach((r, j) => validateNodeSelectorRequirement(r, `${at}.matchExpressions[${j}]`, errs));
  objects(term.matchFields).forEach((r, j) => validateNodeFieldSelectorRequirement(r, `${at}.matchFields[${j}]`, errs));
}

function validateNodeSelectorRequirement(r: Obj, at: string, errs: FieldError[]): void {
  const op = str(r.operator);
  const n = strings(r.values).length;
  if (op === 'In' || op === 'NotIn') {
    if (n === 0) errs.push(required(`${at}.values`, "must be specified when `operator` is 'In' or 'NotIn'"));
  } else if (op === 'Exists' || op === 'DoesNotExist') {
    if (n > 0) errs.push(forbidden(`${at}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
  } else if (op === 'Gt' || op === 'Lt') {
    if (n !== 1) errs.push(required(`${at}.values`, "must be specified single value when `operator` is 'Lt' or 'Gt'"));
  } else errs.push(invalid(`${at}.operator`, op, 'not a valid selector operator'));
  labelName(str(r.key), `${at}.key`, errs);
}

function validateNodeFieldSelectorRequirement(r: Obj, at: string, errs: FieldError[]): void {
  const op = str(r.operator);
  const values = strings(r.values);
  if (op === 'In' || op === 'NotIn') {
    if (values.length !== 1) errs.push(required(`${at}.values`, "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"));
  } else errs.push(invalid(`${at}.operator`, op, 'not a valid selector operator'));
  if (str(r.key) !== 'metadata.name') errs.push(invalid(`${at}.key`, str(r.key), 'not a valid field selector key'));
  else values.forEach((v, i) => { for (const m of isDNS1123Subdomain(v)) errs.push(invalid(`${at}.values[${i}]`, v, m)); });
}

function validatePodAffinityTerm(t: Obj, at: string, errs: FieldError[]): void {
  errs.push(...validateLabelSelector(t.labelSelector, `${at}.labelSelector`));
  errs.push(...validateLabelSelector(t.namespaceSelector, `${at}.namespaceSelector`));
  // kube names the list's element `namespace`
  for (const ns of strings(t.namespaces)) for (const m of isDNS1123Label(ns)) errs.push(invalid(`${at}.namespace`, ns, m));
  const key = str(t.topologyKey);
  if (key === '') errs.push(required(`${at}.topologyKey`, 'can not be empty'));
  labelName(key, `${at}.topologyKey`, errs);
}

const SCHEDULE_ACTIONS = ['DoNotSchedule', 'ScheduleAnyway'];
const INCLUSION_POLICIES = ['Honor', 'Ignore'];

/** validateTopologySpreadConstraints: maxSkew, topologyKey, whenUnsatisfiable, each pair once, minDomains, policies, selector */
export function validateTopologySpread(constraints: JSONValue | undefined, at: string, errs: FieldError[]): void {
  const list = objects(constraints);
  list.forEach((c, i) => {
    const p = `${at}[${i}]`;
    const skew = int(c.maxSkew);
    if (skew <= 0) errs.push(invalid(`${p}.maxSkew`, skew, 'must be greater than zero'));
    const key = str(c.topologyKey);
    if (key === '') errs.push(required(`${p}.topologyKey`, 'can not be empty'));
    const action = str(c.whenUnsatisfiable);
    if (!SCHEDULE_ACTIONS.includes(action)) errs.push(notSupported(`${p}.whenUnsatisfiable`, action, SCHEDULE_ACTIONS));
    if (list.slice(i + 1).some((o) => str(o.topologyKey) === key && str(o.whenUnsatisfiable) === action)) {
      errs.push(duplicate(`${p}.{topologyKey, whenUnsatisfiable}`, `{${key}, ${action}}`));
    }
    if (typeof c.minDomains === 'number') {
      if (c.minDomains <= 0) errs.push(invalid(`${p}.minDomains`, c.minDomains, 'must be greater than zero'));
      if (action !== 'DoNotSchedule') errs.push(invalid(`${p}.minDomains`, c.minDomains, `can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ${action}`));
    }
    for (const f of ['nodeAffinityPolicy', 'nodeTaintsPolicy'] as const) {
      const v = c[f];
      if (typeof v === 'string' && !INCLUSION_POLICIES.includes(v)) errs.push(notSupported(`${p}.${f}`, v, INCLUSION_POLICIES));
    }
    errs.push(...validateLabelSelector(c.labelSelector, `${p}.labelSelector`));
  });
}

/**
 * ValidateVolumeDevices of one container: each names a persistentVolumeClaim or ephemeral
 * volume of the pod, once, with a devicePath (unique, no `..`) that no volume mount uses
 */
export function validateVolumeDevices(c: Obj, volumes: JSONValue | undefined, at: string, errs: FieldError[]): void {
  const devices = objects(c.volumeDevices);
  if (devices.length === 0) return;
  const sources = new Map(objects(volumes).map((v) => [str(v.name), v]));
  const mounts = new Map(objects(c.volumeMounts).map((m) => [str(m.name), str(m.mountPath)]));
  const paths = new Set<string>();
  const names = new Set<string>();
  devices.forEach((d, i) => {
    const p = `${at}.volumeDevices[${i}]`;
    const name = str(d.name);
    const path = str(d.devicePath);
    const source = sources.get(name);
    if (name === '') errs.push(required(`${p}.name`));
    if (names.has(name)) errs.push(invalid(`${p}.name`, name, 'must be unique'));
    if (source && !isObj(source.persistentVolumeClaim) && !isObj(source.ephemeral)) {
      errs.push(invalid(`${p}.name`, name, 'can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode'));
    }
    if (!source) errs.push({ field: `${p}.name`, type: 'FieldValueNotFound', message: `Not found: ${JSON.stringify(name)}` });
    if (path === '') errs.push(required(`${p}.devicePath`));
    if (paths.has(path)) errs.push(invalid(`${p}.devicePath`, path, 'must be unique'));
    if (path !== '' && path.split('/').includes('..')) errs.push(invalid(`${p}.devicePath`, path, "can not contain backsteps ('..')"));
    else paths.add(path);
    if (mounts.has(name)) errs.push(invalid(`${p}.name`, name, 'must not already exist in volumeMounts'));
    if ([...mounts.values()].includes(path)) errs.push(invalid(`${p}.devicePath`, path, 'must not already exist as a path in volumeMounts'));
    if (name !== '') names.add(name);
  });
}

const APPARMOR_TYPES = ['Localhost', 'RuntimeDefault', 'Unconfined'];

/** validateAppArmorProfileField: a type, a localhostProfile for and only for Localhost */
export function validateAppArmorProfile(profile: JSONValue | undefined, at: string, errs: FieldError[]): void {
  if (!isObj(profile)) return;
  const type = str(profile.type);
  const local = profile.localhostProfile;
  if (type === 'Localhost') {
    if (typeof local !== 'string') errs.push(required(`${at}.localhostProfile`, 'must be set when AppArmor type is Localhost'));
    else if (local.trim() !== local) errs.push(invalid(`${at}.localhostProfile`, local, 'must not be padded with whitespace'));
    else if (local === '') errs.push(required(`${at}.localhostProfile`, 'must be set when AppArmor type is Localhost'));
  } else if (type === 'RuntimeDefault' || type === 'Unconfined') {
    if (typeof local === 'string') errs.push(invalid(`${at}.localhostProfile`, local, 'can only be set when AppArmor type is Localhost'));
  } else if (type === '') errs.push(required(`${at}.type`, 'type is required when appArmorProfile is set'));
  else errs.push(notSupported(`${at}.type`, type, APPARMOR_TYPES));
}

const RESIZE_RESOURCES = ['cpu', 'memory'];
const RESIZE_POLICIES = ['NotRequired', 'RestartContainer'];

/**
 * validateResizePolicy: each resource once, cpu or memory, with a restart policy. (kube 1.32
 * drops resizePolicy while InPlacePodVerticalScaling is off; orch keeps it, checked as kube would)
 */
export function validateResizePolicy(policies: JSONValue | undefined, at: string, errs: FieldError[]): void {
  const seen = new Set<string>();
  objects(policies).forEach((p, i) => {
    const name = str(p.resourceName);
    if (seen.has(name)) errs.push(duplicate(`${at}[${i}]`, name));
    seen.add(name);
    if (name === '') errs.push(required(at));
    else if (!RESIZE_RESOURCES.includes(name)) errs.push(notSupported(at, name, RESIZE_RESOURCES));
    const policy = str(p.restartPolicy);
    if (policy === '') errs.push(required(at));
    else if (!RESIZE_POLICIES.includes(policy)) errs.push(notSupported(at, policy, RESIZE_POLICIES));
  });
}

/** validateVolumeNodeAffinity of a PersistentVolume: `required` node constraints, a valid NodeSelector */
export function validateVolumeNodeAffinity(spec: JSONValue | undefined): FieldError[] {
  const errs: FieldError[] = [];
  const na = isObj(spec) ? spec.nodeAffinity : undefined;
  if (!isObj(na)) return errs;
  if (isObj(na.required)) validateNodeSelector(na.required, 'spec.nodeAffinity.required', errs);
  else errs.push(required('spec.nodeAffinity.required', 'must specify required node constraints'));
  return errs;
}
