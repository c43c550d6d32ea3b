// Event-loop stalls of a Raft/LocalStore snapshot at the 5,000-node shape
// (issue 13; docs/raft.md "The replicated store"): an MvccState filled directly
// with 5,000 Nodes (4 KB) and 5,000 Leases (700 B) and 5 minutes of their
// heartbeats (500 Lease renewals/s, 83.3 status writes/s: 175,000 versions),
// then each stage of a snapshot, each with a 1 ms timer probing the event loop
// (the longest gap between its firings is the longest synchronous stretch):
//   encode   MvccState.snapshot() (sync) or the sliced encoder, with writes applied
//            meanwhile at the bench's rate (sliced only)
//   raftSave RaftStorage.saveSnapshot of the image (level, a temp dir)
//   localSave LevelCommandLog.saveSnapshot of the image
//   send     the leader's installSnapshot message through the transport's encoding
//   restore  MvccState.restore (a follower's install, a restart)
// Prints one JSON document: per stage wall ms, longest stall ms, CPU ms (this process, all threads).
//
//   npx tsx bench/snapshot-stall.ts [--nodes 5000] [--seconds 300] [--stages encode,raftSave,localSave,send,restore]
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { MvccState } from '../src/store/mvcc-state.js';
import { LevelCommandLog } from '../src/store/command-log.js';
import { RaftStorage } from '../src/raft/storage.js';
import { encodeMsgpack } from '../src/raft/codec.js';
import type { Command } from '../src/store/types.js';

const { values: args } = parseArgs({
  options: {
    nodes: { type: 'string', default: '5000' },
    seconds: { type: 'string', default: '300' },
    stages: { type: 'string', default: 'encode,raftSave,localSave,send,restore' },
  },
});
const N = Number(args.nodes);
const SECONDS = Number(args.seconds);
const stages = new Set(args.stages.split(','));

function value(size: number, seed: number): Uint8Array {
  const v = new Uint8Array(size);
  v.fill(seed & 0xff);
  v[0] = 0x7b;
  return v;
}

let index = 0;
function put(state: MvccState, key: string, v: Uint8Array, time: number): void {
  const cmd: Command = { type: 'txn', time, txn: { compare: [], success: [{ type: 'put', key, value: v }], failure: [] } };
  state.apply(++index, cmd);
}

const nodeKey = (i: number): string => `/registry/minions/node-${i}`;
const leaseKey = (i: number): string => `/registry/leases/orch-node-lease/node-${i}`;
const t0 = 1_800_000_000_000;

/** one heartbeat write at simulated time `t` (a Lease renewal 6 times in 7, else a Node status) */
function heartbeat(state: MvccState, n: number, t: number): void {
  const i = n % N;
  if (n % 7 === 6) put(state, nodeKey(i), value(4096, n), t);
  else put(state, leaseKey(i), value(700, n), t);
}

function build(): { state: MvccState; writes: number } {
  const state = new MvccState();
  for (let i = 0; i < N; i++) {
    put(state, nodeKey(i), value(4096, i), t0);
    put(state, leaseKey(i), value(700, i), t0);
  }
  const rate = (N / 10) * (7 / 6); // 500 renewals/s + 83.3 status writes/s at 5,000
  const writes = Math.round(rate * SECONDS);
  for (let n = 0; n < writes; n++) heartbeat(state, n, t0 + (n / rate) * 1000);
  return { state, writes };
}

interface StageResult {
  wallMs: number;
  longestStallMs: number;
  cpuMs: number;
  bytes?: number;
  writesDuring?: number;
}

/** runs `fn` with a 1 ms timer probing the event loop */
async function measure(fn: () => Promise<number | undefined> | number | undefined): Promise<StageResult> {
  let last = performance.now();
  let longest = 0;
  const probe = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 1);
  await new Promise((r) => setTimeout(r, 20));
  longest = 0;
  last = performance.now();
  const cpu0 = process.cpuUsage();
  const w0 = performance.now();
  const bytes = await fn();
  const wallMs = performance.now() - w0;
  const cpu = process.cpuUsage(cpu0);
  await new Promise((r) => setTimeout(r, 5));
  clearInterval(probe);
  const r: StageResult = { wallMs: round(wallMs), longestStallMs: round(longest), cpuMs: round((cpu.user + cpu.system) / 1000) };
  if (bytes !== undefined) r.bytes = bytes;
  return r;
}

const round = (x: number): number => Math.round(x * 10) / 10;

