// The watch cache of one resource type (one storage prefix, all versions of
// the type share it): the current objects, the recent history window, and the
// watchers indexed by namespace. Fed only from the store's applied writes
// (spec 000 §4.6: "Most Recent … may be served from an internal watch cache").

import { decodeShared } from '../registry/generic-store.js';
import type { ApiObject } from '../registry/types.js';
import type { KeyValue, StoreEvent } from '../store/types.js';
import { HistoryWindow, type Revisioned } from './window.js';

/** One change of one object, shared by every watcher of the type. */
export interface CacheEvent extends Revisioned {
  readonly revision: number;
  readonly time: number;
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED';
  readonly key: string;
  readonly namespace: string;
  /** the object after the write (absent for DELETED) */
  readonly object?: ApiObject;
  /** the object before the write (absent for ADDED) */
  readonly prev?: ApiObject;
  /** lazily built: `prev` stamped with this event's revision (the DELETED object) */
  deleted?: ApiObject;
  /** encodings shared among watchers, by encoder share key */
  encodings?: Map<string, Buffer>;
}

/** The object a DELETED event carries: its last state with the delete's revision (Kubernetes semantics). */
export function deletedObject(ev: CacheEvent): ApiObject {
  if (!ev.deleted) {
    const prev = ev.prev!;
    ev.deleted = { ...prev, metadata: { ...(prev.metadata ?? {}), resourceVersion: String(ev.revision) } };
  }
  return ev.deleted;
}

/** A cached object plus its shared synthetic-ADDED encodings. */
export interface CachedObject {
  readonly key: string;
  readonly object: ApiObject;
  encodings?: Map<string, Buffer>;
}

/** What the cache needs of a watcher to route events to it. */
export interface IndexedWatcher {
  /** '' = all namespaces (or a cluster-scoped type) */
  readonly namespace: string;
}

export interface WindowLimits {
  maxAgeMs: number;
  maxEvents: number;
}

/** `/registry/<group>/<resource>/` of a storage key (the layout of storageKey in generic-store.ts), or undefined */
export function typePrefixOf(key: string): string | undefined {
  if (!key.startsWith('/registry/')) return undefined;
  const groupEnd = key.indexOf('/', 10);
  if (groupEnd < 0) return undefined;
  const resourceEnd = key.indexOf('/', groupEnd + 1);
  if (resourceEnd < 0) return undefined;
  return key.slice(0, resourceEnd + 1);
}

export class WatchCache<W extends IndexedWatcher = IndexedWatcher> {
  readonly window: HistoryWindow<CacheEvent>;
  /** namespace ('' for cluster-scoped) -> key -> object */
  private readonly objects = new Map<string, Map<string, CachedObject>>();
  private objectCount = 0;
  /** events applied but not yet dispatched to watchers */
  private pending: CacheEvent[] = [];
  private readonly byNamespace = new Map<string, Set<W>>();
  private readonly allNamespaces = new Set<W>();
  private watcherCount = 0;
  /** wall-clock ms of the last request that used this cache (idle caches are dropped); the service sets it at creation */
  lastUsed = 0;

  /**
   * @param initial the type's keys at the current revision
   * @param floor every change after this revision is (or will be, via backfill) in the window
   */
  constructor(
    readonly prefix: string,
    readonly namespaced: boolean,
    initial: KeyValue[],
    floor: number,
    limits: WindowLimits,
  ) {
    this.window = new HistoryWindow<CacheEvent>(floor, limits.maxAgeMs, limits.maxEvents);
    for (const kv of initial) {
      const obj = safeDecode(kv);
      if (obj) this.put(kv.key, obj);
    }
  }

  get size(): number {
    return this.objectCount;
  }

  get watchers(): number {
    return this.watcherCount;
  }

  namespaceOf(key: string): string {
    if (!this.namespaced) return '';
    const rest = key.slice(this.prefix.length);
    const slash = rest.indexOf('/');
    return slash >= 0 ? rest.slice(0, slash) : '';
  }

  private put(key: string, object: ApiObject): CachedObject | undefined {
    const ns = this.namespaceOf(key);
    let m = this.objects.get(ns);
    if (!m) {
      m = new Map();
      this.objects.set(ns, m);
    }
    const before = m.get(key);
    if (!before) this.objectCount++;
    m.set(key, { key, object });
    return before;
  }

  private remove(key: string): CachedObject | undefined {
    const ns = this.namespaceOf(key);
    const m = this.objects.get(ns);
    const before = m?.get(key);
    if (before) {
      m!.delete(key);
      this.objectCount--;
      if (m!.size === 0) this.objects.delete(ns);
    }
    return before;
  }

