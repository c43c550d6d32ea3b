// What a namespaced object costs against a ResourceQuota (kube's quota
// evaluators, pkg/quota/v1/evaluator/core and apiserver's generic object
// count): which writes are charged, which `spec.hard` names an object kind
// answers to, an object's usage, a pod's quota scopes and the "must specify"
// constraint on compute requests. One evaluator per resource; every other
// namespaced resource is counted as `count/<resource>[.<group>]` on create.

import type { ApiObject } from '../types.js';
import { type Usage, ZERO, addUsage, parseAmount, usageOf } from './amount.js';

export interface ScopeRequirement {
  scopeName: string;
  operator: string;
  values?: string[];
}

export interface QuotaEvaluator {
  /** whether a write of this kind can change usage (kube's Handles); an update gives the object and the stored one */
  handles(operation: 'CREATE' | 'UPDATE', subresource: string | undefined, object?: ApiObject, oldObject?: ApiObject): boolean;
  /** the names of `hard` this kind is measured by */
  matchingResources(names: readonly string[]): string[];
  usage(obj: ApiObject, nowMs: number): Usage;
  /** scope selectors this object satisfies; kinds without scopes satisfy none */
  matchesScope(sel: ScopeRequirement, obj: ApiObject): boolean;
  /** kube's Constraints: an error message when the object lacks what the quota needs, else undefined */
  constraints(required: readonly string[], obj: ApiObject): string | undefined;
}

/** resources kube's quota never charges (install.DefaultIgnoredResources and the review kinds) */
const IGNORED = new Set(['events', 'tokenreviews', 'subjectaccessreviews', 'selfsubjectaccessreviews', 'localsubjectaccessreviews', 'selfsubjectrulesreviews', 'bindings']);

const ONE = parseAmount('1')!;

/** kube's ObjectCountQuotaResourceNameFor: `count/pods`, `count/deployments.apps` */
export function objectCountName(group: string, resource: string): string {
  return group ? `count/${resource}.${group}` : `count/${resource}`;
}

/** the core kinds kube also counts under their legacy name (`configmaps`, `secrets`, …) */
const LEGACY_COUNT: Record<string, string> = {
  configmaps: 'configmaps', secrets: 'secrets', replicationcontrollers: 'replicationcontrollers', resourcequotas: 'resourcequotas',
};

function objectCount(group: string, resource: string): QuotaEvaluator {
  const names = [objectCountName(group, resource), ...(group === '' && LEGACY_COUNT[resource] ? [LEGACY_COUNT[resource]] : [])];
  return {
    handles: (op, sub) => op === 'CREATE' && !sub,
    matchingResources: (input) => input.filter((n) => names.includes(n)),
    usage: () => new Map(names.map((n) => [n, ONE])),
    matchesScope: () => false,
    constraints: () => undefined,
  };
}

export type Obj = Record<string, unknown>;
export const objOf = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
export const listOf = (v: unknown): Obj[] => (Array.isArray(v) ? v.map(objOf) : []);

// --- pods -------------------------------------------------------------------

const POD_RESOURCES = [
  'count/pods', 'pods', 'cpu', 'memory', 'ephemeral-storage', 'requests.cpu', 'requests.memory', 'requests.ephemeral-storage',
  'limits.cpu', 'limits.memory', 'limits.ephemeral-storage',
];
/** the names kube requires every container to set when a quota tracks them (its "mistake" kept for compatibility) */
const VALIDATION_SET = new Set(['cpu', 'memory', 'requests.cpu', 'requests.memory', 'limits.cpu', 'limits.memory']);
const NATIVE = new Set(['cpu', 'memory', 'ephemeral-storage', 'storage', 'pods']);

/** an extended resource (`example.com/gpu`): not native, has a domain */
function isExtended(name: string): boolean {
  return !NATIVE.has(name) && !name.startsWith('hugepages-') && name.includes('/') && !name.startsWith('kubernetes.io/') && !name.startsWith('requests.');
}

