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

/**
 * One set of handlers on an informer (client-go's listener registration).
 * It is `waiting` until the informer's first list is in the cache, then
 * `replaying`: every cached object is handed to it as an add, a slice at a
 * time (the factory's pump, informer-factory.ts), then `live`. While it
 * replays, a change of a key it has not been handed yet is held back (the
 * replay hands the key's latest object later); a change of any other key is
 * delivered at once. So each handler sees every object once as an add, then
 * its changes in order, none lost (test/property/informer-slices.property.test.ts).
 */
export class HandlerRegistration {
  state: 'waiting' | 'replaying' | 'live' = 'waiting';
  removed = false;
  /** the keys still to replay (replaying only) */
  pending: Set<string> | undefined;
  private order: string[] = [];
  private pos = 0;

  constructor(readonly handlers: InformerHandlers) {}

  /** its initial adds are all delivered (client-go's registration HasSynced) */
  get synced(): boolean {
    return this.state === 'live';
  }

  begin(keys: string[]): void {
    this.order = keys;
    this.pos = 0;
    this.pending = new Set(keys);
    this.state = keys.length === 0 ? 'live' : 'replaying';
    if (this.state === 'live') this.pending = undefined;
  }

  /** hands up to the next keys to `add` until `more()` says stop; whether the replay is done */
  step(items: Map<string, ApiObject>, more: () => boolean, onError: (e: unknown) => void): boolean {
    while (this.pos < this.order.length && !this.removed) {
      if (!more()) return false;
      const key = this.order[this.pos++]!;
      if (!this.pending!.delete(key)) continue;
      const obj = items.get(key);
      if (!obj) continue;
      try {
        this.handlers.add?.(obj, key);
      } catch (e) {
        onError(e);
      }
    }
    this.order = [];
    this.pending = undefined;
    if (!this.removed) this.state = 'live';
    return true;
  }
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
  private readonly registrations = new Set<HandlerRegistration>();
  /** the registrations as an array, taken once per change of the set (dispatch runs for every applied write) */
  private registrationList: HandlerRegistration[] | undefined;
  /**
   * the store's create and mod revision of each cached key (a CRD's name
   * conflicts go by creation order), as numbers in two maps: keeping the
   * write's KeyValue (or an object per key) held one more heap object per
   * cached object for as long as it is stored (issue 14)
   */
  private readonly createRevisions = new Map<string, number>();
  private readonly modRevisions = new Map<string, number>();
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
   * Registers handlers: `replaying` from the cache now if synced, else
   * `waiting` for `listed`. Every cached object is delivered as an add (as
   * client-go does for a late handler), so a handler never misses what was
   * there before it came; the factory runs the replay in slices.
   */
  register(h: InformerHandlers): HandlerRegistration {
    const r = new HandlerRegistration(h);
    this.registrations.add(r);
    this.registrationList = undefined;
    if (this.synced) r.begin([...this.items.keys()]);
    return r;
  }

  unregister(r: HandlerRegistration): void {
    r.removed = true;
    this.registrations.delete(r);
    this.registrationList = undefined;
  }

  /** replays a slice to `r` (see HandlerRegistration.step) */
  replayStep(r: HandlerRegistration, more: () => boolean): boolean {
    return r.step(this.items, more, (e) => this.handlerFailed(e));
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
    const createRevision = this.createRevisions.get(key);
    return createRevision === undefined ? undefined : { createRevision, modRevision: this.modRevisions.get(key)! };
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
    this.clearRevisions();
    for (const [k, r] of revisions) this.setRevisions(k, r);
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
    if (stored && obj) this.setRevisions(key, stored);
    else {
      this.createRevisions.delete(key);
      this.modRevisions.delete(key);
    }
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

  /**
   * A list of `revision` begins (the factory's sliced first list): writes
   * after it are applied as they come (`apply`), the listed objects arrive
   * with `putListed`, and `listed` ends it.
   */
  beginList(revision: number): void {
    this.revision = revision;
  }

  /** a listed object (not one a later write already set or deleted: the factory skips those) */
  putListed(key: string, obj: ApiObject | undefined, stored: StoredRevisions): void {
    if (!obj) {
      this.corrupt.add(key);
      return;
    }
    this.setRevisions(key, stored);
    this.put(key, obj);
  }

  /** the list is in the cache: synced, and every waiting registration starts its replay (returned) */
  listed(): HandlerRegistration[] {
    this.synced = true;
    const out: HandlerRegistration[] = [];
    let keys: string[] | undefined;
    for (const r of this.registrations) {
      if (r.state !== 'waiting') continue;
      r.begin((keys ??= [...this.items.keys()]));
      out.push(r);
    }
    return out;
  }

  private setRevisions(key: string, r: StoredRevisions): void {
    this.createRevisions.set(key, r.createRevision);
    this.modRevisions.set(key, r.modRevision);
  }

  private clearRevisions(): void {
    this.createRevisions.clear();
    this.modRevisions.clear();
  }

  /** drops the cache (the last user stopped); the next start lists again */
  reset(): void {
    this.items.clear();
    for (const index of this.indices.values()) index.clear();
    this.corrupt.clear();
    this.clearRevisions();
    this.synced = false;
    this.revision = 0;
  }

  dispatch(n: Notification): void {
    // a snapshot: a handler (un)registered by another handler does not change this dispatch's set
    const list = (this.registrationList ??= [...this.registrations]);
    for (const r of list) {
      if (r.removed || r.state === 'waiting') continue;
      // not replayed yet: the replay hands this key's latest object (HandlerRegistration)
      if (r.pending?.has(n.key)) continue;
      const h = r.handlers;
      try {
        if (n.type === 'add') h.add?.(n.obj, n.key);
        else if (n.type === 'update') h.update?.(n.old, n.obj, n.key);
        else h.delete?.(n.obj, n.key);
      } catch (e) {
        this.handlerFailed(e);
      }
    }
  }

  private handlerFailed(e: unknown): void {
    // one faulty handler must not starve the others (nor the store's apply loop)
    console.error(`informer ${this.range.key}: handler failed`, e);
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
