// The Deployment controller's arithmetic, pure (kube's
// pkg/controller/deployment and deployment/util, as documented): surge and
// unavailability fenceposts, the template hash, how far the new ReplicaSet
// may grow and the old ones shrink in a rolling update, proportional
// scaling, the status and its conditions. deployment.ts applies them.

import type { ApiObject, JSONValue } from '../../registry/types.js';

type Obj = Record<string, JSONValue>;

/** a ReplicaSet as the arithmetic sees it */
export interface RsView {
  name: string;
  /** spec.replicas */
  replicas: number;
  /** status.replicas, status.readyReplicas, status.availableReplicas */
  statusReplicas: number;
  ready: number;
  available: number;
  /** creation time (ms) and name order the "older" sorts */
  created: number;
  /** the deployment.kubernetes.io/max-replicas annotation */
  maxReplicas?: number;
  /** the deployment.kubernetes.io/desired-replicas annotation */
  desiredReplicas?: number;
}

export const REVISION = 'deployment.kubernetes.io/revision';
export const REVISION_HISTORY = 'deployment.kubernetes.io/revision-history';
export const DESIRED_REPLICAS = 'deployment.kubernetes.io/desired-replicas';
export const MAX_REPLICAS = 'deployment.kubernetes.io/max-replicas';
export const HASH_LABEL = 'pod-template-hash';

/** an int-or-percent against `total`, percentages rounded up or down (kube's GetScaledValueFromIntOrPercent) */
export function scaledValue(v: JSONValue | undefined, total: number, roundUp: boolean): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'string') {
    const m = /^(\d+)%$/.exec(v);
    if (m) {
      const x = (Number(m[1]) * total) / 100;
      return roundUp ? Math.ceil(x) : Math.floor(x);
    }
    const n = Number(v);
    if (Number.isInteger(n)) return n;
  }
  return 0;
}

/** maxSurge rounded up, maxUnavailable rounded down; both 0 → unavailable 1 (kube's ResolveFenceposts) */
export function resolveFenceposts(maxSurge: JSONValue | undefined, maxUnavailable: JSONValue | undefined, replicas: number): { surge: number; unavailable: number } {
  const surge = scaledValue(maxSurge ?? '25%', replicas, true);
  let unavailable = scaledValue(maxUnavailable ?? '25%', replicas, false);
  if (surge === 0 && unavailable === 0) unavailable = 1;
  return { surge, unavailable };
}

export interface DeploymentView {
  replicas: number;
  recreate: boolean;
  maxSurge?: JSONValue;
  maxUnavailable?: JSONValue;
}

/** the surge a rolling update allows (0 for Recreate) */
export function maxSurgeOf(d: DeploymentView): number {
  return d.recreate ? 0 : resolveFenceposts(d.maxSurge, d.maxUnavailable, d.replicas).surge;
}

/** the unavailability a rolling update allows, at most the replicas (0 for Recreate or no replicas) */
export function maxUnavailableOf(d: DeploymentView): number {
  if (d.recreate || d.replicas === 0) return 0;
  return Math.min(resolveFenceposts(d.maxSurge, d.maxUnavailable, d.replicas).unavailable, d.replicas);
}

const sum = (rss: RsView[], f: (r: RsView) => number): number => rss.reduce((a, r) => a + f(r), 0);

/** the new ReplicaSet's next size in a rolling update: grow within replicas + maxSurge (kube's NewRSNewReplicas) */
export function newRsReplicas(d: DeploymentView, all: RsView[], newRs: RsView | undefined): number {
  const cur = newRs?.replicas ?? 0;
  if (d.recreate) return d.replicas;
  const maxTotal = d.replicas + maxSurgeOf(d);
  const current = sum(all, (r) => r.replicas);
  if (current >= maxTotal) return cur;
  return cur + Math.max(0, Math.min(maxTotal - current, d.replicas - cur));
}

/**
 * How far the old ReplicaSets shrink in one rolling step (kube's
 * reconcileOldReplicaSets): never below replicas − maxUnavailable available
 * pods, counting the new set's unavailable ones; first the old sets'
 * unhealthy replicas (oldest set first), then available ones, oldest first.
 * Returns the new sizes of the sets that change.
 */