function isExtendedQuotaName(name: string): boolean {
  return name.startsWith('requests.') && !POD_RESOURCES.includes(name) && !name.startsWith('requests.hugepages-');
}

/** kube's podComputeUsageHelper: the quota names of one set of requests and limits */
function computeUsage(requests: Usage, limits: Usage): Usage {
  const out: Usage = new Map([['pods', ONE]]);
  for (const r of ['cpu', 'memory', 'ephemeral-storage']) {
    const req = requests.get(r);
    if (req) out.set(r, req).set(`requests.${r}`, req);
    const lim = limits.get(r);
    if (lim) out.set(`limits.${r}`, lim);
  }
  for (const [r, v] of requests) {
    if (r.startsWith('hugepages-')) out.set(r, v).set(`requests.${r}`, v);
    else if (isExtended(r)) out.set(`requests.${r}`, v);
  }
  return out;
}

/** element-wise max, kube's quota.Max */
function maxUsage(a: Usage, b: Usage): Usage {
  const out = new Map(a);
  for (const [k, v] of b) {
    const have = out.get(k);
    if (!have || v.nano > have.nano) out.set(k, v);
  }
  return out;
}

/**
 * kube's PodRequests / PodLimits: the containers' sum plus restartable
 * (sidecar) init containers, at least each regular init container with the
 * sidecars started before it, plus the pod overhead
 */
export function podTotals(spec: Obj, field: 'requests' | 'limits', withOverhead = true): Usage {
  let sum: Usage = new Map();
  for (const c of listOf(spec.containers)) sum = addUsage(sum, usageOf(objOf(c.resources)[field]));
  let sidecars: Usage = new Map();
  let initMax: Usage = new Map();
  for (const c of listOf(spec.initContainers)) {
    const r = usageOf(objOf(c.resources)[field]);
    if (c.restartPolicy === 'Always') {
      sidecars = addUsage(sidecars, r);
      initMax = maxUsage(initMax, sidecars);
    } else initMax = maxUsage(initMax, addUsage(sidecars, r));
  }
  const total = maxUsage(addUsage(sum, sidecars), initMax);
  // the overhead adds to every request, and to the limits that are set
  const overhead = withOverhead ? usageOf(spec.overhead) : new Map();
  if (field === 'limits') for (const k of overhead.keys()) if (!total.has(k)) overhead.delete(k);
  return overhead.size > 0 ? addUsage(total, overhead) : total;
}

/** kube's QuotaV1Pod: terminal pods, and pods past their deletion grace, cost no compute */
function chargesCompute(pod: ApiObject, nowMs: number): boolean {
  const phase = objOf(pod.status).phase;
  if (phase === 'Succeeded' || phase === 'Failed') return false;
  const meta = pod.metadata ?? {};
  if (meta.deletionTimestamp) {
    const grace = typeof meta.deletionGracePeriodSeconds === 'number' ? meta.deletionGracePeriodSeconds : 0;
    if (Date.parse(String(meta.deletionTimestamp)) + grace * 1000 < nowMs) return false;
  }
  return true;
}

function isBestEffort(spec: Obj): boolean {
  for (const c of [...listOf(spec.containers), ...listOf(spec.initContainers)]) {
    const res = objOf(c.resources);
    for (const f of ['requests', 'limits']) {
      for (const [k, v] of Object.entries(objOf(res[f]))) {
        if ((k === 'cpu' || k === 'memory') && (parseAmount(v)?.nano ?? 0n) !== 0n) return false;
      }
    }
  }
  return true;
}

function usesCrossNamespaceAffinity(spec: Obj): boolean {
  const aff = objOf(spec.affinity);
  return [aff.podAffinity, aff.podAntiAffinity].some((a) => {
    const o = objOf(a);
    const terms = [...listOf(o.requiredDuringSchedulingIgnoredDuringExecution), ...listOf(o.preferredDuringSchedulingIgnoredDuringExecution).map((w) => objOf(w.podAffinityTerm))];
    return terms.some((t) => (Array.isArray(t.namespaces) && t.namespaces.length > 0) || t.namespaceSelector != null);
  });
}

