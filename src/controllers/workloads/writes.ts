// The workload controllers' writes through the registry: adopting and
// releasing an object (kube's ControllerRefManager patches, here a
// compare-and-swap that checks again on the current object), status, and
// creating and deleting the objects they control.

import { StatusError, isNamespaceTerminating } from '../../core/errors.js';
import type { GenericStore } from '../../registry/generic-store.js';
import type { ApiObject, JSONValue } from '../../registry/types.js';
import { type OwnerReference, controllerRefOf } from '../../machinery/meta.js';
import type { EventRecorder } from '../event-recorder.js';
import { slowStartBatches } from './replicaset-plan.js';

type Obj = Record<string, JSONValue>;

/** the field manager of the workload controllers' writes, as kube's */
export const CONTROLLER_MANAGER = 'kube-controller-manager';

/** a transform's way out when the object changed so that the write no longer applies */
class Skip extends Error {}

const refsOf = (o: ApiObject): OwnerReference[] => (o.metadata?.ownerReferences ?? []) as unknown as OwnerReference[];

async function update(store: GenericStore, o: ApiObject, manager: string, subresource: string | undefined, transform: (cur: ApiObject) => ApiObject): Promise<ApiObject | undefined> {
  try {
    const out = await store.guaranteedUpdate(o.metadata?.namespace ?? '', o.metadata?.name ?? '', { dryRun: false, manager, ...(subresource ? { subresource } : {}) }, (cur) => {
      if (!cur || cur.metadata?.uid !== o.metadata?.uid) throw new Skip();
      return transform(cur);
    });
    return out.object;
  } catch (e) {
    if (e instanceof Skip || (e instanceof StatusError && e.code === 404)) return undefined;
    throw e;
  }
}

/** adds `ref` as the controller of an orphan that still `matches`; undefined when it is gone or no longer an orphan */
export async function adoptWrite(store: GenericStore, o: ApiObject, ref: OwnerReference, matches: (cur: ApiObject) => boolean): Promise<ApiObject | undefined> {
  return update(store, o, CONTROLLER_MANAGER, undefined, (cur) => {
    if (cur.metadata?.deletionTimestamp || controllerRefOf(cur) !== undefined || !matches(cur)) throw new Skip();
    cur.metadata!.ownerReferences = [...refsOf(cur).filter((r) => r.uid !== ref.uid), ref] as unknown as Obj[];
    return cur;
  });
}

/** removes the owner reference of `ownerUid` */
export async function releaseWrite(store: GenericStore, o: ApiObject, ownerUid: string): Promise<void> {
  await update(store, o, CONTROLLER_MANAGER, undefined, (cur) => {
    const refs = refsOf(cur);
    if (!refs.some((r) => r.uid === ownerUid)) throw new Skip();
    const rest = refs.filter((r) => r.uid !== ownerUid);
    if (rest.length > 0) cur.metadata!.ownerReferences = rest as unknown as Obj[];
    else delete cur.metadata!.ownerReferences;
    return cur;
  });
}

/** replaces the status (on the current object; a status is computed from the caches, so the latest write wins) */
export async function writeStatus(store: GenericStore, o: ApiObject, status: Obj, manager: string): Promise<ApiObject | undefined> {
  return update(store, o, manager, 'status', (cur) => ({ ...cur, status }));
}

/**
 * drops the named counters when 0: Go's `omitempty` int fields of kube's
 * workload statuses, so the object reads as kube's (`kubectl get -o yaml`,
 * jsonpath waits); readers take an absent counter as 0
 */
export function omitZero(status: Obj, fields: readonly string[]): Obj {
  for (const f of fields) if (status[f] === 0) delete status[f];
  return status;
}

/** the status fields a write would set are already there (conditions compared whole) */
export function statusUnchanged(cur: Obj, next: Obj): boolean {
  for (const [k, v] of Object.entries(next)) if (JSON.stringify(cur[k]) !== JSON.stringify(v)) return false;
  for (const k of Object.keys(cur)) if (!(k in next)) return false;
  return true;
}

/** the object with `changes` to its spec and metadata applied to the current version (a scale, annotations) */
export async function updateObject(store: GenericStore, o: ApiObject, manager: string, change: (cur: ApiObject) => void): Promise<ApiObject | undefined> {
  return update(store, o, manager, undefined, (cur) => {
    change(cur);
    return cur;
  });
}

/** the object a controller acts for, as its Events name it */
export type OwnerRef = { apiVersion: string; kind: string; namespace: string; name: string; uid: string };

/**
 * creates the objects `makers` make in slow-start batches 1, 2, 4, … (kube's
 * slowStartBatch: a template that cannot be created fails once, not n
 * times), with SuccessfulCreate Events; the first failure stops it, gets a
 * FailedCreate Event and is returned
 */
export async function createInBatches(store: GenericStore, owner: OwnerRef, makers: (() => ApiObject)[], events: EventRecorder | undefined, what = 'pod'): Promise<string | undefined> {
  const queue = [...makers];
  for (const size of slowStartBatches(queue.length)) {
    const batch = queue.splice(0, size);
    const results = await Promise.allSettled(batch.map((make) => store.create(owner.namespace, make(), { dryRun: false, manager: CONTROLLER_MANAGER })));
    for (const r of results) if (r.status === 'fulfilled') void events?.event(owner, 'Normal', 'SuccessfulCreate', `Created ${what}: ${r.value.object.metadata?.name ?? ''}`);
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    // the namespace is being deleted: every create will fail, and there is nothing to report or retry
    // (kube's controllers skip NamespaceTerminating; retrying wrote a new failure status in a loop)
    if (failed && isNamespaceTerminating(failed.reason)) return undefined;
    if (failed) {
      const msg = failed.reason instanceof Error ? failed.reason.message : String(failed.reason);
      void events?.event(owner, 'Warning', 'FailedCreate', `Error creating: ${msg}`);
      return msg;
    }
  }
  return undefined;
}

/** kube's pod control text (controller_utils DeletePod): `Deleted pod: <name>` */
const deletedPod = (name: string): string => `Deleted pod: ${name}`;

/**
 * deletes an object the owner controls (its uid as precondition), with a
 * SuccessfulDelete Event whose text `message` gives (each kube controller
 * words its own); gone or replaced already is fine
 */
export async function deleteControlled(store: GenericStore, o: ApiObject, owner: OwnerRef, events: EventRecorder | undefined, message: (name: string) => string = deletedPod, propagationPolicy?: 'Background'): Promise<void> {
  const name = o.metadata?.name ?? '';
  try {
    await store.delete(owner.namespace, name, { dryRun: false, preconditions: { uid: o.metadata?.uid ?? '' }, ...(propagationPolicy ? { propagationPolicy } : {}) });
    void events?.event(owner, 'Normal', 'SuccessfulDelete', message(name));
  } catch (e) {
    if (e instanceof StatusError && (e.code === 404 || e.code === 409)) return;
    throw e;
  }
}
