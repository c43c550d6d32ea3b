// Start-up writes are retried while the store reports itself unavailable (a
// leader change under a Raft member's start-up), and only then
// (src/server/startup-retry.ts, docs/reliability.md "Shortening the short run").

import { describe, expect, it } from 'vitest';
import { StatusError } from '../../src/core/errors.js';
import { retryWhileUnavailable } from '../../src/server/startup-retry.js';
import { StoreUnavailableError } from '../../src/store/types.js';

describe('retryWhileUnavailable', () => {
  it('repeats a write that failed with an unknown outcome (504) or no leader (503) until it succeeds', async () => {
    const errors = [new StoreUnavailableError('leadership changed while the write was in flight', true), new StatusError(503, 'ServiceUnavailable', 'no leader')];
    const logged: string[] = [];
    let calls = 0;
    const out = await retryWhileUnavailable('w', async () => {
      calls++;
      const e = errors.shift();
      if (e) throw e;
      return 'done';
    }, (m) => logged.push(m));
    expect(out).toBe('done');
    expect(calls).toBe(3);
    expect(logged).toHaveLength(2);
    expect(logged[0]).toContain('leadership changed');
  });

  it('does not repeat other failures, and gives up at the deadline', async () => {
    let calls = 0;
    await expect(retryWhileUnavailable('w', async () => {
      calls++;
      throw new StatusError(409, 'AlreadyExists', 'exists');
    }, () => undefined)).rejects.toThrow('exists');
    expect(calls).toBe(1);
    calls = 0;
    await expect(retryWhileUnavailable('w', async () => {
      calls++;
      throw new StoreUnavailableError('no quorum', false);
    }, () => undefined, 250)).rejects.toThrow('no quorum');
    expect(calls).toBeGreaterThan(1);
  });
});
