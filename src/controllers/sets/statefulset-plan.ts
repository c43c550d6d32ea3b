// The StatefulSet controller's decisions, pure (kube's stateful_set_control.go
// and stateful_set_utils.go, as documented for v1.32): pod identities, what
// one sync creates and deletes, and the status counts. statefulset.ts feeds
// it from the informers and carries the actions out in order.

import type { ApiObject, JSONValue } from '../../registry/types.js';
import { scaledValue } from '../workloads/deployment-plan.js';

type Obj = Record<string, JSONValue>;

export const POD_NAME_LABEL = 'statefulset.kubernetes.io/pod-name';
export const POD_INDEX_LABEL = 'apps.kubernetes.io/pod-index';

/** the ordinal of a pod named `<set>-<n>`, undefined for any other name (kube's getParentNameAndOrdinal) */
export function ordinalOf(setName: string, podName: string): number | undefined {
  if (!podName.startsWith(`${setName}-`)) return undefined;
  const rest = podName.slice(setName.length + 1);
  return /^(0|[1-9]\d*)$/.test(rest) ? Number(rest) : undefined;
}

export const podName = (setName: string, ordinal: number): string => `${setName}-${ordinal}`;
/** kube's getPersistentVolumeClaimName: `<claim template>-<set>-<ordinal>` */
export const claimName = (claim: string, setName: string, ordinal: number): string => `${claim}-${setName}-${ordinal}`;

/** a pod of the set as the plan sees it */
export interface SetPod {
  name: string;
  ordinal: number;
  revision: string;
  /** Running and Ready */
  ready: boolean;
  /** Running and Ready for minReadySeconds */
  available: boolean;
  /** Failed or Succeeded: replaced */
  finished: boolean;
  deleting: boolean;
}

export interface SetView {
  replicas: number;
  /** spec.ordinals.start */
  start: number;
  parallel: boolean;
  rolling: boolean;
  /** rollingUpdate.partition, as an index from `start` */
  partition: number;
  /** rollingUpdate.maxUnavailable, undefined when unset */
  maxUnavailable?: JSONValue;
  currentRevision: string;
  updateRevision: string;
}

export type SetAction =
  | { op: 'create'; ordinal: number; revision: string }
  | { op: 'delete'; name: string; reason: 'finished' | 'condemned' | 'update' };

/** healthy: running, ready, available and not going (kube's isHealthy with minReadySeconds) */
const healthy = (p: SetPod | undefined): boolean => p !== undefined && p.available && !p.deleting && !p.finished;

/**
 * The revision a new pod at `ordinal` gets (kube's newVersionedStatefulSetPod):
 * below the partition of a rolling update, the current one; else the update one.
 */
export function revisionFor(s: SetView, ordinal: number): string {
  return s.rolling && ordinal - s.start < s.partition ? s.currentRevision : s.updateRevision;
}

/** maxUnavailable against the replicas, rounded up, at least 1 */
export function setMaxUnavailable(s: SetView): number {
  return Math.max(1, scaledValue(s.maxUnavailable ?? 1, s.replicas, true));
}

/**
 * What one sync does, in order (kube's updateStatefulSet): for each ordinal
 * of [start, start + replicas), lowest first, a finished pod is deleted (it
 * is recreated once gone) and a missing one created; OrderedReady stops at
 * the first action and at the first pod that is not yet healthy, Parallel
 * goes on. Then pods outside the range go, highest ordinal first
 * (OrderedReady: one at a time, only while every other pod is healthy).
 * Then, for RollingUpdate, pods of an old revision at or above the partition
 * go, highest first: without maxUnavailable one at a time, waiting for an
 * unhealthy pod above (kube's default); with it (kube's
 * MaxUnavailableStatefulSet gate, taken as on) while fewer than
 * maxUnavailable pods are unhealthy. The next sync recreates them at the
 * update revision. OnDelete leaves them to the user.
 */
