// An informer (issue #9 item 5): the decoded objects of one resource (one
// storage prefix), kept current from the store's applied feed, with indexes
// and add/update/delete handlers — client-go's SharedIndexInformer, in
// process. It is fed by an InformerFactory (informer-factory.ts), which
// lists the prefix once and then hands it every applied write in order, so
// the cache is never behind the store when a handler runs: the store publishes
// a write to its listeners synchronously after applying it
// (src/store/applied-feed.ts), and the factory updates every cache before
// any handler sees the write.
//
// The cached objects are shared: between the informers of every controller
// (one informer per prefix) and with the writer that made them (decodeShared
// in src/api/generic-store.ts). Handlers and listers must not modify them;
// a controller that wants to change one copies it (structuredClone) or lets
// guaranteedUpdate hand it a fresh copy.
//
// Keys are client-go's meta-namespace keys, which is the storage key below
// the resource prefix: `namespace/name` for a namespaced resource, `name`
// for a cluster-scoped one.

import type { ApiObject } from '../../registry/types.js';

/** the values of one index for an object (client-go IndexFunc) */
export type IndexFunc = (obj: ApiObject, key: string) => string[];

export interface InformerHandlers {
  add?(obj: ApiObject, key: string): void;
  update?(oldObj: ApiObject, newObj: ApiObject, key: string): void;
  delete?(obj: ApiObject, key: string): void;
}

/** the built-in index: by namespace (client-go's cache.NamespaceIndex) */
export const NAMESPACE_INDEX = 'namespace';

/** a change the factory applied to the cache, dispatched to handlers after every cache saw the write */
export type Notification =
  | { type: 'add'; key: string; obj: ApiObject }
  | { type: 'update'; key: string; old: ApiObject; obj: ApiObject }
  | { type: 'delete'; key: string; obj: ApiObject };

export interface StoredRevisions {
  createRevision: number;
  modRevision: number;
}

/** what an informer watches: a storage prefix and its end (prefixEnd) */
export interface InformerRange {
  key: string;
  end: string;
  /**
   * Only the objects of this name (meta-namespace key `<namespace>/<name>`,
   * or `<name>` cluster-scoped), kube's `metadata.name` field selector: for a
   * controller that keeps one well-known object per namespace of a kind that
   * can hold many (the CA ConfigMap among every ConfigMap), so its cache does
   * not hold a decoded copy of all of them (docs/store.md, "Memory per
   * stored object").
   */
  name?: string;
  /**
   * Cache `{ apiVersion, kind, metadata }` only, kube's metadata informers
   * (PartialObjectMetadata), without `managedFields` (metadataPart): for the
   * garbage collector, which reads nothing else. The rest of the object —
   * the ConfigMap's data, the Pod's spec, the field sets — is not held by
   * this cache.
   */
  metadataOnly?: boolean;
}

/**
 * The part of `obj` a metadata-only informer keeps (InformerRange.metadataOnly):
 * apiVersion, kind and the metadata without `managedFields`, which the
 * collector never reads and which is the largest part of most objects'
 * metadata (an array, an entry and a fieldsV1 tree per manager). The
 * metadata object is the shared decode's own when it has no managedFields,
 * else a shallow copy without them, so the cache does not keep the field
 * sets of every object alive (when nothing else holds the object, they die
 * young instead of being promoted and marked for as long as the object is
 * stored).
 */
export function metadataPart(obj: ApiObject): ApiObject {
  const out: ApiObject = { apiVersion: obj.apiVersion, kind: obj.kind };
  const m = obj.metadata;
  if (m) {
    if (m.managedFields === undefined) out.metadata = m;
    else {
      const { managedFields: _dropped, ...rest } = m;
      out.metadata = rest;
    }
  }
  return out;
}

/** whether the meta-namespace key `key` is in the informer's selection (InformerRange.name) */
export function selectsKey(range: InformerRange, key: string): boolean {
  if (range.name === undefined) return true;
  return key === range.name || key.endsWith(`/${range.name}`);
}

