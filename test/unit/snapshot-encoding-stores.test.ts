// LocalStore and RaftStore encode their snapshots in slices (snapshot-encoder.ts)
// while writes go on: the snapshot is the state at the index it was cut, the
// writes made during the encoding land after it, and close() during an
// encoding ends it cleanly (nothing saved, nothing lost). The encoder's turns
// are driven by the test (snapshotEncoding.nextTurn), not by timing.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryLogStorage, MemoryNetwork } from '../../src/raft/memory.js';
import { LocalStore } from '../../src/store/local-store.js';
import { MvccState } from '../../src/store/mvcc-state.js';
import { RaftStore } from '../../src/store/raft-store.js';
import type { SnapshotEncoding } from '../../src/store/snapshot-encoder.js';
import { prefixEnd, type RevisionedStore } from '../../src/store/types.js';

/** an encoding that stops at its first yield until released */
function gatedEncoding(): { encoding: SnapshotEncoding; started: Promise<void>; release: () => void } {
  let started!: () => void;
  let release!: () => void;
  const startedP = new Promise<void>((r) => (started = r));
  const gate = new Promise<void>((r) => (release = r));
  return {
    encoding: {
      sliceMs: 0,
      chunkElements: 2,
      nextTurn: () => {
        started();
        return gate;
      },
    },
    started: startedP,
    release,
  };
}

const put = (store: RevisionedStore, key: string, value: string) =>
  store.txn({ compare: [], success: [{ type: 'put', key, value: new TextEncoder().encode(value) }], failure: [] });

async function keys(store: RevisionedStore): Promise<string[]> {
  return (await store.range({ key: '/', end: prefixEnd('/') })).kvs.map((kv) => `${kv.key}=${new TextDecoder().decode(kv.value)}`);
}

const expected = (n: number): string[] => Array.from({ length: n }, (_, i) => `/k/${String(i).padStart(2, '0')}=v${i}`);

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

describe('LocalStore snapshot encoding', () => {
  async function open(encoding: SnapshotEncoding): Promise<{ dir: string; store: LocalStore }> {
    const dir = await mkdtemp(join(tmpdir(), 'snapenc-local-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const store = await LocalStore.open(dir, { compactIntervalMs: 0, snapshotEvery: 5, snapshotLogRatio: 0, snapshotEncoding: encoding });
    return { dir, store };
  }

  it('writes go on while a snapshot is encoded; close() during the encoding saves nothing and loses nothing', async () => {
    const g = gatedEncoding();
    const { dir, store } = await open(g.encoding);
    for (let i = 0; i < 5; i++) await put(store, `/k/${String(i).padStart(2, '0')}`, `v${i}`);
    await g.started; // the snapshot of entries 1..5 is being encoded, held at its first yield
    for (let i = 5; i < 12; i++) await put(store, `/k/${String(i).padStart(2, '0')}`, `v${i}`);
    expect(await keys(store)).toEqual(expected(12));
    const closing = store.close();
    g.release();
    await closing;
    expect(store.stats().snapshots).toBe(0);
    const again = await LocalStore.open(dir, { compactIntervalMs: 0 });
    try {
      expect(again.stats().snapshotIndex).toBe(0);
      expect(await keys(again)).toEqual(expected(12));
    } finally {
      await again.close();
    }
  });

  it('the snapshot saved is the state at the index it was cut; later writes replay from the log', async () => {
    const g = gatedEncoding();
    const { dir, store } = await open(g.encoding);
    for (let i = 0; i < 5; i++) await put(store, `/k/${String(i).padStart(2, '0')}`, `v${i}`);
    await g.started;
    // overwrite a key the snapshot holds and add others while it is encoded
    await put(store, '/k/00', 'v0');
    for (let i = 5; i < 8; i++) await put(store, `/k/${String(i).padStart(2, '0')}`, `v${i}`);
    g.release();
    while (store.stats().snapshots === 0) await put(store, '/tick', 'x');
    expect(store.stats().snapshotIndex).toBe(5);
    await store.close();
    const again = await LocalStore.open(dir, { compactIntervalMs: 0 });
    try {
      expect(again.stats().snapshotIndex).toBe(5);
      expect((await keys(again)).filter((k) => k.startsWith('/k/'))).toEqual(expected(8));
    } finally {
      await again.close();
    }
  });
});

describe('RaftStore snapshot encoding', () => {
  async function openMember(storage: MemoryLogStorage, encoding?: SnapshotEncoding): Promise<RaftStore> {
    const store = await RaftStore.openInMemory({
      name: 'a',
      members: ['a'],
      network: new MemoryNetwork(),
      storage,
      tickMs: 20,
      compactIntervalMs: 0,
      snapshotEvery: 5,
      snapshotLogRatio: 0,
      ...(encoding ? { snapshotEncoding: encoding } : {}),
    });
    cleanups.push(() => store.close());
    await store.waitUntilReady(30_000);
    return store;
  }

  it('applies go on while a snapshot is encoded; close() during the encoding is clean and the member restarts with everything', async () => {
    const storage = new MemoryLogStorage();
    const g = gatedEncoding();
    const store = await openMember(storage, g.encoding);
    for (let i = 0; i < 8; i++) await put(store, `/k/${String(i).padStart(2, '0')}`, `v${i}`);
    await g.started;
    for (let i = 8; i < 12; i++) await put(store, `/k/${String(i).padStart(2, '0')}`, `v${i}`);
    const closing = store.close();
    g.release();
    await closing;
    expect(store.metrics.snapshotsTaken).toBe(0);
    expect((await storage.load()).snapshot).toBeUndefined();
    const again = await openMember(storage);
    expect(await keys(again)).toEqual(expected(12));
  });

  it('the snapshot saved is the state at its index; the log keeps what was applied after it', async () => {
    const storage = new MemoryLogStorage();
    const g = gatedEncoding();
    const store = await openMember(storage, g.encoding);
    for (let i = 0; i < 8; i++) await put(store, `/k/${String(i).padStart(2, '0')}`, `v${i}`);
    await g.started;
    const cutAt = (await storage.load()).entries.length; // nothing compacted yet
    expect(cutAt).toBeGreaterThan(0);
    for (let i = 8; i < 12; i++) await put(store, `/k/${String(i).padStart(2, '0')}`, `v${i}`);
    g.release();
    while (store.metrics.snapshotsTaken === 0) await put(store, '/tick', 'x');
    const persisted = await storage.load();
    const snap = persisted.snapshot!;
    const image = MvccState.restore(snap.data);
    // the image is the state at the snapshot's index, not at the end of the encoding
    expect(image.appliedIndex).toBe(snap.metadata.index);
    expect(image.revision).toBeLessThan(store.revision);
    expect(persisted.entries[0]?.index).toBe(snap.metadata.index + 1);
    await store.close();
    const again = await openMember(storage);
    expect((await keys(again)).filter((k) => k.startsWith('/k/'))).toEqual(expected(12));
  });
});
