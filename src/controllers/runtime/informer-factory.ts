// Shared informers over one store (issue #9 item 5; client-go's
// SharedInformerFactory). One informer per storage prefix, however many
// controllers use it, fed from a single subscription to the store's applied
// feed: each write is decoded once (decodeShared, src/api/generic-store.ts —
// an object this process just wrote is not decoded at all) and the same
// object lands in every cache and every handler.
//
// Consistency: an informer lists its prefix and subscribes in the same
// synchronous turn, so no write falls between the list and the feed (the
// store applies and publishes synchronously, src/store/applied-feed.ts). For
// each write every cache is updated before any handler runs, so a handler of
// one informer that reads another (a Service handler reading allocations)
// sees the store as of that write. A Raft snapshot install arrives as one
// synthetic write with the difference (state-machine-store.ts replaceState),
// so the feed has no gaps; a write at or below the revision an informer has
// listed or seen is a duplicate for that informer and is ignored (an informer
// first used while a write is being published lists it already, the others
// still get it). `resync()` relists every running informer and
// hands the differences to the handlers as events — client-go's relist after
// a 410 — for a feed that did lose writes (a test double, a future remote feed).
//
// Informers are reference-counted: the first `use` lists, the last release
// drops the cache and the subscription, so a member that stops leading holds
// no copies (the leader gate stops its controllers, leader-gate.ts).
//
// Lists and replays run in slices (docs/controllers.md "Start in slices"): a
// new leader's first lists of 5,000 Nodes and Leases decoded and handed to
// every handler in one go stalled its event loop longer than an election
// timeout (docs/scale.md). The range is read at once (its revision R); the
// objects are decoded a slice at a time, each slice bounded by SLICE_MS,
// with a turn of the event loop between slices. Writes after R are applied
// to the cache as they come (the feed does not wait) and mark their keys, so
// the listed value of a key written since is skipped. When the list is in,
// the informer has synced and each handler registration replays the cache
// as adds in the same slices (HandlerRegistration, informer.ts); a
// registration has synced when its replay is done. A small list (at most
// INLINE_ITEMS objects per turn, what tests and small clusters have) is still
// listed and replayed within `use`, as before.

import { decodeShared } from '../../registry/generic-store.js';
import type { ApiObject } from '../../registry/types.js';
import type { AppliedWrite, KeyValue, RevisionedStore } from '../../store/types.js';
import { CompactedError, prefixEnd } from '../../store/types.js';
import { type HandlerRegistration, type IndexFunc, Informer, type InformerHandlers, type InformerRange, metadataPart, type Notification, selectsKey } from './informer.js';

/** what informers read from the store: a consistent range and the applied feed */
export type InformerSource = Pick<RevisionedStore, 'range' | 'onApplied'>;

export { prefixEnd };

export interface InformerUse {
  informer: Informer;
  /** unregisters the handlers and releases the informer (the last release drops its cache) */
  release(): void;
  /** the informer has listed and these handlers have had their adds (true at once without handlers once listed) */
  hasSynced(): boolean;
  /** resolves once hasSynced(), or once released (check hasSynced again) */
  synced(): Promise<void>;
}

export interface UseOptions {
  /** list and replay to the end within `use`, however large (a caller that reads the cache at once) */
  sync?: boolean;
}

/** a first list being read a page at a time and decoded in slices */
interface ListJob {
  /** the page being decoded */
  kvs: KeyValue[];
  pos: number;
  /** the revision every page is read at */
  revision: number;
  /** more pages follow this one */
  more: boolean;
  /** keys written after the list's revision: their listed value is stale */
  touched: Set<string>;
}

interface Entry {
  informer: Informer;
  users: number;
  job?: ListJob;
}

type Work = { kind: 'list'; entry: Entry; job: ListJob } | { kind: 'replay'; informer: Informer; reg: HandlerRegistration };

export interface InformerFactoryOptions {
  /** the longest slice of list/replay work per turn of the event loop, ms (default SLICE_MS) */
  sliceMs?: number;
  /** objects listed or replayed within `use` per turn before the rest goes to slices (default INLINE_ITEMS) */
  inlineItems?: number;
  /** at most this many objects per slice (tests make slices small; default unbounded) */
  sliceItems?: number;
  /** keys per page of a first list (default LIST_PAGE) */
  listPage?: number;
}

/** a slice of list decoding and replay at most this long: a few of these per election tick (docs/controllers.md) */
export const SLICE_MS = 8;
/** objects handled within `use` per turn: a small store (tests, a fresh cluster) syncs at once */
export const INLINE_ITEMS = 256;
/** keys read per page of a first list: reading 5,000 at once took ~25 ms on a loaded host (docs/controllers.md) */
export const LIST_PAGE = 500;