export function rollingScaleDown(d: DeploymentView, olds: RsView[], newRs: RsView | undefined): Map<string, number> {
  const out = new Map<string, number>();
  if (sum(olds, (r) => r.replicas) === 0) return out;
  const all = newRs ? [...olds, newRs] : olds;
  const minAvailable = d.replicas - maxUnavailableOf(d);
  const newUnavailable = newRs ? newRs.replicas - newRs.available : 0;
  const maxScaledDown = sum(all, (r) => r.replicas) - minAvailable - newUnavailable;
  if (maxScaledDown <= 0) return out;
  const byAge = [...olds].sort(olderFirst);
  const size = new Map(byAge.map((r) => [r.name, r.replicas]));
  // unhealthy replicas go first: they cost no availability
  let cleaned = 0;
  for (const r of byAge) {
    if (cleaned >= maxScaledDown) break;
    const cur = size.get(r.name)!;
    if (cur === 0 || cur === r.available) continue;
    const down = Math.min(maxScaledDown - cleaned, cur - r.available);
    size.set(r.name, cur - down);
    cleaned += down;
  }
  // then available ones, within what availability allows (kube counts every set's available pods)
  const available = sum(all, (r) => r.available);
  let left = available - minAvailable;
  for (const r of byAge) {
    if (left <= 0) break;
    const cur = size.get(r.name)!;
    if (cur === 0) continue;
    const down = Math.min(cur, left);
    size.set(r.name, cur - down);
    left -= down;
  }
  for (const r of byAge) if (size.get(r.name) !== r.replicas) out.set(r.name, size.get(r.name)!);
  return out;
}

/** older first (creation time, then name), kube's ReplicaSetsByCreationTimestamp */
export function olderFirst(a: RsView, b: RsView): number {
  return a.created - b.created || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

/**
 * A scale of a Deployment whose rollout is under way (kube's scale): the
 * difference to replicas + maxSurge is spread over the active sets in
 * proportion to their size against their max-replicas annotation, the
 * rounding leftover going to the largest (newest on a tie when growing,
 * oldest when shrinking). Returns every active set's new size.
 */
export function proportionalScale(d: DeploymentView, active: RsView[], statusReplicas: number): Map<string, number> {
  const out = new Map<string, number>();
  const total = sum(active, (r) => r.replicas);
  const allowed = d.replicas > 0 ? d.replicas + maxSurgeOf(d) : 0;
  const toAdd = allowed - total;
  const sorted = [...active].sort((a, b) => (b.replicas - a.replicas) || (toAdd > 0 ? -olderFirst(a, b) : olderFirst(a, b)));
  let added = 0;
  for (const r of sorted) {
    let prop = 0;
    if (toAdd !== 0 && r.replicas !== 0 && toAdd !== added) {
      const fraction = d.replicas === 0 ? -r.replicas : Math.round((r.replicas * allowed) / (r.maxReplicas ?? (statusReplicas || 1))) - r.replicas;
      const allowedLeft = toAdd - added;
      prop = toAdd > 0 ? Math.min(fraction, allowedLeft) : Math.max(fraction, allowedLeft);
    }
    out.set(r.name, r.replicas + prop);
    added += prop;
  }
  if (sorted.length > 0 && toAdd !== 0) {
    const first = sorted[0]!.name;
    out.set(first, Math.max(0, out.get(first)! + toAdd - added));
  }
  return out;
}

/** the canonical JSON of a value: object keys sorted */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

// apimachinery's SafeEncodeString alphabet: no vowels, no look-alikes
const SAFE = 'bcdfghjklmnpqrstvwxz2456789';

/**
 * The pod-template-hash: FNV-1a (32 bit) of the template and the collision
 * count, written in SafeEncodeString's alphabet. kube hashes a dump of its Go
 * struct, so the values differ from kube's; the form is the same and, as in
 * kube, the hash only names: templates are compared with templatesEqual.
 */
export function templateHash(template: JSONValue | undefined, collisionCount: number | undefined): string {
  let h = 0x811c9dc5;
  const text = canonical(withoutZeroValues(template ?? {})) + (collisionCount !== undefined ? `#${collisionCount}` : '');
  for (const byte of new TextEncoder().encode(text)) {
    h ^= byte;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return [...String(h)].map((c) => SAFE[c.charCodeAt(0) % SAFE.length]).join('');
}

/**
 * The value without Go's zero values (false, 0, "", null, empty lists and
 * maps): kube compares templates as Go structs, where an omitted field and
 * its zero value are the same, and clients differ in which they send
 * (kubectl's undo patch omits `stdin: false` that a protobuf create carried).
 */
export function withoutZeroValues(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutZeroValues);
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      const y = withoutZeroValues(x);
      const empty = y === false || y === 0 || y === '' || y === null || y === undefined || (Array.isArray(y) && y.length === 0) || (typeof y === 'object' && y !== null && !Array.isArray(y) && Object.keys(y).length === 0);
      if (!empty) out[k] = y;
    }
    return out;
  }
  return v;
}