  /** Applies one live store event: updates the state, appends to the window and the dispatch queue. */
  apply(ev: StoreEvent, revision: number, time: number): CacheEvent | undefined {
    const key = ev.kv.key;
    let out: CacheEvent;
    if (ev.type === 'put') {
      const object = safeDecode(ev.kv);
      if (!object) return undefined;
      const before = this.put(key, object);
      const prev = before?.object ?? (ev.prevKv ? safeDecode(ev.prevKv) : undefined);
      out = { revision, time, type: prev ? 'MODIFIED' : 'ADDED', key, namespace: this.namespaceOf(key), object, prev };
    } else {
      const before = this.remove(key);
      const prev = before?.object ?? (ev.prevKv ? safeDecode(ev.prevKv) : undefined);
      if (!prev) return undefined;
      out = { revision, time, type: 'DELETED', key, namespace: this.namespaceOf(key), prev };
    }
    this.window.push(out);
    this.pending.push(out);
    return out;
  }

  /**
   * Adds a historical event to the window only (the state already reflects
   * it): the backfill of a cache created after the write.
   */
  backfill(ev: StoreEvent, revision: number, time: number): void {
    const key = ev.kv.key;
    if (ev.type === 'put') {
      const object = safeDecode(ev.kv);
      if (!object) return;
      const created = ev.kv.createRevision === ev.kv.modRevision;
      const prev = !created && ev.prevKv ? safeDecode(ev.prevKv) : undefined;
      this.window.push({ revision, time, type: prev ? 'MODIFIED' : 'ADDED', key, namespace: this.namespaceOf(key), object, prev });
    } else {
      const prev = ev.prevKv ? safeDecode(ev.prevKv) : undefined;
      if (prev) this.window.push({ revision, time, type: 'DELETED', key, namespace: this.namespaceOf(key), prev });
    }
  }

  takePending(): CacheEvent[] {
    const p = this.pending;
    this.pending = [];
    return p;
  }

  get hasPending(): boolean {
    return this.pending.length > 0;
  }

  /** The current objects of a namespace ('' = all), in key order (the order a list returns). */
  snapshot(namespace: string): CachedObject[] {
    let out: CachedObject[];
    if (namespace === '' || !this.namespaced) {
      out = [];
      for (const m of this.objects.values()) for (const o of m.values()) out.push(o);
    } else {
      out = [...(this.objects.get(namespace)?.values() ?? [])];
    }
    return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  addWatcher(w: W): void {
    if (w.namespace === '' || !this.namespaced) this.allNamespaces.add(w);
    else {
      let s = this.byNamespace.get(w.namespace);
      if (!s) {
        s = new Set();
        this.byNamespace.set(w.namespace, s);
      }
      s.add(w);
    }
    this.watcherCount++;
  }

  removeWatcher(w: W): boolean {
    let removed: boolean;
    if (w.namespace === '' || !this.namespaced) removed = this.allNamespaces.delete(w);
    else {
      const s = this.byNamespace.get(w.namespace);
      removed = s?.delete(w) ?? false;
      if (s && s.size === 0) this.byNamespace.delete(w.namespace);
    }
    if (removed) this.watcherCount--;
    return removed;
  }

  /**
   * The watchers an event in `namespace` may concern: that namespace's and
   * the all-namespaces ones. Watchers of other namespaces are never touched.
   */
  *watchersFor(namespace: string): Iterable<W> {
    if (namespace !== '') {
      const s = this.byNamespace.get(namespace);
      if (s) yield* s;
    }
    yield* this.allNamespaces;
  }

  /**
   * Every watcher any of `events` may concern (each once): the watchers of
   * the events' namespaces and the all-namespaces ones.
   */
  watchersForEvents(events: readonly CacheEvent[]): W[] {
    const out: W[] = [];
    if (this.namespaced) {
      let last: string | undefined;
      let seen: Set<string> | undefined;
      for (const ev of events) {
        const ns = ev.namespace;
        if (ns === last || ns === '') continue;
        if (last !== undefined) {
          seen ??= new Set([last]);
          if (seen.has(ns)) continue;
          seen.add(ns);
        }
        last = ns;
        const s = this.byNamespace.get(ns);
        if (s) for (const w of s) out.push(w);
      }
    }
    for (const w of this.allNamespaces) out.push(w);
    return out;
  }

  allWatchers(): W[] {
    const out: W[] = [...this.allNamespaces];
    for (const s of this.byNamespace.values()) out.push(...s);
    return out;
  }
}

function safeDecode(kv: KeyValue): ApiObject | undefined {
  try {
    // the cache only reads its objects: share one decode with the other consumers of the write
    return decodeShared(kv);
  } catch (err) {
    // a value that is not an object of ours must not stop the cache
    console.error(`watch cache: cannot decode ${kv.key}:`, err);
    return undefined;
  }
}
