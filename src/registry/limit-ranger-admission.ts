// kube's LimitRanger admission plugin: a new pod's containers get the
// namespace's LimitRange defaults (`default` as limits, `defaultRequest` as
// requests, for what a container does not set; the pod is annotated
// `kubernetes.io/limit-ranger: LimitRanger plugin set: cpu request for
// container c`), then pods and claims are checked against `min`, `max` and
// `maxLimitRequestRatio` (Container, Pod and PersistentVolumeClaim items),
// a breach refused 403 with kube's messages. Pod updates are not looked at
// (their containers' resources are immutable), nor sub-resources.

import { forbidden, qualifiedResource } from '../core/errors.js';
import { parseQuantity } from '../core/quantity.js';
import type { GenericStore } from './generic-store.js';
import type { AdmissionCall, WriteHooks } from './write-options.js';
import type { ApiObject } from './types.js';

export const LIMIT_RANGER = 'LimitRanger';
const ANNOTATION = 'kubernetes.io/limit-ranger';

type List = Record<string, string>;
type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const arr = (v: unknown): Obj[] => (Array.isArray(v) ? v.map(obj) : []);
const list = (v: unknown): List => Object.fromEntries(Object.entries(obj(v)).map(([k, q]) => [k, String(q)]));
const value = (q: string | undefined): number => parseQuantity(q) ?? 0;

export interface LimitRangerOptions {
  limitRanges: () => GenericStore;
}

/** the Container items' defaults of every LimitRange of the namespace, later ones winning */
function containerDefaults(ranges: ApiObject[]): { requests: List; limits: List } {
  const out = { requests: {} as List, limits: {} as List };
  for (const r of ranges) {
    for (const item of arr(obj(r.spec).limits)) {
      if (item.type !== 'Container') continue;
      Object.assign(out.requests, list(item.defaultRequest));
      Object.assign(out.limits, list(item.default));
    }
  }
  return out;
}

/** fills what a container lacks; returns kube's annotation parts (`cpu, memory request for container c`) */
function mergeContainer(c: Obj, d: { requests: List; limits: List }, prefix: string): string[] {
  const resources = obj(c.resources);
  const limits = { ...list(resources.limits) };
  const requests = { ...list(resources.requests) };
  const setLimits = Object.keys(d.limits).filter((k) => limits[k] === undefined);
  const setRequests = Object.keys(d.requests).filter((k) => requests[k] === undefined);
  for (const k of setLimits) limits[k] = d.limits[k]!;
  for (const k of setRequests) requests[k] = d.requests[k]!;
  if (setLimits.length === 0 && setRequests.length === 0) return [];
  c.resources = { ...resources, ...(Object.keys(limits).length ? { limits } : {}), ...(Object.keys(requests).length ? { requests } : {}) };
  const parts: string[] = [];
  if (setRequests.length > 0) parts.push(`${setRequests.sort().join(', ')} request for ${prefix} ${String(c.name ?? '')}`);
  if (setLimits.length > 0) parts.push(`${setLimits.sort().join(', ')} limit for ${prefix} ${String(c.name ?? '')}`);
  return parts;
}

/** kube's minConstraint, maxConstraint and limitRequestRatioConstraint for one item over one request/limit pair */
function constraints(type: string, item: Obj, requests: List, limits: List): string[] {
  const errs: string[] = [];
  for (const [k, enforced] of Object.entries(list(item.min)).sort()) {
    if (requests[k] === undefined) errs.push(`minimum ${k} usage per ${type} is ${enforced}.  No request is specified`);
    else if (value(requests[k]) < value(enforced)) errs.push(`minimum ${k} usage per ${type} is ${enforced}, but request is ${requests[k]}`);
    else if (limits[k] !== undefined && value(limits[k]) < value(enforced)) errs.push(`minimum ${k} usage per ${type} is ${enforced}, but limit is ${limits[k]}`);
  }
  for (const [k, enforced] of Object.entries(list(item.max)).sort()) {
    if (limits[k] === undefined) errs.push(`maximum ${k} usage per ${type} is ${enforced}.  No limit is specified`);
    else if (value(limits[k]) > value(enforced)) errs.push(`maximum ${k} usage per ${type} is ${enforced}, but limit is ${limits[k]}`);
    else if (requests[k] !== undefined && value(requests[k]) > value(enforced)) errs.push(`maximum ${k} usage per ${type} is ${enforced}, but request is ${requests[k]}`);
  }
  for (const [k, enforced] of Object.entries(list(item.maxLimitRequestRatio)).sort()) {
    const req = value(requests[k]);
    const lim = value(limits[k]);
    if (req === 0) errs.push(`${k} max limit to request ratio per ${type} is ${enforced}, but no request is specified or request is 0`);
    else if (lim === 0) errs.push(`${k} max limit to request ratio per ${type} is ${enforced}, but no limit is specified or limit is 0`);
    else if (lim / req > value(enforced)) errs.push(`${k} max limit to request ratio per ${type} is ${enforced}, but provided ratio is ${(lim / req).toFixed(6)}`);
  }
  return errs;
}

