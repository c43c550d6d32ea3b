// ControllerRevision history for the DaemonSet and StatefulSet controllers
// (kube's pkg/controller/history and the two controllers' revision code, as
// documented): a revision holds the pod template as the strategic-merge patch
// `{"spec":{"template":{…,"$patch":"replace"}}}` that `kubectl rollout undo`
// applies back, carries the template's labels plus `controller-revision-hash`,
// is named `<owner>-<hash>` and numbered; the template that matches an old
// revision moves that revision to the top instead of creating a new one.
// `kubectl rollout history` lists the revisions by the owner's selector and
// controller reference, so both are kept. A new revision carries the owner's
// annotations (kube's snapshot / newRevision), so `kubernetes.io/change-cause`
// shows in the history; a moved-up revision keeps the ones it was made with.

import { StatusError } from '../../core/errors.js';
import type { GenericStore } from '../../registry/generic-store.js';
import type { ApiObject, JSONValue } from '../../registry/types.js';
import { templateHash, templatesEqual } from '../workloads/deployment-plan.js';
import type { OwnerReference } from '../workloads/pods.js';
import { CONTROLLER_MANAGER, updateObject, writeStatus } from '../workloads/writes.js';

type Obj = Record<string, JSONValue>;

export const REVISION_HASH_LABEL = 'controller-revision-hash';
/** kube's DefaultRevisionHistoryLimit for both kinds */
export const DEFAULT_HISTORY_LIMIT = 10;

/** the revision's data: the template as a replacing patch of the owner's spec */
export function revisionData(template: JSONValue | undefined): Obj {
  return { spec: { template: { ...((template ?? {}) as Obj), $patch: 'replace' } } };
}

/** the pod template a revision holds */
export function templateOf(cr: ApiObject): Obj {
  const t = { ...((((cr.data as Obj | undefined)?.spec as Obj | undefined)?.template ?? {}) as Obj) };
  delete t.$patch;
  return t;
}

export const revisionNumber = (cr: ApiObject): number => (typeof cr.revision === 'number' ? cr.revision : 0);
export const revisionHash = (cr: ApiObject): string => cr.metadata?.labels?.[REVISION_HASH_LABEL] ?? '';

/** kube's ControllerRevisionName: the owner's name (cut to 223 characters) and the hash */
export function revisionName(owner: string, hash: string): string {
  return `${owner.slice(0, 223)}-${hash}`;
}

/** the next revision number: one above the highest */
export function nextRevision(revisions: ApiObject[]): number {
  return Math.max(0, ...revisions.map(revisionNumber)) + 1;
}

/**
 * The revisions to delete to keep `limit` of the ones no pod runs and that
 * are not `keep` (the current and update revisions), oldest first (kube's
 * cleanupHistory / truncateHistory).
 */
export function revisionsToPrune(revisions: ApiObject[], live: Set<string>, keep: Set<string>, limit: number): ApiObject[] {
  const dead = revisions.filter((r) => !keep.has(r.metadata?.name ?? '') && !live.has(revisionHash(r)) && !live.has(r.metadata?.name ?? ''));
  const excess = dead.length - Math.max(0, limit);
  if (excess <= 0) return [];
  return [...dead].sort((a, b) => revisionNumber(a) - revisionNumber(b)).slice(0, excess);
}

export interface RevisionOwner {
  /** the DaemonSet or StatefulSet */
  obj: ApiObject;
  ref: OwnerReference;
  /** its store, for the collision count in its status */
  store: GenericStore;
}

/**
 * The revision of the owner's current template (kube's constructHistory /
 * getStatefulSetRevisions): an equal existing revision (the newest of
 * equals, the others deleted) is moved up to the next number when it is
 * not the newest; otherwise one is created. A name taken by a different
 * revision raises `status.collisionCount` and fails the sync, which is
 * retried with the new count, as kube does.
 */
export async function ensureRevision(crs: GenericStore, owner: RevisionOwner, revisions: ApiObject[]): Promise<{ update: ApiObject; revisions: ApiObject[] }> {
  const o = owner.obj;
  const ns = o.metadata?.namespace ?? '';
  const template = ((o.spec as Obj | undefined)?.template ?? {}) as Obj;
  const equal = revisions.filter((r) => templatesEqual(templateOf(r), template)).sort((a, b) => revisionNumber(b) - revisionNumber(a));
  const next = nextRevision(revisions);
  let rest = revisions;
  if (equal.length > 0) {
    let keep = equal[0]!;
    for (const dup of equal.slice(1)) await deleteRevision(crs, dup);
    rest = revisions.filter((r) => !equal.includes(r) || r === keep);
    if (revisionNumber(keep) < next - 1) {
      keep = (await updateObject(crs, keep, CONTROLLER_MANAGER, (cur) => {
        cur.revision = next;
      })) ?? keep;
      rest = rest.map((r) => (r.metadata?.uid === keep.metadata?.uid ? keep : r));
    }
    return { update: keep, revisions: rest };
  }
  const status = (o.status ?? {}) as Obj;
  const collisionCount = typeof status.collisionCount === 'number' ? status.collisionCount : 0;
  const data = revisionData(template);
  const hash = templateHash(data, collisionCount);
  const name = revisionName(o.metadata?.name ?? '', hash);
  const labels = { ...(((template.metadata as Obj | undefined)?.labels ?? {}) as Record<string, string>), [REVISION_HASH_LABEL]: hash };
  const annotations = o.metadata?.annotations;
  const cr = {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: { name, namespace: ns, labels, ...(annotations && Object.keys(annotations).length > 0 ? { annotations: { ...annotations } } : {}), ownerReferences: [owner.ref as unknown as Obj] },
    data,
    revision: next,
  } as unknown as ApiObject;
  try {
    const created = (await crs.create(ns, cr, { dryRun: false, manager: CONTROLLER_MANAGER })).object;
    return { update: created, revisions: [...rest, created] };
  } catch (e) {
    if (!(e instanceof StatusError && e.code === 409)) throw e;
    const existing = (await crs.get(ns, name).catch(() => undefined)) as ApiObject | undefined;
    if (existing && existing.metadata?.ownerReferences?.some((r) => r.uid === owner.ref.uid && r.controller === true) && templatesEqual(templateOf(existing), template)) {
      return { update: existing, revisions: [...rest, existing] };
    }
    await writeStatus(owner.store, o, { ...status, collisionCount: collisionCount + 1 }, CONTROLLER_MANAGER);
    throw new Error(`controller revision ${name} exists with other data: collision count raised to ${collisionCount + 1}`);
  }
}

export async function deleteRevision(crs: GenericStore, cr: ApiObject): Promise<void> {
  try {
    await crs.delete(cr.metadata?.namespace ?? '', cr.metadata?.name ?? '', { dryRun: false, preconditions: { uid: cr.metadata?.uid ?? '' } });
  } catch (e) {
    if (!(e instanceof StatusError && (e.code === 404 || e.code === 409))) throw e;
  }
}
