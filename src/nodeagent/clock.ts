// The agent's clock port: its logic never reads Date.now or sets timers
// directly, so condition and watchdog machines run on a simulated clock in
// tests (XState's `clock` option takes the same setTimeout/clearTimeout pair).

import { LongTimer, MAX_TIMER_MS } from '../core/clock.js';

export interface Clock {
  now(): number;
  setTimeout(fn: (...args: unknown[]) => void, ms: number): unknown;
  clearTimeout(id: unknown): void;
}

/** [0, 1): the agent's randomness port (jitter), injectable like the clock */
export type Random = () => number;
export const systemRandom: Random = () => Math.random();

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    // a pod's activeDeadlineSeconds may be longer than a Node timer holds (src/core/clock.ts MAX_TIMER_MS)
    if (ms > MAX_TIMER_MS) return new LongTimer(fn, ms);
    const t = setTimeout(fn, ms);
    t.unref();
    return t;
  },
  clearTimeout: (id) => (id instanceof LongTimer ? id.cancel() : clearTimeout(id as NodeJS.Timeout)),
};

/** RFC 3339 with second precision, as Kubernetes writes metav1.Time */
export const rfc3339 = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
/** metav1.MicroTime */
export const rfc3339Micro = (ms: number) => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