/** two pod templates equal but for the pod-template-hash label and Go zero values (kube's EqualIgnoreHash) */
export function templatesEqual(a: JSONValue | undefined, b: JSONValue | undefined): boolean {
  const strip = (t: JSONValue | undefined): unknown => {
    const c = structuredClone((t ?? {}) as Obj);
    const labels = (c.metadata as Obj | undefined)?.labels as Obj | undefined;
    if (labels) {
      delete labels[HASH_LABEL];
      if (Object.keys(labels).length === 0) delete (c.metadata as Obj).labels;
    }
    if (c.metadata && Object.keys(c.metadata as Obj).length === 0) delete c.metadata;
    return c;
  };
  return canonical(withoutZeroValues(strip(a))) === canonical(withoutZeroValues(strip(b)));
}

const INT64_MAX = 2n ** 63n - 1n;

/**
 * A revision annotation as kube reads it (strconv.ParseInt, base 10, 64
 * bits): a bigint, since revisions an adopted ReplicaSet brings may be
 * beyond 2^53 and the next one must be exactly one more; absent, malformed
 * or out of range counts as 0 (kube's MaxRevision skips what it cannot parse).
 */
export function parseRevision(v: string | undefined): bigint {
  if (v === undefined || !/^[+-]?\d+$/.test(v)) return 0n;
  const n = BigInt(v);
  return n > INT64_MAX || n < -INT64_MAX - 1n ? 0n : n;
}

export function revisionOf(rs: ApiObject): bigint {
  return parseRevision(rs.metadata?.annotations?.[REVISION]);
}

/** kube's MaxRevision: the highest revision of the sets, 0 for none */
export function maxRevision(sets: ApiObject[]): bigint {
  return sets.reduce((m, rs) => (revisionOf(rs) > m ? revisionOf(rs) : m), 0n);
}

export interface DeploymentStatusCounts {
  replicas: number;
  updatedReplicas: number;
  readyReplicas: number;
  availableReplicas: number;
  unavailableReplicas: number;
}

/** kube's calculateStatus counts: replicas and ready/available from the sets' status, updated from the new set's */
export function statusCounts(all: RsView[], newRs: RsView | undefined): DeploymentStatusCounts {
  const available = sum(all, (r) => r.available);
  return {
    replicas: sum(all, (r) => r.statusReplicas),
    updatedReplicas: newRs?.statusReplicas ?? 0,
    readyReplicas: sum(all, (r) => r.ready),
    availableReplicas: available,
    unavailableReplicas: Math.max(0, sum(all, (r) => r.replicas) - available),
  };
}

/** every replica updated and available, nothing old left, the latest spec observed (kube's DeploymentComplete) */
export function rolloutComplete(replicas: number, s: DeploymentStatusCounts): boolean {
  return s.updatedReplicas === replicas && s.replicas === replicas && s.availableReplicas === replicas;
}

/** something moved since the last status (kube's DeploymentProgressing) */
export function rolloutProgressed(old: Partial<DeploymentStatusCounts>, s: DeploymentStatusCounts): boolean {
  const oldOld = (old.replicas ?? 0) - (old.updatedReplicas ?? 0);
  const newOld = s.replicas - s.updatedReplicas;
  return s.updatedReplicas > (old.updatedReplicas ?? 0) || newOld < oldOld || s.readyReplicas > (old.readyReplicas ?? 0) || s.availableReplicas > (old.availableReplicas ?? 0);
}
