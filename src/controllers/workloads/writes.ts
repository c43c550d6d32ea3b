// The workload controllers' writes through the registry: adopting and
// releasing an object (kube's ControllerRefManager patches, here a
// compare-and-swap that checks again on the current object), and status.

import { StatusError } from '../../core/errors.js';
import type { GenericStore } from '../../registry/generic-store.js';
import type { ApiObject, JSONValue } from '../../registry/types.js';
import { type OwnerReference, controllerRefOf } from '../../machinery/meta.js';

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
