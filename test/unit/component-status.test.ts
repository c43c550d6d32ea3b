// The rows of `kubectl get componentstatuses` (src/server/component-status.ts): what the
// store and the leader gates say, on the leader and on a follower.

import { describe, expect, it } from 'vitest';
import { componentProbes } from '../../src/server/component-status.js';
import type { LeaderOnlyController } from '../../src/server/readiness.js';

const gate = (name: string, running: boolean, synced = true): LeaderOnlyController => ({ name, running, synced: () => synced });

async function rows(store: { healthy: () => boolean; isLeader?: () => boolean }, controllers: LeaderOnlyController[]) {
  const out: Record<string, unknown> = {};
  for (const p of componentProbes(store, () => controllers)) out[p.name] = await p.check();
  return out;
}

describe('componentstatus probes', () => {
  it('the leader: healthy once its gates run and synced', async () => {
    const r = await rows({ healthy: () => true }, [gate('scheduler', true), gate('garbage collector', true), gate('deployment controller', true)]);
    expect(r).toEqual({
      scheduler: { healthy: true, message: 'ok', error: '' },
      'controller-manager': { healthy: true, message: 'ok', error: '' },
      'etcd-0': { healthy: true, message: 'ok', error: '' },
    });
  });

  it('the leader: names the controllers that do not run or have not synced', async () => {
    const r = await rows({ healthy: () => true, isLeader: () => true }, [gate('scheduler', true, false), gate('garbage collector', false), gate('deployment controller', true, false), gate('job controller', true)]);
    expect(r.scheduler).toEqual({ healthy: false, message: '', error: 'not running or not synced yet: scheduler' });
    expect(r['controller-manager']).toEqual({ healthy: false, message: '', error: 'not running or not synced yet: garbage collector, deployment controller' });
  });

  it('a follower: healthy while a leader is known (the store is healthy), whatever its own idle gates say', async () => {
    const idle = [gate('scheduler', false), gate('garbage collector', false)];
    expect(await rows({ healthy: () => true, isLeader: () => false }, idle)).toMatchObject({ scheduler: { healthy: true }, 'controller-manager': { healthy: true } });
    const r = await rows({ healthy: () => false, isLeader: () => false }, idle);
    expect(r.scheduler).toEqual({ healthy: false, message: '', error: 'no leader is known: the scheduler runs on the Raft leader' });
    expect(r['etcd-0']).toEqual({ healthy: false, message: '', error: 'the store is not healthy' });
  });

  it('a disabled scheduler is an unhealthy row that says why', async () => {
    const r = await rows({ healthy: () => true }, [gate('garbage collector', true)]);
    expect(r.scheduler).toEqual({ healthy: false, message: '', error: 'the in-process scheduler is disabled (--controllers=-scheduler)' });
  });
});
