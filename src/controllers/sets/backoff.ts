// kube's failed-daemon-pod backoff (flowcontrol.Backoff, 1 s doubling to
// 15 min): a node whose daemon pod keeps failing gets its failed pod deleted
// — and so replaced — at most once per delay, instead of on every sync. The
// time is the controller's clock; an entry idle for twice the maximum is
// forgotten, as kube's GC does.

export const FAILED_BACKOFF_INITIAL_MS = 1_000;
export const FAILED_BACKOFF_MAX_MS = 15 * 60_000;

export class FailedPodBackoff {
  private readonly entries = new Map<string, { delay: number; at: number }>();

  /** ms left before the failed pod of `key` may go again; 0 when it may now */
  remaining(key: string, now: number): number {
    const e = this.entries.get(key);
    if (!e) return 0;
    return Math.max(0, e.at + e.delay - now);
  }

  /** the failed pod of `key` goes now: the next one waits twice as long */
  next(key: string, now: number): void {
    const e = this.entries.get(key);
    if (!e || now - e.at > 2 * FAILED_BACKOFF_MAX_MS) this.entries.set(key, { delay: FAILED_BACKOFF_INITIAL_MS, at: now });
    else this.entries.set(key, { delay: Math.min(e.delay * 2, FAILED_BACKOFF_MAX_MS), at: now });
  }

  /** forgets entries idle for twice the maximum delay */
  gc(now: number): void {
    for (const [k, e] of this.entries) if (now - e.at > 2 * FAILED_BACKOFF_MAX_MS) this.entries.delete(k);
  }
}
