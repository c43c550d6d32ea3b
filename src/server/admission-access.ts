// What the admission plugins read: the objects of a kind as this member holds
// them (kube's plugins read informer caches). Every namespaced write asks, so
// an empty namespace costs one range read, and a cluster-wide list is decoded
// again only when its keys or revisions changed.

import { decodeObject, type GenericStore } from '../registry/generic-store.js';
import type { ApiObject } from '../registry/types.js';
import type { RevisionedStore } from '../store/types.js';

/** the objects of one kind in a namespace */
export function namespaceObjects(gs: () => GenericStore | undefined, store: Pick<RevisionedStore, 'range'>): (namespace: string) => ApiObject[] {
  return (namespace) => {
    const s = gs();
    return s ? store.range(s.rangeKeys(namespace)).kvs.map((kv) => decodeObject(kv)) : [];
  };
}

/** the objects of a cluster-scoped kind, decoded again only when the set's keys or revisions changed */
export function clusterObjects(gs: () => GenericStore | undefined, store: Pick<RevisionedStore, 'range'>): () => ApiObject[] {
  let seen = '';
  let items: ApiObject[] = [];
  return () => {
    const s = gs();
    if (!s) return [];
    const r = store.range(s.rangeKeys(''));
    const signature = `${r.count}:${Math.max(0, ...r.kvs.map((kv) => kv.modRevision))}`;
    if (signature !== seen) {
      items = r.kvs.map((kv) => decodeObject(kv));
      seen = signature;
    }
    return items;
  };
}
