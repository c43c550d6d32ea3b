// Pod admission (kubelet 1.32's admit handlers, pkg/kubelet/kubelet.go
// canAdmitPod): before a new pod bound to the node is run, the node checks that
// it can run it there; a pod it cannot run is rejected — never started, its
// status `Failed` with kubelet's reason and message (rejectedStatus below).
// Pure: the node, the pods already admitted and the new pod in, a decision out.
//
// The handlers in kubelet's order, the first refusal wins:
// 1. the eviction manager's: under node pressure (MemoryPressure, DiskPressure,
//    PIDPressure) no pod is admitted, except critical pods and, under memory
//    pressure alone, pods that are not BestEffort or that tolerate the
//    memory-pressure taint: reason `Evicted`, `The node had condition: [DiskPressure]. `
// 2. the sysctl allowlist (sysctl-allowlist.ts): every sysctl of the pod in the
//    safe set or the configuration's allowedUnsafeSysctls, none of a namespace
//    the pod shares with the host: reason `SysctlForbidden`,
//    `forbidden sysctl: "kernel.msgmax" not allowlisted`
// 3. the predicate handler (pkg/kubelet/lifecycle/predicate.go): the pod's
//    `kubernetes.io/os` label and `spec.os.name` against the node's OS, then
//    the scheduler's AdmissionCheck with every failure kept (resources, node
//    affinity, node name, host ports) and untolerated NoExecute taints (not for
//    static pods); only the first failure is reported.
// Not built: the node shutdown manager, device allocation, and the
// preemption of lower-priority pods that kubelet does for critical pods.

import { othersConditions } from './pod-conditions.js';
import { type Amounts, type Shape, type Taint, arr, hostPorts, matchesNodeAffinity, obj, podResourceRequests, portTaken, str, tolerates } from '../core/pod-fit.js';
import { resourceAmount } from '../core/quantity.js';
import { safeSysctls, SYSCTL_FORBIDDEN, type SysctlAllowlist, sysctlAllowlist, sysctlRefusal } from './sysctl-allowlist.js';

/** what admission knows of its node */
export interface AdmissionNode {
  /** the Node (its name, labels and `spec.taints` are read) */
  node: Shape;
  /** the node's allocatable quantities, as the agent reports them */
  allocatable: Record<string, string>;
  /** the pressure conditions now True (the eviction manager's node conditions), in the order they are listed */
  pressure: readonly string[];
  /** the node's operating system as Go names it (runtime.GOOS): `linux`, `windows`, `darwin` */
  os: string;
  /** the memory-pressure taint's key (`node.kubernetes.io/memory-pressure` with kube's domain) */
  memoryPressureTaint: string;
  /** the sysctls pods may set (the safe set and allowedUnsafeSysctls); absent: the safe set of a current Linux kernel */
  sysctls?: SysctlAllowlist;
}

export type Admission = { admit: true } | { admit: false; reason: string; message: string };

export interface PodFacts {
  /** a static pod (from staticPodPath): critical, and not checked against taints */
  static?: boolean;
}

const ADMIT: Admission = { admit: true };
const reject = (reason: string, message: string): Admission => ({ admit: false, reason, message });

/** kubelet's IsCriticalPod: static and mirror pods, and priority at least system-cluster-critical's 2000000000 */
const SYSTEM_CRITICAL_PRIORITY = 2_000_000_000;
function critical(pod: Shape, facts: PodFacts): boolean {
  const p = obj(pod.spec).priority;
  return facts.static === true || (typeof p === 'number' && p >= SYSTEM_CRITICAL_PRIORITY);
}

/** kube's GetPodQOS reduced to the BestEffort question: no container asks for or limits CPU or memory */
function bestEffort(pod: Shape): boolean {
  const qos = str(obj(pod.status).qosClass);
  if (qos !== '') return qos === 'BestEffort';
  const spec = obj(pod.spec);
  return [...arr(spec.containers), ...arr(spec.initContainers)].every((c) => {
    const r = obj(c.resources);
    return ['requests', 'limits'].every((k) => ['cpu', 'memory'].every((name) => resourceAmount(name, obj(r[k])[name]) === 0));
  });
}

