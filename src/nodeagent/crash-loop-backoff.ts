// kubelet's restart back-off of crash-looping containers (its flowcontrol
// Backoff with kubelet's expiry): the wait is counted from when the
// container exited, doubles from 10 s to the cap at each restart, and starts
// over when the container had run more than 10 minutes since its restart.
// Times are the agent's clock; an exit is timed when the agent first sees it
// (within one relist of the runtime's finishedAt).

/** kubelet's containerBackOffPeriod */
export const BACKOFF_START_MS = 10_000;
/** kubelet's MaxContainerBackOff, unless configured (crashLoopBackOff.maxContainerRestartPeriod) */
export const BACKOFF_MAX_MS = 300_000;
/** kubelet's HasExpiredFunc: a container that ran this long since its restart starts the back-off over */
export const BACKOFF_RESET_AFTER_MS = 600_000;

interface Entry {
  /** the wait in force */
  ms: number;
  /** when the container was last restarted */
  lastUpdate: number;
}

export class CrashLoopBackOff {
  private readonly entries = new Map<string, Entry>();
  private readonly exits = new Map<string, { attempt: number; at: number }>();

  constructor(private readonly maxMs = BACKOFF_MAX_MS) {}

  /** when the agent first saw attempt `attempt` of `key` exited */
  private exitedAt(key: string, attempt: number, now: number): number {
    const e = this.exits.get(key);
    if (e?.attempt === attempt) return e.at;
    this.exits.set(key, { attempt, at: now });
    return now;
  }

  /**
   * The wait in force (ms) while the exited attempt must not be restarted yet
   * (IsInBackOffSince), undefined when it may be restarted now.
   */
  backingOff(key: string, attempt: number, now: number): number | undefined {
    const exited = this.exitedAt(key, attempt, now);
    const e = this.entries.get(key);
    if (!e || exited - e.lastUpdate > BACKOFF_RESET_AFTER_MS) return undefined;
    return now - exited < e.ms ? e.ms : undefined;
  }

  /** the container is restarted now (Next): the wait for its next exit */
  restarted(key: string, attempt: number, now: number): number {
    const exited = this.exitedAt(key, attempt, now);
    const e = this.entries.get(key);
    // a cap below 10 s is also the first wait (kubelet, KubeletCrashLoopBackOffMax)
    const ms = !e || exited - e.lastUpdate > BACKOFF_RESET_AFTER_MS ? Math.min(BACKOFF_START_MS, this.maxMs) : Math.min(this.maxMs, e.ms * 2);
    this.entries.set(key, { ms, lastUpdate: now });
    return ms;
  }

  forget(key: string): void {
    this.entries.delete(key);
    this.exits.delete(key);
  }

  keys(): IterableIterator<string> {
    return this.entries.keys();
  }
}