/** slice CPU p50/p90/p99 (this process, all threads: a slice a GC step lands in counts its work) */
function sliceCpuPercentiles(xs: number[]): Record<string, number> {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number): number => round(s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0);
  return { sliceCpuP50Ms: at(0.5), sliceCpuP90Ms: at(0.9), sliceCpuP99Ms: at(0.99) };
}

async function main(): Promise<void> {
  const b0 = performance.now();
  const { state, writes } = build();
  const out: Record<string, unknown> = {
    nodes: N,
    historySeconds: SECONDS,
    versions: writes + 2 * N,
    buildMs: round(performance.now() - b0),
    loadavg: loadavg().map((x) => round(x)),
  };
  global.gc?.();
  let image: Uint8Array | undefined;
  if (stages.has('encode')) {
    out.encodeSync = await measure(() => {
      image = state.snapshot();
      return image.byteLength;
    });
    global.gc?.();
    // the sliced encoder, where it exists (this branch), with writes going on meanwhile
    const enc = await import('../src/store/snapshot-encoder.js').catch(() => undefined);
    if (enc && 'encodeSnapshotCut' in enc) {
      let during = 0;
      let n = writes;
      const rate = (N / 10) * (7 / 6);
      const writer = setInterval(() => {
        for (let k = 0; k < Math.ceil(rate / 100); k++, during++) heartbeat(state, n++, t0 + (n / rate) * 1000);
      }, 10);
      const cutTimer = await measure(() => {
        const cut = state.snapshotCut();
        return cut.keys.length;
      });
      let sliced: Uint8Array | undefined;
      // each slice ends where the encoder asks for the next turn: its wall and CPU time
      // (CPU: this process, so GC helper threads too; wall: descheduling too, on a loaded host)
      const stats = { slices: 0, longestSliceMs: 0, longestSliceCpuMs: 0 };
      const sliceCpus: number[] = [];
      let sliceWall = 0;
      let sliceCpu = process.cpuUsage();
      const sliceEnded = (): void => {
        const cpu = process.cpuUsage(sliceCpu);
        stats.slices += 1;
        stats.longestSliceMs = Math.max(stats.longestSliceMs, performance.now() - sliceWall);
        stats.longestSliceCpuMs = Math.max(stats.longestSliceCpuMs, (cpu.user + cpu.system) / 1000);
        sliceCpus.push((cpu.user + cpu.system) / 1000);
      };
      const sliceStarts = (): void => {
        sliceWall = performance.now();
        sliceCpu = process.cpuUsage();
      };
      const r = await measure(async () => {
        sliceStarts();
        const cut = state.snapshotCut();
        sliced = await enc.encodeSnapshotCut(cut, {
          nextTurn: async () => {
            sliceEnded();
            await new Promise((resolve) => setImmediate(resolve));
            sliceStarts();
          },
        });
        sliceEnded();
        return sliced?.byteLength;
      });
      clearInterval(writer);
      out.cut = cutTimer;
      out.encodeSliced = { ...r, writesDuring: during, slices: stats.slices, longestSliceMs: round(stats.longestSliceMs), longestSliceCpuMs: round(stats.longestSliceCpuMs), ...sliceCpuPercentiles(sliceCpus) };
    }
  }
  image ??= state.snapshot();
  const dir = await mkdtemp(join(tmpdir(), 'snapshot-stall-'));
  try {
    if (stages.has('raftSave')) {
      const storage = await RaftStorage.open(join(dir, 'raft'));
      await storage.load();
      await storage.save({ hardState: { term: 1, vote: 'a', commit: index }, entries: [{ term: 1, index: 1, type: 'normal', data: new Uint8Array(10) }] });
      const snap = { metadata: { index: 1, term: 1, confState: { voters: ['a'] } }, data: image };
      out.raftSave = await measure(async () => {
        await storage.saveSnapshot(snap);
        return undefined;
      });
      await storage.close();
    }
    if (stages.has('localSave')) {
      const log = await LevelCommandLog.open(join(dir, 'local'));
      const img = image;
      out.localSave = await measure(async () => {
        await log.saveSnapshot(img, index);
        return undefined;
      });
      await log.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  if (stages.has('send')) {
    const img = image;
    const msg = { type: 'installSnapshot', from: 'a', to: 'b', term: 1, snapshot: { metadata: { index, term: 1, confState: { voters: ['a', 'b', 'c'] } }, data: img } };
    out.send = await measure(() => encodeMsgpack(msg).byteLength);
  }
  if (stages.has('restore')) {
    const img = image;
    out.restore = await measure(() => MvccState.restore(img).revision);
  }
  out.loadavgEnd = loadavg().map((x) => round(x));
  console.log(JSON.stringify(out, null, 2));
}

await main();
