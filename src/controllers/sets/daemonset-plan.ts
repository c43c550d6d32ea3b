// The DaemonSet controller's decisions, pure (kube's daemon_controller.go,
// update.go and daemon/util, as documented for v1.32): which nodes should
// run the daemon pod, the tolerations every daemon pod gets, the pod pinned
// to its node, what the per-node loop creates and deletes, one step of a
// rolling update within maxSurge / maxUnavailable, and the status counts.
// daemonset.ts feeds them from the informers.

import { KUBE_NODE_TAINT_KEYS, type NodeTaintKeys } from '../../machinery/node-taints.js';
import type { ApiObject, JSONValue } from '../../registry/types.js';
import { matchesNodeAffinity, tolerates, type Taint } from '../scheduler/fit.js';
import { scaledValue } from '../workloads/deployment-plan.js';

type Obj = Record<string, JSONValue>;

export const TEMPLATE_GENERATION_LABEL = 'pod-template-generation';

const obj = (v: unknown): Obj => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const arr = (v: unknown): Obj[] => (Array.isArray(v) ? (v as Obj[]) : []);

/**
 * The tolerations kube's controller adds to every daemon pod
 * (AddOrUpdateDaemonPodTolerations): it keeps running through NotReady and
 * Unreachable, and is placed on nodes under disk, memory or PID pressure and
 * on cordoned nodes; a hostNetwork pod also on nodes whose network is not
 * ready.
 */
export function daemonTolerations(podSpec: Obj, keys: NodeTaintKeys = KUBE_NODE_TAINT_KEYS): Obj[] {
  const out = [...arr(podSpec.tolerations)];
  const add = (key: string, effect: string): void => {
    if (!out.some((t) => t.key === key && t.effect === effect && (t.operator ?? 'Equal') === 'Exists')) out.push({ key, operator: 'Exists', effect });
  };
  add(keys.notReady, 'NoExecute');
  add(keys.unreachable, 'NoExecute');
  add(keys.diskPressure, 'NoSchedule');
  add(keys.memoryPressure, 'NoSchedule');
  add(keys.pidPressure, 'NoSchedule');
  add(keys.unschedulable, 'NoSchedule');
  if (podSpec.hostNetwork === true) add(keys.networkUnavailable, 'NoSchedule');
  return out;
}

export interface NodeFit {
  /** a daemon pod should be created here */
  shouldRun: boolean;
  /** an existing daemon pod may stay here */
  shouldContinueRunning: boolean;
}

/** a node's own taints, parsed once per Node version (informer objects are never modified) */
const taintCache = new WeakMap<ApiObject, Taint[]>();
function taintsOf(node: ApiObject): Taint[] {
  let t = taintCache.get(node);
  if (!t) {
    t = arr(obj(node.spec).taints).map((x) => ({ key: String(x.key ?? ''), value: String(x.value ?? ''), effect: String(x.effect ?? '') }));
    taintCache.set(node, t);
  }
  return t;
}

/**
 * kube's NodeShouldRunDaemonPod for one template, as a function of the node:
 * the template's nodeName, its node selector and required node affinity, and
 * the node's NoSchedule / NoExecute taints against the template's
 * tolerations plus the daemon ones. A NoSchedule taint only stops new pods;
 * a NoExecute one also removes running ones. Resources are the scheduler's
 * business. What depends on the template alone is prepared once, as a sync
 * asks it of every node.
 */
export function daemonPlacement(template: Obj, keys: NodeTaintKeys = KUBE_NODE_TAINT_KEYS): (node: ApiObject) => NodeFit {
  const spec = obj(template.spec);
  const tolerations = daemonTolerations(spec, keys);
  const pod = { spec: { ...spec, tolerations } } as unknown as ApiObject;
  const wanted = typeof spec.nodeName === 'string' ? spec.nodeName : '';
  const no = { shouldRun: false, shouldContinueRunning: false };
  return (node) => {
    if (wanted !== '' && wanted !== node.metadata?.name) return no;
    if (!matchesNodeAffinity(pod, node)) return no;
    let shouldRun = true;
    let shouldContinueRunning = true;
    for (const t of taintsOf(node)) {
      if ((t.effect !== 'NoSchedule' && t.effect !== 'NoExecute') || tolerates(tolerations, t)) continue;
      shouldRun = false;
      if (t.effect === 'NoExecute') shouldContinueRunning = false;
    }
    return { shouldRun, shouldContinueRunning };
  };
}

export function nodeShouldRun(template: Obj, node: ApiObject): NodeFit {
  return daemonPlacement(template)(node);
}

