// Waits for the watch service to see a revision (a watch that starts at a
// resourceVersion newer than the caches, or after a ReadIndex): each wait ends
// when the revision is applied, at its timeout, when its signal fires, or on
// close.

import type { Clock, TimerHandle } from '../core/clock.js';

interface RevisionWaiter {
  revision: number;
  resolve: (reached: boolean) => void;
  timer: TimerHandle;
}

export class RevisionWaiters {
  private readonly waiters = new Set<RevisionWaiter>();

  constructor(private readonly clock: Clock) {}

  /** a wait for `revision` (the caller has checked it is not reached yet) */
  wait(revision: number, timeoutMs: number, cancelled?: AbortSignal): Promise<boolean> {
    return new Promise((resolve) => {
      const done = (reached: boolean): void => {
        waiter.timer.cancel();
        this.waiters.delete(waiter);
        cancelled?.removeEventListener('abort', onAbort);
        resolve(reached);
      };
      const onAbort = (): void => done(false);
      const waiter: RevisionWaiter = { revision, resolve: done, timer: this.clock.setTimeout(() => done(false), timeoutMs) };
      this.waiters.add(waiter);
      cancelled?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** resolves every wait for `revision` or older */
  release(revision: number): void {
    for (const waiter of this.waiters) {
      if (waiter.revision <= revision) waiter.resolve(true);
    }
  }

  /** resolves every wait false (close) */
  cancelAll(): void {
    for (const waiter of [...this.waiters]) waiter.resolve(false);
  }
}
