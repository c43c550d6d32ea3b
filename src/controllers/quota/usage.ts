// What a ResourceQuota's status.used says (kube's quota evaluators, as the
// resourcequota controller adds them up): object counts of the core kinds,
// the compute resources of the namespace's pods that are not terminal, and
// the storage the claims request. Only the names the quota's spec.hard
// lists are reported, each with a value (0 when nothing counts). Pure: the
// controller passes the namespace's objects in.

import { formatBinarySI, formatDecimalSI, parseQuantity } from '../../core/quantity.js';
import type { ApiObject } from '../../registry/types.js';

export interface NamespaceObjects {
  pods: ApiObject[];
  services: ApiObject[];
  configMaps: ApiObject[];
  secrets: ApiObject[];
  persistentVolumeClaims: ApiObject[];
  replicationControllers: ApiObject[];
  resourceQuotas: ApiObject[];
}

type Counted = Exclude<keyof NamespaceObjects, 'pods'>;
/** the counted kinds, by their quota names (`services`, `count/services`) */
const COUNTS: Record<string, Counted> = {
  services: 'services',
  configmaps: 'configMaps',
  secrets: 'secrets',
  persistentvolumeclaims: 'persistentVolumeClaims',
  replicationcontrollers: 'replicationControllers',
  resourcequotas: 'resourceQuotas',
};

/** the kinds quotas count, by resource (core group) */
export const QUOTA_KINDS: Record<string, keyof NamespaceObjects> = { pods: 'pods', ...COUNTS };

/** compute resources of pods: quota name → [requests or limits, resource] */
const POD_COMPUTE: Record<string, ['requests' | 'limits', string]> = {
  cpu: ['requests', 'cpu'],
  'requests.cpu': ['requests', 'cpu'],
  'limits.cpu': ['limits', 'cpu'],
  memory: ['requests', 'memory'],
  'requests.memory': ['requests', 'memory'],
  'limits.memory': ['limits', 'memory'],
  'ephemeral-storage': ['requests', 'ephemeral-storage'],
  'requests.ephemeral-storage': ['requests', 'ephemeral-storage'],
  'limits.ephemeral-storage': ['limits', 'ephemeral-storage'],
};

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const arr = (v: unknown): Obj[] => (Array.isArray(v) ? v.map(obj) : []);

/** a sum of quantities and the format the first one was written in (kube's Add keeps the receiver's) */
class Sum {
  /** milli-units, exact for every quantity an object holds */
  milli = 0;
  binary: boolean | undefined;
  add(q: unknown): void {
    const v = parseQuantity(q);
    if (v === undefined) return;
    this.milli += Math.round(v * 1000);
    if (this.binary === undefined && typeof q === 'string') this.binary = /[KMGTPE]i$/.test(q.trim());
  }
  format(): string {
    if (this.milli % 1000 !== 0) return formatDecimalSI(this.milli, -3);
    return this.binary ? formatBinarySI(this.milli / 1000) : formatDecimalSI(this.milli / 1000, 0);
  }
}

/** kube's QuotaV1Pod: a pod in a terminal phase no longer counts */
export function podCounts(pod: ApiObject): boolean {
  const phase = obj(pod.status).phase;
  return phase !== 'Succeeded' && phase !== 'Failed';
}

/** kube's PodRequests / PodLimits: containers and sidecars added, each other init container's need with the sidecars before it, the larger; plus overhead */
function podAmount(pod: ApiObject, which: 'requests' | 'limits', resource: string): number {
  const spec = obj(pod.spec);
  const amount = (c: Obj): number => parseQuantity(obj(obj(c.resources)[which])[resource]) ?? 0;
  let sum = arr(spec.containers).reduce((n, c) => n + amount(c), 0);
  let sidecars = 0;
  let initMax = 0;
  for (const c of arr(spec.initContainers)) {
    if (c.restartPolicy === 'Always') {
      sidecars += amount(c);
      continue;
    }
    initMax = Math.max(initMax, amount(c) + sidecars);
  }
  sum += sidecars;
  return Math.max(sum, initMax) + (parseQuantity(obj(spec.overhead)[resource]) ?? 0);
}

/** the first quantity a pod gives for the resource, for its format */
function podSample(pod: ApiObject, which: 'requests' | 'limits', resource: string): unknown {
  const spec = obj(pod.spec);
  for (const c of [...arr(spec.containers), ...arr(spec.initContainers)]) {
    const q = obj(obj(c.resources)[which])[resource];
    if (q !== undefined) return q;
  }
  return undefined;
}

/** kube's BestEffort: no container requests or limits cpu or memory */
function bestEffort(pod: ApiObject): boolean {
  const spec = obj(pod.spec);
  return [...arr(spec.containers), ...arr(spec.initContainers)].every((c) => {
    const r = obj(c.resources);
    return ['cpu', 'memory'].every((k) => obj(r.requests)[k] === undefined && obj(r.limits)[k] === undefined);
  });
}

