// The read side every RevisionedStore shares: applied writes fanned out to
// observers in order, watches that replay retained history and then go live
// without gap or duplicate, and waits for a revision. The stores differ only
// in how writes get applied (a local log or Raft); they call `publish` for
// every applied write.

import type { Clock, TimerHandle } from '../core/clock.js';
import type { KeyFilter } from './mvcc-state.js';
import { type AppliedWrite, CompactedError, type WatchRequest, type Watcher } from './types.js';

/** what the feed reads from the state machine (MvccState satisfies it) */
export interface FeedState {
  readonly revision: number;
  readonly compactRevision: number;
  writesSince(startRevision: number, filter?: KeyFilter): AppliedWrite[];
}

type AppliedListener = (write: AppliedWrite) => void;

interface RevisionWaiter {
  revision: number;
  resolve: (reached: boolean) => void;
  timer: TimerHandle;
}

export class AppliedFeed {
  private readonly listeners = new Set<AppliedListener>();
  private readonly watchErrorHandlers = new Set<{ onError: (err: Error) => void }>();
  private readonly waiters = new Set<RevisionWaiter>();
  private closedWith: (() => Error) | undefined;

  /** `state` is read on every call, so a store may replace its state machine (snapshot install) */
  constructor(
    private readonly state: () => FeedState,
    private readonly clock: Clock,
  ) {}

  waitForRevision(revision: number, timeoutMs: number): Promise<boolean> {
    if (this.state().revision >= revision) return Promise.resolve(true);
    if (this.closedWith) return Promise.resolve(false);
    return new Promise((resolve) => {
      const waiter: RevisionWaiter = {
        revision,
        resolve,
        timer: this.clock.setTimeout(() => {
          this.waiters.delete(waiter);
          resolve(false);
        }, timeoutMs),
      };
      this.waiters.add(waiter);
    });
  }

  /**
   * Delivers writes with revision >= startRevision touching [key, end):
   * retained history first, then live writes, in order, without gap or
   * duplicate. The history is captured synchronously here and delivery starts
   * in a microtask (so the caller holds the Watcher before the first callback).
   * A start below the compact revision fails with CompactedError (via onError
   * when given, else thrown) — spec 000 §7: 410 for a too-old version.
   */
  watch(req: WatchRequest, onEvents: (write: AppliedWrite) => void, onError?: (err: Error) => void): Watcher {
    const state = this.state();
    const start = req.startRevision !== undefined && req.startRevision > 0 ? req.startRevision : state.revision + 1;
    const noop: Watcher = { cancel() {} };
    const fail = (err: Error): Watcher => {
      if (onError) {
        onError(err);
        return noop;
      }
      throw err;
    };
    if (this.closedWith) return fail(this.closedWith());
    if (start < state.compactRevision) return fail(new CompactedError(start, state.compactRevision));
    const filter = rangeFilter(req.key, req.end);
    let backlog: AppliedWrite[] | null = state.writesSince(start, filter);
    let cancelled = false;
    const errorHandler = onError && { onError };
    const cancel = (): void => {
      cancelled = true;
      this.listeners.delete(listener);
      if (errorHandler) this.watchErrorHandlers.delete(errorHandler);
    };
    const deliver = (w: AppliedWrite): void => {
      if (cancelled) return;
      try {
        onEvents(w);
      } catch (err) {
        cancel();
        onError?.(err instanceof Error ? err : new Error(String(err)));
      }
    };
    const listener: AppliedListener = (w) => {
      if (w.revision < start) return;
      const filtered = filterWrite(w, filter);
      if (!filtered) return;
      if (backlog) backlog.push(filtered);
      else deliver(filtered);
    };
    this.listeners.add(listener);
    if (errorHandler) this.watchErrorHandlers.add(errorHandler);
    queueMicrotask(() => {
      const pending = backlog!;
      for (let i = 0; i < pending.length; i++) deliver(pending[i]!);
      backlog = null;
    });
    return { cancel };
  }

  onApplied(listener: (write: AppliedWrite) => void): () => void {
    // Wrap so the same function can subscribe twice and unsubscribe once.
    const wrapped: AppliedListener = (w) => listener(w);
    this.listeners.add(wrapped);
    return () => {
      this.listeners.delete(wrapped);
    };
  }

  /** every applied write, in order, synchronously after it is applied */
  publish(w: AppliedWrite): void {
    for (const listener of this.listeners) {
      try {
        listener(w);
      } catch (err) {
        // A faulty observer must not break the apply loop.
        console.error('store: applied-write listener failed', err);
      }
    }
    for (const waiter of this.waiters) {
      if (waiter.revision <= w.revision) {
        waiter.timer.cancel();
        this.waiters.delete(waiter);
        waiter.resolve(true);
      }
    }
  }

  /** new watches fail with `closed()` from now on (the store is shutting down) */
  refuse(closed: () => Error): void {
    this.closedWith = closed;
  }

  /** settles waits, drops observers and ends watches with the error `closed()` makes */
  close(closed: () => Error): void {
    this.closedWith = closed;
    const revision = this.state().revision;
    for (const w of this.waiters) {
      w.timer.cancel();
      w.resolve(revision >= w.revision);
    }
    this.waiters.clear();
    this.listeners.clear();
    const handlers = [...this.watchErrorHandlers];
    this.watchErrorHandlers.clear();
    for (const h of handlers) h.onError(closed());
  }
}

export function rangeFilter(key: string, end: string | undefined): KeyFilter {
  return end === undefined ? (k) => k === key : (k) => k >= key && k < end;
}

function filterWrite(w: AppliedWrite, filter: KeyFilter): AppliedWrite | undefined {
  let all = true;
  for (const e of w.events) {
    if (!filter(e.kv.key)) {
      all = false;
      break;
    }
  }
  if (all) return w;
  const events = w.events.filter((e) => filter(e.kv.key));
  return events.length > 0 ? { revision: w.revision, time: w.time, events } : undefined;
}