/** memoised buckets kept at most (a bucket per resource prefix; more means unusual keys) */
const MAX_BUCKETS = 4096;

export class InformerFactory {
  private readonly informers = new Map<string, Entry>();
  /**
   * bucket (a key's prefix up to its fourth '/', e.g. "/registry/configmaps/")
   * → the informers whose range meets that bucket's key range, in creation
   * order; rebuilt when an informer is created. A write then visits only
   * the informers of its resource, not all of them (the garbage collector
   * alone watches every resource: ≈ 2–4 % of a create's main-thread time).
   */
  private readonly buckets = new Map<string, Entry[]>();
  private unsubscribe: (() => void) | undefined;
  /** list and replay work in order; the pump runs it a slice per turn */
  private readonly work: Work[] = [];
  private pumpScheduled = false;
  /** objects still allowed inline this turn (reset by an immediate) */
  private inlineLeft: number;
  private inlineResetScheduled = false;
  private readonly waiters: { done: () => boolean; resolve: () => void }[] = [];
  private readonly sliceMs: number;
  private readonly inlineItems: number;
  private readonly sliceItems: number;
  private readonly listPage: number;

  constructor(
    private readonly source: InformerSource,
    private readonly decode: (kv: KeyValue) => ApiObject = decodeShared,
    o: InformerFactoryOptions = {},
  ) {
    this.sliceMs = o.sliceMs ?? SLICE_MS;
    this.inlineItems = o.inlineItems ?? INLINE_ITEMS;
    this.sliceItems = o.sliceItems ?? Number.POSITIVE_INFINITY;
    this.listPage = o.listPage ?? LIST_PAGE;
    this.inlineLeft = this.inlineItems;
  }

  /** the informer of `range` (created on first request, shared afterwards); not started until `use` */
  informer(range: InformerRange): Informer {
    const id = informerId(range);
    let entry = this.informers.get(id);
    if (!entry) {
      this.informers.set(id, (entry = { informer: new Informer(range), users: 0 }));
      this.buckets.clear();
    }
    return entry.informer;
  }

  /**
   * Starts using the informer of `range`: indexes added, listed if this is the
   * first user, then the handlers registered — they get an add for every
   * object there. Small lists finish within `use` (INLINE_ITEMS per turn, or
   * any size with `sync`); larger ones in slices: `hasSynced()` / `synced()`.
   */
  use(range: InformerRange, handlers?: InformerHandlers, indexers: Record<string, IndexFunc> = {}, opts: UseOptions = {}): InformerUse {
    const informer = this.informer(range);
    const entry = this.informers.get(informerId(range))!;
    for (const [name, fn] of Object.entries(indexers)) informer.addIndexer(name, fn);
    entry.users++;
    if (!this.unsubscribe) {
      this.unsubscribe = this.source.onApplied((w) => this.onWrite(w));
    }
    if (!informer.hasSynced() && !entry.job) this.beginList(entry);
    const reg = handlers ? informer.register(handlers) : undefined;
    if (reg?.state === 'replaying') this.work.push({ kind: 'replay', informer, reg });
    if (opts.sync) this.finish(entry, reg);
    else this.runInline();
    let released = false;
    const hasSynced = (): boolean => !released && informer.hasSynced() && (reg?.synced ?? true);
    return {
      informer,
      hasSynced,
      synced: () => (hasSynced() || released ? Promise.resolve() : new Promise<void>((resolve) => this.waiters.push({ done: () => released || hasSynced(), resolve }))),
      release: () => {
        if (released) return;
        released = true;
        queueMicrotask(() => this.settleWaiters());
        if (reg) informer.unregister(reg);
        entry.users--;
        if (entry.users > 0) return;
        // a list still being sliced is dropped with the cache (its work item sees the job gone)
        entry.job = undefined;
        informer.reset();
        if ([...this.informers.values()].every((e) => e.users === 0)) {
          this.unsubscribe?.();
          this.unsubscribe = undefined;
        }
      },
    };
  }

  /**
   * Reads the first page now: its revision is the list's, where the feed
   * takes over (every write after it reaches the informer); the other pages
   * are read at that revision, a page per slice at most.
   */
  private beginList(entry: Entry): void {
    const { key, end } = entry.informer.range;
    const res = this.source.range({ key, end, limit: this.listPage, skipCount: true });
    const job: ListJob = { kvs: res.kvs, pos: 0, revision: res.revision, more: res.more, touched: new Set() };
    entry.job = job;
    entry.informer.beginList(res.revision);
    this.work.push({ kind: 'list', entry, job });
  }