export function planSet(s: SetView, pods: SetPod[]): SetAction[] {
  const out: SetAction[] = [];
  const monotonic = !s.parallel;
  const end = s.start + s.replicas;
  const byOrdinal = new Map<number, SetPod>();
  const condemned: SetPod[] = [];
  for (const p of pods) {
    if (p.ordinal >= s.start && p.ordinal < end) byOrdinal.set(p.ordinal, p);
    else condemned.push(p);
  }
  condemned.sort((a, b) => b.ordinal - a.ordinal);
  // the first pod, in ordinal order, that is missing or not healthy
  let firstUnhealthy: number | undefined;
  for (let ord = s.start; ord < end && firstUnhealthy === undefined; ord++) if (!healthy(byOrdinal.get(ord))) firstUnhealthy = ord;
  if (firstUnhealthy === undefined) {
    const c = [...condemned].reverse().find((p) => !healthy(p));
    if (c) firstUnhealthy = c.ordinal;
  }

  for (let ord = s.start; ord < end; ord++) {
    const p = byOrdinal.get(ord);
    if (p && p.finished && !p.deleting) {
      out.push({ op: 'delete', name: p.name, reason: 'finished' });
      if (monotonic) return out;
      continue;
    }
    if (!p) {
      out.push({ op: 'create', ordinal: ord, revision: revisionFor(s, ord) });
      if (monotonic) return out;
      continue;
    }
    if (monotonic && !healthy(p)) return out;
  }

  for (const p of condemned) {
    if (p.deleting) {
      if (monotonic) return out;
      continue;
    }
    if (monotonic && firstUnhealthy !== undefined && firstUnhealthy !== p.ordinal) return out;
    out.push({ op: 'delete', name: p.name, reason: 'condemned' });
    if (monotonic) return out;
  }

  if (!s.rolling) return out;
  if (s.maxUnavailable === undefined) {
    // one at a time from the top: an old pod goes (healthy or not), an unhealthy one is waited for
    for (let ord = end - 1; ord >= s.start + s.partition; ord--) {
      const p = byOrdinal.get(ord);
      if (p && p.revision !== s.updateRevision && !p.deleting) {
        out.push({ op: 'delete', name: p.name, reason: 'update' });
        return out;
      }
      if (!healthy(p)) return out;
    }
    return out;
  }
  let unhealthy = 0;
  for (let ord = s.start; ord < end; ord++) if (!healthy(byOrdinal.get(ord))) unhealthy++;
  let room = setMaxUnavailable(s) - unhealthy;
  for (let ord = end - 1; ord >= s.start + s.partition && room > 0; ord--) {
    const p = byOrdinal.get(ord);
    if (p && p.revision !== s.updateRevision && !p.deleting) {
      out.push({ op: 'delete', name: p.name, reason: 'update' });
      room--;
    }
  }
  return out;
}

export interface SetCounts {
  replicas: number;
  readyReplicas: number;
  availableReplicas: number;
  currentReplicas: number;
  updatedReplicas: number;
}

/**
 * kube's computeReplicaStatus over the set's pods: ready and available count
 * every Running and Ready pod, one terminating too (the node agent keeps it
 * Ready through its grace period, as kubelet does); current and updated skip
 * terminating pods.
 */
export function setCounts(s: SetView, pods: SetPod[], created: (p: SetPod) => boolean): SetCounts {
  const c: SetCounts = { replicas: 0, readyReplicas: 0, availableReplicas: 0, currentReplicas: 0, updatedReplicas: 0 };
  for (const p of pods) {
    if (created(p)) c.replicas++;
    if (p.ready) {
      c.readyReplicas++;
      if (p.available) c.availableReplicas++;
    }
    if (created(p) && !p.deleting) {
      if (p.revision === s.currentRevision) c.currentReplicas++;
      if (p.revision === s.updateRevision) c.updatedReplicas++;
    }
  }
  return c;
}

/** the pod's volumes with one per claim template pointing at its claim (kube's updateStorage) */
export function claimVolumes(podSpec: Obj, claimTemplates: string[], setName: string, ordinal: number): Obj[] {
  const volumes = Array.isArray(podSpec.volumes) ? (podSpec.volumes as Obj[]) : [];
  const templated = new Set(claimTemplates);
  return [
    ...claimTemplates.map((c) => ({ name: c, persistentVolumeClaim: { claimName: claimName(c, setName, ordinal) } })),
    ...volumes.filter((v) => !templated.has(String(v.name))),
  ];
}

/** the revision a pod was made from, from its label */
export const podRevision = (pod: ApiObject): string => pod.metadata?.labels?.['controller-revision-hash'] ?? '';
