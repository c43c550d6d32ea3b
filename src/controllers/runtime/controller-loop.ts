// The skeleton every in-process controller shares (issue #9 item 5): informers
// whose handlers turn changes into keys, one work queue of keys, and a sync
// function per key run by a worker (client-go's controller pattern). A start
// makes a fresh queue and (re)uses the shared informers, which list on first
// use; a stop shuts the queue down and releases the informers, so the next
// start — a new leadership term (leader-gate.ts) — lists again and finishes
// whatever was left half done: the controllers are level-driven.
//
// Large first lists are decoded and handed to the handlers in slices
// (informer-factory.ts): the workers wait until every informer of the run
// has synced before they sync a key (client-go's WaitForCacheSync), so a
// sync function never reads a half-listed cache.

import { type Clock, systemClock } from '../../core/clock.js';
import type { IndexFunc, Informer, InformerHandlers, InformerRange } from './informer.js';
import { type InformerSource, type InformerUse, sharedInformers } from './informer-factory.js';
import { type RateLimitOptions, WorkQueue } from './work-queue.js';

export interface ControllerLoopOptions extends RateLimitOptions {
  /** for log lines */
  name: string;
  clock?: Clock;
  log?: (msg: string) => void;
  /** parallel workers (distinct keys only; one key is never synced twice at once) */
  workers?: number;
}

export class ControllerLoop<K = string> {
  private uses: InformerUse[] = [];
  private q: WorkQueue<K> | undefined;
  readonly clock: Clock;

  constructor(
    private readonly source: InformerSource,
    private readonly o: ControllerLoopOptions,
  ) {
    this.clock = o.clock ?? systemClock;
  }

  /** whether a start is in effect */
  get running(): boolean {
    return this.q !== undefined;
  }

  /** the queue of the current run; undefined when stopped */
  get queue(): WorkQueue<K> | undefined {
    return this.q;
  }

  /** starts a fresh queue whose workers call `sync`; a throw retries the key with backoff */
  begin(sync: (key: K) => Promise<void>): void {
    this.end();
    const q = new WorkQueue<K>({ ...this.o, clock: this.clock });
    this.q = q;
    // a key synced once the caches are; not at all when the run ended meanwhile
    void q.run((key) => (this.hasSynced() ? sync(key) : this.synced().then((ok) => (ok && this.q === q ? sync(key) : undefined))), this.o.workers ?? 1);
  }

  /** uses the shared informer of `range` for this run (listed now if nobody else uses it) */
  inform(range: InformerRange, handlers?: InformerHandlers, indexers?: Record<string, IndexFunc>): Informer {
    return this.use(range, handlers, indexers).informer;
  }

  /** like inform, for an informer needed only for a while: release it early (the stop releases it anyway) */
  use(range: InformerRange, handlers?: InformerHandlers, indexers?: Record<string, IndexFunc>): InformerUse {
    const shared = sharedInformers(this.source).use(range, handlers, indexers);
    // a use released early leaves the run: a released informer no longer counts toward hasSynced
    // (it stopped; counting it kept the namespace controller unsynced after its first deletion pass)
    const use: InformerUse = {
      informer: shared.informer,
      hasSynced: shared.hasSynced,
      synced: shared.synced,
      release: () => {
        const i = this.uses.indexOf(use);
        if (i < 0) return;
        this.uses.splice(i, 1);
        shared.release();
      },
    };
    this.uses.push(use);
    return use;
  }

  enqueue(key: K): void {
    this.q?.add(key);
  }

  enqueueAfter(key: K, ms: number): void {
    this.q?.addAfter(key, ms);
  }

  /** every informer of this run has listed and handed its objects to this run's handlers */
  hasSynced(): boolean {
    return this.q !== undefined && this.uses.every((u) => u.hasSynced());
  }

  /** resolves true once every informer used so far has synced, false if the run ends first */
  async synced(): Promise<boolean> {
    const q = this.q;
    for (;;) {
      if (this.q !== q || q === undefined) return false;
      const waiting = this.uses.filter((u) => !u.hasSynced());
      if (waiting.length === 0) return true;
      // a use resolves when it syncs or is released (the run's end releases them all)
      await Promise.race(waiting.map((u) => u.synced()));
    }
  }

  /** shuts the queue down (a sync in progress finishes; its retries are dropped) and releases the informers */
  end(): void {
    this.q?.shutDown();
    this.q = undefined;
    for (const u of [...this.uses]) u.release();
  }
}