/** the read side controllers get (client-go's Lister + Indexer) */
export interface Lister {
  /** every cached object, in key order */
  list(): ApiObject[];
  /** the object at `key` (meta-namespace key) */
  get(key: string): ApiObject | undefined;
  /** keys in order */
  keys(): string[];
  /** the objects whose index `name` contains `value` */
  byIndex(name: string, value: string): ApiObject[];
  /** the keys of those objects */
  indexKeys(name: string, value: string): string[];
  /** the objects of one namespace */
  inNamespace(namespace: string): ApiObject[];
}

export class Informer implements Lister {
  private readonly items = new Map<string, ApiObject>();
  private readonly indexers = new Map<string, IndexFunc>();
  /** index name → value → keys */
  private readonly indices = new Map<string, Map<string, Set<string>>>();
  /** keys whose stored bytes do not decode; they stay out of the cache (spec 000 §4.10) */
  private readonly corrupt = new Set<string>();
  private readonly handlers = new Set<InformerHandlers>();
  /** the handlers as an array, taken once per change of the set (dispatch runs for every applied write) */
  private handlerList: InformerHandlers[] | undefined;
  /** the store's create and mod revision of each cached key (a CRD's name conflicts go by creation order) */
  private readonly revisions = new Map<string, StoredRevisions>();
  private synced = false;
  private revision = 0;

  constructor(readonly range: InformerRange) {
    this.addIndexer(NAMESPACE_INDEX, (_obj, key) => {
      const slash = key.indexOf('/');
      return slash < 0 ? [] : [key.slice(0, slash)];
    });
  }

  /** whether the initial list is in the cache (client-go HasSynced) */
  hasSynced(): boolean {
    return this.synced;
  }

  /** the revision of the last write (or list) the cache reflects */
  get lastRevision(): number {
    return this.revision;
  }

  /** adds an index; existing objects are indexed at once */
  addIndexer(name: string, fn: IndexFunc): void {
    if (this.indexers.has(name)) return; // shared informers: each controller registers its indexes; the first wins
    this.indexers.set(name, fn);
    const index = new Map<string, Set<string>>();
    this.indices.set(name, index);
    for (const [key, obj] of this.items) for (const v of safeIndex(fn, obj, key)) addTo(index, v, key);
  }

  /**
   * Registers handlers. Once synced, every cached object is delivered as an
   * add right away (client-go does the same for a late handler), so a handler
   * never misses what was there before it came. Returns the unregistration.
   */
  addHandlers(h: InformerHandlers): () => void {
    this.handlers.add(h);
    this.handlerList = undefined;
    if (this.synced && h.add) for (const [key, obj] of this.items) h.add(obj, key);
    return () => {
      this.handlers.delete(h);
      this.handlerList = undefined;
    };
  }

  list(): ApiObject[] {
    return this.keys().map((k) => this.items.get(k)!);
  }

  get(key: string): ApiObject | undefined {
    return this.items.get(key);
  }

  keys(): string[] {
    return [...this.items.keys()].sort();
  }

  byIndex(name: string, value: string): ApiObject[] {
    return this.indexKeys(name, value).map((k) => this.items.get(k)!);
  }

  indexKeys(name: string, value: string): string[] {
    const index = this.indices.get(name);
    if (!index) throw new Error(`informer ${this.range.key}: no index ${name}`);
    return [...(index.get(value) ?? [])].sort();
  }

  inNamespace(namespace: string): ApiObject[] {
    return this.byIndex(NAMESPACE_INDEX, namespace);
  }

  /** the store revisions of the object at `key` (its incarnation and last write) */
  storedRevisions(key: string): StoredRevisions | undefined {
    return this.revisions.get(key);
  }

  /** keys present in the store whose value does not decode */
  corruptKeys(): string[] {
    return [...this.corrupt].sort();
  }

