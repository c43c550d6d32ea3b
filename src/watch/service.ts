// The watch service: the cacher below the registry. It opens the watches the
// endpoint layer validated (`GET <collection>?watch=1`, spec 000 §4.5, §4.6
// watch table; src/endpoints/handlers/watch.ts) from per-type watch caches fed
// by the store's applied writes.
//
// Fan-out (docs/watch.md): applying a write only updates the cache (decode,
// state, window); delivery to watchers runs in a batched dispatch pass right
// after, per cache, through a per-namespace index of watchers, and every
// watcher that sees an event in the same representation gets the same bytes.

import { gone, internalError, serviceUnavailable } from '../core/errors.js';
import { storagePrefix } from '../registry/generic-store.js';
import type { StreamSink } from '../core/stream.js';
import { statusFor } from '../registry/status-table.js';
import type { ResourceDefinition } from '../registry/types.js';
import type { AppliedWrite, RevisionedStore } from '../store/types.js';
import { prefixEnd } from '../store/types.js';
import { type Clock, type TimerHandle, every, systemClock } from '../core/clock.js';
import { type Random, jitter, systemRandom } from '../core/random.js';
import { type CacheEvent, WatchCache, typePrefixOf } from './cache.js';
import { WatchBacklogBudget } from './backlog-budget.js';
import { INITIAL_EVENTS_END } from './encode.js';
import { type StartPlan, startPlan } from './params.js';
import { RevisionWaiters } from './revision-waiters.js';
import { ServedViews } from './served-views.js';
import {
  DEFAULT_FANOUT_SLICE,
  DEFAULT_WATCH_BACKLOG_BUDGET_BYTES,
  type WatchOpenOptions,
  type WatchServiceOptions,
  type WatchServiceStats,
  type WatchStream,
} from './service-options.js';
import { buildFilter } from './watch-filter.js';
import { DispatchMemo, type EndReason, Watcher, type WatcherOptions } from './watcher.js';
import { ConvertingWatcher } from './converting-watcher.js';
import { RevisionRing } from './revision-ring.js';

// what the service takes and reports, from the module that holds it (importers keep one entry point)
export * from './service-options.js';

interface DispatchCursor {
  cache: WatchCache<Watcher>;
  /** the cache's pending events this pass delivers (revision order) */
  events: CacheEvent[];
  /** every watcher any of `events` may concern, taken when the pass starts */
  watchers: Watcher[];
  /** the next watcher of `watchers` */
  watcher: number;
  memo: DispatchMemo;
}

const MINUTE = 60_000;

/** kube's cacher bookmarks a watch this long before its deadline */
const PRE_TIMEOUT_BOOKMARK_MS = 2000;

export class WatchService {
  private readonly windowMs: number;
  private readonly windowMaxEvents: number;
  private readonly bookmarkIntervalMs: number;
  private readonly maxBacklogBytes: number;
  private readonly budget: WatchBacklogBudget<Watcher>;
  private readonly defaultTimeoutMs: () => number;
  private readonly initialEventsEnd: Record<string, string>;
  private readonly clock: Clock;
  private readonly random: Random;

  private revision: number;
  /** the revision through which every cache's events have been dispatched */
  private dispatchedRevision: number;
  private dispatchScheduled = false;
  /** where an unfinished dispatch pass stands (fan-out runs in slices) */
  private cursor: DispatchCursor | undefined;
  private readonly fanoutSlice: number;
  private readonly dirty = new Set<WatchCache<Watcher>>();
  private readonly caches = new Map<string, WatchCache<Watcher>>();
  /**
   * the revisions and times of recent writes: the floor of the window a cache
   * created later backfills from the store (revision-ring.ts says why the
   * writes themselves are not kept here)
   */
  private readonly ring: RevisionRing;
  /** every open watch (starting or live) -> its cache */
  private readonly openWatchers = new Map<Watcher, WatchCache<Watcher>>();
  private readonly waiters: RevisionWaiters;
  private readonly unsubscribe: () => void;
  private readonly ticker: TimerHandle;
  private closed = false;
  private slowEnded = 0;
  private readonly views = new ServedViews();
  /** dispatch passes that yielded before they were done */
  private slices = 0;
  private eventsSentByEnded = 0;

