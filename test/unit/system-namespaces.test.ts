import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { SYSTEM_NAMESPACES_PERIOD_MS, SystemNamespaces } from '../../src/controllers/system-namespaces.js';

const flush = () => new Promise<void>((r) => setImmediate(r));

describe('SystemNamespaces (kube system namespaces controller)', () => {
  it('ensures the built-in namespaces every minute while running, and keeps going after a failure', async () => {
    const clock = new ManualClock(0);
    let calls = 0;
    const logs: string[] = [];
    const c = new SystemNamespaces({
      clock,
      log: (m) => logs.push(m),
      ensure: async () => {
        calls++;
        if (calls === 1) throw new Error('store unavailable');
      },
    });
    c.start();
    clock.advance(SYSTEM_NAMESPACES_PERIOD_MS - 1);
    await flush();
    expect(calls).toBe(0);
    clock.advance(1);
    await flush();
    expect(calls).toBe(1);
    expect(logs).toEqual(['system namespaces: store unavailable']);
    clock.advance(SYSTEM_NAMESPACES_PERIOD_MS);
    await flush();
    expect(calls).toBe(2);
    c.stop();
    clock.advance(10 * SYSTEM_NAMESPACES_PERIOD_MS);
    await flush();
    expect(calls).toBe(2);
  });
});
