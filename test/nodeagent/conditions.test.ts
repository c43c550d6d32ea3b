// Node condition lifecycles (spec 002 §2.1) as XState machines on a simulated clock.
import { SimulatedClock } from 'xstate';
import { describe, expect, it } from 'vitest';
import type { Clock } from '../../src/nodeagent/clock.js';
import { NodeConditions } from '../../src/nodeagent/conditions.js';

function setup(periodMs: number) {
  const sim = new SimulatedClock();
  sim.set(Date.UTC(2026, 0, 1, 0, 0, 0));
  const clock: Clock = { now: () => sim.now(), setTimeout: (f, ms) => sim.setTimeout(f, ms), clearTimeout: (id) => sim.clearTimeout(id as number) };
  let changes = 0;
  const c = new NodeConditions(clock, periodMs, () => changes++);
  const get = (t: string) => c.list().find((x) => x.type === t)!;
  return { sim, c, get, changes: () => changes };
}

describe('node conditions', () => {
  it('start Unknown and take the observed status with the transition time of the change', () => {
    const { sim, c, get, changes } = setup(30_000);
    expect(get('Ready').status).toBe('Unknown');
    sim.increment(5_000);
    c.observe('Ready', false, 'NodeAgentReady', 'ready');
    expect(get('Ready')).toMatchObject({ status: 'True', reason: 'NodeAgentReady', lastTransitionTime: '2026-01-01T00:00:05Z', lastHeartbeatTime: '2026-01-01T00:00:05Z' });
    sim.increment(10_000);
    c.observe('Ready', false, 'NodeAgentReady', 'ready');
    expect(get('Ready')).toMatchObject({ status: 'True', lastTransitionTime: '2026-01-01T00:00:05Z', lastHeartbeatTime: '2026-01-01T00:00:15Z' });
    c.observe('Ready', true, 'ContainerRuntimeNotReady', 'runtime down');
    expect(get('Ready')).toMatchObject({ status: 'False', reason: 'ContainerRuntimeNotReady', lastTransitionTime: '2026-01-01T00:00:15Z' });
    expect(changes()).toBe(2);
  });

  it('a pressure condition stays True for the transition period after the pressure ends', () => {
    const { sim, c, get } = setup(30_000);
    c.observe('MemoryPressure', false, 'NodeHasSufficientMemory', 'ok');
    expect(get('MemoryPressure').status).toBe('False');
    sim.increment(1_000);
    c.observe('MemoryPressure', true, 'NodeHasInsufficientMemory', 'low');
    expect(get('MemoryPressure')).toMatchObject({ status: 'True', lastTransitionTime: '2026-01-01T00:00:01Z' });
    sim.increment(1_000);
    c.observe('MemoryPressure', false, 'NodeHasSufficientMemory', 'ok');
    expect(c.state('MemoryPressure')).toBe('Clearing');
    sim.increment(29_000);
    expect(get('MemoryPressure').status).toBe('True');
    // pressure returns inside the period: the timer is cancelled
    c.observe('MemoryPressure', true, 'NodeHasInsufficientMemory', 'low again');
    sim.increment(60_000);
    expect(get('MemoryPressure')).toMatchObject({ status: 'True', lastTransitionTime: '2026-01-01T00:00:01Z', message: 'low again' });
    c.observe('MemoryPressure', false, 'NodeHasSufficientMemory', 'ok');
    sim.increment(30_000);
    expect(get('MemoryPressure')).toMatchObject({ status: 'False', reason: 'NodeHasSufficientMemory', lastTransitionTime: '2026-01-01T00:02:01Z' });
  });

  it('Ready has no transition period', () => {
    const { c, get } = setup(30_000);
    c.observe('Ready', true, 'ContainerRuntimeNotReady', 'x');
    c.observe('Ready', false, 'NodeAgentReady', 'y');
    expect(get('Ready').status).toBe('True');
  });
});
