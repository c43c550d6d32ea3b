// The LimitRanger admission plugin (kube-apiserver's, on by default): the
// namespace's LimitRanges give a new pod's containers their default requests
// and limits (mutating, with kube's `kubernetes.io/limit-ranger` annotation
// saying what was set), then the pod's containers, the pod as a whole and a
// claim's storage request are held to each range's min, max and
// maxLimitRequestRatio (validating; a 403 with kube's messages). Pods are
// admitted on create only: their containers cannot change afterwards.

import { forbidden, qualifiedResource } from '../../core/errors.js';
import type { AdmissionCall, WriteHooks } from '../write-options.js';
import type { ApiObject } from '../types.js';
import { type Amount, type Usage, formatAmount, usageOf } from './amount.js';
import { type Obj, listOf, objOf, podTotals } from './evaluators.js';
import { coreResources } from '../write-hooks.js';

export const LIMIT_RANGER = 'LimitRanger';
const ANNOTATION = 'kubernetes.io/limit-ranger';

/** the namespace's LimitRanges as this member holds them */
export interface LimitRangeAccess {
  list(namespace: string): ApiObject[];
}

interface Item {
  type: string;
  min: Usage;
  max: Usage;
  default: Usage;
  defaultRequest: Usage;
  maxLimitRequestRatio: Usage;
}

function itemsOf(range: ApiObject): Item[] {
  return listOf(objOf(range.spec).limits).map((l) => ({
    type: String(l.type ?? ''),
    min: usageOf(l.min),
    max: usageOf(l.max),
    default: usageOf(l.default),
    defaultRequest: usageOf(l.defaultRequest),
    maxLimitRequestRatio: usageOf(l.maxLimitRequestRatio),
  }));
}

/** which writes the plugin sees: pods on create, claims on create and update; never a sub-resource */
function applies(c: AdmissionCall): 'pods' | 'claims' | undefined {
  if (c.def.group !== '' || c.opts.subresource || !c.object || !c.namespace) return undefined;
  if (c.def.resource === 'pods' && c.operation === 'CREATE') return 'pods';
  if (c.def.resource === 'persistentvolumeclaims' && (c.operation === 'CREATE' || c.operation === 'UPDATE')) {
    // an object being deleted is left alone
    return c.oldObject?.metadata?.deletionTimestamp ? undefined : 'claims';
  }
  return undefined;
}

