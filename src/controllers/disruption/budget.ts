// The status of one PodDisruptionBudget from the pods it selects and their
// controllers (kube-controller-manager's disruption controller, trySync;
// written from its documented behaviour). Pure: the controller gives it the
// objects and the time, so it is unit-tested against a reference.
//   expectedPods / desiredHealthy:
//     minAvailable an integer → the selected pods / that integer;
//     minAvailable a percentage, or maxUnavailable → the sum of the selected
//       pods' controllers' scale (Deployment via its ReplicaSet, ReplicaSet,
//       StatefulSet, ReplicationController spec.replicas), percentages
//       rounded up; desiredHealthy = expected − maxUnavailable (≥ 0);
//   currentHealthy: selected pods Ready, not being deleted and not recorded
//     in disruptedPods within the last 2 minutes;
//   disruptionsAllowed: currentHealthy − desiredHealthy, 0 when that is
//     negative or no pod is expected;
//   disruptedPods: entries of selected pods not yet being deleted and
//     younger than 2 minutes (older ones expire; the pod was not deleted);
//   the DisruptionAllowed condition: SufficientPods / InsufficientPods, or
//     SyncFailed when the expected count cannot be computed (failSafe: no
//     disruption allowed, the rest of the status kept).

import type { ApiObject, JSONValue } from '../../registry/types.js';
import { controllerRefOf } from '../../machinery/meta.js';
import { budgetSelects, disruptionAllowedCondition, podReady, type PdbStatus } from '../../registry/kinds/pod-eviction.js';

/** kube's DeletionTimeout: how long an eviction's disruptedPods entry keeps a pod out of currentHealthy */
export const DELETION_TIMEOUT_MS = 2 * 60 * 1000;

type Obj = Record<string, JSONValue>;

export interface OwnerRef {
  apiVersion?: string;
  kind?: string;
  name?: string;
  uid?: string;
  controller?: boolean;
}

/** a controller's uid and desired scale; undefined = not a controller this finder knows */
export type ScaleFinder = (ref: OwnerRef, namespace: string) => { uid: string; scale: number } | undefined;

export interface BudgetOutcome {
  /** the status to write; undefined when the one stored is up to date */
  status: Obj | undefined;
  /** when an unexpired disruptedPods entry runs out: compute again then */
  recheckAt?: number;
  /** selected pods without a controller (kube's UnmanagedPods warning), when the count used controllers */
  unmanaged: string[];
  /** the SyncFailed message, when the expected count could not be computed */
  failed?: string;
}

/** the budget's selected pods of its namespace */
export function selectedPods(pdb: ApiObject, pods: readonly ApiObject[]): ApiObject[] {
  const ns = pdb.metadata?.namespace;
  return pods.filter((p) => p.metadata?.namespace === ns && budgetSelects(pdb, (p.metadata?.labels ?? {}) as Record<string, JSONValue>));
}

/** an int-or-percent scaled against `total`, rounded up (apimachinery's GetScaledValueFromIntOrPercent) */
export function scaled(v: JSONValue | undefined, total: number): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'string') {
    const m = /^(\d+)%$/.exec(v);
    if (!m) throw new Error(`invalid value for IntOrString: invalid type: string is not a percentage`);
    return Math.ceil((Number(m[1]) * total) / 100);
  }
  return 0;
}

/** the sum of the pods' controllers' scale (each controller once); pods without one are listed apart */
function expectedScale(pods: readonly ApiObject[], find: ScaleFinder): { expected: number; unmanaged: string[] } {
  const scales = new Map<string, number>();
  const unmanaged: string[] = [];
  for (const pod of pods) {
    const ref = controllerRefOf(pod);
    const name = pod.metadata?.name ?? '';
    if (!ref) {
      unmanaged.push(name);
      continue;
    }
    if (ref.uid && scales.has(ref.uid)) continue;
    const found = find(ref, pod.metadata?.namespace ?? '');
    if (!found) throw new Error(`found no controllers for pod ${JSON.stringify(name)}`);
    scales.set(found.uid, found.scale);
  }
  let expected = 0;
  for (const s of scales.values()) expected += s;
  return { expected, unmanaged };
}

/** kube's getExpectedPodCount */
export function expectedCounts(pdb: ApiObject, pods: readonly ApiObject[], find: ScaleFinder): { expected: number; desired: number; unmanaged: string[] } {
  const spec = (pdb.spec ?? {}) as { minAvailable?: JSONValue; maxUnavailable?: JSONValue };
  if (spec.maxUnavailable !== undefined && spec.maxUnavailable !== null) {
    const { expected, unmanaged } = expectedScale(pods, find);
    const desired = Math.max(0, expected - scaled(spec.maxUnavailable, expected));
    return { expected, desired, unmanaged };
  }
  if (spec.minAvailable !== undefined && spec.minAvailable !== null) {
    if (typeof spec.minAvailable === 'number') return { expected: pods.length, desired: spec.minAvailable, unmanaged: [] };
    const { expected, unmanaged } = expectedScale(pods, find);
    return { expected, desired: scaled(spec.minAvailable, expected), unmanaged };
  }
  return { expected: 0, desired: 0, unmanaged: [] };
}

