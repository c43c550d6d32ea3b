// The skeleton every in-process controller shares (issue #9 item 5): informers
// whose handlers turn changes into keys, one work queue of keys, and a sync
// function per key run by a worker (client-go's controller pattern). A start
// makes a fresh queue and (re)uses the shared informers, which list on first
// use; a stop shuts the queue down and releases the informers, so the next
// start — a new leadership term (leader-gate.ts) — lists again and finishes
// whatever was left half done: the controllers are level-driven.

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
    void q.run(sync, this.o.workers ?? 1);
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

  /** every informer of this run has listed */
  hasSynced(): boolean {
    return this.q !== undefined && this.uses.every((u) => u.informer.hasSynced());
  }

  /** shuts the queue down (a sync in progress finishes; its retries are dropped) and releases the informers */
  end(): void {
    this.q?.shutDown();
    this.q = undefined;
    for (const u of [...this.uses]) u.release();
  }
}
