// Updates on a Raft member try their compare-and-swap on the member's local
// state before any ReadIndex (docs/raft.md "Optimistic updates"): a member
// that is up to date writes without the ReadIndex round trip, and a member
// that lags never answers 404/409 from its stale state — it reads at a
// ReadIndex and judges again.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { GenericStore } from '../../src/registry/generic-store.js';
import type { ApiObject } from '../../src/registry/types.js';
import { MemoryLogStorage, MemoryNetwork } from '../../src/raft/memory.js';
import { RaftStore } from '../../src/store/raft-store.js';
import { configMaps } from '../watch/helpers.js';

const names = ['a', 'b', 'c'];
let members: RaftStore[] = [];

afterEach(async () => {
  await Promise.all(members.map((m) => m.close()));
  members = [];
});

async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 5));
}

async function cluster(): Promise<{ leader: RaftStore; follower: RaftStore; onLeader: GenericStore; onFollower: GenericStore }> {
  const network = new MemoryNetwork();
  members = await Promise.all(
    names.map((name) => RaftStore.openInMemory({ name, members: names, network, storage: new MemoryLogStorage(), tickMs: 50, compactIntervalMs: 0, proposalTimeoutMs: 5000 })),
  );
  await members[0]!.waitUntilReady(30_000);
  await until(() => members.some((m) => m.isLeader()));
  const leader = members.find((m) => m.isLeader())!;
  const follower = members.find((m) => m !== leader)!;
  const generic = (s: RaftStore) => new GenericStore(configMaps, s, { admit: () => ({ errors: [], unknownFields: [] }), validateMeta: () => [] });
  return { leader, follower, onLeader: generic(leader), onFollower: generic(follower) };
}

const cm = (name: string, v: string, rv?: string): ApiObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default', ...(rv ? { resourceVersion: rv } : {}) }, data: { v } });
const opts = { dryRun: false };
const update = (g: GenericStore, obj: ApiObject) => g.guaranteedUpdate('default', obj.metadata!.name!, opts, () => obj);

describe('optimistic updates on a Raft member', () => {
  it('an up-to-date follower writes without a ReadIndex; the result is the applied object', async () => {
    const { leader, follower, onLeader, onFollower } = await cluster();
    const created = await onLeader.create('default', cm('x', '1'), opts);
    await until(() => follower.revision >= leader.revision);
    const readIndex = vi.spyOn(follower, 'readIndex');
    const r = await update(onFollower, cm('x', '2', created.object.metadata!.resourceVersion));
    expect(readIndex).not.toHaveBeenCalled();
    expect(Number(r.object.metadata!.resourceVersion)).toBeGreaterThan(Number(created.object.metadata!.resourceVersion));
    expect((await onLeader.get('default', 'x')).data).toEqual({ v: '2' });
  });

  it('a lagging follower judges a pinned resourceVersion on consistent state: the latest succeeds, an older one is 409', async () => {
    const { leader, follower, onLeader, onFollower } = await cluster();
    const created = await onLeader.create('default', cm('y', '1'), opts);
    await until(() => follower.revision >= leader.revision);
    follower.faults.set({ delayMs: { '*': 100 } });
    const second = await update(onLeader, cm('y', '2', created.object.metadata!.resourceVersion));
    // the follower has not applied the second write yet: its local state is stale
    expect(follower.revision).toBeLessThan(Number(second.object.metadata!.resourceVersion));
    const readIndex = vi.spyOn(follower, 'readIndex');
    const third = await update(onFollower, cm('y', '3', second.object.metadata!.resourceVersion));
    expect(readIndex).toHaveBeenCalled();
    expect(third.object.data).toEqual({ v: '3' });
    await expect(update(onFollower, cm('y', '4', created.object.metadata!.resourceVersion))).rejects.toMatchObject({ code: 409 });
    follower.faults.heal();
    expect((await onLeader.get('default', 'y')).data).toEqual({ v: '3' });
  });

  it('a lagging follower does not answer 404 for an object created elsewhere', async () => {
    const { follower, onLeader, onFollower } = await cluster();
    follower.faults.set({ delayMs: { '*': 100 } });
    await onLeader.create('default', cm('z', '1'), opts);
    expect(follower.range({ key: onFollower.key('default', 'z') }).kvs).toEqual([]);
    const r = await update(onFollower, cm('z', '2'));
    expect(r.object.data).toEqual({ v: '2' });
    follower.faults.heal();
  });
});
