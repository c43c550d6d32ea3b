// Three RaftStore members in one process (MemoryNetwork, MemoryLogStorage):
// opened with the options a test needs, closed after it.
import { MemoryLogStorage, MemoryNetwork } from '../../src/raft/memory.js';
import { RaftStore, type RaftStoreMemoryOptions } from '../../src/store/raft-store.js';

/** polls `cond` every 5 ms until it holds (the test's own timeout bounds it) */
export async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 5));
}

export class MemoryRaftCluster {
  members: RaftStore[] = [];

  /** opens members a, b and c and resolves with the leader once one is known and a read succeeded */
  async open(extra: Partial<RaftStoreMemoryOptions>): Promise<RaftStore> {
    const names = ['a', 'b', 'c'];
    const network = new MemoryNetwork();
    this.members = await Promise.all(names.map((name) => RaftStore.openInMemory({ name, members: names, network, storage: new MemoryLogStorage(), tickMs: 20, compactIntervalMs: 0, ...extra })));
    await this.members[0]!.waitUntilReady(30_000);
    await until(() => this.members.some((m) => m.isLeader()));
    return this.members.find((m) => m.isLeader())!;
  }

  async close(): Promise<void> {
    await Promise.all(this.members.map((m) => m.close()));
    this.members = [];
  }
}
