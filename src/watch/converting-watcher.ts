// A watcher of a version whose objects a CRD's conversion webhook converts
// (src/registry/crd/conversion-webhook.ts). Conversion is asynchronous, so
// every send (initial events, replayed and live events, bookmarks) is queued
// per watcher: it waits for the conversion of its objects (shared with the
// other watchers of the version, src/watch/served-views.ts), then is sent
// synchronously through the ordinary Watcher. The order of a watcher's events
// is kept; a slow webhook holds back only the watchers that need it (the
// dispatch pass goes on). A failed conversion ends the watch with an ERROR
// event carrying the Status, as a failed decode ends a kube watch.

import { StatusError, internalError } from '../core/errors.js';
import type { ApiObject } from '../registry/types.js';
import { type CacheEvent, type CachedObject, deletedObject } from './cache.js';
import type { PrepareViews } from './served-views.js';
import { type DispatchMemo, Watcher, type WatcherOptions } from './watcher.js';

/** sends queued behind a conversion beyond which the watcher is ended (410: re-list), as a slow client is */
const MAX_QUEUED_SENDS = 10_000;

export class ConvertingWatcher extends Watcher {
  private queue: Promise<void> = Promise.resolve();
  private queued = 0;

  constructor(
    opts: WatcherOptions,
    private readonly prepare: PrepareViews,
  ) {
    super(opts);
  }

  override sendInitial(objects: CachedObject[]): void {
    this.enqueue(
      objects.map((o) => o.object),
      () => super.sendInitial(objects),
    );
  }

  override deliver(ev: CacheEvent): boolean {
    this.enqueue(objectsOf([ev]), () => super.deliver(ev));
    return !this.isEnded;
  }

  override deliverBatch(events: readonly CacheEvent[], memo: DispatchMemo): number {
    if (this.isEnded) return 0;
    this.enqueue(objectsOf(events), () => super.deliverBatch(events, memo));
    return 0;
  }

  override bookmark(resourceVersion: number, annotations?: Record<string, string>): void {
    this.enqueue([], () => super.bookmark(resourceVersion, annotations));
  }

  /** runs `send` once `objects` are converted and everything queued before it was sent */
  private enqueue(objects: readonly ApiObject[], send: () => void): void {
    if (this.isEnded) return;
    const ready = this.queued === 0 ? this.prepare(objects) : undefined;
    if (this.queued === 0 && ready === undefined) {
      // nothing waits and nothing to convert: sent now, as by a plain Watcher
      this.run(send);
      return;
    }
    if (this.queued >= MAX_QUEUED_SENDS) {
      this.expire(`watcher fell behind its conversion webhook (${this.queued} sends waiting); re-list and watch again`);
      return;
    }
    this.queued++;
    const converted = ready ?? this.queue.then(() => (this.isEnded ? undefined : this.prepare(objects)));
    this.queue = converted.then(
      () => {
        this.queued--;
        if (!this.isEnded) this.run(send);
      },
      (err: unknown) => {
        this.queued--;
        this.fail(statusOf(err).toStatus());
      },
    );
  }

  private run(send: () => void): void {
    try {
      send();
    } catch (err) {
      this.fail(statusOf(err).toStatus());
    }
  }
}

/** the stored objects a watcher may encode for `events`: objects, previous objects (filters), deleted forms */
function objectsOf(events: readonly CacheEvent[]): ApiObject[] {
  const out: ApiObject[] = [];
  for (const ev of events) {
    if (ev.object) out.push(ev.object);
    // a filtered watcher sees a MODIFIED that leaves its selection as DELETED (the deleted form of prev)
    if (ev.prev) out.push(ev.prev, deletedObject(ev));
  }
  return out;
}

function statusOf(err: unknown): StatusError {
  return err instanceof StatusError ? err : internalError(err instanceof Error ? err.message : String(err));
}
