// The scheduler's decisions, pure (kube-scheduler's default filters and the
// least-allocated score, as documented for v1.32): does a pod fit a node, and
// why not; which fitting node is the least requested; the FailedScheduling
// message. scheduler.ts feeds them from the informers.

import type { ApiObject, JSONValue } from '../../registry/types.js';
import { resourceAmount } from '../../core/quantity.js';
import { type Amounts, type HostPort, type Taint, containerRequestAmounts, hostPortKey, hostPorts, matchesNodeAffinity, podResourceRequests, portTaken, tolerates } from '../../core/pod-fit.js';
import { KUBE_NODE_TAINT_KEYS, type NodeTaintKeys } from '../../machinery/node-taints.js';

type Obj = Record<string, JSONValue>;

// the pod-level rules the node agent's admission shares (src/core/pod-fit.ts)
export { type HostPort, type Taint, hostPortKey, hostPorts, matchesNodeAffinity, tolerates };

/**
 * the amounts the scheduler adds up: CPU in millicores, memory in bytes, and
 * the scalar resources (ephemeral-storage, hugepages, extended resources such as
 * `example.com/gpu`) by name, present only when some are requested
 */
export interface Resources {
  cpu: number;
  memory: number;
  scalar?: Record<string, number>;
}

/** the resources NodeResourcesFit counts by name besides CPU and memory (`pods` is the pod count) */
const isScalar = (name: string): boolean => name !== 'cpu' && name !== 'memory' && name !== 'pods';

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

// kube's defaults for a container without requests, used by scoring only (pkg/scheduler/util)
const DEFAULT_MILLI_CPU = 100;
const DEFAULT_MEMORY = 200 * 1024 * 1024;