/** the eviction manager's Admit (pkg/kubelet/eviction/eviction_manager.go) */
function pressureAdmit(n: AdmissionNode, pod: Shape, facts: PodFacts): Admission {
  if (n.pressure.length === 0 || critical(pod, facts)) return ADMIT;
  if (n.pressure.length === 1 && n.pressure[0] === 'MemoryPressure') {
    if (!bestEffort(pod)) return ADMIT;
    if (tolerates(arr(obj(pod.spec).tolerations), { key: n.memoryPressureTaint, effect: 'NoSchedule' })) return ADMIT;
  }
  // Go's %v of the conditions slice, and kubelet's trailing space
  return reject('Evicted', `The node had condition: [${n.pressure.join(' ')}]. `);
}

const NATIVE = new Set(['cpu', 'memory', 'ephemeral-storage', 'pods']);
/** v1helper.IsExtendedResourceName: outside the kubernetes.io domain, and not a quota's `requests.` name */
const extended = (name: string): boolean => name.includes('/') && !name.includes('kubernetes.io/') && !name.startsWith('requests.');
/** the resources a NodeInfo adds up besides the native ones (schedutil.IsScalarResourceName, attachable volumes aside) */
const scalar = (name: string): boolean => extended(name) || name.startsWith('hugepages-');

/** the requests of the pods already admitted, and how many they are (schedulerframework.NewNodeInfo) */
function requested(pods: readonly Shape[]): Amounts {
  const sum: Amounts = {};
  for (const p of pods) for (const [k, v] of Object.entries(podResourceRequests(p))) sum[k] = (sum[k] ?? 0) + v;
  return sum;
}

/**
 * noderesources.Fits: a pod more than allocatable allows (`pods` first, then
 * cpu, memory, ephemeral-storage, then other resources by name), reported as
 * kubelet's InsufficientResourceError. Extended resources the node does not
 * have are left out of the new pod's requests (removeMissingExtendedResources).
 */
function insufficient(n: AdmissionNode, admitted: readonly Shape[], pod: Shape): { name: string; requested: number; used: number; capacity: number }[] {
  const alloc = (name: string): number => resourceAmount(name, n.allocatable[name]);
  const out: { name: string; requested: number; used: number; capacity: number }[] = [];
  if (admitted.length + 1 > alloc('pods')) out.push({ name: 'pods', requested: 1, used: admitted.length, capacity: alloc('pods') });
  const want = podResourceRequests(pod);
  for (const name of Object.keys(want)) if ((extended(name) && n.allocatable[name] === undefined) || (!NATIVE.has(name) && !scalar(name))) delete want[name];
  if (Object.values(want).every((v) => v === 0)) return out;
  const used = requested(admitted);
  const others = Object.keys(want).filter((k) => !NATIVE.has(k)).sort();
  for (const name of ['cpu', 'memory', 'ephemeral-storage', ...others]) {
    const w = want[name] ?? 0;
    if (w > 0 && w > alloc(name) - (used[name] ?? 0)) out.push({ name, requested: w, used: used[name] ?? 0, capacity: alloc(name) });
  }
  return out;
}

/** kubelet's PredicateFailureError text */
const predicate = (name: string, desc: string): Admission => reject(name, `Predicate ${name} failed: ${desc}`);

