// The scheduler's decisions, pure (kube-scheduler's default filters and the
// least-allocated score, as documented for v1.32): does a pod fit a node, and
// why not; which fitting node is the least requested; the FailedScheduling
// message. scheduler.ts feeds them from the informers.

import type { ApiObject, JSONValue } from '../../registry/types.js';
import { resourceAmount } from '../../core/quantity.js';
import { KUBE_NODE_TAINT_KEYS, type NodeTaintKeys } from '../../machinery/node-taints.js';

type Obj = Record<string, JSONValue>;

/** the amounts the scheduler adds up: CPU in millicores, memory in bytes */
export interface Resources {
  cpu: number;
  memory: number;
}

/** a node as the filters see it: the Node and the pods already bound to it */
export interface NodeState {
  node: ApiObject;
  /** sum of the requests of the non-terminal pods bound to it */
  requested: Resources;
  /** the same with kube's non-zero defaults (scoring only) */
  nonZeroRequested: Resources;
  pods: number;
  /** the host ports those pods hold, in `hostPortKey` order (one entry per container port) */
  usedPorts?: HostPort[];
  /** the server's node taint keys (machinery/node-taints.ts); kube's `node.kubernetes.io/…` when absent */
  taintKeys?: NodeTaintKeys;
}

/** a container port bound on the node, as the NodePorts filter keys it: an empty hostIP is 0.0.0.0, an empty protocol TCP */
export interface HostPort {
  ip: string;
  protocol: string;
  port: number;
}

export const hostPortKey = (p: HostPort): string => `${p.ip}/${p.protocol}/${p.port}`;

/** the host ports a pod's containers ask for (kube's getContainerPorts: the ports with a hostPort above 0) */
export function hostPorts(pod: ApiObject): HostPort[] {
  return arr(obj(pod.spec).containers)
    .flatMap((c) => arr(c.ports))
    .filter((p) => typeof p.hostPort === 'number' && p.hostPort > 0)
    .map((p) => ({ ip: str(p.hostIP) || '0.0.0.0', protocol: str(p.protocol) || 'TCP', port: p.hostPort as number }));
}

/** HostPortInfo.CheckConflict: 0.0.0.0 takes the protocol and port on every address, another address only on itself */
function portTaken(want: HostPort, used: readonly HostPort[]): boolean {
  return used.some((u) => u.protocol === want.protocol && u.port === want.port && (want.ip === '0.0.0.0' || u.ip === '0.0.0.0' || u.ip === want.ip));
}

// kube's defaults for a container without requests, used by scoring only (pkg/scheduler/util)
const DEFAULT_MILLI_CPU = 100;
const DEFAULT_MEMORY = 200 * 1024 * 1024;