  constructor(
    private readonly store: RevisionedStore,
    opts: WatchServiceOptions = {},
  ) {
    this.windowMs = opts.windowMs ?? 5 * MINUTE;
    this.windowMaxEvents = opts.windowMaxEvents ?? 100_000;
    this.bookmarkIntervalMs = opts.bookmarkIntervalMs ?? MINUTE;
    this.maxBacklogBytes = opts.maxBacklogBytes ?? 10 * 1024 * 1024;
    this.budget = new WatchBacklogBudget<Watcher>(opts.backlogBudgetBytes ?? DEFAULT_WATCH_BACKLOG_BUDGET_BYTES);
    this.clock = opts.clock ?? systemClock;
    this.random = opts.random ?? systemRandom;
    this.waiters = new RevisionWaiters(this.clock);
    this.defaultTimeoutMs = opts.defaultTimeoutMs ?? (() => 30 * MINUTE * (1 + this.random()));
    const domain = opts.apiDomain ?? 'orch.io';
    this.initialEventsEnd = { [INITIAL_EVENTS_END]: 'true', [`${domain}/initial-events-end`]: 'true' };
    this.fanoutSlice = Math.max(1, opts.fanoutSlice ?? DEFAULT_FANOUT_SLICE);
    this.revision = store.revision;
    this.dispatchedRevision = this.revision;
    this.ring = new RevisionRing(this.revision, this.windowMs, this.windowMaxEvents);
    this.unsubscribe = store.onApplied((w) => this.onApplied(w));
    const tick = Math.max(5, Math.min(1000, this.bookmarkIntervalMs / 4, this.windowMs / 4));
    this.ticker = every(this.clock, tick, () => this.maintain());
  }

  // ---- feeding ------------------------------------------------------------

  private onApplied(w: AppliedWrite): void {
    this.revision = w.revision;
    this.ring.push(w.revision, w.time);
    for (const ev of w.events) {
      const prefix = typePrefixOf(ev.kv.key);
      if (prefix === undefined) continue;
      const cache = this.caches.get(prefix);
      if (!cache) continue;
      if (cache.apply(ev, w.revision, w.time)) this.dirty.add(cache);
    }
    if (this.dirty.size > 0) this.scheduleDispatch();
    else if (!this.dispatchScheduled) this.dispatchedRevision = this.revision;
    this.waiters.release(this.revision);
  }

  private scheduleDispatch(): void {
    if (this.dispatchScheduled) return;
    this.dispatchScheduled = true;
    // batch every write applied in this turn of the event loop into one pass;
    // setImmediate runs after this turn's microtasks, so the responses of the
    // writes just applied are written before any of their events
    setImmediate(() => this.dispatch());
  }

  /**
   * One slice of fan-out: at most `fanoutSlice` watchers (each gets at most
   * one write), then the rest in a later turn, so a burst of events
   * to many watchers never holds the event loop (and the write responses and
   * new requests waiting on it) for the whole pass. The pass is watcher-major
   * (docs/watch.md "Batches"): each watcher gets all of the pass's events that
   * concern it in one write, in revision order; a watcher's batch is never
   * split between slices. A cache's events applied during the pass wait for
   * the next pass. A watcher registered meanwhile starts at a revision past
   * the pass's events (register) and is not in the pass's watcher list.
   */
  private dispatch(): void {
    this.dispatchScheduled = false;
    let budget = this.fanoutSlice;
    while (budget > 0) {
      let c = this.cursor;
      if (!c) {
        const next = this.dirty.values().next();
        if (next.done) break;
        this.dirty.delete(next.value);
        const events = next.value.takePending();
        if (events.length === 0) continue;
        c = this.cursor = { cache: next.value, events, watchers: next.value.watchersForEvents(events), watcher: 0, memo: new DispatchMemo() };
      }
      const { events, watchers, memo } = c;
      // a slice is counted in watchers visited (each at most one write), not in
      // events: a watcher's write costs about the same for one event or many,
      // so a backlog that grows the batches does not shrink the slices
      while (budget > 0 && c.watcher < watchers.length) {
        watchers[c.watcher++]!.deliverBatch(events, memo);
        budget--;
      }
      if (c.watcher >= watchers.length) this.cursor = undefined;
    }
    if (this.cursor || this.dirty.size > 0) {
      this.slices++;
      this.scheduleDispatch();
    } else {
      this.dispatchedRevision = this.revision;
    }
  }

  /**
   * Resolves true once the service has seen `revision`, false at the timeout,
   * on close, or when `cancelled` fires (a watcher that went away frees its wait at once).
   */
  waitForRevision(revision: number, timeoutMs: number, cancelled?: AbortSignal): Promise<boolean> {
    if (this.revision >= revision) return Promise.resolve(true);
    if (this.closed || cancelled?.aborted) return Promise.resolve(false);
    return this.waiters.wait(revision, timeoutMs, cancelled);
  }