/** the Terminating scope: an active deadline (kube's IsTerminating) */
export function isTerminatingPod(pod: ApiObject): boolean {
  const deadline = objOf(pod.spec).activeDeadlineSeconds;
  return typeof deadline === 'number' && deadline >= 0;
}

const pods: QuotaEvaluator = {
  // InPlacePodVerticalScaling is off by default in 1.32: a create changes a pod's usage, and an update
  // that moves it into or out of the Terminating scope is charged to the quotas of its new scope (kube #130060)
  handles: (op, sub, obj, old) => !sub && (op === 'CREATE' || (op === 'UPDATE' && !!obj && !!old && isTerminatingPod(obj) !== isTerminatingPod(old))),
  matchingResources: (input) => input.filter((n) => POD_RESOURCES.includes(n) || n.startsWith('hugepages-') || n.startsWith('requests.hugepages-') || isExtendedQuotaName(n)),
  usage(pod, nowMs) {
    const out: Usage = new Map([['count/pods', ONE]]);
    if (!chargesCompute(pod, nowMs)) return out;
    const spec = objOf(pod.spec);
    return addUsage(out, computeUsage(podTotals(spec, 'requests'), podTotals(spec, 'limits')));
  },
  matchesScope(sel, pod) {
    const spec = objOf(pod.spec);
    const terminating = isTerminatingPod(pod);
    switch (sel.scopeName) {
      case 'Terminating':
        return terminating;
      case 'NotTerminating':
        return !terminating;
      case 'BestEffort':
        return isBestEffort(spec);
      case 'NotBestEffort':
        return !isBestEffort(spec);
      case 'CrossNamespacePodAffinity':
        return usesCrossNamespaceAffinity(spec);
      case 'PriorityClass': {
        const pc = typeof spec.priorityClassName === 'string' ? spec.priorityClassName : '';
        const values = sel.values ?? [];
        if (sel.operator === 'Exists') return pc !== '';
        if (sel.operator === 'DoesNotExist') return pc === '';
        if (sel.operator === 'In') return pc !== '' && values.includes(pc);
        if (sel.operator === 'NotIn') return pc === '' || !values.includes(pc);
        return false;
      }
      default:
        return false;
    }
  },
  constraints(required, pod) {
    const need = required.filter((r) => VALIDATION_SET.has(r));
    if (need.length === 0) return undefined;
    const missing = new Map<string, Set<string>>();
    const spec = objOf(pod.spec);
    for (const c of [...listOf(spec.containers), ...listOf(spec.initContainers)]) {
      const res = objOf(c.resources);
      const have = computeUsage(usageOf(res.requests), usageOf(res.limits));
      for (const r of need) {
        if (have.has(r)) continue;
        if (!missing.has(r)) missing.set(r, new Set());
        missing.get(r)!.add(String(c.name ?? ''));
      }
    }
    if (missing.size === 0) return undefined;
    return `must specify ${[...missing.keys()].sort().map((r) => `${r} for: ${[...missing.get(r)!].sort().join(',')}`).join('; ')}`;
  },
};

// --- services ---------------------------------------------------------------

const SERVICE_RESOURCES = ['count/services', 'services', 'services.loadbalancers', 'services.nodeports'];

const services: QuotaEvaluator = {
  handles: (op, sub) => (op === 'CREATE' || op === 'UPDATE') && !sub,
  matchingResources: (input) => input.filter((n) => SERVICE_RESOURCES.includes(n)),
  usage(svc) {
    const spec = objOf(svc.spec);
    const out: Usage = new Map([['count/services', ONE], ['services', ONE], ['services.loadbalancers', ZERO], ['services.nodeports', ZERO]]);
    const ports = listOf(spec.ports).length;
    const nodePorts = (n: number) => parseAmount(String(n))!;
    if (spec.type === 'NodePort') out.set('services.nodeports', nodePorts(ports));
    if (spec.type === 'LoadBalancer') {
      out.set('services.loadbalancers', ONE);
      if (spec.allocateLoadBalancerNodePorts !== false) out.set('services.nodeports', nodePorts(ports));
    }
    return out;
  },
  matchesScope: () => false,
  constraints: () => undefined,
};

