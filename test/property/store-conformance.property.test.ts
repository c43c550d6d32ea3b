// The store conformance suite (test/helpers/store-conformance.ts) on every
// backend: LocalStore on disk and in memory, RaftStore with 1 and 3 members
// in memory (one process, MemoryNetwork + MemoryLogStorage).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryLogStorage, MemoryNetwork } from '../../src/raft/memory.js';
import { LocalStore } from '../../src/store/local-store.js';
import { RaftStore } from '../../src/store/raft-store.js';
import type { RevisionedStore } from '../../src/store/types.js';
import { storeConformanceSuite, type OpenedStore } from '../helpers/store-conformance.js';

const LOCAL_OPTS = { snapshotEvery: 4, compactIntervalMs: 0 };

storeConformanceSuite({
  name: 'LocalStore on disk',
  open: async () => {
    const dir = await mkdtemp(join(tmpdir(), 'orch-store-prop-'));
    let store = await LocalStore.open(dir, LOCAL_OPTS);
    return {
      get store() {
        return store;
      },
      reopen: async () => {
        await store.close();
        store = await LocalStore.open(dir, LOCAL_OPTS);
        return store;
      },
      dispose: async () => {
        await store.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  },
});

storeConformanceSuite({
  name: 'LocalStore in memory',
  open: async () => {
    const store = await LocalStore.openInMemory(LOCAL_OPTS);
    return { store, dispose: () => store.close() };
  },
});

/** A cluster of in-memory members; the suite talks to the first one (a follower forwards to the leader). */
async function openRaftCluster(size: number): Promise<OpenedStore> {
  const names = Array.from({ length: size }, (_, i) => `m${i}`);
  const network = new MemoryNetwork();
  const storages = new Map(names.map((n) => [n, new MemoryLogStorage()]));
  const start = (name: string): Promise<RaftStore> =>
    RaftStore.openInMemory({ name, members: names, network, storage: storages.get(name)!, tickMs: 5, snapshotEvery: 4, compactIntervalMs: 0 });
  const members = await Promise.all(names.map(start));
  await members[0]!.waitUntilReady(30_000);
  let store: RevisionedStore = members[0]!;
  return {
    get store() {
      return store;
    },
    reopen: async () => {
      await members[0]!.close();
      members[0] = await start(names[0]!);
      // applied everything committed before the restart
      await members[0].waitUntilReady(30_000);
      store = members[0];
      return store;
    },
    dispose: async () => {
      await Promise.all(members.map((m) => m.close()));
    },
  };
}

storeConformanceSuite({ name: 'RaftStore, 1 member in memory', open: () => openRaftCluster(1), numRuns: 15 });
storeConformanceSuite({ name: 'RaftStore, 3 members in memory', open: () => openRaftCluster(3), numRuns: 15 });