  /** The watch cache of a type; created on first use, its window backfilled from the store's history since the ring's floor. */
  cacheFor(def: ResourceDefinition): WatchCache<Watcher> {
    const prefix = storagePrefix(def, '');
    let cache = this.caches.get(prefix);
    if (cache) {
      cache.lastUsed = this.clock.now();
      return cache;
    }
    // range and writesAfter are both synchronous views at this.revision (the
    // store publishes each write synchronously): no write can slip in between
    const end = prefixEnd(prefix);
    const state = this.store.range({ key: prefix, end });
    this.ring.prune(this.clock.now());
    // the store keeps history as long as the window (src/server/open-store.ts);
    // when it compacted past the ring's floor (an explicit compaction, or the
    // leader's clock ahead of ours) the window starts where its history does
    const floor = Math.max(this.ring.floor, this.store.compactRevision - 1);
    cache = new WatchCache<Watcher>(prefix, def.scope === 'Namespaced', state.kvs, floor, {
      maxAgeMs: this.windowMs,
      maxEvents: this.windowMaxEvents,
    });
    cache.lastUsed = this.clock.now();
    for (const w of this.store.writesAfter(floor, prefix, end)) {
      for (const ev of w.events) cache.backfill(ev, w.revision, w.time);
    }
    this.caches.set(prefix, cache);
    return cache;
  }

  /** the revision of the last write the service has applied to its caches */
  get cacheRevision(): number {
    return this.revision;
  }

  // ---- serving ------------------------------------------------------------

  /**
   * Opens a watch the endpoint layer validated (src/endpoints/handlers/watch.ts
   * parses the query and picks the encoder); errors that can be known before
   * streaming are thrown as StatusError (a normal error response).
   */
  open(o: WatchOpenOptions): WatchStream {
    if (this.closed) throw serviceUnavailable('the server is shutting down');
    const { def, params, encoder, signal } = o;
    const filter = buildFilter(def, params);
    const plan = startPlan(params);
    const namespace = def.scope === 'Namespaced' ? o.namespace : '';
    const cache = this.cacheFor(def);
    // setTimeout fires at once beyond 2^31-1 ms, so very long timeouts are clamped (~24.8 days)
    const timeoutMs = Math.min(2 ** 31 - 1, params.timeoutSeconds !== undefined ? params.timeoutSeconds * 1000 : this.defaultTimeoutMs());
    let watcher: Watcher | undefined;
    // the gateway calls stop(); the request's abort signal is honoured as well
    let stopped = signal.aborted;
    const onAbort = (): void => {
      stopped = true;
      watcher?.stop();
    };
    signal.addEventListener('abort', onAbort, { once: true });

    return {
      status: 200,
      contentType: encoder.contentType,
      start: (sink: StreamSink) => {
        if (stopped || watcher) return;
        if (this.closed) {
          sink.end();
          return;
        }
        let timer: TimerHandle | undefined;
        const endSignal = new AbortController();
        const prepare = this.views.prepareFor(def);
        const options: WatcherOptions = {
          namespace,
          filter,
          encoder,
          view: this.views.viewFor(def),
          sink,
          allowBookmarks: params.allowWatchBookmarks,
          maxBacklogBytes: this.maxBacklogBytes,
          budget: this.budget,
          onEnd: (ended, why) => {
            endSignal.abort();
            this.onWatcherEnd(ended, why, timer);
          },
        };
        // a CRD's conversion webhook converts asynchronously: its watchers queue their sends (converting-watcher.ts)
        const w = prepare ? new ConvertingWatcher(options, prepare) : new Watcher(options);
        watcher = w;
        this.openWatchers.set(w, cache);
        // timeoutSeconds: end the stream cleanly (spec 000 §4.2)
        timer = this.clock.setTimeout(() => w.end('timeout'), timeoutMs);
        w.deadline = this.clock.now() + timeoutMs;
        void this.begin(w, cache, plan, w.deadline, endSignal.signal);
      },
      stop: () => {
        stopped = true;
        watcher?.stop();
      },
    };
  }

  /** waits as the plan requires, then registers the watcher (synchronously, so no event is missed or doubled) */
  private async begin(w: Watcher, cache: WatchCache<Watcher>, plan: StartPlan, deadline: number, ended: AbortSignal): Promise<void> {
    try {
      let target = 0;
      if (plan.consistent) target = await this.store.readIndex();
      if (plan.notOlderThan !== undefined) target = Math.max(target, plan.notOlderThan);
      if (target > this.revision) {
        const reached = await this.waitForRevision(target, Math.max(0, deadline - this.clock.now()), ended);
        if (!reached) {
          // spec 000 §4.6: a watch on a too large version may wait until the request times out
          w.end(this.closed ? 'closed' : 'timeout');
          return;
        }
      }
      if (w.isEnded) return;
      this.register(w, cache, plan);
    } catch (err) {
      // lower-layer errors through the one Status table (docs/errors.md); others are 500
      const status = (statusFor(err) ?? internalError(err instanceof Error ? err.message : String(err))).toStatus();
      w.fail(status);
    }
  }

