// What the DaemonSet and StatefulSet controllers share about the objects a
// set controls (pods, revisions): the owner and event references, the
// informer handlers that find the set to sync, the pods it controls.

import type { ApiObject, JSONValue } from '../../registry/types.js';
import type { Informer, InformerHandlers } from '../runtime/index.js';
import { type OwnerReference, controllerRefOf, labelsOf, newControllerRef, ownedObjectHandlers, refersTo } from '../workloads/pods.js';
import { selects } from '../workloads/replicaset.js';
import type { OwnerRef } from '../workloads/writes.js';

type Obj = Record<string, JSONValue>;

export type SetKind = 'DaemonSet' | 'StatefulSet';
/** the set as its events and its writes name it (writes.ts OwnerRef) */
export type EventRef = OwnerRef;

export const keyOf = (o: ApiObject): string => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

export function ownerRef(kind: SetKind, set: ApiObject): OwnerReference {
  return newControllerRef({ apiVersion: 'apps/v1', kind, name: set.metadata?.name ?? '', uid: set.metadata?.uid ?? '' });
}

export function eventRef(kind: SetKind, set: ApiObject): EventRef {
  return { apiVersion: 'apps/v1', kind, namespace: set.metadata?.namespace ?? '', name: set.metadata?.name ?? '', uid: set.metadata?.uid ?? '' };
}

/**
 * Handlers for an informer of controlled objects: the set controlling the
 * object, else every set of the namespace selecting the orphan, is synced;
 * on a change of controller or labels the former one too.
 */
export function ownedHandlers(kind: SetKind, sets: () => Informer | undefined, enqueue: (key: string) => void): InformerHandlers {
  const enqueueFor = (o: ApiObject): void => {
    const ns = o.metadata?.namespace ?? '';
    const ref = controllerRefOf(o);
    if (ref) {
      if (refersTo(ref, 'apps', kind)) enqueue(`${ns}/${ref.name}`);
      return;
    }
    for (const s of sets()?.inNamespace(ns) ?? []) if (selects((s.spec as { selector?: Obj } | undefined)?.selector, labelsOf(o))) enqueue(keyOf(s));
  };
  return ownedObjectHandlers(enqueueFor);
}

/**
 * A DaemonSet's ControllerRevision handlers, as kube's addHistory, updateHistory
 * and deleteHistory: those of ownedHandlers, except that a revision created
 * under a controller does not sync it (kube only logs it). A revision made by
 * hand for the set (kube's ControllerRevision lifecycle e2e test) stays until
 * something else syncs the set; syncing at once would delete it, or its
 * equal, as a duplicate of the current revision while the test counts them.
 */
export function revisionHandlers(kind: SetKind, sets: () => Informer | undefined, enqueue: (key: string) => void): InformerHandlers {
  const owned = ownedHandlers(kind, sets, enqueue);
  return {
    ...owned,
    add: (o, key) => {
      if (!controllerRefOf(o)) owned.add?.(o, key);
    },
  };
}

/** the objects of the set's namespace it controls, as the informer holds them (after this sync's writes) */
export function controlledBy(informer: Informer | undefined, set: ApiObject): ApiObject[] {
  return (informer?.inNamespace(set.metadata?.namespace ?? '') ?? []).filter((p) => controllerRefOf(p)?.uid === set.metadata?.uid);
}

/** a set whose selector is empty, or does not select its own template, is not acted on (kube's SelectingAll) */
export function selectsTemplate(set: ApiObject): boolean {
  const spec = (set.spec ?? {}) as { selector?: Obj; template?: { metadata?: { labels?: Obj } } };
  return selects(spec.selector, spec.template?.metadata?.labels ?? {});
}
