// Timers longer than a Node timer holds (2^31 − 1 ms ≈ 24.8 days; Node fires
// such a timer after 1 ms instead, with a TimeoutOverflowWarning): a yearly
// CronJob's next run, a long Job or Deployment deadline, a pod's
// activeDeadlineSeconds. Before, controllers re-checked such a key every
// millisecond (src/core/clock.ts MAX_TIMER_MS).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LongTimer, MAX_TIMER_MS, systemClock } from '../../src/core/clock.js';
import { systemClock as agentClock } from '../../src/nodeagent/clock.js';

const DAY = 24 * 3600 * 1000;

afterEach(() => {
  vi.useRealTimers();
});

describe('timers beyond 24.8 days', () => {
  it('do not fire early on the real clock, and warn of nothing', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    let fired = 0;
    const server = systemClock.setTimeout(() => fired++, 365 * DAY);
    const agent = agentClock.setTimeout(() => fired++, 40 * DAY);
    await new Promise((r) => setTimeout(r, 50));
    server.cancel();
    agentClock.clearTimeout(agent);
    process.off('warning', onWarning);
    expect(fired).toBe(0);
    expect(warnings).not.toContain('TimeoutOverflowWarning');
  });

  it('fire once at their time, waited in chunks; a cancelled one never does', () => {
    vi.useFakeTimers();
    let fired = 0;
    new LongTimer(() => fired++, 2 * MAX_TIMER_MS + 5);
    const cancelled = new LongTimer(() => fired++, MAX_TIMER_MS + 10);
    vi.advanceTimersByTime(MAX_TIMER_MS);
    cancelled.cancel();
    vi.advanceTimersByTime(MAX_TIMER_MS);
    expect(fired).toBe(0);
    vi.advanceTimersByTime(4);
    expect(fired).toBe(0);
    vi.advanceTimersByTime(1);
    expect(fired).toBe(1);
    vi.advanceTimersByTime(10 * MAX_TIMER_MS);
    expect(fired).toBe(1);
  });
});
