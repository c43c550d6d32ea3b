// Ephemeral containers (kube's validateEphemeralContainers and
// ValidatePodEphemeralContainersUpdate, Kubernetes 1.32): debugging containers
// added to a pod through its `ephemeralcontainers` sub-resource only — never
// on create, never through the main resource, never changed or removed once
// added. docs/compatibility.md "Pod sub-resources".

import type { ApiObject, FieldError, JSONValue } from '../types.js';
import { getArray, getObject } from './columns.js';

type Obj = Record<string, JSONValue>;

/** the sub-resource that writes spec.ephemeralContainers */
export const EPHEMERAL_SUBRESOURCE = 'ephemeralcontainers';

/**
 * the fields an ephemeral container may set (kube's allow list): what is
 * missing here (ports, probes, lifecycle, resources, resizePolicy,
 * restartPolicy) would make a pod rely on a debugging container
 */
const ALLOWED = new Set([
  'name', 'image', 'command', 'args', 'workingDir', 'env', 'envFrom', 'volumeMounts', 'volumeDevices',
  'terminationMessagePath', 'terminationMessagePolicy', 'imagePullPolicy', 'securityContext', 'stdin', 'stdinOnce', 'tty',
  'targetContainerName',
]);

const FORBIDDEN_TEXT = 'Forbidden: cannot be set for an Ephemeral Container';

function objects(v: JSONValue | undefined): Obj[] {
  return Array.isArray(v) ? v.filter((c): c is Obj => c !== null && typeof c === 'object' && !Array.isArray(c)) : [];
}

/** a value kube's allow-list check counts as set (Go's non-zero value) */
function isSet(v: JSONValue | undefined): boolean {
  if (v === undefined || v === null || v === false || v === 0 || v === '') return false;
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === 'object') return Object.values(v).some(isSet);
  return true;
}

/**
 * rules of spec.ephemeralContainers beyond those of every container (names
 * unique across all three lists and DNS labels are checked with the others in
 * validatePod): the allow list, no volume subPath, a target that is a
 * container or init container of the pod
 */
export function validateEphemeralContainers(o: ApiObject): FieldError[] {
  const errs: FieldError[] = [];
  const others = new Set<string>();
  for (const c of [...getArray(o, 'spec', 'containers'), ...getArray(o, 'spec', 'initContainers')]) {
    const n = c !== null && typeof c === 'object' && !Array.isArray(c) ? c.name : undefined;
    if (typeof n === 'string') others.add(n);
  }
  objects(getObject(o, 'spec')?.ephemeralContainers).forEach((ec, i) => {
    const p = `spec.ephemeralContainers[${i}]`;
    for (const [k, v] of Object.entries(ec)) {
      if (!ALLOWED.has(k) && isSet(v)) errs.push({ field: `${p}.${k}`, type: 'FieldValueForbidden', message: FORBIDDEN_TEXT });
    }
    objects(ec.volumeMounts).forEach((m, j) => {
      for (const k of ['subPath', 'subPathExpr']) {
        if (isSet(m[k])) errs.push({ field: `${p}.volumeMounts[${j}].${k}`, type: 'FieldValueForbidden', message: FORBIDDEN_TEXT });
      }
    });
    const target = ec.targetContainerName;
    if (typeof target === 'string' && target !== '' && !others.has(target)) {
      errs.push({ field: `${p}.targetContainerName`, type: 'FieldValueNotFound', message: `Not found: ${JSON.stringify(target)}` });
    }
  });
  return errs;
}

/** kube's ValidatePodCreate: ephemeral containers come only through the sub-resource */
export function validateNoEphemeralOnCreate(o: ApiObject): FieldError[] {
  if (objects(getObject(o, 'spec')?.ephemeralContainers).length === 0) return [];
  return [{ field: 'spec.ephemeralContainers', type: 'FieldValueForbidden', message: 'Forbidden: cannot be set on create' }];
}

/**
 * a write to the sub-resource may only add ephemeral containers: each
 * existing one must stay as it is (matched by name: a patch need not keep the
 * order); a mirror pod of a static pod takes none (its kubelet owns it)
 */
export function validateEphemeralContainersUpdate(o: ApiObject, old: ApiObject): FieldError[] {
  if (old.metadata?.annotations?.['kubernetes.io/config.mirror'] !== undefined) {
    return [{ field: '', type: 'FieldValueForbidden', message: 'Forbidden: static pods do not support ephemeral containers' }];
  }
  const next = new Map<string, Obj>();
  for (const ec of objects(getObject(o, 'spec')?.ephemeralContainers)) if (typeof ec.name === 'string') next.set(ec.name, ec);
  const errs: FieldError[] = [];
  for (const before of objects(getObject(old, 'spec')?.ephemeralContainers)) {
    const name = String(before.name);
    const after = next.get(name);
    const change = after === undefined ? 'removed' : canonical(after) !== canonical(before) ? 'changed' : undefined;
    if (change) {
      errs.push({ field: 'spec.ephemeralContainers', type: 'FieldValueForbidden', message: `Forbidden: existing ephemeral containers ${JSON.stringify(name)} may not be ${change}` });
    }
  }
  return errs;
}

function canonical(v: JSONValue): string {
  const sort = (x: JSONValue): JSONValue => {
    if (Array.isArray(x)) return x.map(sort);
    if (x === null || typeof x !== 'object') return x;
    return Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, c]) => [k, sort(c)]));
  };
  return JSON.stringify(sort(v));
}