// --- persistent volume claims -----------------------------------------------

const STORAGE_CLASS_SUFFIX = '.storageclass.storage.k8s.io/';

/** GetPersistentVolumeClaimClass: the beta annotation, else spec.storageClassName, else "" */
export function claimClass(pvc: ApiObject): string {
  const beta = pvc.metadata?.annotations?.['volume.beta.kubernetes.io/storage-class'];
  if (typeof beta === 'string') return beta;
  const sc = objOf(pvc.spec).storageClassName;
  return typeof sc === 'string' ? sc : '';
}

const pvcs: QuotaEvaluator = {
  // an update may expand a claim (ExpandPersistentVolumes, on by default)
  handles: (op, sub) => (op === 'CREATE' || op === 'UPDATE') && !sub,
  matchingResources: (input) =>
    input.filter((n) => ['count/persistentvolumeclaims', 'persistentvolumeclaims', 'requests.storage'].includes(n) ||
      (n.includes(STORAGE_CLASS_SUFFIX) && (n.endsWith('/persistentvolumeclaims') || n.endsWith('/requests.storage')))),
  usage(pvc) {
    const out: Usage = new Map([['count/persistentvolumeclaims', ONE], ['persistentvolumeclaims', ONE]]);
    const sc = claimClass(pvc);
    if (sc) out.set(`${sc}${STORAGE_CLASS_SUFFIX}persistentvolumeclaims`, ONE);
    // kube charges the larger of the request and what was allocated (a shrink never releases quota)
    const req = parseAmount(objOf(objOf(objOf(pvc.spec).resources).requests).storage);
    const alloc = parseAmount(objOf(objOf(pvc.status).allocatedResources).storage);
    const storage = req && alloc ? (alloc.nano > req.nano ? alloc : req) : (req ?? alloc);
    if (storage) {
      out.set('requests.storage', storage);
      if (sc) out.set(`${sc}${STORAGE_CLASS_SUFFIX}requests.storage`, storage);
    }
    return out;
  },
  matchesScope: () => false,
  constraints: () => undefined,
};

/** the evaluator of a namespaced resource; undefined for resources quota ignores */
export function evaluatorFor(group: string, resource: string): QuotaEvaluator | undefined {
  if (IGNORED.has(resource) && (group === '' || group.startsWith('authentication.') || group.startsWith('authorization.') || group.startsWith('events.'))) return undefined;
  if (group === '') {
    if (resource === 'pods') return pods;
    if (resource === 'services') return services;
    if (resource === 'persistentvolumeclaims') return pvcs;
  }
  const id = `${group}/${resource}`;
  let ev = counters.get(id);
  if (!ev) counters.set(id, (ev = objectCount(group, resource)));
  return ev;
}

const counters = new Map<string, QuotaEvaluator>();

/** a quota's scope selectors: `spec.scopes` (Exists) and `spec.scopeSelector.matchExpressions` */
export function scopeSelectorsOf(quota: ApiObject): ScopeRequirement[] {
  const spec = objOf(quota.spec);
  const out: ScopeRequirement[] = [];
  for (const s of Array.isArray(spec.scopes) ? spec.scopes : []) out.push({ scopeName: String(s), operator: 'Exists' });
  for (const e of listOf(objOf(spec.scopeSelector).matchExpressions)) {
    out.push({ scopeName: String(e.scopeName ?? ''), operator: String(e.operator ?? ''), values: Array.isArray(e.values) ? e.values.map(String) : undefined });
  }
  return out;
}

/** kube's generic.Matches: the quota limits something of this kind and every scope selector holds */
export function quotaMatches(ev: QuotaEvaluator, hardNames: readonly string[], quota: ApiObject, obj: ApiObject): boolean {
  if (ev.matchingResources(hardNames).length === 0) return false;
  return scopeSelectorsOf(quota).every((s) => ev.matchesScope(s, obj));
}
