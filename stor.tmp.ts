import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
const roots = process.argv.slice(2);
const mods = await Promise.all(roots.map((r) => import(`${r}/src/raft/storage.ts`)));
const data = new Uint8Array(1200).fill(7);
for (let round = 0; round < 3; round++) for (const [i, m] of mods.entries()) {
  const dir = await mkdtemp(join(tmpdir(), 'orch-stor-'));
  const s = await m.RaftStorage.open(join(dir, 'raft'));
  await s.load();
  let idx = 0;
  const c0 = process.cpuUsage(); const t0 = performance.now(); const e0 = performance.eventLoopUtilization();
  const B = 400;
  for (let b = 0; b < B; b++) {
    const entries = Array.from({ length: 12 }, () => ({ term: 1, index: ++idx, type: 'normal', data }));
    await s.save({ entries, hardState: { term: 1, vote: 'a', commit: idx - 12 } });
  }
  const c = process.cpuUsage(c0); const e = performance.eventLoopUtilization(e0);
  console.log(roots[i]!.split('/').pop(), 'user us/entry', (c.user / idx).toFixed(1), 'main-thread active us/entry', (e.active * 1000 / idx).toFixed(1), 'wall ms/batch', ((performance.now() - t0) / B).toFixed(2));
  await s.close(); await rm(dir, { recursive: true, force: true });
}
