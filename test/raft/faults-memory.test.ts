// The fault decorator (src/raft/faults.ts) over the in-memory transport: a
// whole 3-member cluster in one process, the leader isolated by a rule on the
// leader alone, the others elect a new leader and keep writing; after healing
// the old leader catches up.
import { describe, expect, it } from 'vitest';
import { MemoryLogStorage, MemoryNetwork } from '../../src/raft/memory.js';
import { RaftStore } from '../../src/store/raft-store.js';

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);

async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 10));
}

describe('fault injection over the in-memory transport', () => {
  it('isolates a leader with a rule on the leader only; the majority goes on; healing catches it up', async () => {
    const names = ['a', 'b', 'c'];
    const network = new MemoryNetwork();
    const members = await Promise.all(
      names.map((name) =>
        RaftStore.openInMemory({ name, members: names, network, storage: new MemoryLogStorage(), tickMs: 5, compactIntervalMs: 0, proposalTimeoutMs: 2000 }),
      ),
    );
    try {
      await members[0]!.waitUntilReady(30_000);
      await until(() => members.some((m) => m.isLeader()));
      const old = members.find((m) => m.isLeader())!;
      old.faults.partition('*');
      await until(() => members.some((m) => m !== old && m.isLeader()));
      const leader = members.find((m) => m !== old && m.isLeader())!;
      const put = await leader.txn({ compare: [], success: [{ type: 'put', key: 'k', value: enc('v') }], failure: [] });
      expect(put.succeeded).toBe(true);
      // the isolated member has not seen the write
      expect(old.range({ key: 'k' }).kvs).toEqual([]);
      old.faults.heal();
      await until(() => old.revision >= put.revision);
      expect(old.range({ key: 'k' }).kvs.map((kv) => new TextDecoder().decode(kv.value))).toEqual(['v']);
      expect(old.isLeader()).toBe(false);
    } finally {
      await Promise.all(members.map((m) => m.close()));
    }
  });
});
