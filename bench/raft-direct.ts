// Write throughput/latency of a 3-member RaftStore used directly (no API
// layer, no etcd needed): three members in this process on real disks, peers
// over gRPC on loopback, writes proposed on the leader — the same
// create-if-absent txns as bench/store-direct.ts, one at a time and from 64
// concurrent writers (group commit, leader replicates while it fsyncs).
//
//   npx tsx bench/raft-direct.ts [writes=2000] [valueSize=1024]
import { freePort } from '../test/helpers/ports.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RaftStore } from '../src/store/raft-store.js';
import { benchStore } from './store-direct.js';

const writes = Number(process.argv[2] ?? 2000);
const valueSize = Number(process.argv[3] ?? 1024);


const dir = await mkdtemp(join(tmpdir(), 'orch-bench-raft-'));
const names = ['a', 'b', 'c'];
const initialCluster = Object.fromEntries(await Promise.all(names.map(async (n) => [n, `127.0.0.1:${await freePort()}`] as const)));
const members = await Promise.all(
  names.map((name) => RaftStore.open({ name, initialCluster, dataDir: join(dir, name), tickMs: 50, compactIntervalMs: 0 })),
);
try {
  await Promise.all(members.map((m) => m.waitUntilReady(30_000)));
  const leader = members.find((m) => m.isLeader()) ?? members[0];
  const result = await benchStore(leader!, { writes, valueSize });
  const s = leader!.status().metrics;
  console.log(JSON.stringify({ ...result, leader: { storageSyncs: s.storageSyncs, entriesPersisted: s.entriesPersisted, readies: s.readies } }, null, 2));
} finally {
  await Promise.all(members.map((m) => m.close()));
  await rm(dir, { recursive: true, force: true });
}
