// A server-wide budget on the bytes queued for all watch streams (issue #15).
//
// Each watcher is bounded on its own (`maxBacklogBytes`, ended with 410 when
// it falls that far behind), but their sum was bounded only by the connection
// limit: 10,000 watchers that stop reading could hold 10,000 × 10 MiB. The
// budget caps the sum. When it is exceeded, the watchers holding the most
// unsent bytes are ended first (410 `Expired`, so their clients re-list, as
// kube's cacher ends a watcher whose buffer is full) until the total is back
// under the budget; watchers that keep up hold (next to) nothing and are never
// chosen while a backed-up one exists.
//
// The per-watcher figure is the sink's `backlog()` as last seen after a
// write: an upper bound on what uWS still buffers for that stream
// (src/gateway/http-server.ts), reset to 0 by the next write uWS takes whole.

/** what the budget needs of a watcher */
export interface BudgetedWatcher {
  /** end the stream with a 410 ERROR event; `onEnd` then calls `remove` */
  expire(message: string): void;
}

export class WatchBacklogBudget<W extends BudgetedWatcher = BudgetedWatcher> {
  private readonly held = new Map<W, number>();
  private total = 0;
  private expired = 0;
  private trimming = false;

  /** `limitBytes` 0 (or less) = no budget */
  constructor(readonly limitBytes: number) {}

  /** the watcher's backlog is now `bytes`; ends the largest watchers when the sum exceeds the budget */
  update(w: W, bytes: number): void {
    const before = this.held.get(w) ?? 0;
    if (bytes === before && this.held.has(w)) return;
    this.held.set(w, bytes);
    this.total += bytes - before;
    if (this.limitBytes > 0 && this.total > this.limitBytes) this.trim();
  }

  /** the watcher ended */
  remove(w: W): void {
    const b = this.held.get(w);
    if (b === undefined) return;
    this.held.delete(w);
    this.total -= b;
  }

  /** bytes queued for all watchers (upper bound) */
  get totalBytes(): number {
    return this.total;
  }

  /** watchers ended because the budget was exceeded */
  get expiredWatchers(): number {
    return this.expired;
  }

  private trim(): void {
    // expire() re-enters through remove() (and may, through the final ERROR event, through update())
    if (this.trimming) return;
    this.trimming = true;
    try {
      const largestFirst = [...this.held.entries()].filter(([, b]) => b > 0).sort((a, b) => b[1] - a[1]);
      for (const [w, bytes] of largestFirst) {
        if (this.total <= this.limitBytes) break;
        this.expired++;
        const total = this.total;
        w.expire(`the server's watch buffers are full (${total} bytes queued for all watchers, budget ${this.limitBytes}); this watcher had ${bytes} bytes not yet sent; re-list and watch again`);
        // a watcher whose end did not go through remove() still frees its share
        this.remove(w);
      }
    } finally {
      this.trimming = false;
    }
  }
}
