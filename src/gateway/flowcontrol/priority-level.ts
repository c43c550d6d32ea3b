// One priority level: at most `limit` requests execute at once; the rest
// wait in queues chosen by shuffle sharding on the flow, and queues are
// served round-robin, so one busy flow cannot starve the others of its level
// (fair queuing for requests of equal cost). A full queue, or a wait longer
// than `maxWaitMs`, is refused before any work is done (429).

import type { Clock, TimerHandle } from '../../core/clock.js';

export interface PriorityLevelConfig {
  /** requests executing at once (at least 1) */
  limit: number;
  /** queues of the level; 0 = no queuing: refuse at the limit (the max-inflight mode) */
  queues: number;
  /** waiting requests one queue holds */
  queueLength: number;
  /** queues a flow may use (shuffle sharding) */
  handSize: number;
  /** longest wait in a queue */
  maxWaitMs: number;
}

export type Refusal = 'queue-full' | 'time-out' | 'concurrency-limit';

interface Waiter {
  resolve(v: true | Refusal): void;
  timer: TimerHandle;
}

export class PriorityLevel {
  private executing = 0;
  private readonly queues: Waiter[][];
  private nextQueue = 0;
  private waitingCount = 0;
  /** refusals by reason, for metrics */
  readonly rejected: Record<Refusal, number> = { 'queue-full': 0, 'time-out': 0, 'concurrency-limit': 0 };

  constructor(
    readonly name: string,
    readonly config: PriorityLevelConfig,
    private readonly clock: Clock,
  ) {
    this.queues = Array.from({ length: config.queues }, () => []);
  }

  get inFlight(): number {
    return this.executing;
  }

  get waiting(): number {
    return this.waitingCount;
  }

  /**
   * Resolves true when the request may run (it must then call `release()`
   * exactly once), or with why it is refused. Synchronous when it can run at
   * once, so the common case costs no extra turn of the event loop.
   */
  admit(flow: string): true | Refusal | Promise<true | Refusal> {
    if (this.executing < this.config.limit && this.waitingCount === 0) {
      this.executing++;
      return true;
    }
    if (this.config.queues === 0) return this.refuse('concurrency-limit');
    const queue = this.pickQueue(flow);
    if (queue.length >= this.config.queueLength) return this.refuse('queue-full');
    return new Promise<true | Refusal>((resolve) => {
      const waiter: Waiter = {
        resolve,
        timer: this.clock.setTimeout(() => {
          const i = queue.indexOf(waiter);
          if (i < 0) return;
          queue.splice(i, 1);
          this.waitingCount--;
          resolve(this.refuse('time-out'));
        }, this.config.maxWaitMs),
      };
      queue.push(waiter);
      this.waitingCount++;
      this.dispatch();
    });
  }

  /**
   * Why a request of this flow would be refused at once if it came now, or
   * undefined when it would run or wait. Counted as a refusal when `count`:
   * the caller answers 429 itself, before any work (src/gateway/flowcontrol/early-shed.ts).
   */
  wouldRefuse(flow: string, count: boolean): Refusal | undefined {
    if (this.executing < this.config.limit && this.waitingCount === 0) return undefined;
    let why: Refusal | undefined;
    if (this.config.queues === 0) why = 'concurrency-limit';
    else if (this.pickQueue(flow).length >= this.config.queueLength) why = 'queue-full';
    if (why && count) this.rejected[why]++;
    return why;
  }

  release(): void {
    this.executing--;
    this.dispatch();
  }

  private refuse(why: Refusal): Refusal {
    this.rejected[why]++;
    return why;
  }

  /** start waiting requests while there is room, taking queues in turn */
  private dispatch(): void {
    while (this.executing < this.config.limit && this.waitingCount > 0) {
      for (let i = 0; i < this.queues.length; i++) {
        const q = this.queues[(this.nextQueue + i) % this.queues.length]!;
        if (q.length === 0) continue;
        this.nextQueue = (this.nextQueue + i + 1) % this.queues.length;
        const w = q.shift()!;
        this.waitingCount--;
        w.timer.cancel();
        this.executing++;
        w.resolve(true);
        break;
      }
    }
  }

  /** the shortest of the flow's `handSize` queues (a deterministic hand per flow) */
  private pickQueue(flow: string): Waiter[] {
    const n = this.queues.length;
    const hand = Math.min(this.config.handSize, n);
    let h = fnv1a(flow);
    let best: Waiter[] | undefined;
    const used = new Set<number>();
    for (let i = 0; i < hand; i++) {
      let idx = h % n;
      while (used.has(idx)) idx = (idx + 1) % n;
      used.add(idx);
      h = Math.floor(h / n) || fnv1a(`${flow}#${i}`);
      const q = this.queues[idx]!;
      if (!best || q.length < best.length) best = q;
    }
    return best!;
  }
}

function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}