/** the disruptedPods entries still in force, and the earliest time one runs out (kube's buildDisruptedPodMap) */
export function liveDisruptedPods(pods: readonly ApiObject[], recorded: Record<string, string> | undefined, now: number): { live: Record<string, string>; recheckAt?: number } {
  const live: Record<string, string> = {};
  let recheckAt: number | undefined;
  if (!recorded) return { live };
  for (const pod of pods) {
    if (pod.metadata?.deletionTimestamp) continue;
    const name = pod.metadata?.name ?? '';
    const at = recorded[name];
    if (at === undefined) continue;
    const expires = Date.parse(at) + DELETION_TIMEOUT_MS;
    if (!(expires >= now)) continue;
    live[name] = at;
    if (recheckAt === undefined || expires < recheckAt) recheckAt = expires;
  }
  return { live, recheckAt };
}

/** kube's countHealthyPods */
export function countHealthy(pods: readonly ApiObject[], disrupted: Record<string, string>, now: number): number {
  let n = 0;
  for (const pod of pods) {
    if (pod.metadata?.deletionTimestamp) continue;
    const at = disrupted[pod.metadata?.name ?? ''];
    if (at !== undefined && Date.parse(at) + DELETION_TIMEOUT_MS > now) continue;
    if (podReady(pod)) n++;
  }
  return n;
}

/** trySync of one budget: its new status, or undefined when the stored one is up to date */
export function computeBudget(pdb: ApiObject, allPods: readonly ApiObject[], find: ScaleFinder, now: number): BudgetOutcome {
  const pods = selectedPods(pdb, allPods);
  const generation = pdb.metadata?.generation ?? 0;
  const cur = (pdb.status ?? {}) as PdbStatus;
  let counts: { expected: number; desired: number; unmanaged: string[] };
  try {
    counts = expectedCounts(pdb, pods, find);
  } catch (e) {
    // failSafe: no disruption allowed; the rest of the status (and observedGeneration) kept
    const message = (e as Error).message;
    const next: Obj = { ...(structuredClone(pdb.status ?? {}) as Obj), disruptionsAllowed: 0 };
    next.conditions = disruptionAllowedCondition(cur.conditions ?? [], false, 'SyncFailed', message, cur.observedGeneration ?? 0, now);
    return { status: sameStatus(pdb.status as Obj | undefined, next) ? undefined : next, unmanaged: [], failed: message };
  }
  const { live, recheckAt } = liveDisruptedPods(pods, cur.disruptedPods, now);
  const currentHealthy = countHealthy(pods, live, now);
  let allowed = currentHealthy - counts.desired;
  if (counts.expected <= 0 || allowed <= 0) allowed = 0;
  const upToDate =
    cur.currentHealthy === currentHealthy &&
    cur.desiredHealthy === counts.desired &&
    cur.expectedPods === counts.expected &&
    cur.disruptionsAllowed === allowed &&
    sameMap(cur.disruptedPods ?? {}, live) &&
    (cur.observedGeneration ?? 0) === generation &&
    conditionUpToDate(cur, allowed);
  const base = { unmanaged: counts.unmanaged, ...(recheckAt !== undefined ? { recheckAt } : {}) };
  if (upToDate) return { status: undefined, ...base };
  const status: Obj = {
    observedGeneration: generation,
    ...(Object.keys(live).length > 0 ? { disruptedPods: live } : {}),
    disruptionsAllowed: allowed,
    currentHealthy,
    desiredHealthy: counts.desired,
    expectedPods: counts.expected,
  };
  status.conditions = allowed > 0
    ? disruptionAllowedCondition(cur.conditions ?? [], true, 'SufficientPods', '', generation, now)
    : disruptionAllowedCondition(cur.conditions ?? [], false, 'InsufficientPods', '', generation, now);
  return { status, ...base };
}

/** kube's ConditionsAreUpToDate */
function conditionUpToDate(st: PdbStatus, allowed: number): boolean {
  const c = (st.conditions ?? []).find((x) => x.type === 'DisruptionAllowed');
  if (!c) return false;
  return allowed > 0 ? c.status === 'True' && c.reason === 'SufficientPods' : c.status === 'False' && c.reason === 'InsufficientPods';
}

function sameMap(a: Record<string, string>, b: Record<string, string>): boolean {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => Date.parse(a[k]!) === Date.parse(b[k] ?? ''));
}

function sameStatus(a: Obj | undefined, b: Obj): boolean {
  return JSON.stringify(a ?? {}) === JSON.stringify(b);
}

