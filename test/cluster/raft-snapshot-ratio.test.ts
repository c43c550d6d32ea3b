// A Raft member snapshots its state only once the entries applied since the
// last snapshot hold `snapshotLogRatio` of that snapshot's bytes, not every
// `snapshotEvery` entries alone (docs/raft.md "Snapshots"): a snapshot encodes
// the whole state with its history, so a fixed entry count made a large
// state pay a multi-second stall every few thousand small writes on every
// member. Three in-memory members (MemoryNetwork, MemoryLogStorage).
import { afterEach, describe, expect, it } from 'vitest';
import type { RaftStore, RaftStoreMemoryOptions } from '../../src/store/raft-store.js';
import { MemoryRaftCluster, until } from '../helpers/memory-raft.js';

const c = new MemoryRaftCluster();
let members: RaftStore[] = [];
afterEach(() => c.close());

async function cluster(extra: Partial<RaftStoreMemoryOptions>): Promise<RaftStore> {
  const leader = await c.open({ snapshotEvery: 10, ...extra });
  members = c.members;
  return leader;
}

const put = (key: string, bytes: number) => ({ compare: [], success: [{ type: 'put' as const, key, value: new Uint8Array(bytes).fill(7) }], failure: [] });

/**
 * a 64 KiB value (the first snapshot of each member holds it), then 90 small writes: 9x snapshotEvery, 3 turns
 * of each member (snapshotTurn), ~9 KiB of entries
 */
async function bigStateThenSmallWrites(leader: RaftStore): Promise<{ afterBig: number; afterSmall: number }> {
  await leader.txn(put('/big', 65_536));
  for (let i = 0; !members.every((m) => m.metrics.snapshotsTaken >= 1); i++) await leader.txn(put(`/fill${i % 3}`, 16));
  const afterBig = leader.metrics.snapshotsTaken;
  for (let i = 0; i < 90; i++) await leader.txn(put(`/small${i % 5}`, 16));
  const last = await leader.txn(put('/last', 16));
  await Promise.all(members.map((m) => m.waitForRevision(last.revision, 10_000)));
  return { afterBig, afterSmall: leader.metrics.snapshotsTaken };
}

describe('Raft snapshots tied to the bytes applied since the last one', () => {
  it('a large state is not snapshotted again after snapshotEvery small entries', async () => {
    const leader = await cluster({});
    const { afterBig, afterSmall } = await bigStateThenSmallWrites(leader);
    expect(afterBig).toBe(1);
    // 91 entries of ~100 bytes are far from half of a 64 KiB snapshot
    expect(afterSmall).toBe(1);
    for (const m of members) expect(m.metrics.snapshotsTaken).toBe(1);
  });

  it('with snapshotLogRatio 0 the entry count alone decides, as before', async () => {
    const leader = await cluster({ snapshotLogRatio: 0 });
    const { afterBig, afterSmall } = await bigStateThenSmallWrites(leader);
    expect(afterBig).toBe(1);
    expect(afterSmall).toBeGreaterThanOrEqual(3);
  });

  it('a large write since the last snapshot is reason enough for the next one', async () => {
    const leader = await cluster({});
    await bigStateThenSmallWrites(leader);
    // more than half of the snapshot's bytes applied since: the next Ready snapshots
    const r = await leader.txn(put('/big-again', 65_536));
    await Promise.all(members.map((m) => m.waitForRevision(r.revision, 10_000)));
    // ...each in its turn (snapshotTurn: at most 2 x snapshotEvery entries later)
    for (let i = 0; !members.every((m) => m.metrics.snapshotsTaken >= 2); i++) await leader.txn(put(`/fill${i % 3}`, 16));
    expect(leader.metrics.snapshotsTaken).toBe(2);
  });

  it('members take turns: each snapshots only in its own windows of the log', async () => {
    const leader = await cluster({ snapshotLogRatio: 0 });
    const at = new Map<RaftStore, number[]>(members.map((m) => [m, []]));
    for (let i = 0; i < 120; i++) {
      await leader.txn(put(`/t${i % 4}`, 16));
      for (const m of members) {
        const s = m.status().snapshotIndex;
        const seen = at.get(m)!;
        if (s > 0 && seen[seen.length - 1] !== s) seen.push(s);
      }
    }
    const r = await leader.txn(put('/end', 16));
    await Promise.all(members.map((m) => m.waitForRevision(r.revision, 10_000)));
    // each member's snapshots fall in its own windows of snapshotEvery (10) entries, one in three
    const windows = members.map((m) => new Set(at.get(m)!.map((i) => Math.floor(i / 10) % 3)));
    for (const w of windows) expect(w.size).toBe(1);
    expect(new Set(windows.map((w) => [...w][0])).size).toBe(3);
  });
});