/** the node a daemon pod is for: its nodeName, else the `metadata.name` its affinity pins (kube's GetTargetNodeName) */
export function targetNode(pod: ApiObject): string {
  const spec = obj(pod.spec);
  if (typeof spec.nodeName === 'string' && spec.nodeName !== '') return spec.nodeName;
  const terms = arr(obj(obj(obj(spec.affinity).nodeAffinity).requiredDuringSchedulingIgnoredDuringExecution).nodeSelectorTerms);
  for (const t of terms) {
    for (const f of arr(t.matchFields)) {
      const values = arr(f.values) as unknown as string[];
      if (f.key === 'metadata.name' && f.operator === 'In' && values.length === 1) return String(values[0]);
    }
  }
  return '';
}

/**
 * The pod spec pinned to a node (kube's ReplaceDaemonSetPodNodeNameNodeAffinity):
 * the required node affinity becomes the one term `metadata.name In [node]`
 * (the controller already checked the template's own terms), the preferred
 * terms stay, the daemon tolerations are added; the scheduler binds it.
 */
export function pinnedSpec(podSpec: Obj, node: string, keys: NodeTaintKeys = KUBE_NODE_TAINT_KEYS): Obj {
  const spec = structuredClone(podSpec);
  const affinity = { ...obj(spec.affinity) };
  const nodeAffinity = { ...obj(affinity.nodeAffinity) };
  nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution = { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [node] }] }] };
  affinity.nodeAffinity = nodeAffinity;
  spec.affinity = affinity;
  spec.tolerations = daemonTolerations(spec, keys);
  return spec;
}

/** a daemon pod as the plans see it */
export interface DaemonPod {
  name: string;
  node: string;
  /** created from the current template (kube's IsPodUpdated: the revision hash or the template generation) */
  updated: boolean;
  available: boolean;
  ready: boolean;
  failed: boolean;
  deleting: boolean;
  /** creation time (ms), for "oldest first" */
  created: number;
}

export interface DaemonNode {
  name: string;
  shouldRun: boolean;
  shouldContinueRunning: boolean;
}

export interface DaemonActions {
  /** nodes that get a new pod */
  create: string[];
  /** pods to delete, by name */
  delete: string[];
}

const oldestFirst = (a: DaemonPod, b: DaemonPod): number => a.created - b.created || a.name.localeCompare(b.name);

function byNode(pods: DaemonPod[]): Map<string, DaemonPod[]> {
  const out = new Map<string, DaemonPod[]>();
  for (const p of pods) {
    const l = out.get(p.node);
    if (l) l.push(p);
    else out.set(p.node, [p]);
  }
  return out;
}

/**
 * kube's manage / podsShouldBeOnNode: a node that should run the pod and has
 * none gets one; failed pods go (their replacement comes on a later sync,
 * once they are gone) unless `failedWaits` says the node is in backoff; extra pods go, the oldest stays (with surge: the
 * oldest new and the oldest old, the old one once the new is available);
 * a node that should no longer run it, or no longer exists, loses its pods
 * (the caller deletes those of a missing node without a grace period).
 */
export function planManage(nodes: DaemonNode[], pods: DaemonPod[], surge: boolean, failedWaits: (node: string) => boolean = () => false): DaemonActions {
  const out: DaemonActions = { create: [], delete: [] };
  const on = byNode(pods);
  const known = new Set(nodes.map((n) => n.name));
  // no node agent will finish these: they go at once (kube's pod GC does that for pods of deleted nodes)
  for (const [node, ps] of on) if (!known.has(node)) for (const p of ps) out.delete.push(p.name);
  for (const n of nodes) {
    const ps = on.get(n.name) ?? [];
    if (n.shouldRun) {
      if (ps.length === 0) {
        out.create.push(n.name);
        continue;
      }
      const running = ps.filter((p) => !p.deleting && !p.failed).sort(oldestFirst);
      if (!failedWaits(n.name)) for (const p of ps) if (!p.deleting && p.failed) out.delete.push(p.name);
      if (!surge) {
        for (const p of running.slice(1)) out.delete.push(p.name);
        continue;
      }
      const newest = running.find((p) => p.updated);
      const oldest = running.find((p) => !p.updated);
      for (const p of running) if (p !== newest && p !== oldest) out.delete.push(p.name);
      if (newest && oldest && newest.available) out.delete.push(oldest.name);
    } else if (!n.shouldContinueRunning) {
      for (const p of ps) if (!p.deleting) out.delete.push(p.name);
    }
  }
  return out;
}