/** a pod's total per resource (containers added, each init container alone, the larger), as strings for the checks */
function podTotals(pod: ApiObject, which: 'requests' | 'limits'): List {
  const spec = obj(pod.spec);
  const sum: Record<string, number> = {};
  for (const c of arr(spec.containers)) for (const [k, q] of Object.entries(list(obj(c.resources)[which]))) sum[k] = (sum[k] ?? 0) + value(q);
  for (const c of arr(spec.initContainers)) for (const [k, q] of Object.entries(list(obj(c.resources)[which]))) sum[k] = Math.max(sum[k] ?? 0, value(q));
  return Object.fromEntries(Object.entries(sum).map(([k, v]) => [k, String(v)]));
}

function podErrors(pod: ApiObject, ranges: ApiObject[]): string[] {
  const spec = obj(pod.spec);
  const errs: string[] = [];
  for (const r of ranges) {
    for (const item of arr(obj(r.spec).limits)) {
      if (item.type === 'Container') {
        for (const c of [...arr(spec.containers), ...arr(spec.initContainers)]) {
          const res = obj(c.resources);
          errs.push(...constraints('Container', item, list(res.requests), list(res.limits)));
        }
      } else if (item.type === 'Pod') {
        errs.push(...constraints('Pod', item, podTotals(pod, 'requests'), podTotals(pod, 'limits')));
      }
    }
  }
  return errs;
}

function claimErrors(pvc: ApiObject, ranges: ApiObject[]): string[] {
  const res = obj(obj(pvc.spec).resources);
  return ranges.flatMap((r) => arr(obj(r.spec).limits).filter((i) => i.type === 'PersistentVolumeClaim').flatMap((i) => constraints('PersistentVolumeClaim', { min: i.min, max: i.max }, list(res.requests), list(res.limits))));
}

export function limitRangerAdmission(o: LimitRangerOptions): WriteHooks {
  const applies = (c: AdmissionCall, resource: string) => c.def.group === '' && c.def.resource === resource && c.object !== undefined && !c.opts.subresource;
  return {
    async mutate(c: AdmissionCall): Promise<ApiObject | undefined> {
      if (c.operation !== 'CREATE' || !applies(c, 'pods')) return undefined;
      const ranges = await o.limitRanges().list(c.namespace);
      if (ranges.length === 0) return undefined;
      const d = containerDefaults(ranges);
      // the containers are changed in place, on a copy
      const pod = structuredClone(c.object!);
      const spec = obj(pod.spec);
      const parts = [...arr(spec.containers).flatMap((x) => mergeContainer(x, d, 'container')), ...arr(spec.initContainers).flatMap((x) => mergeContainer(x, d, 'init container'))];
      if (parts.length === 0) return undefined;
      pod.metadata = { ...pod.metadata, annotations: { ...(pod.metadata?.annotations ?? {}), [ANNOTATION]: `LimitRanger plugin set: ${parts.join('; ')}` } };
      return pod;
    },
    async validateAdmission(c: AdmissionCall): Promise<void> {
      const pod = c.operation === 'CREATE' && applies(c, 'pods');
      const claim = (c.operation === 'CREATE' || c.operation === 'UPDATE') && applies(c, 'persistentvolumeclaims');
      if (!pod && !claim) return;
      const ranges = await o.limitRanges().list(c.namespace);
      if (ranges.length === 0) return;
      const errs = pod ? podErrors(c.object!, ranges) : claimErrors(c.object!, ranges);
      if (errs.length === 0) return;
      const name = c.object!.metadata?.name ?? c.name;
      throw forbidden(`${qualifiedResource(c.def.resource, c.def.group)} "${name}" is forbidden: ${errs.length === 1 ? errs[0] : `[${errs.join(', ')}]`}`, { name, kind: c.def.resource });
    },
  };
}
