// Three in-process RaftStores over real gRPC on loopback: replication,
// follower forwarding, ReadIndex, leader loss + restart from disk,
// snapshots (taken and installed), partitions via the fault hook.

import { mkdtemp, rm } from 'node:fs/promises';
import { freePort } from '../helpers/ports.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RaftStore, RaftUnavailableError, type RaftStoreOptions } from '../../src/store/raft-store.js';
import type { TxnResult } from '../../src/store/types.js';

const enc = new TextEncoder();
const dec = new TextDecoder();


interface Cluster {
  root: string;
  cluster: Record<string, string>;
  stores: Map<string, RaftStore>;
  start(name: string): Promise<RaftStore>;
  stop(name: string): Promise<void>;
  leader(): Promise<RaftStore>;
  closeAll(): Promise<void>;
}

let current: Cluster | undefined;

async function makeCluster(extra: Partial<RaftStoreOptions> = {}): Promise<Cluster> {
  const root = await mkdtemp(join(tmpdir(), 'orch-raft-'));
  const names = ['m1', 'm2', 'm3'];
  const cluster: Record<string, string> = {};
  for (const n of names) cluster[n] = `127.0.0.1:${await freePort()}`;
  const stores = new Map<string, RaftStore>();
  const c: Cluster = {
    root,
    cluster,
    stores,
    async start(name) {
      const s = await RaftStore.open({
        name,
        initialCluster: cluster,
        dataDir: join(root, name),
        tickMs: 20,
        electionTick: 10,
        compactIntervalMs: 0,
        ...extra,
      });
      stores.set(name, s);
      return s;
    },
    async stop(name) {
      const s = stores.get(name);
      stores.delete(name);
      await s?.close();
    },
    async leader() {
      for (let i = 0; i < 500; i++) {
        const leaders = [...stores.values()].filter((s) => s.status().role === 'leader');
        // one leader whose term every live member agrees on
        const [leader, ...others] = leaders;
        if (leader && others.length === 0 && [...stores.values()].every((s) => s.status().leader === leader.status().name)) {
          return leader;
        }
        await new Promise((r) => setTimeout(r, 20));
      }
      throw new Error('no stable leader');
    },
    async closeAll() {
      await Promise.all([...stores.values()].map((s) => s.close()));
      stores.clear();
      await rm(root, { recursive: true, force: true });
    },
  };
  current = c;
  for (const n of names) await c.start(n);
  return c;
}

afterEach(async () => {
  await current?.closeAll();
  current = undefined;
});

function put(key: string, value: string) {
  return { compare: [], success: [{ type: 'put' as const, key, value: enc.encode(value) }], failure: [] };
}

function value(s: RaftStore, key: string): string | undefined {
  const kv = s.range({ key }).kvs[0];
  return kv ? dec.decode(kv.value) : undefined;
}

async function retry<T>(fn: () => Promise<T>, attempts = 50): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (!(err instanceof RaftUnavailableError) || i >= attempts) throw err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