const obj = (v: unknown): Obj => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const arr = (v: unknown): Obj[] => (Array.isArray(v) ? (v as Obj[]) : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

function containerRequests(c: Obj, nonZero: boolean): Resources {
  const req = obj(obj(c.resources).requests);
  const has = (r: string): boolean => req[r] !== undefined;
  return {
    cpu: has('cpu') ? resourceAmount('cpu', req.cpu) : nonZero ? DEFAULT_MILLI_CPU : 0,
    memory: has('memory') ? resourceAmount('memory', req.memory) : nonZero ? DEFAULT_MEMORY : 0,
  };
}

/**
 * A pod's effective request (the resources plugin's computePodResourceRequest):
 * the sum over its containers and restartable (sidecar) init containers, at
 * least the largest ordinary init container plus the sidecars before it, plus
 * `overhead`. `nonZero` fills kube's defaults for missing CPU/memory (scoring), in
 * every container, init containers and sidecars included.
 */
export function podRequests(pod: ApiObject, nonZero = false): Resources {
  const spec = obj(pod.spec);
  const sum: Resources = { cpu: 0, memory: 0 };
  for (const c of arr(spec.containers)) {
    const r = containerRequests(c, nonZero);
    sum.cpu += r.cpu;
    sum.memory += r.memory;
  }
  let sidecars: Resources = { cpu: 0, memory: 0 };
  let initMax: Resources = { cpu: 0, memory: 0 };
  for (const c of arr(spec.initContainers)) {
    // kube's PodRequests fills the scoring defaults (NonMissingContainerRequests) for init containers too
    const r = containerRequests(c, nonZero);
    if (c.restartPolicy === 'Always') {
      sidecars = { cpu: sidecars.cpu + r.cpu, memory: sidecars.memory + r.memory };
      continue;
    }
    initMax = { cpu: Math.max(initMax.cpu, r.cpu + sidecars.cpu), memory: Math.max(initMax.memory, r.memory + sidecars.memory) };
  }
  const overhead = obj(spec.overhead);
  return {
    cpu: Math.max(sum.cpu + sidecars.cpu, initMax.cpu) + resourceAmount('cpu', overhead.cpu),
    memory: Math.max(sum.memory + sidecars.memory, initMax.memory) + resourceAmount('memory', overhead.memory),
  };
}

/** a pod that holds its node's resources: bound, not Succeeded/Failed (the scheduler cache drops terminal pods) */
export function holdsResources(pod: ApiObject): boolean {
  const phase = str(obj(pod.status).phase);
  return str(obj(pod.spec).nodeName) !== '' && phase !== 'Succeeded' && phase !== 'Failed';
}

export interface Taint {
  key: string;
  value?: string;
  effect: string;
}

/** v1 toleration semantics (ToleratesTaint): effect, key (empty key with Exists = all), operator */
export function tolerates(tolerations: Obj[], taint: Taint): boolean {
  return tolerations.some((t) => {
    const effect = str(t.effect);
    if (effect !== '' && effect !== taint.effect) return false;
    const key = str(t.key);
    const op = str(t.operator) || 'Equal';
    if (key === '' ) return op === 'Exists';
    if (key !== taint.key) return false;
    return op === 'Exists' || (op === 'Equal' && str(t.value) === (taint.value ?? ''));
  });
}

function nodeReady(node: ApiObject): boolean {
  return arr(obj(node.status).conditions).some((c) => c.type === 'Ready' && c.status === 'True');
}

/** the node's taints and labels as the filters read them, derived once per Node version (informer objects are never modified) */
const labelsCache = new WeakMap<ApiObject, Record<string, string>>();
function nodeLabels(node: ApiObject): Record<string, string> {
  let l = labelsCache.get(node);
  if (!l) labelsCache.set(node, (l = Object.fromEntries(Object.entries(obj(node.metadata?.labels)).map(([k, v]) => [k, String(v)]))));
  return l;
}
const taintsCache = new WeakMap<ApiObject, { keys: NodeTaintKeys; taints: Taint[] }>();
function nodeTaints(node: ApiObject, keys: NodeTaintKeys): Taint[] {
  let t = taintsCache.get(node);
  if (!t || t.keys !== keys) taintsCache.set(node, (t = { keys, taints: effectiveTaints(node, keys) }));
  return t.taints;
}

/** the node's taints, with the not-ready taint implied for a node whose Ready is not True (the lifecycle controller adds it) */
function effectiveTaints(node: ApiObject, keys: NodeTaintKeys): Taint[] {
  const taints: Taint[] = arr(obj(node.spec).taints).map((t) => ({ key: str(t.key), value: str(t.value), effect: str(t.effect) }));
  if (!nodeReady(node)) {
    const key = arr(obj(node.status).conditions).some((c) => c.type === 'Ready' && c.status === 'False') ? keys.notReady : keys.unreachable;
    if (!taints.some((t) => t.key === keys.notReady || t.key === keys.unreachable)) taints.push({ key, value: '', effect: 'NoSchedule' });
  }
  return taints;
}

/** a NodeSelectorRequirement against labels (or `metadata.name` for matchFields) */
function requirementHolds(req: Obj, labels: Record<string, string>): boolean {
  const key = str(req.key);
  const values = arr(req.values).map(String);
  const has = Object.prototype.hasOwnProperty.call(labels, key);
  const v = labels[key];
  switch (str(req.operator)) {
    case 'In': return has && values.includes(v!);
    case 'NotIn': return !has || !values.includes(v!);
    case 'Exists': return has;
    case 'DoesNotExist': return !has;
    case 'Gt': return has && values.length === 1 && Number(v) > Number(values[0]);
    case 'Lt': return has && values.length === 1 && Number(v) < Number(values[0]);
    default: return false;
  }
}

/** nodeSelector and requiredDuringSchedulingIgnoredDuringExecution (terms ORed, requirements ANDed; an empty term matches nothing) */
export function matchesNodeAffinity(pod: ApiObject, node: ApiObject): boolean {
  const spec = obj(pod.spec);
  const labels = nodeLabels(node);
  for (const [k, v] of Object.entries(obj(spec.nodeSelector))) if (labels[k] !== String(v)) return false;
  const required = obj(obj(obj(spec.affinity).nodeAffinity).requiredDuringSchedulingIgnoredDuringExecution);
  if (required.nodeSelectorTerms === undefined) return true;
  const fields = { 'metadata.name': node.metadata?.name ?? '' };
  return arr(required.nodeSelectorTerms).some((term) => {
    const exprs = arr(term.matchExpressions);
    const fieldExprs = arr(term.matchFields);
    if (exprs.length === 0 && fieldExprs.length === 0) return false;
    return exprs.every((r) => requirementHolds(r, labels)) && fieldExprs.every((r) => requirementHolds(r, fields));
  });
}

type Allocatable = { cpu: number; memory: number; pods: number };
/** parsed once per Node version: informer objects are shared and never modified */
const allocatableCache = new WeakMap<ApiObject, Allocatable>();

function allocatable(node: ApiObject): Allocatable {
  let out = allocatableCache.get(node);
  if (out) return out;
  const st = obj(node.status);
  const a = Object.keys(obj(st.allocatable)).length > 0 ? obj(st.allocatable) : obj(st.capacity);
  out = { cpu: resourceAmount('cpu', a.cpu), memory: resourceAmount('memory', a.memory), pods: resourceAmount('pods', a.pods) };
  allocatableCache.set(node, out);
  return out;
}

/**
 * Why the pod does not fit the node (empty: it fits). The filters run in the
 * default profile's order and stop at the first that fails, as kube's
 * framework does, so a node contributes one reason (the resources filter may
 * give several); the texts are kube's.
 */
export function unfitReasons(pod: ApiObject, n: NodeState, req: Resources = podRequests(pod)): string[] {
  const spec = obj(pod.spec);
  const tolerations = arr(spec.tolerations);
  const keys = n.taintKeys ?? KUBE_NODE_TAINT_KEYS;
  if (obj(n.node.spec).unschedulable === true && !tolerates(tolerations, { key: keys.unschedulable, effect: 'NoSchedule' })) {
    return ['node(s) were unschedulable'];
  }
  const wanted = str(spec.nodeName);
  if (wanted !== '' && wanted !== n.node.metadata?.name) return ["node(s) didn't match the requested node name"];
  const untolerated = nodeTaints(n.node, keys).find((t) => (t.effect === 'NoSchedule' || t.effect === 'NoExecute') && !tolerates(tolerations, t));
  if (untolerated) return [`node(s) had untolerated taint {${untolerated.key}: ${untolerated.value ?? ''}}`];
  if (!matchesNodeAffinity(pod, n.node)) return ["node(s) didn't match Pod's node affinity/selector"];
  // NodePorts, before NodeResourcesFit in kube's default profile
  if (hostPorts(pod).some((p) => portTaken(p, n.usedPorts ?? []))) return ["node(s) didn't have free ports for the requested pod ports"];
  const alloc = allocatable(n.node);
  const reasons: string[] = [];
  if (n.pods + 1 > alloc.pods) reasons.push('Too many pods');
  if (req.cpu > 0 && req.cpu > alloc.cpu - n.requested.cpu) reasons.push('Insufficient cpu');
  if (req.memory > 0 && req.memory > alloc.memory - n.requested.memory) reasons.push('Insufficient memory');
  return reasons;
}

/** NodeResourcesFit's LeastAllocated score (0–100), CPU and memory weighted equally, with the non-zero defaults */
export function leastAllocatedScore(pod: ApiObject, n: NodeState, req: Resources = podRequests(pod, true)): number {
  const alloc = allocatable(n.node);
  const one = (capacity: number, used: number): number => (capacity <= 0 || used > capacity ? 0 : ((capacity - used) * 100) / capacity);
  return Math.floor((one(alloc.cpu, n.nonZeroRequested.cpu + req.cpu) + one(alloc.memory, n.nonZeroRequested.memory + req.memory)) / 2);
}

export type Placement = { node: string } | { unschedulable: string };

/**
 * The node for a pod: the fitting node with the highest score, a tie broken
 * by `random` (kube's selectHost samples among the best), or the FitError
 * message: `0/N nodes are available: <count> <reason>, ….` with the
 * "<count> <reason>" strings sorted, as kube's FitError.Error() writes it.
 */
export function place(pod: ApiObject, nodes: NodeState[], random: () => number): Placement {
  if (nodes.length === 0) return { unschedulable: 'no nodes available to schedule pods' };
  const histogram = new Map<string, number>();
  let best: string[] = [];
  let bestScore = -1;
  const req = podRequests(pod);
  const nonZero = podRequests(pod, true);
  for (const n of nodes) {
    const reasons = unfitReasons(pod, n, req);
    if (reasons.length > 0) {
      for (const r of reasons) histogram.set(r, (histogram.get(r) ?? 0) + 1);
      continue;
    }
    const score = leastAllocatedScore(pod, n, nonZero);
    if (score > bestScore) {
      bestScore = score;
      best = [n.node.metadata?.name ?? ''];
    } else if (score === bestScore) best.push(n.node.metadata?.name ?? '');
  }
  if (best.length > 0) return { node: best[Math.min(best.length - 1, Math.floor(random() * best.length))]! };
  const parts = [...histogram].map(([r, c]) => `${c} ${r}`).sort();
  return { unschedulable: `0/${nodes.length} nodes are available: ${parts.join(', ')}.` };
}

/** what the scheduler adds up for a node from the pods bound to it */
export function nodeState(node: ApiObject, boundPods: ApiObject[]): NodeState {
  const requested: Resources = { cpu: 0, memory: 0 };
  const nonZeroRequested: Resources = { cpu: 0, memory: 0 };
  let pods = 0;
  const usedPorts: HostPort[] = [];
  for (const p of boundPods) {
    if (!holdsResources(p)) continue;
    pods++;
    usedPorts.push(...hostPorts(p));
    const r = podRequests(p);
    const z = podRequests(p, true);
    requested.cpu += r.cpu;
    requested.memory += r.memory;
    nonZeroRequested.cpu += z.cpu;
    nonZeroRequested.memory += z.memory;
  }
  usedPorts.sort((a, b) => (hostPortKey(a) < hostPortKey(b) ? -1 : hostPortKey(a) > hostPortKey(b) ? 1 : 0));
  return { node, requested, nonZeroRequested, pods, usedPorts };
}
