// kubelet's crash-loop back-off (src/nodeagent/crash-loop-backoff.ts) on explicit times.
import { describe, expect, it } from 'vitest';
import { CrashLoopBackOff } from '../../src/nodeagent/crash-loop-backoff.js';

/** exits attempt `attempt` at `exitAt`, then restarts it as soon as the back-off lets it: the restart time */
function crashAndRestart(b: CrashLoopBackOff, attempt: number, exitAt: number): { restartAt: number; waited: number | undefined } {
  const waited = b.backingOff('p/c', attempt, exitAt);
  let t = exitAt;
  // the agent looks again every second (its relist)
  while (b.backingOff('p/c', attempt, t) !== undefined) t += 1_000;
  b.restarted('p/c', attempt, t);
  return { restartAt: t, waited };
}

describe('kubelet crash-loop back-off', () => {
  it('restarts the first exit at once, then waits 10 s, 20 s, 40 s … counted from each exit, capped at 300 s', () => {
    const b = new CrashLoopBackOff();
    let t = 0;
    const waits: (number | undefined)[] = [];
    const delays: number[] = [];
    for (let attempt = 0; attempt < 8; attempt++) {
      const exitAt = t + 3_000; // each attempt runs 3 s
      const r = crashAndRestart(b, attempt, exitAt);
      waits.push(r.waited);
      delays.push(r.restartAt - exitAt);
      t = r.restartAt;
    }
    expect(waits).toEqual([undefined, 10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000]);
    // the wait runs from the exit, not from the restart before it
    expect(delays).toEqual([0, 10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000]);
  });

  it('starts over when the container ran more than 10 minutes since its restart', () => {
    const b = new CrashLoopBackOff();
    let t = crashAndRestart(b, 0, 1_000).restartAt;
    t = crashAndRestart(b, 1, t + 1_000).restartAt;
    const third = crashAndRestart(b, 2, t + 1_000);
    expect(third.waited).toBe(20_000);
    t = third.restartAt;
    // attempt 3 runs for 11 minutes (it would have waited 40 s): restarted at once, and the next wait is 10 s again
    const long = crashAndRestart(b, 3, t + 660_000);
    expect(long.waited).toBeUndefined();
    expect(long.restartAt).toBe(t + 660_000);
    expect(b.backingOff('p/c', 4, long.restartAt + 1_000)).toBe(10_000);
  });

  it('a cap under 10 s is also the first wait (crashLoopBackOff.maxContainerRestartPeriod)', () => {
    const b = new CrashLoopBackOff(2_000);
    let t = crashAndRestart(b, 0, 0).restartAt;
    const waits: (number | undefined)[] = [];
    for (let attempt = 1; attempt < 5; attempt++) {
      const r = crashAndRestart(b, attempt, t + 500);
      waits.push(r.waited);
      t = r.restartAt;
    }
    expect(waits).toEqual([2_000, 2_000, 2_000, 2_000]);
  });

  it('forgets a container: its next exit restarts at once', () => {
    const b = new CrashLoopBackOff();
    const t = crashAndRestart(b, 0, 0).restartAt;
    expect(b.backingOff('p/c', 1, t + 1)).toBe(10_000);
    b.forget('p/c');
    expect(b.backingOff('p/c', 1, t + 2)).toBeUndefined();
  });
});
