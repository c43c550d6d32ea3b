// Write throughput/latency of LocalStore used directly (no API layer):
// create-if-absent txns, first one at a time, then from 64 concurrent writers
// (where group commit shares one fsync among the queued writes).
//
//   npx tsx bench/store-direct.ts [writes=2000] [valueSize=1024] [dir]
import { mkdtemp, rm } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { LocalStore } from '../src/store/local-store.js';
import type { RevisionedStore } from '../src/store/types.js';

export interface LatencyStats {
  opsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  /** this process's CPU (all threads: the log's I/O threads and V8's GC helpers too) per write, µs */
  cpuUsPerOp?: number;
}

export interface StoreDirectResult {
  sequential: LatencyStats;
  concurrent64: LatencyStats;
}

export async function benchStoreDirect(opts: { dir: string; writes: number; valueSize: number }): Promise<StoreDirectResult> {
  const store = await LocalStore.open(opts.dir, { compactIntervalMs: 0 });
  try {
    return await benchStore(store, opts);
  } finally {
    await store.close();
  }
}

/** the same measurement on any store (bench/raft-direct.ts: a Raft leader) */
export async function benchStore(store: RevisionedStore, opts: { writes: number; valueSize: number }): Promise<StoreDirectResult> {
  const value = new Uint8Array(randomBytes(opts.valueSize));
  const createIfAbsent = async (key: string, latencies: number[]): Promise<void> => {
    const t0 = performance.now();
    const r = await store.txn({
      compare: [{ key, target: 'create', op: '=', value: 0 }],
      success: [{ type: 'put', key, value }],
      failure: [],
    });
    latencies.push(performance.now() - t0);
    if (!r.succeeded) throw new Error(`${key} already exists`);
  };
  {
    const seqLat: number[] = [];
    let t0 = performance.now();
    let cpu0 = process.cpuUsage();
    for (let i = 0; i < opts.writes; i++) await createIfAbsent(`/bench/seq/${i}`, seqLat);
    const sequential = summarize(seqLat, performance.now() - t0, cpu0);

    const concLat: number[] = [];
    const writers = 64;
    const perWriter = Math.ceil(opts.writes / writers);
    t0 = performance.now();
    cpu0 = process.cpuUsage();
    await Promise.all(
      Array.from({ length: writers }, async (_, w) => {
        for (let i = 0; i < perWriter; i++) await createIfAbsent(`/bench/conc/${w}/${i}`, concLat);
      }),
    );
    const concurrent64 = summarize(concLat, performance.now() - t0, cpu0);
    return { sequential, concurrent64 };
  }
}

function summarize(latencies: number[], elapsedMs: number, cpu0: NodeJS.CpuUsage): LatencyStats {
  const cpu = process.cpuUsage(cpu0);
  const sorted = [...latencies].sort((a, b) => a - b);
  const pct = (p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
  const round = (x: number): number => Math.round(x * 1000) / 1000;
  return {
    opsPerSec: Math.round((latencies.length / elapsedMs) * 1000),
    p50Ms: round(pct(50)),
    p99Ms: round(pct(99)),
    cpuUsPerOp: Math.round((cpu.user + cpu.system) / latencies.length),
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const writes = Number(process.argv[2] ?? 2000);
  const valueSize = Number(process.argv[3] ?? 1024);
  const givenDir = process.argv[4];
  const dir = givenDir ?? (await mkdtemp(join(tmpdir(), 'orch-bench-store-')));
  try {
    const result = await benchStoreDirect({ dir, writes, valueSize });
    console.log(JSON.stringify(result, null, 2));
  } finally {
    if (!givenDir) await rm(dir, { recursive: true, force: true });
  }
}