  /** the page after the last one, at the list's revision; false when there is none */
  private nextPage(informer: Informer, job: ListJob): boolean {
    if (!job.more || job.kvs.length === 0) return false;
    const after = `${job.kvs[job.kvs.length - 1]!.key}\u0000`;
    let res;
    try {
      res = this.source.range({ key: after, end: informer.range.end, limit: this.listPage, skipCount: true, revision: job.revision });
    } catch (e) {
      if (!(e instanceof CompactedError)) throw e;
      // the list's revision was compacted meanwhile: read again from the start, now. What was
      // put so far stays (a key listed again is put again; one written since is touched and skipped)
      res = this.source.range({ key: informer.range.key, end: informer.range.end, limit: this.listPage, skipCount: true });
      job.revision = res.revision;
    }
    job.kvs = res.kvs;
    job.pos = 0;
    job.more = res.more;
    return true;
  }

  /** runs the work this use needs to the end now (UseOptions.sync): its list, then its replay */
  private finish(entry: Entry, reg: HandlerRegistration | undefined): void {
    const job = entry.job;
    if (job) {
      this.listSlice(entry, job, () => true);
      const i = this.work.findIndex((w) => w.kind === 'list' && w.job === job);
      if (i >= 0) this.work.splice(i, 1);
    }
    if (reg && reg.state === 'replaying') {
      entry.informer.replayStep(reg, () => true);
      const i = this.work.findIndex((w) => w.kind === 'replay' && w.reg === reg);
      if (i >= 0) this.work.splice(i, 1);
    }
    this.settleWaiters();
    // other registrations of the informer replay in slices
    if (this.work.length > 0) this.schedulePump();
  }

  /** up to the turn's inline allowance now; the rest in slices */
  private runInline(): void {
    if (!this.inlineResetScheduled) {
      this.inlineResetScheduled = true;
      setImmediate(() => {
        this.inlineResetScheduled = false;
        this.inlineLeft = this.inlineItems;
      });
    }
    this.run(() => this.inlineLeft-- > 0);
    if (this.work.length > 0) this.schedulePump();
  }

