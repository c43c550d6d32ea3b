// /readyz parts (src/server/readiness.ts): each part is a named check that
// goes from not ready to ready as the part does, in kube's verbose format.
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { HealthChecks } from '../../src/gateway/health.js';
import { addReadinessChecks, type LeaderOnlyController } from '../../src/server/readiness.js';

/** lets every pending promise continuation run (the checks are awaited one after another) */
const flush = (): Promise<void> => new Promise((r) => setImmediate(r));

function setup() {
  const clock = new ManualClock(1_000_000);
  let resolveRead: ((rv: number) => void) | undefined;
  let rejectRead: ((e: Error) => void) | undefined;
  let reads = 0;
  const state = {
    leader: true,
    watchRevision: 0,
    readyWorkers: 2,
    controllers: [{ name: 'garbage collector', running: true, synced: () => true }] as LeaderOnlyController[],
  };
  const store = {
    readIndex: () => {
      reads++;
      return new Promise<number>((res, rej) => {
        resolveRead = res;
        rejectRead = rej;
      });
    },
    isLeader: () => state.leader,
  };
  const watch = { waitForRevision: async (rv: number) => state.watchRevision >= rv };
  const health = new HealthChecks();
  health.add({ name: 'ping', check: () => undefined });
  addReadinessChecks(health, {
    store,
    watch,
    tlsWorkers: { configured: 2, readyWorkers: () => state.readyWorkers },
    controllers: () => state.controllers,
    clock,
  });
  const serve = (path: string, query = '') => health.serve(path, new URLSearchParams(query));
  return {
    clock,
    state,
    serve,
    reads: () => reads,
    resolveRead: (rv: number) => resolveRead?.(rv),
    rejectRead: (e: Error) => rejectRead?.(e),
  };
}

describe('readiness checks', () => {
  it('lists every part by name; a store without a quorum is not ready until a ReadIndex answers', async () => {
    const t = setup();
    // the ReadIndex never answers: the probe gives up at its timeout
    const pending = t.serve('/readyz', 'verbose');
    await flush();
    t.clock.advance(800);
    const notReady = await pending;
    expect(notReady?.status).toBe(500);
    expect(notReady?.body).toContain('[+]ping ok');
    expect(notReady?.body).toContain('[-]etcd-readiness failed: reason withheld');
    expect(notReady?.body).toContain('[-]watch-cache failed: reason withheld');
    expect(notReady?.body).toContain('[+]tls-workers ok');
    expect(notReady?.body).toContain('[+]informer-sync ok');
    expect(notReady?.body).toMatch(/readyz check failed\n$/);

    // the single check names its reason
    t.clock.advance(300);
    const one = t.serve('/readyz/etcd-readiness');
    await flush();
    t.rejectRead(new Error('no Raft leader is known'));
    expect(await one).toEqual({ status: 500, body: 'internal server error: no Raft leader is known\n' });

    // the store catches up; the watch cache is behind, then reaches the same revision
    t.clock.advance(300);
    t.state.watchRevision = 41;
    const behind = t.serve('/readyz', 'verbose');
    await flush();
    t.resolveRead(42);
    const b = await behind;
    expect(b?.status).toBe(500);
    expect(b?.body).toContain('[+]etcd-readiness ok');
    expect(b?.body).toContain('[-]watch-cache failed: reason withheld');
    t.state.watchRevision = 42;
    // within the reuse window: the same ReadIndex answer, now matched by the watch cache
    const ready = await t.serve('/readyz', 'verbose');
    expect(ready?.status).toBe(200);
    expect(ready?.body).toContain('[+]watch-cache ok');
    expect(ready?.body).toMatch(/check passed\n$/);
  });

  it('shares one ReadIndex among concurrent probes and reuses a fresh answer briefly', async () => {
    const t = setup();
    t.state.watchRevision = 5;
    const probes = [t.serve('/readyz'), t.serve('/readyz'), t.serve('/readyz/etcd-readiness')];
    await flush();
    expect(t.reads()).toBe(1);
    t.resolveRead(5);
    for (const p of await Promise.all(probes)) expect(p?.status).toBe(200);
    expect(t.reads()).toBe(1);
    await t.serve('/readyz');
    expect(t.reads()).toBe(1);
    t.clock.advance(300);
    const again = t.serve('/readyz');
    await flush();
    expect(t.reads()).toBe(2);
    t.resolveRead(6);
    t.state.watchRevision = 6;
    expect((await again)?.status).toBe(200);
  });

  it('TLS workers and leader-only controllers', async () => {
    const t = setup();
    t.state.watchRevision = 1;
    const first = t.serve('/readyz');
    await flush();
    t.resolveRead(1);
    expect((await first)?.status).toBe(200);

    t.state.readyWorkers = 0;
    let r = await t.serve('/readyz', 'verbose');
    expect(r?.status).toBe(500);
    expect(r?.body).toContain('[-]tls-workers failed: reason withheld');
    expect(await t.serve('/readyz/tls-workers')).toEqual({ status: 500, body: 'internal server error: none of 2 TLS worker processes is serving\n' });
    // an operator may exclude the part
    r = await t.serve('/readyz', 'verbose&exclude=tls-workers');
    expect(r?.status).toBe(200);
    expect(r?.body).toContain('[+]tls-workers excluded: ok');
    t.state.readyWorkers = 1;

    // the leader has not started (or not synced) a controller yet
    t.state.controllers = [
      { name: 'garbage collector', running: true, synced: () => false },
      { name: 'namespace controller', running: false },
    ];
    r = await t.serve('/readyz', 'verbose');
    expect(r?.status).toBe(500);
    expect(r?.body).toContain('[-]informer-sync failed: reason withheld');
    expect(await t.serve('/readyz/informer-sync')).toEqual({ status: 500, body: 'internal server error: not synced: garbage collector, namespace controller\n' });
    // a follower runs none of them
    t.state.leader = false;
    expect((await t.serve('/readyz'))?.status).toBe(200);
    t.state.leader = true;
    t.state.controllers = [{ name: 'garbage collector', running: true, synced: () => true }, { name: 'namespace controller', running: true }];
    expect((await t.serve('/readyz'))?.status).toBe(200);
    // liveness does not include readiness-only parts
    expect((await t.serve('/livez', 'verbose'))?.body).not.toContain('etcd-readiness');
  });
});
