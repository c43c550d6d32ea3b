// A clock that runs in real time and can be moved ahead at once, for a whole
// control plane under test (ServerOptions.clock): a ManualClock would stop
// the store and the request path, which wait on timers, so the server runs in
// real time; `jump` then makes minutes pass for it in an instant, firing
// every timer that fell due meanwhile, in order (as ManualClock.stall does).
// The CronJob scheduling ports use it for their `*/1 * * * ?` schedules.

import { type Clock, type TimerHandle, systemClock } from '../../src/core/clock.js';

interface Pending {
  at: number;
  seq: number;
  fn: () => void;
  real: TimerHandle;
  done: boolean;
}

export class JumpClock implements Clock {
  private offset = 0;
  private seq = 0;
  private readonly pending = new Set<Pending>();

  now(): number {
    return systemClock.now() + this.offset;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const t: Pending = { at: this.now() + Math.max(0, ms), seq: this.seq++, fn, done: false, real: { cancel: () => undefined } };
    const fire = (): void => {
      if (t.done) return;
      t.done = true;
      t.real.cancel();
      this.pending.delete(t);
      fn();
    };
    t.fn = fire;
    t.real = systemClock.setTimeout(fire, Math.max(0, ms));
    this.pending.add(t);
    return { cancel: () => ((t.done = true), t.real.cancel(), this.pending.delete(t)) };
  }

  /** `ms` pass at once: the timers due by then fire now, in time order */
  jump(ms: number): void {
    this.offset += ms;
    const due = [...this.pending].filter((t) => t.at <= this.now()).sort((a, b) => a.at - b.at || a.seq - b.seq);
    for (const t of due) t.fn();
  }
}