  private register(w: Watcher, cache: WatchCache<Watcher>, plan: StartPlan): void {
    const rev = this.revision;
    if (plan.initialEvents) {
      w.sendInitial(cache.snapshot(w.namespace));
      if (plan.initialEventsEndBookmark) w.bookmark(rev, this.initialEventsEnd);
    } else if (plan.after !== undefined) {
      cache.window.prune(this.clock.now());
      const events = cache.window.since(plan.after);
      if (events === undefined) {
        // Kubernetes answers a too-old watch with an ERROR event carrying 410 Expired in a 200 stream;
        // client-go and @kubernetes/client-node re-list on it
        w.fail(gone(`too old resource version: ${plan.after} (${cache.window.floor})`).toStatus());
        return;
      }
      for (const ev of events) if (!w.deliver(ev)) return;
    }
    if (w.isEnded) return;
    w.sentRevision = rev;
    w.nextBookmarkAt = this.nextBookmarkTime(w);
    w.goLive();
    cache.addWatcher(w);
  }

  /**
   * About every interval, and — as kube's cacher does (nextBookmarkTime) — 2 s before the stream's
   * deadline, so a client whose watch times out resumes from a recent version (client-go's reflector
   * and client-node's informer watch again from the last version they saw). Past that: none.
   */
  private nextBookmarkTime(w: Watcher): number {
    const now = this.clock.now();
    const at = Math.min(now + jitter(this.random, this.bookmarkIntervalMs, 0.1), w.deadline - PRE_TIMEOUT_BOOKMARK_MS);
    return at <= now ? Infinity : at;
  }

  private onWatcherEnd(w: Watcher, why: EndReason, timer: TimerHandle | undefined): void {
    timer?.cancel();
    const cache = this.openWatchers.get(w);
    this.openWatchers.delete(w);
    if (cache) {
      cache.removeWatcher(w);
      cache.lastUsed = this.clock.now();
    }
    if (why === 'slow') this.slowEnded++;
    this.eventsSentByEnded += w.eventsSent;
  }

  /** periodic: bookmarks for watchers that asked for them, and pruning of aged history */
  private maintain(): void {
    const now = this.clock.now();
    this.ring.prune(now);
    const inUse = new Set(this.openWatchers.values());
    for (const [prefix, cache] of this.caches) {
      cache.window.prune(now);
      // an unwatched cache costs memory and decode work on every write; the
      // store still holds the window's history, so a later cache loses nothing
      if (!inUse.has(cache) && !cache.hasPending && now - cache.lastUsed > this.windowMs) this.caches.delete(prefix);
    }
    // bookmarks mark "everything up to this revision was sent" (spec 000 §4.5): only dispatched revisions qualify
    const delivered = this.dispatchScheduled ? this.dispatchedRevision : this.revision;
    for (const w of this.openWatchers.keys()) {
      if (!w.allowBookmarks || !w.isLive || w.nextBookmarkAt > now) continue;
      w.nextBookmarkAt = this.nextBookmarkTime(w);
      w.bookmark(Math.max(w.sentRevision, delivered));
    }
  }

  /**
   * Ends every open watch with an ERROR event of 410 Expired, so each client
   * clears its cache, lists again and watches from the new version (spec 000
   * §4.5) — what an operator wants after rebuilding caches, and how tests force
   * informers through their re-list path. Returns how many watches it ended.
   */
  expireWatchers(message = 'the watch cache was reset; re-list and watch again'): number {
    const all = [...this.openWatchers.keys()];
    for (const w of all) w.fail(gone(message).toStatus());
    return all.length;
  }

  /** ends every watch cleanly and stops observing the store (server shutdown) */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.ticker.cancel();
    this.unsubscribe();
    this.waiters.cancelAll();
    for (const w of [...this.openWatchers.keys()]) w.end('closed');
  }

  stats(): WatchServiceStats {
    let windowEvents = 0;
    let cachedObjects = 0;
    for (const c of this.caches.values()) {
      windowEvents += c.window.size;
      cachedObjects += c.size;
    }
    let eventsSent = this.eventsSentByEnded;
    for (const w of this.openWatchers.keys()) eventsSent += w.eventsSent;
    return {
      watchers: this.openWatchers.size,
      caches: this.caches.size,
      windowEvents,
      cachedObjects,
      revision: this.revision,
      slowWatchersEnded: this.slowEnded,
      budgetWatchersEnded: this.budget.expiredWatchers,
      backlogBytes: this.budget.totalBytes,
      eventsSent,
      fanoutYields: this.slices,
    };
  }
}