/** kube's pod scopes; others (PriorityClass, CrossNamespacePodAffinity) match every pod here */
export function inScopes(pod: ApiObject, scopes: string[]): boolean {
  const deadline = obj(pod.spec).activeDeadlineSeconds;
  return scopes.every((s) => {
    if (s === 'Terminating') return typeof deadline === 'number';
    if (s === 'NotTerminating') return typeof deadline !== 'number';
    if (s === 'BestEffort') return bestEffort(pod);
    if (s === 'NotBestEffort') return !bestEffort(pod);
    return true;
  });
}

function nodePorts(svc: ApiObject): number {
  const spec = obj(svc.spec);
  if (spec.type !== 'NodePort' && spec.type !== 'LoadBalancer') return 0;
  return arr(spec.ports).filter((p) => p.nodePort !== undefined || spec.type === 'NodePort' || spec.allocateLoadBalancerNodePorts !== false).length;
}

/** the quota names the evaluator of a kind knows (kube's MatchingResources) */
export function evaluatedNames(kind: keyof NamespaceObjects): Set<string> {
  const counted = (plural: string) => [plural, `count/${plural}`];
  switch (kind) {
    case 'pods':
      return new Set([...counted('pods'), ...Object.keys(POD_COMPUTE)]);
    case 'services':
      return new Set([...counted('services'), 'services.loadbalancers', 'services.nodeports']);
    case 'persistentVolumeClaims':
      return new Set([...counted('persistentvolumeclaims'), 'requests.storage']);
    default:
      return new Set(counted(Object.keys(COUNTS).find((k) => COUNTS[k] === kind)!));
  }
}

/** the names a container must request or limit when a quota tracks them (kube's pod Constraints) */
export function missingComputeNames(pod: ApiObject, tracked: string[]): Map<string, string[]> {
  const validation = ['cpu', 'memory', 'requests.cpu', 'requests.memory', 'limits.cpu', 'limits.memory'].filter((n) => tracked.includes(n));
  const missing = new Map<string, string[]>();
  const spec = obj(pod.spec);
  for (const c of [...arr(spec.containers), ...arr(spec.initContainers)]) {
    const r = obj(c.resources);
    const has = new Set<string>();
    for (const k of ['cpu', 'memory']) {
      if (obj(r.requests)[k] !== undefined) has.add(k).add(`requests.${k}`);
      if (obj(r.limits)[k] !== undefined) has.add(`limits.${k}`);
    }
    for (const n of validation) if (!has.has(n)) missing.set(n, [...(missing.get(n) ?? []), String(c.name ?? '')]);
  }
  return missing;
}

/** a + b as Quantity.Add writes it: the receiver's format, a zero receiver taking the other's */
export function addQuantities(a: string, b: string): string {
  const sum = new Sum();
  if ((parseQuantity(a) ?? 0) !== 0) sum.add(a);
  sum.add(b);
  if ((parseQuantity(a) ?? 0) === 0 && sum.milli === 0) return '0';
  return sum.format();
}

/** status.used for a quota: every name of `hard` an evaluator knows; scoped quotas count pods only */
export function quotaUsage(hard: Record<string, unknown>, scopes: string[], o: NamespaceObjects): Record<string, string> {
  const used: Record<string, string> = {};
  const pods = o.pods.filter((p) => podCounts(p) && inScopes(p, scopes));
  for (const name of Object.keys(hard)) {
    const bare = name.startsWith('count/') ? name.slice('count/'.length) : name;
    if (bare === 'pods') {
      used[name] = String(pods.length);
      continue;
    }
    const compute = POD_COMPUTE[name];
    if (compute) {
      if (scopes.includes('BestEffort')) continue;
      const sum = new Sum();
      for (const p of pods) {
        const v = podAmount(p, compute[0], compute[1]);
        if (v === 0) continue;
        // the total in the unit of the first value seen
        const sample = podSample(p, compute[0], compute[1]);
        if (sum.binary === undefined && typeof sample === 'string') sum.binary = /[KMGTPE]i$/.test(sample.trim());
        sum.milli += Math.round(v * 1000);
      }
      used[name] = sum.format();
      continue;
    }
    if (scopes.length > 0) continue;
    const counted = COUNTS[bare];
    if (counted) used[name] = String(o[counted].length);
    else if (name === 'services.loadbalancers') used[name] = String(o.services.filter((s) => obj(s.spec).type === 'LoadBalancer').length);
    else if (name === 'services.nodeports') used[name] = String(o.services.reduce((n, s) => n + nodePorts(s), 0));
    else if (name === 'requests.storage') {
      const sum = new Sum();
      for (const c of o.persistentVolumeClaims) sum.add(obj(obj(obj(c.spec).resources).requests).storage);
      used[name] = sum.format();
    }
  }
  return used;
}