/** maxSurge and maxUnavailable against the desired count, percentages rounded up; both 0 → 1 unavailable (kube's updatedDesiredNodeCounts) */
export function daemonFenceposts(maxSurge: JSONValue | undefined, maxUnavailable: JSONValue | undefined, desired: number): { surge: number; unavailable: number } {
  const surge = scaledValue(maxSurge ?? 0, desired, true);
  let unavailable = scaledValue(maxUnavailable ?? 1, desired, true);
  if (desired > 0 && surge === 0 && unavailable === 0) unavailable = 1;
  return { surge, unavailable };
}

/** at most one new and one old live pod on a node (kube's findUpdatedPodsOnNode); undefined when there are more */
function split(ps: DaemonPod[]): { newPod?: DaemonPod; oldPod?: DaemonPod } | undefined {
  const live = ps.filter((p) => !p.deleting && !p.failed);
  const news = live.filter((p) => p.updated);
  const olds = live.filter((p) => !p.updated);
  if (news.length > 1 || olds.length > 1) return undefined;
  return { newPod: news[0], oldPod: olds[0] };
}

/**
 * One step of kube's rollingUpdate over the nodes that should run the pod.
 * Without surge: old pods that are not available go at once; available ones
 * go while fewer than maxUnavailable nodes lack an available pod (a node
 * being replaced or without its pod counts). With surge: a node whose old
 * pod is not available gets its new pod at once; others get one while fewer
 * than maxSurge nodes are surging; an old pod goes once its node's new pod
 * is available (the per-node loop does that).
 */
export function planRollingUpdate(nodes: DaemonNode[], pods: DaemonPod[], maxSurge: number, maxUnavailable: number): DaemonActions {
  const on = byNode(pods);
  const desired = nodes.filter((n) => n.shouldRun).sort((a, b) => a.name.localeCompare(b.name));
  const out: DaemonActions = { create: [], delete: [] };
  if (maxSurge === 0) {
    let unavailable = 0;
    const candidates: DaemonPod[] = [];
    for (const n of desired) {
      const s = split(on.get(n.name) ?? []);
      if (!s || (!s.newPod && !s.oldPod) || (s.newPod && s.oldPod)) unavailable++;
      else if (s.newPod) {
        if (!s.newPod.available) unavailable++;
      } else if (!s.oldPod!.available) out.delete.push(s.oldPod!.name);
      else candidates.push(s.oldPod!);
    }
    // a node whose old pod is not available already lacks an available pod:
    // it counts (kube does not count it, and so can go past maxUnavailable)
    unavailable += out.delete.length;
    const room = Math.max(0, maxUnavailable - unavailable);
    for (const p of candidates.slice(0, room)) out.delete.push(p.name);
    return out;
  }
  let surging = 0;
  const candidates: string[] = [];
  for (const n of desired) {
    const s = split(on.get(n.name) ?? []);
    if (!s) {
      surging++;
      continue;
    }
    if (!s.oldPod) continue;
    if (!s.newPod) {
      if (!s.oldPod.available) out.create.push(n.name);
      else candidates.push(n.name);
    } else if (!s.newPod.available) surging++;
  }
  const room = Math.max(0, maxSurge - surging);
  out.create.push(...candidates.slice(0, room));
  return out;
}

export interface DaemonCounts {
  desiredNumberScheduled: number;
  currentNumberScheduled: number;
  numberMisscheduled: number;
  numberReady: number;
  numberAvailable: number;
  numberUnavailable: number;
  updatedNumberScheduled: number;
}

/** kube's updateDaemonSetStatus: per node, its oldest live pod decides ready / available / updated */
export function daemonCounts(nodes: DaemonNode[], pods: DaemonPod[]): DaemonCounts {
  const on = byNode(pods.filter((p) => !p.deleting));
  const c: DaemonCounts = { desiredNumberScheduled: 0, currentNumberScheduled: 0, numberMisscheduled: 0, numberReady: 0, numberAvailable: 0, numberUnavailable: 0, updatedNumberScheduled: 0 };
  for (const n of nodes) {
    const ps = (on.get(n.name) ?? []).sort(oldestFirst);
    if (n.shouldRun) {
      c.desiredNumberScheduled++;
      const p = ps[0];
      if (!p) continue;
      c.currentNumberScheduled++;
      if (p.ready) c.numberReady++;
      if (p.available) c.numberAvailable++;
      if (p.updated) c.updatedNumberScheduled++;
    } else if (ps.length > 0) c.numberMisscheduled++;
  }
  c.numberUnavailable = c.desiredNumberScheduled - c.numberAvailable;
  return c;
}
