// The clock port (issue #9 item 6): time and timers come in through this
// interface, created by the composition root, so lifecycles and queues are
// tested on a simulated clock instead of waiting on real time.
//
// The rule (checked by test/unit/clock-port.test.ts): `Date.now`, `new Date()`,
// `Math.random` and the global timers appear only here, in src/core/random.ts,
// in the node agent's own port (src/nodeagent/clock.ts) and in the wall-clock
// fault injector (src/core/wall-clock-skew.ts). Two things stay outside it on
// purpose: `performance.now()` measures durations for metrics only (monotonic,
// never compared with a deadline), and `setImmediate` orders work after the
// current turn without any time in it. Secrets, tokens and UIDs keep using
// node:crypto (src/core/random.ts says why).

export interface TimerHandle {
  cancel(): void;
}

export interface Clock {
  /** milliseconds since the epoch */
  now(): number;
  /** run `fn` once after `ms`; the timer never keeps the process alive */
  setTimeout(fn: () => void, ms: number): TimerHandle;
}

/** a Node timer as a TimerHandle (a class: no closure made per timer, every request arms one) */
class NodeTimer implements TimerHandle {
  constructor(private readonly t: ReturnType<typeof setTimeout>) {}

  cancel(): void {
    clearTimeout(this.t);
  }
}

/**
 * Node's timers hold at most 2^31 − 1 ms (≈ 24.8 days): a longer delay fires
 * after 1 ms, with a TimeoutOverflowWarning. A controller that re-checks a
 * key at its deadline (a yearly CronJob's next run, a Job's or Deployment's
 * long deadline) re-armed itself every millisecond.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** a delay longer than a Node timer holds, waited in chunks (an unref'd timer each) */
export class LongTimer implements TimerHandle {
  private t: ReturnType<typeof setTimeout> | undefined;

  constructor(fn: () => void, ms: number) {
    this.arm(fn, ms);
  }

  private arm(fn: () => void, ms: number): void {
    this.t = setTimeout(() => (ms > MAX_TIMER_MS ? this.arm(fn, ms - MAX_TIMER_MS) : fn()), Math.min(ms, MAX_TIMER_MS));
    this.t.unref();
  }

  cancel(): void {
    clearTimeout(this.t);
  }
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    if (ms > MAX_TIMER_MS) return new LongTimer(fn, ms);
    const t = setTimeout(fn, ms);
    t.unref();
    return new NodeTimer(t);
  },
};

/**
 * `fn` every `ms` on `clock` until cancelled: a chain of one-shot timers, so a
 * ManualClock drives it like any other timer and a slow `fn` never overlaps
 * the next run of itself.
 */
export function every(clock: Clock, ms: number, fn: () => void): TimerHandle {
  let current: TimerHandle | undefined;
  let cancelled = false;
  const arm = (): void => {
    current = clock.setTimeout(() => {
      if (cancelled) return;
      arm();
      fn();
    }, ms);
  };
  arm();
  return {
    cancel() {
      cancelled = true;
      current?.cancel();
    },
  };
}

/**
 * a real-time wait that keeps the process alive (systemClock's timers are
 * unref'd): for a short-lived command that polls, which would otherwise exit
 * in the middle of its wait
 */
export function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** a promise that resolves after `ms` on `clock` */
export function sleep(clock: Clock, ms: number): Promise<void> {
  return new Promise((resolve) => clock.setTimeout(resolve, ms));
}

/** A clock that moves only when told to; timers fire in time order inside `advance`. */
export class ManualClock implements Clock {
  private timers: { at: number; seq: number; fn: () => void; cancelled: boolean }[] = [];
  private seq = 0;

  constructor(private time = 0) {}

  now(): number {
    return this.time;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const t = { at: this.time + Math.max(0, ms), seq: this.seq++, fn, cancelled: false };
    this.timers.push(t);
    return { cancel: () => void (t.cancelled = true) };
  }

  /** move time forward by `ms`, firing every timer that falls due, in order */
  advance(ms: number): void {
    const end = this.time + ms;
    for (;;) {
      this.timers = this.timers.filter((t) => !t.cancelled);
      let next: (typeof this.timers)[number] | undefined;
      for (const t of this.timers) if (t.at <= end && (!next || t.at < next.at || (t.at === next.at && t.seq < next.seq))) next = t;
      if (!next) break;
      this.timers.splice(this.timers.indexOf(next), 1);
      this.time = next.at;
      next.fn();
    }
    this.time = end;
  }

  /**
   * the event loop blocked for `ms`: time jumps ahead at once, then every
   * timer that fell due meanwhile fires, late, in order (tests of code that
   * must tell a stalled process from silent peers)
   */
  stall(ms: number): void {
    this.time += ms;
    for (;;) {
      this.timers = this.timers.filter((t) => !t.cancelled);
      let next: (typeof this.timers)[number] | undefined;
      for (const t of this.timers) if (t.at <= this.time && (!next || t.at < next.at || (t.at === next.at && t.seq < next.seq))) next = t;
      if (!next) break;
      this.timers.splice(this.timers.indexOf(next), 1);
      next.fn();
    }
  }

  /** timers not yet fired or cancelled */
  get pending(): number {
    return this.timers.filter((t) => !t.cancelled).length;
  }
}
