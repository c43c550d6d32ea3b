// A proposal in flight when its member sees the leader change is not failed
// at once (docs/raft.md "The replicated store"): its entry may still commit
// (a follower that lost touch, became a pre-candidate and came back to the
// same leader; a new leader that kept the old one's entries), and is then
// acknowledged by its id. Failing it made a client see 504 for a write that
// was applied, and a node agent's next Lease renewal a 409 (docs/scale.md).
// Three in-memory members (MemoryNetwork, MemoryLogStorage).
import { afterEach, describe, expect, it } from 'vitest';
import { RaftUnavailableError } from '../../src/store/raft-store.js';
import { MemoryRaftCluster, until } from '../helpers/memory-raft.js';

const c = new MemoryRaftCluster();
afterEach(() => c.close());

const put = (key: string, v: string) => ({ compare: [], success: [{ type: 'put' as const, key, value: new TextEncoder().encode(v) }], failure: [] });

describe('a proposal across a leader change', () => {
  it('is acknowledged when its entry commits after its member lost and found the leader', async () => {
    // election timeout 10-20 ticks of 20 ms; the proposal may wait 10 s
    const leader = await c.open({ proposalTimeoutMs: 10_000 });
    const members = c.members;
    const follower = members.find((m) => m !== leader)!;
    await follower.txn(put('/warm', '1'));
    const changesBefore = follower.metrics.leaderChanges;
    // every message to and from the follower takes 700 ms, longer than its election timeout
    // (200-400 ms): its forwarded proposal reaches the leader and commits with the third member,
    // but the follower hears nothing from the leader for a while and drops it (pre-candidate)
    follower.faults.set({ delayMs: { '*': 700 } });
    const outcome = follower.txn(put('/k', 'v')).then(
      (r) => `applied ${r.succeeded}`,
      (e: unknown) => (e instanceof RaftUnavailableError ? `unavailable ${e.code}: ${e.message}` : `error ${String(e)}`),
    );
    await until(() => follower.metrics.leaderChanges > changesBefore);
    follower.faults.clear();
    expect(await outcome).toBe('applied true');
    // the write is there once, on every member
    const r = await leader.txn(put('/after', 'x'));
    await Promise.all(members.map((m) => m.waitForRevision(r.revision, 10_000)));
    for (const m of members) expect(new TextDecoder().decode(m.range({ key: '/k' }).kvs[0]!.value)).toBe('v');
    expect(leader.range({ key: '/k' }).kvs[0]!.version).toBe(1);
  });
});