describe('RaftStore (3 members, gRPC on loopback)', () => {
  it('replicates writes from the leader to every member', async () => {
    const c = await makeCluster();
    const leader = await c.leader();
    const r = await leader.txn(put('/a', 'one'));
    expect(r.succeeded).toBe(true);
    for (const s of c.stores.values()) {
      expect(await s.waitForRevision(r.revision, 5000)).toBe(true);
      expect(value(s, '/a')).toBe('one');
    }
  });

  it('forwards a follower write to the leader and applies it locally before acknowledging', async () => {
    const c = await makeCluster();
    const leader = await c.leader();
    const follower = [...c.stores.values()].find((s) => s !== leader)!;
    const r = await retry(() => follower.txn(put('/f', 'via-follower')));
    // read-your-writes on the member that acknowledged
    expect(follower.revision).toBeGreaterThanOrEqual(r.revision);
    expect(value(follower, '/f')).toBe('via-follower');
    // compare-and-swap judged at apply time, on the replicated state
    const cas = await retry(() =>
      follower.txn({ compare: [{ key: '/f', target: 'mod', op: '=', value: r.revision - 1 }], success: [{ type: 'delete', key: '/f' }], failure: [] }),
    );
    expect(cas.succeeded).toBe(false);
  });

  it('serves ReadIndex on a follower: the returned revision covers a write acknowledged by the leader', async () => {
    const c = await makeCluster();
    const leader = await c.leader();
    const follower = [...c.stores.values()].find((s) => s !== leader)!;
    // slow the follower down so it cannot simply be up to date already
    follower.faults.set({ delayMs: { '*': 50 } });
    const r = await leader.txn(put('/r', 'fresh'));
    const rev = await retry(() => follower.readIndex());
    expect(rev).toBeGreaterThanOrEqual(r.revision);
    expect(value(follower, '/r')).toBe('fresh');
  });

  it('survives losing the leader and restarts it from disk with every acknowledged write', async () => {
    const c = await makeCluster();
    const first = await c.leader();
    const acked: TxnResult[] = [];
    for (let i = 0; i < 20; i++) acked.push(await first.txn(put(`/k${i}`, `v${i}`)));
    const name = first.status().name;
    await c.stop(name);
    const second = await c.leader();
    expect(second.status().name).not.toBe(name);
    const after = await retry(() => second.txn(put('/after', 'x')));
    const restarted = await c.start(name);
    expect(await restarted.waitForRevision(after.revision, 10_000)).toBe(true);
    for (let i = 0; i < 20; i++) expect(value(restarted, `/k${i}`)).toBe(`v${i}`);
    expect(value(restarted, '/after')).toBe('x');
  });

  it('takes snapshots and brings a lagging member up to date by InstallSnapshot', async () => {
    const c = await makeCluster({ snapshotEvery: 10 });
    const leader = await c.leader();
    const lagging = [...c.stores.values()].find((s) => s !== leader)!.status().name;
    await c.stop(lagging);
    let last: TxnResult | undefined;
    for (let i = 0; i < 60; i++) last = await retry(() => leader.txn(put(`/s${i % 7}`, `v${i}`)));
    expect(leader.metrics.snapshotsTaken).toBeGreaterThan(0);
    const back = await c.start(lagging);
    expect(await back.waitForRevision(last!.revision, 10_000)).toBe(true);
    expect(back.metrics.snapshotsInstalled).toBeGreaterThan(0);
    for (let k = 0; k < 7; k++) expect(value(back, `/s${k}`)).toBe(value(leader, `/s${k}`));
    // and it restarts from its own persisted snapshot + log
    await c.stop(lagging);
    const again = await c.start(lagging);
    // the persisted snapshot is loaded at open, before any Ready is handled
    expect(again.revision).toBeGreaterThan(0);
    expect(await again.waitForRevision(last!.revision, 10_000)).toBe(true);
    expect(again.metrics.snapshotsInstalled).toBe(0);
    expect(value(again, '/s3')).toBe(value(leader, '/s3'));
  });

  it('never acknowledges a write on an isolated leader; the majority elects a new leader', async () => {
    const c = await makeCluster({ proposalTimeoutMs: 1500 });
    const old = await c.leader();
    const oldName = old.status().name;
    old.faults.set({ partitioned: ['*'] });
    const outcome = await old.txn(put('/isolated', 'never')).then(
      () => 'acknowledged',
      (e: unknown) => (e instanceof RaftUnavailableError ? `unavailable-${e.code}` : `error-${String(e)}`),
    );
    expect(outcome).toMatch(/^unavailable-50[34]$/);
    const others = [...c.stores.values()].filter((s) => s !== old);
    const majority = others[0];
    if (!majority) throw new Error('no member besides the old leader');
    const r = await retry(() => majority.txn(put('/majority', 'yes')), 200);
    expect(r.succeeded).toBe(true);
    expect(majority.status().leader).not.toBe(oldName);
    old.faults.clear();
    expect(await old.waitForRevision(r.revision, 10_000)).toBe(true);
    expect(value(old, '/majority')).toBe('yes');
    expect(value(old, '/isolated')).toBeUndefined();
  });
});