const obj = (v: unknown): Obj => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const arr = (v: unknown): Obj[] => (Array.isArray(v) ? (v as Obj[]) : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** a container's requests with kube's non-zero defaults for missing CPU/memory (scoring) */
function nonZeroRequests(c: unknown): Amounts {
  const r = containerRequestAmounts(c);
  return { ...r, cpu: r.cpu ?? DEFAULT_MILLI_CPU, memory: r.memory ?? DEFAULT_MEMORY };
}

/**
 * A pod's effective CPU and memory request (the resources plugin's
 * computePodResourceRequest; src/core/pod-fit.ts `podResourceRequests`).
 * `nonZero` fills kube's defaults for missing CPU/memory (scoring), in every
 * container, init containers and sidecars included.
 */
export function podRequests(pod: ApiObject, nonZero = false): Resources {
  const r = podResourceRequests(pod, nonZero ? nonZeroRequests : containerRequestAmounts);
  const out: Resources = { cpu: r.cpu ?? 0, memory: r.memory ?? 0 };
  if (nonZero) return out;
  for (const [name, v] of Object.entries(r)) if (isScalar(name) && v > 0) (out.scalar ??= {})[name] = v;
  return out;
}

/** a pod that holds its node's resources: bound, not Succeeded/Failed (the scheduler cache drops terminal pods) */
export function holdsResources(pod: ApiObject): boolean {
  const phase = str(obj(pod.status).phase);
  return str(obj(pod.spec).nodeName) !== '' && phase !== 'Succeeded' && phase !== 'Failed';
}

function nodeReady(node: ApiObject): boolean {
  return arr(obj(node.status).conditions).some((c) => c.type === 'Ready' && c.status === 'True');
}

/** the node's taints as the filters read them, derived once per Node version (informer objects are never modified) */
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

type Allocatable = { cpu: number; memory: number; pods: number; scalar: Record<string, number> };
/** parsed once per Node version: informer objects are shared and never modified */
const allocatableCache = new WeakMap<ApiObject, Allocatable>();

function allocatable(node: ApiObject): Allocatable {
  let out = allocatableCache.get(node);
  if (out) return out;
  const st = obj(node.status);
  const a = Object.keys(obj(st.allocatable)).length > 0 ? obj(st.allocatable) : obj(st.capacity);
  const scalar: Record<string, number> = {};
  for (const [name, q] of Object.entries(a)) if (isScalar(name)) scalar[name] = resourceAmount(name, q);
  out = { cpu: resourceAmount('cpu', a.cpu), memory: resourceAmount('memory', a.memory), pods: resourceAmount('pods', a.pods), scalar };
  allocatableCache.set(node, out);
  return out;
}

/**
 * A node's filter outcome: why the pod does not fit (empty: it fits), and
 * whether removing pods could change that — kube's Unschedulable (NodePorts,
 * NodeResourcesFit) against UnschedulableAndUnresolvable (the node's
 * cordon, name, taints and affinity), which preemption skips.
 */
export interface FilterStatus {
  reasons: string[];
  resolvable: boolean;
}

const unresolvable = (reason: string): FilterStatus => ({ reasons: [reason], resolvable: false });

/**
 * The filters in the default profile's order, stopping at the first that
 * fails, as kube's framework does, so a node contributes one reason (the
 * resources filter may give several); the texts are kube's.
 */
export function filterNode(pod: ApiObject, n: NodeState, req: Resources = podRequests(pod)): FilterStatus {
  const spec = obj(pod.spec);
  const tolerations = arr(spec.tolerations);
  const keys = n.taintKeys ?? KUBE_NODE_TAINT_KEYS;
  if (obj(n.node.spec).unschedulable === true && !tolerates(tolerations, { key: keys.unschedulable, effect: 'NoSchedule' })) {
    return unresolvable('node(s) were unschedulable');
  }
  const wanted = str(spec.nodeName);
  if (wanted !== '' && wanted !== n.node.metadata?.name) return unresolvable("node(s) didn't match the requested node name");
  const untolerated = nodeTaints(n.node, keys).find((t) => (t.effect === 'NoSchedule' || t.effect === 'NoExecute') && !tolerates(tolerations, t));
  if (untolerated) return unresolvable(`node(s) had untolerated taint {${untolerated.key}: ${untolerated.value ?? ''}}`);
  if (!matchesNodeAffinity(pod, n.node)) return unresolvable("node(s) didn't match Pod's node affinity/selector");
  // NodePorts, before NodeResourcesFit in kube's default profile
  if (hostPorts(pod).some((p) => portTaken(p, n.usedPorts ?? []))) return { reasons: ["node(s) didn't have free ports for the requested pod ports"], resolvable: true };
  const alloc = allocatable(n.node);
  const reasons: string[] = [];
  if (n.pods + 1 > alloc.pods) reasons.push('Too many pods');
  if (req.cpu > 0 && req.cpu > alloc.cpu - n.requested.cpu) reasons.push('Insufficient cpu');
  if (req.memory > 0 && req.memory > alloc.memory - n.requested.memory) reasons.push('Insufficient memory');
  // kube checks ephemeral-storage, then the scalar resources (a map, so in no order: here by name)
  const scalar = Object.keys(req.scalar ?? {}).sort((a, b) => (a === 'ephemeral-storage' ? -1 : b === 'ephemeral-storage' ? 1 : a < b ? -1 : a > b ? 1 : 0));
  for (const name of scalar) {
    const want = req.scalar![name]!;
    if (want > (alloc.scalar[name] ?? 0) - (n.requested.scalar?.[name] ?? 0)) reasons.push(`Insufficient ${name}`);
  }
  return { reasons, resolvable: true };
}

/** why the pod does not fit the node (empty: it fits); `filterNode` without the resolvability */
export function unfitReasons(pod: ApiObject, n: NodeState, req: Resources = podRequests(pod)): string[] {
  return filterNode(pod, n, req).reasons;
}

/** NodeResourcesFit's LeastAllocated score (0–100), CPU and memory weighted equally, with the non-zero defaults */
export function leastAllocatedScore(pod: ApiObject, n: NodeState, req: Resources = podRequests(pod, true)): number {
  const alloc = allocatable(n.node);
  const one = (capacity: number, used: number): number => (capacity <= 0 || used > capacity ? 0 : ((capacity - used) * 100) / capacity);
  return Math.floor((one(alloc.cpu, n.nonZeroRequested.cpu + req.cpu) + one(alloc.memory, n.nonZeroRequested.memory + req.memory)) / 2);
}

/** no node fits: kube's FitError message and each node's filter outcome (what preemption starts from) */
export interface NoFit {
  unschedulable: string;
  statuses: Map<string, FilterStatus>;
}

export type Placement = { node: string } | NoFit;

/**
 * kube's FitError.Error(): `0/N nodes are available: <count> <reason>, ….`
 * with the "<count> <reason>" strings sorted
 */
export function fitErrorMessage(numNodes: number, reasons: Iterable<string>): string {
  const histogram = new Map<string, number>();
  for (const r of reasons) histogram.set(r, (histogram.get(r) ?? 0) + 1);
  const parts = [...histogram].map(([r, c]) => `${c} ${r}`).sort();
  return `0/${numNodes} nodes are available: ${parts.join(', ')}.`;
}

/**
 * The node for a pod: the fitting node with the highest score, a tie broken
 * by `random` (kube's selectHost samples among the best), or the FitError
 * message with every node's filter outcome.
 */
export function place(pod: ApiObject, nodes: NodeState[], random: () => number): Placement {
  const statuses = new Map<string, FilterStatus>();
  if (nodes.length === 0) return { unschedulable: 'no nodes available to schedule pods', statuses };
  let best: string[] = [];
  let bestScore = -1;
  const req = podRequests(pod);
  const nonZero = podRequests(pod, true);
  for (const n of nodes) {
    const status = filterNode(pod, n, req);
    if (status.reasons.length > 0) {
      statuses.set(n.node.metadata?.name ?? '', status);
      continue;
    }
    const score = leastAllocatedScore(pod, n, nonZero);
    if (score > bestScore) {
      bestScore = score;
      best = [n.node.metadata?.name ?? ''];
    } else if (score === bestScore) best.push(n.node.metadata?.name ?? '');
  }
  if (best.length > 0) return { node: best[Math.min(best.length - 1, Math.floor(random() * best.length))]! };
  return { unschedulable: fitErrorMessage(nodes.length, [...statuses.values()].flatMap((s) => s.reasons)), statuses };
}

/** a node with nothing bound to it */
export function emptyState(node: ApiObject, taintKeys?: NodeTaintKeys): NodeState {
  return { node, requested: { cpu: 0, memory: 0 }, nonZeroRequested: { cpu: 0, memory: 0 }, pods: 0, usedPorts: [], ...(taintKeys ? { taintKeys } : {}) };
}

/** a copy whose sums and ports can be changed (`account`) without touching the original */
export function cloneState(n: NodeState): NodeState {
  return {
    ...n,
    requested: { ...n.requested, ...(n.requested.scalar ? { scalar: { ...n.requested.scalar } } : {}) },
    nonZeroRequested: { ...n.nonZeroRequested },
    usedPorts: [...(n.usedPorts ?? [])],
  };
}

/** adds (sign 1) or removes (-1) one resource-holding pod's requests and host ports (kube's NodeInfo AddPod/RemovePod) */
export function account(n: NodeState, pod: ApiObject, sign: 1 | -1): void {
  addResources(n.requested, podRequests(pod), sign);
  addResources(n.nonZeroRequested, podRequests(pod, true), sign);
  n.pods += sign;
  const used = (n.usedPorts ??= []);
  for (const port of hostPorts(pod)) {
    if (sign === 1) used.push(port);
    else {
      const i = used.findIndex((u) => hostPortKey(u) === hostPortKey(port));
      if (i >= 0) used.splice(i, 1);
    }
  }
}

/** into += sign × r, the scalar resources by name (an entry that reaches 0 goes) */
export function addResources(into: Resources, r: Resources, sign: 1 | -1): void {
  into.cpu += sign * r.cpu;
  into.memory += sign * r.memory;
  for (const [name, v] of Object.entries(r.scalar ?? {})) {
    const scalar = (into.scalar ??= {});
    const next = (scalar[name] ?? 0) + sign * v;
    if (next === 0) delete scalar[name];
    else scalar[name] = next;
  }
  if (into.scalar && Object.keys(into.scalar).length === 0) delete into.scalar;
}

/** what the scheduler adds up for a node from the pods bound to it */
export function nodeState(node: ApiObject, boundPods: ApiObject[]): NodeState {
  const n = emptyState(node);
  for (const p of boundPods) if (holdsResources(p)) account(n, p, 1);
  n.usedPorts!.sort((a, b) => (hostPortKey(a) < hostPortKey(b) ? -1 : hostPortKey(a) > hostPortKey(b) ? 1 : 0));
  return n;
}
