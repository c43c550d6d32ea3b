// Who leads, as the store's callers need it: listeners told when this
// member's leadership changes (controllers run on the leader only,
// src/controllers/leader-gate.ts) and requests waiting for any leader to be
// known before they are proposed.

import type { Clock } from '../core/clock.js';

export class LeaderSignal {
  private readonly listeners = new Set<(leader: boolean) => void>();
  private readonly waiters = new Set<() => void>();
  /** the value last reported to the listeners */
  private reported = false;

  constructor(
    private readonly log: (msg: string) => void,
    private readonly clock: Clock,
  ) {}

  onChange(listener: (leader: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** tells the listeners when `isLeader` differs from what they were last told */
  report(isLeader: boolean): void {
    if (isLeader === this.reported) return;
    this.reported = isLeader;
    for (const l of [...this.listeners]) {
      try {
        l(isLeader);
      } catch (err) {
        this.log(`leadership listener failed: ${(err as Error).message}`);
      }
    }
  }

  /** resolves when wake() is called (a leader became known, or the store closes) or after `timeoutMs` */
  waitForLeader(timeoutMs: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = (): void => {
        timer.cancel();
        this.waiters.delete(done);
        resolve();
      };
      const timer = this.clock.setTimeout(done, timeoutMs);
      this.waiters.add(done);
    });
  }

  wake(): void {
    for (const w of [...this.waiters]) w();
  }
}