  private schedulePump(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      const end = performance.now() + this.sliceMs;
      let n = 0;
      this.run(() => n++ < this.sliceItems && performance.now() < end);
      if (this.work.length > 0) this.schedulePump();
    });
  }

  /** runs queued work in order while `more()` allows each next object */
  private run(more: () => boolean): void {
    while (this.work.length > 0) {
      const w = this.work[0]!;
      let done: boolean;
      try {
        if (w.kind === 'list') done = w.entry.job !== w.job || this.listSlice(w.entry, w.job, more);
        else done = w.informer.replayStep(w.reg, more);
      } catch (e) {
        // a page the store would not read (it closed): that informer stays unsynced, which readiness
        // reports, until its users release it; the work of the others goes on
        console.error(`informer ${(w.kind === 'list' ? w.entry.informer : w.informer).range.key}: list failed`, e);
        done = true;
      }
      if (!done) break;
      this.work.shift();
    }
    this.settleWaiters();
  }

  /** decodes listed objects while `more()`; at the end the informer has synced and its registrations replay */
  private listSlice(entry: Entry, job: ListJob, more: () => boolean): boolean {
    const informer = entry.informer;
    while (job.pos < job.kvs.length || this.nextPage(informer, job)) {
      if (!more()) return false;
      const kv = job.kvs[job.pos++]!;
      const key = informer.keyOf(kv.key);
      if (!selectsKey(informer.range, key) || job.touched.has(key)) continue;
      let obj: ApiObject | undefined;
      try {
        obj = this.decodeFor(informer, kv);
      } catch {
        obj = undefined;
      }
      informer.putListed(key, obj, kv);
    }
    entry.job = undefined;
    for (const reg of informer.listed()) this.work.push({ kind: 'replay', informer, reg });
    return true;
  }

  private settleWaiters(): void {
    if (this.waiters.length === 0) return;
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      const w = this.waiters[i]!;
      if (w.done()) {
        this.waiters.splice(i, 1);
        w.resolve();
      }
    }
  }

  /** whether every informer in use has synced */
  hasSynced(): boolean {
    for (const e of this.informers.values()) if (e.users > 0 && !e.informer.hasSynced()) return false;
    return true;
  }

  /** relists every informer in use and dispatches the differences (client-go's relist after 410 Gone) */
  resync(): void {
    const all: [Informer, Notification[]][] = [];
    // one still listing reads the store anyway
    for (const e of this.informers.values()) if (e.users > 0 && !e.job) all.push([e.informer, this.list(e.informer, false)]);
    for (const [informer, ns] of all) for (const n of ns) informer.dispatch(n);
  }

  /** lists `informer`'s range into its cache at once; the differences are dispatched unless `dispatch` is false */
  private list(informer: Informer, dispatch = true): Notification[] {
    const res = this.source.range({ key: informer.range.key, end: informer.range.end });
    const entries = new Map<string, ApiObject>();
    const corrupt = new Set<string>();
    const revisions = new Map<string, { createRevision: number; modRevision: number }>();
    for (const kv of res.kvs) {
      const key = informer.keyOf(kv.key);
      if (!selectsKey(informer.range, key)) continue;
      revisions.set(key, { createRevision: kv.createRevision, modRevision: kv.modRevision });
      const cached = informer.get(key);
      // unchanged since the cache saw it: keep the object (no re-decode, no spurious update)
      if (cached && cached.metadata?.resourceVersion === String(kv.modRevision)) {
        entries.set(key, cached);
        continue;
      }
      try {
        entries.set(key, this.decodeFor(informer, kv));
      } catch {
        corrupt.add(key);
      }
    }
    const ns = informer.replace(entries, corrupt, res.revision, revisions);
    if (dispatch) for (const n of ns) informer.dispatch(n);
    return ns;
  }

  private decodeFor(informer: Informer, kv: KeyValue): ApiObject {
    const obj = this.decode(kv);
    return informer.range.metadataOnly ? metadataPart(obj) : obj;
  }

  /** the informers a write of the single key `k` may concern (a superset: onWrite still checks each range) */
  private candidates(k: string): Iterable<Entry> {
    const b = bucketOf(k);
    let list = this.buckets.get(b);
    if (!list) {
      list = [...this.informers.values()].filter((e) => meets(e.informer.range, b));
      if (this.buckets.size >= MAX_BUCKETS) this.buckets.clear();
      this.buckets.set(b, list);
    }
    return list;
  }

  private onWrite(w: AppliedWrite): void {
    const changes: [Informer, Notification][] = [];
    // one event (nearly every write): only its bucket's informers; several (a
    // transaction, a snapshot install): all, so the order stays creation order
    const entries = w.events.length === 1 ? this.candidates(w.events[0]!.kv.key) : this.informers.values();
    for (const e of entries) {
      // per informer: one listed while this write was being published already holds it
      if (e.users === 0 || (!e.informer.hasSynced() && !e.job) || w.revision <= e.informer.lastRevision) continue;
      const touched = e.job?.touched;
      const { key, end } = e.informer.range;
      for (const ev of w.events) {
        const k = ev.kv.key;
        if (k < key || k >= end) continue;
        const mk = e.informer.keyOf(k);
        if (!selectsKey(e.informer.range, mk)) continue;
        // still listing: this key's listed value is older than this write
        touched?.add(mk);
        let n: Notification | undefined;
        if (ev.type === 'delete') n = e.informer.apply(mk, undefined, w.revision);
        else {
          try {
            // the KeyValue carries both revisions (StoredRevisions): no object of its own per write (the informer keeps the numbers)
            n = e.informer.apply(mk, this.decodeFor(e.informer, ev.kv), w.revision, false, ev.kv);
          } catch {
            n = e.informer.apply(mk, undefined, w.revision, true);
          }
        }
        if (n) changes.push([e.informer, n]);
      }
    }
    for (const [informer, n] of changes) informer.dispatch(n);
  }
}

/**
 * `k` up to and including its fourth '/' (a storage key's resource prefix,
 * "/registry/core/configmaps/"), or its last '/' when it has fewer ('' when none)
 */
export function bucketOf(k: string): string {
  let last = -1;
  for (let n = 0; n < 4; n++) {
    const i = k.indexOf('/', last + 1);
    if (i < 0) break;
    last = i;
  }
  return k.slice(0, last + 1);
}

/** whether [key, end) holds a string starting with `b` (b is '' or ends with '/') */
function meets(range: InformerRange, b: string): boolean {
  if (b === '') return true;
  // the strings starting with b are exactly [b, b with its last '/' raised to '0')
  return range.key < `${b.slice(0, -1)}0` && range.end > b;
}

/** informers are shared by range, name selection and projection */
function informerId(range: InformerRange): string {
  return `${range.key}\u0000${range.end}\u0000${range.name ?? ''}\u0000${range.metadataOnly ? 'm' : ''}`;
}

const shared = new WeakMap<object, InformerFactory>();

/**
 * The informer factory of `store`, shared by every controller of the process
 * that runs on it (the controllers are built with the store, not a factory,
 * so their constructors keep their shape).
 */
export function sharedInformers(store: InformerSource, o?: InformerFactoryOptions): InformerFactory {
  let f = shared.get(store);
  // the options of the first call make the factory (tests make its slices small)
  if (!f) shared.set(store, (f = new InformerFactory(store, decodeShared, o)));
  return f;
}

/** the range of a storage prefix */
export function prefixRange(prefix: string): InformerRange {
  return { key: prefix, end: prefixEnd(prefix) };
}
