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
  return { cpu: r.cpu ?? 0, memory: r.memory ?? 0 };
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
