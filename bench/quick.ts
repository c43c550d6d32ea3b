// The regression guard of the hot paths (issue 14 item 5): runs the write,
// watch and list benches at a small size, each side by side with etcd (native
// gRPC client), and prints their ratios as one JSON document in about a
// minute. Compare ratios, not absolute figures: both sides run on the same
// (possibly shared, noisy) machine in the same run.
//
//   npm run bench:quick            (= npx tsx bench/quick.ts)
//   npx tsx bench/quick.ts --repeat 3   (the median ratio of 3 runs of each)
//
// write: single node, 600 1 KiB ConfigMap creates at 64 in flight through the
//        HTTPS API (authn, Node,RBAC authz, admission), orch's store without
//        the API, etcd create-if-absent txns over gRPC (bench/raft-write.ts);
// watch: 200 watchers, 20 writes/s for 5 s (bench/watch-fanout.ts);
// list:  5,000 ConfigMaps listed in pages of 500 (bench/list-paging.ts).
// Without etcd installed (bench/setup-etcd.sh) only orch's own figures print.

import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('..', import.meta.url));

function flag(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : def;
}
const repeat = Number(flag('repeat', '1'));

/** runs one bench; resolves with its JSON output */
function run(args: string[], env: Record<string, string> = {}): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', ...args], { cwd: REPO, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
    child.on('exit', (code) => {
      try {
        resolve(JSON.parse(out) as Record<string, unknown>);
      } catch {
        reject(new Error(`${args[0]} exited ${code}: ${err || out.slice(0, 500)}`));
      }
    });
  });
}

type Json = Record<string, any>; // any: bench output documents of every shape

const median = (xs: number[]): number => {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)]! : NaN;
};

async function once(): Promise<Record<string, number>> {
  const w = (await run(['bench/raft-write.ts', '600', '1024'], { BENCH_MEMBERS: '1', BENCH_INFLIGHT: '64', BENCH_SIDES: 'orch,store,native' })) as Json;
  const wa = (await run(['bench/watch-fanout.ts', '--watchers', '200', '--rate', '20', '--duration', '5', '--etcd', 'native'])) as Json;
  const l = (await run(['bench/list-paging.ts', '--objects', '5000', '--limit', '500', '--no-unpaged', '--etcd'])) as Json;
  const watch = wa.runs[0] as Json;
  return {
    writeApiOverEtcd: w.ratio.apiOverNative.inFlight64?.opsPerSec,
    writeApiP99OverEtcd: w.ratio.apiOverNative.inFlight64?.p99Ms,
    writeApiCpuOverEtcd: w.ratio.apiOverNative.inFlight64?.cpuUsPerOp,
    writeStoreOverEtcd: w.ratio.storeOverNative.inFlight64?.opsPerSec,
    writeApiOverStore: w.ratio.apiOverStore.inFlight64?.opsPerSec,
    writeApiOpsPerSec: w.orch.inFlight64?.opsPerSec,
    writeApiCpuUsPerOp: w.orch.inFlight64?.cpuUsPerOp,
    watchP99FromSendOverEtcd: watch.orchOverEtcdNative?.latencyFromSendP99,
    watchP99FromSendMs: watch.orch.latencyFromSendMs.p99,
    watchEventsLost: watch.orch.eventsExpected - watch.orch.eventsReceived,
    watchEventsBeforeAck: watch.orch.eventsBeforeAck,
    listPagedOverEtcd: l.ratio?.pagedTotalOverEtcd,
    listPagedItemsPerSec: l.paged.itemsPerSec,
  };
}

async function main(): Promise<void> {
  const t0 = performance.now();
  const runs: Record<string, number>[] = [];
  for (let i = 0; i < repeat; i++) runs.push(await once());
  const keys = Object.keys(runs[0]!);
  const result = Object.fromEntries(keys.map((k) => [k, median(runs.map((r) => r[k]!))]));
  process.stdout.write(
    `${JSON.stringify(
      {
        bench: 'quick',
        note: 'ratios orch/etcd (native gRPC) in the same run: opsPerSec >1 is faster, latency and CPU <1 is better; medians of --repeat runs',
        goals: { writeApiOverEtcd: '>= 1.5', writeApiP99OverEtcd: '<= 1', watchP99FromSendOverEtcd: '<= 1', watchEventsLost: '0' },
        result,
        ...(repeat > 1 ? { runs } : {}),
        seconds: Math.round((performance.now() - t0) / 1000),
      },
      null,
      2,
    )}\n`,
  );
}

main().catch((e: unknown) => {
  process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});