export function limitRangerAdmission(access: LimitRangeAccess): Required<Pick<WriteHooks, 'mutate' | 'validateAdmission' | 'appliesTo'>> {
  return {
    appliesTo: coreResources('pods', 'persistentvolumeclaims'),
    async mutate(c) {
      if (applies(c) !== 'pods') return c.object;
      for (const range of access.list(c.namespace)) setDefaults(c.object!, itemsOf(range));
      return c.object;
    },
    async validateAdmission(c) {
      const kind = applies(c);
      if (!kind) return;
      for (const range of access.list(c.namespace)) {
        const errors = kind === 'pods' ? podErrors(c.object!, itemsOf(range)) : claimErrors(c.object!, itemsOf(range));
        if (errors.length === 0) continue;
        // kube's utilerrors.NewAggregate: one message, or all of them in brackets
        const message = errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`;
        throw forbidden(`${qualifiedResource(c.def.resource, c.def.group)} "${c.name}" is forbidden: ${message}`, { name: c.name, kind: c.def.resource });
      }
    },
  };
}

/** kube's mergePodResourceRequirements: each container gets the defaults it lacks; the annotation says which */
function setDefaults(pod: ApiObject, items: Item[]): void {
  const limits: Usage = new Map();
  const requests: Usage = new Map();
  for (const item of items) {
    if (item.type !== 'Container') continue;
    for (const [k, v] of item.defaultRequest) requests.set(k, v);
    for (const [k, v] of item.default) limits.set(k, v);
  }
  if (limits.size === 0 && requests.size === 0) return;
  const notes: string[] = [];
  const spec = objOf(pod.spec);
  const merge = (containers: unknown, prefix: string) => {
    for (const container of Array.isArray(containers) ? containers : []) {
      const c = container as Obj;
      const res = objOf(c.resources);
      const setLimits = fill(res, 'limits', limits);
      const setRequests = fill(res, 'requests', requests);
      if (setLimits.length + setRequests.length > 0) c.resources = res;
      if (setRequests.length > 0) notes.push(`${setRequests.sort().join(', ')} request for ${prefix} ${String(c.name ?? '')}`);
      if (setLimits.length > 0) notes.push(`${setLimits.sort().join(', ')} limit for ${prefix} ${String(c.name ?? '')}`);
    }
  };
  merge(spec.containers, 'container');
  merge(spec.initContainers, 'init container');
  if (notes.length === 0) return;
  const meta = (pod.metadata ??= {});
  meta.annotations = { ...(meta.annotations ?? {}), [ANNOTATION]: `LimitRanger plugin set: ${notes.join('; ')}` };
}

/** sets the entries of `defaults` the container's `field` lacks; returns their names */
function fill(resources: Obj, field: 'limits' | 'requests', defaults: Usage): string[] {
  const have = objOf(resources[field]);
  const set = [...defaults.keys()].filter((k) => !(k in have));
  if (set.length === 0) return [];
  resources[field] = { ...have, ...Object.fromEntries(set.map((k) => [k, formatAmount(defaults.get(k)!)])) };
  return set;
}

/** kube's requestLimitEnforcedValues: compared in milli-units, rounded up as MilliValue does */
function milli(a: Amount | undefined): bigint {
  if (!a) return 0n;
  const m = a.nano / 1_000_000n;
  return a.nano > 0n && a.nano % 1_000_000n !== 0n ? m + 1n : m;
}

const show = (a: Amount) => formatAmount(a);

function minConstraint(type: string, name: string, enforced: Amount, requests: Usage, limits: Usage): string | undefined {
  const req = requests.get(name);
  const lim = limits.get(name);
  if (!req) return `minimum ${name} usage per ${type} is ${show(enforced)}.  No request is specified`;
  if (milli(req) < milli(enforced)) return `minimum ${name} usage per ${type} is ${show(enforced)}, but request is ${show(req)}`;
  if (lim && milli(lim) < milli(enforced)) return `minimum ${name} usage per ${type} is ${show(enforced)}, but limit is ${show(lim)}`;
  return undefined;
}

function maxConstraint(type: string, name: string, enforced: Amount, requests: Usage, limits: Usage): string | undefined {
  const req = requests.get(name);
  const lim = limits.get(name);
  if (!lim) return `maximum ${name} usage per ${type} is ${show(enforced)}.  No limit is specified`;
  if (milli(lim) > milli(enforced)) return `maximum ${name} usage per ${type} is ${show(enforced)}, but limit is ${show(lim)}`;
  if (req && milli(req) > milli(enforced)) return `maximum ${name} usage per ${type} is ${show(enforced)}, but request is ${show(req)}`;
  return undefined;
}

/** a claim's max is held against its request only (kube's maxRequestConstraint) */
function maxRequestConstraint(type: string, name: string, enforced: Amount, requests: Usage): string | undefined {
  const req = requests.get(name);
  if (!req) return `maximum ${name} usage per ${type} is ${show(enforced)}.  No request is specified`;
  if (milli(req) > milli(enforced)) return `maximum ${name} usage per ${type} is ${show(enforced)}, but request is ${show(req)}`;
  return undefined;
}

function ratioConstraint(type: string, name: string, enforced: Amount, requests: Usage, limits: Usage): string | undefined {
  const req = milli(requests.get(name));
  const lim = milli(limits.get(name));
  if (req === 0n) return `${name} max limit to request ratio per ${type} is ${show(enforced)}, but no request is specified or request is 0`;
  if (lim === 0n) return `${name} max limit to request ratio per ${type} is ${show(enforced)}, but no limit is specified or limit is 0`;
  const ratio = Number(lim) / Number(req);
  if (ratio * 1000 > Number(milli(enforced))) {
    return `${name} max limit to request ratio per ${type} is ${show(enforced)}, but provided ratio is ${ratio.toFixed(6)}`;
  }
  return undefined;
}

/** every constraint of one item on one set of requests and limits, by resource name */
function check(item: Item, type: string, requests: Usage, limits: Usage): string[] {
  const out: (string | undefined)[] = [];
  for (const k of [...item.min.keys()].sort()) out.push(minConstraint(type, k, item.min.get(k)!, requests, limits));
  for (const k of [...item.max.keys()].sort()) out.push(maxConstraint(type, k, item.max.get(k)!, requests, limits));
  for (const k of [...item.maxLimitRequestRatio.keys()].sort()) out.push(ratioConstraint(type, k, item.maxLimitRequestRatio.get(k)!, requests, limits));
  return out.filter((e): e is string => e !== undefined);
}

function podErrors(pod: ApiObject, items: Item[]): string[] {
  const spec = objOf(pod.spec);
  const errors: string[] = [];
  for (const item of items) {
    if (item.type === 'Container') {
      for (const c of [...listOf(spec.containers), ...listOf(spec.initContainers)]) {
        const res = objOf(c.resources);
        errors.push(...check(item, 'Container', usageOf(res.requests), usageOf(res.limits)));
      }
    }
    // the pod's totals as kube's LimitRanger adds them (without the overhead)
    if (item.type === 'Pod') errors.push(...check(item, 'Pod', podTotals(spec, 'requests', false), podTotals(spec, 'limits', false)));
  }
  return errors;
}

function claimErrors(claim: ApiObject, items: Item[]): string[] {
  const requests = usageOf(objOf(objOf(claim.spec).resources).requests);
  const errors: (string | undefined)[] = [];
  for (const item of items) {
    if (item.type !== 'PersistentVolumeClaim') continue;
    for (const k of [...item.min.keys()].sort()) errors.push(minConstraint('PersistentVolumeClaim', k, item.min.get(k)!, requests, new Map()));
    for (const k of [...item.max.keys()].sort()) errors.push(maxRequestConstraint('PersistentVolumeClaim', k, item.max.get(k)!, requests));
  }
  return errors.filter((e): e is string => e !== undefined);
}