/** the predicate admit handler's checks, first failure only */
function predicateAdmit(n: AdmissionNode, admitted: readonly Shape[], pod: Shape, facts: PodFacts): Admission {
  const meta = obj(pod.metadata);
  const spec = obj(pod.spec);
  const podOS = str(obj(meta.labels)['kubernetes.io/os']);
  if (podOS !== '' && podOS !== n.os) return reject('PodOSSelectorNodeLabelDoesNotMatch', "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label");
  const osName = str(obj(spec.os).name);
  if (spec.os !== undefined && spec.os !== null && osName !== n.os) return reject('PodOSNotSupported', "Failed to admit pod as the OS field doesn't match node OS");

  const short = insufficient(n, admitted, pod)[0];
  if (short) {
    return reject(`OutOf${short.name}`, `Node didn't have enough resource: ${short.name}, requested: ${short.requested}, used: ${short.used}, capacity: ${short.capacity}`);
  }
  if (!matchesNodeAffinity(pod, n.node)) return predicate('NodeAffinity', "node(s) didn't match Pod's node affinity/selector");
  const wanted = str(spec.nodeName);
  if (wanted !== '' && wanted !== str(obj(n.node.metadata).name)) return predicate('NodeName', "node(s) didn't match the requested node name");
  const used = admitted.flatMap((p) => hostPorts(p));
  if (hostPorts(pod).some((p) => portTaken(p, used))) return predicate('NodePorts', "node(s) didn't have free ports for the requested pod ports");
  if (!facts.static) {
    const taints: Taint[] = arr(obj(n.node.spec).taints).map((t) => ({ key: str(t.key), value: str(t.value), effect: str(t.effect) }));
    // kubelet looks at NoExecute taints only: NoSchedule is the scheduler's business
    if (taints.some((t) => t.effect === 'NoExecute' && !tolerates(arr(spec.tolerations), t))) {
      return predicate('TaintToleration', "node(s) had taints that the pod didn't tolerate");
    }
  }
  return ADMIT;
}

/**
 * May the node run `pod`, next to the pods it has already admitted? Those are
 * the admitted pods that still hold the node (holdsNode), in the order they
 * were admitted; pods are admitted one at a time in creation order, so of two
 * pods asking for the same host port the first runs and the second is rejected.
 */
export function admitPod(n: AdmissionNode, admitted: readonly Shape[], pod: Shape, facts: PodFacts = {}): Admission {
  const p = pressureAdmit(n, pod, facts);
  if (!p.admit) return p;
  const sysctls = sysctlRefusal(n.sysctls ?? CURRENT_SAFE, obj(pod.spec));
  return sysctls ? reject(SYSCTL_FORBIDDEN, sysctls) : predicateAdmit(n, admitted, pod, facts);
}

const CURRENT_SAFE = sysctlAllowlist(safeSysctls('linux', '6.1'));

/** a pod that counts against the node: not Succeeded/Failed, or still being stopped (kubelet's filterOutInactivePods) */
export function holdsNode(pod: Shape): boolean {
  const phase = str(obj(pod.status).phase);
  return (phase !== 'Succeeded' && phase !== 'Failed') || obj(pod.metadata).deletionTimestamp !== undefined;
}

/** a pod that reached a terminal phase before the node saw it: it is not admitted again (HandlePodAdditions) */
export const isTerminal = (pod: Shape): boolean => ['Succeeded', 'Failed'].includes(str(obj(pod.status).phase));

/** kubelet's rejectPod prefixes the status message with this (the Event keeps the handler's message as is) */
export const REJECTED_PREFIX = 'Pod was rejected: ';

/** a pod this node (or a kubelet) rejected: it stays as it is, never run */
export const wasRejected = (pod: Shape): boolean => str(obj(pod.status).phase) === 'Failed' && str(obj(pod.status).message).startsWith(REJECTED_PREFIX);

/**
 * The status kubelet writes for a rejected pod (rejectPod, then the status
 * manager): phase Failed, the reason, `Pod was rejected: <message>`, the QoS
 * class kept, `startTime` set when missing; the conditions kubelet owns
 * (PodScheduled included) are dropped, others kept. As a JSON merge patch:
 * any other field the status had is cleared (null), as kubelet's patch of its
 * whole view would.
 */
export function rejectedStatus(pod: Shape, r: { reason: string; message: string }, now: string): Record<string, unknown> {
  const prev = obj(pod.status);
  const kept = othersConditions(prev);
  const out: Record<string, unknown> = {
    phase: 'Failed',
    reason: r.reason,
    message: `${REJECTED_PREFIX}${r.message}`,
    ...(prev.qosClass !== undefined ? { qosClass: prev.qosClass } : {}),
    startTime: prev.startTime ?? now,
  };
  if (kept.length > 0) out.conditions = kept;
  for (const k of Object.keys(prev)) if (!(k in out)) out[k] = null;
  return out;
}

/** the node's OS as Go's runtime.GOOS names it, from Node's process.platform */
export const goos = (platform: string): string => (platform === 'win32' ? 'windows' : platform);