  /** the meta-namespace key of a storage key in this informer's range */
  keyOf(storageKey: string): string {
    return storageKey.slice(this.range.key.length);
  }

  // --- driven by the factory ---

  /**
   * Replaces the cache with a fresh list at `revision` (the first list, or a
   * relist after a gap): returns the differences as notifications, so
   * handlers see deletes for what vanished while nobody watched.
   */
  replace(entries: Map<string, ApiObject>, corrupt: Set<string>, revision: number, revisions: Map<string, StoredRevisions> = new Map()): Notification[] {
    this.revisions.clear();
    for (const [k, r] of revisions) this.revisions.set(k, r);
    const out: Notification[] = [];
    for (const [key, obj] of this.items) {
      if (!entries.has(key)) {
        this.remove(key);
        out.push({ type: 'delete', key, obj });
      }
    }
    for (const [key, obj] of entries) {
      const old = this.items.get(key);
      if (old === obj) continue;
      this.put(key, obj);
      out.push(old ? { type: 'update', key, old, obj } : { type: 'add', key, obj });
    }
    this.corrupt.clear();
    for (const k of corrupt) this.corrupt.add(k);
    this.revision = revision;
    this.synced = true;
    return out;
  }

  /** one key changed (obj undefined = deleted, or undecodable when `isCorrupt`) */
  apply(key: string, obj: ApiObject | undefined, revision: number, isCorrupt = false, stored?: StoredRevisions): Notification | undefined {
    this.revision = Math.max(this.revision, revision);
    if (stored && obj) this.revisions.set(key, stored);
    else this.revisions.delete(key);
    const old = this.items.get(key);
    if (isCorrupt) this.corrupt.add(key);
    else this.corrupt.delete(key);
    if (!obj) {
      if (!old) return undefined;
      this.remove(key);
      return { type: 'delete', key, obj: old };
    }
    this.put(key, obj);
    return old ? { type: 'update', key, old, obj } : { type: 'add', key, obj };
  }

  /** drops the cache (the last user stopped); the next start lists again */
  reset(): void {
    this.items.clear();
    for (const index of this.indices.values()) index.clear();
    this.corrupt.clear();
    this.revisions.clear();
    this.synced = false;
    this.revision = 0;
  }

  dispatch(n: Notification): void {
    // a snapshot: a handler (un)registered by another handler does not change this dispatch's set
    const list = (this.handlerList ??= [...this.handlers]);
    for (const h of list) {
      try {
        if (n.type === 'add') h.add?.(n.obj, n.key);
        else if (n.type === 'update') h.update?.(n.old, n.obj, n.key);
        else h.delete?.(n.obj, n.key);
      } catch (e) {
        // one faulty handler must not starve the others (nor the store's apply loop)
        console.error(`informer ${this.range.key}: handler failed`, e);
      }
    }
  }

  private put(key: string, obj: ApiObject): void {
    if (this.items.has(key)) this.unindex(key);
    this.items.set(key, obj);
    for (const [name, fn] of this.indexers) {
      const index = this.indices.get(name)!;
      for (const v of safeIndex(fn, obj, key)) addTo(index, v, key);
    }
  }

  private remove(key: string): void {
    this.unindex(key);
    this.items.delete(key);
  }

  private unindex(key: string): void {
    const obj = this.items.get(key);
    if (!obj) return;
    for (const [name, fn] of this.indexers) {
      const index = this.indices.get(name)!;
      for (const v of safeIndex(fn, obj, key)) {
        const set = index.get(v);
        set?.delete(key);
        if (set?.size === 0) index.delete(v);
      }
    }
  }
}

function safeIndex(fn: IndexFunc, obj: ApiObject, key: string): string[] {
  try {
    return fn(obj, key);
  } catch {
    return [];
  }
}

function addTo(index: Map<string, Set<string>>, value: string, key: string): void {
  let set = index.get(value);
  if (!set) index.set(value, (set = new Set()));
  set.add(key);
}
