// Watch fan-out: N concurrent watchers of one collection, held by a separate
// load process on loopback (bench/watch-load.ts), and a steady write rate.
// Measures events delivered per second, delivery latency p50/p99 (write
// acknowledged → event received) and server memory per watcher; then the same
// load against Debian's etcd (its HTTP/JSON gateway: /v3/watch streams,
// /v3/kv/put writes, and its native gRPC API through the etcd3 client: all
// watches on one gRPC stream) for side-by-side ratios. Prints one JSON document.
//
//   npx tsx bench/watch-fanout.ts [--watchers 1000[,10000]] [--rate 20] [--duration 15] [--value-size 256] [--no-etcd] [--etcd native,gateway] [--tls-workers 2] [--orch h1,h2] [--h2-streams 1000]
//
// --orch h1,h2: h1 = one HTTP/1.1 TLS connection per watch; h2 = every watch a
// stream of one HTTP/2 connection (ALPN h2, as client-go multiplexes an
// informer set; the front sends the streams over its channel to the main
// process, docs/tls.md "HTTP/2"), writes on a second one.
// --tls-workers n: the orch server terminates TLS in n worker processes (as
// `orch server` does by default, docs/tls.md); 0 (default here) = in-process.
//
// etcd: bench/setup-etcd.sh installs it (apt-get, root). Without `etcd` on
// PATH the etcd half is skipped and says so. See docs/watch.md.

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { startServer } from '../src/server/server.js';
import type { LoadConfig } from './watch-load.js';
import { freePort } from '../test/helpers/ports.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function flag(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : def;
}
const watcherCounts = flag('watchers', '1000').split(',').map(Number);
const rate = Number(flag('rate', '20'));
const durationS = Number(flag('duration', '15'));
const valueSize = Number(flag('value-size', '256'));
const withEtcd = !process.argv.includes('--no-etcd');
// which etcd clients: native (gRPC, etcd3 client: every watch on one stream) and/or gateway (JSON, one HTTP connection per watch)
const etcdVias = flag('etcd', 'native,gateway').split(',');
const tlsWorkers = Number(flag('tls-workers', '0'));
const orchModes = flag('orch', 'h1,h2').split(',');
// h2: watch streams per connection (the server's --http2-max-streams-per-connection, 1000); more watchers open more connections
const h2Streams = Number(flag('h2-streams', '1000'));
const loadScript = new URL('./watch-load.ts', import.meta.url).pathname;

interface LoadResult {
  mode: string;
  watchers: number;
  watchersFailed: number;
  writes: number;
  writeErrors: number;
  writeRatePerSec: number;
  eventsExpected: number;
  eventsReceived: number;
  eventsPerSec: number;
  latencyMs: { p50: number; p99: number; max: number };
  latencyFromSendMs: { p50: number; p99: number };
  eventsBeforeAck: number;
}

/** runs the load process; `between` runs after the watchers are open and before the writes */
async function runLoad(cfg: LoadConfig, between: (ready: number) => Promise<void>): Promise<LoadResult> {
  const child = spawn(process.execPath, ['--import', 'tsx', loadScript, JSON.stringify(cfg)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface(child.stdout!);
  const exited = new Promise<number>((r) => child.on('exit', (code) => r(code ?? -1)));
  let result: LoadResult | undefined;
  for await (const line of lines) {
    const msg = JSON.parse(line) as { ready?: number; failed?: number; result?: LoadResult };
    if (msg.ready !== undefined) {
      if (msg.failed) process.stderr.write(`${cfg.mode}: ${msg.failed} watchers failed to open\n`);
      await between(msg.ready);
      child.stdin!.write('go\n');
    } else if (msg.result) result = msg.result;
  }
  const code = await exited;
  if (!result) throw new Error(`load process exited with ${code} without a result`);
  return result;
}

async function settle(): Promise<void> {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 200));
  }
}

function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

/** open descriptors of this process (the orch server runs here) */
const openFds = (): number => readdirSync('/proc/self/fd').length;
/** user+system CPU seconds of a process, from /proc (clock ticks of 100 Hz) */
function cpuSecondsOf(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

async function benchOrch(watchers: number, h2: boolean): Promise<Record<string, unknown>> {
  const dir = await mkdtemp(join(tmpdir(), 'orch-fanout-'));
  const server = await startServer({ dataDir: join(dir, 'data'), bindAddress: '127.0.0.1', securePort: 0, apiDomain: 'orch.io', tlsWorkers, log: () => {} });
  const workersRss = (): number => server.tlsWorkerPids().reduce((sum, pid) => sum + rssOf(pid), 0);
  try {
    await writeFile(join(dir, 'ca.pem'), server.caPem);
    await writeFile(join(dir, 'cert.pem'), server.adminCertPem);
    await writeFile(join(dir, 'key.pem'), server.adminKeyPem);
    const ns = await fetchNamespaceCreate(server, 'bench');
    // warm the type's watch cache so the baseline does not charge it to the watchers
    await settle();
    const before = process.memoryUsage();
    let after = before;
    const workersBefore = workersRss();
    let workersAfter = workersBefore;
    let held = 0;
    const fdsBefore = openFds();
    let fdsAfter = fdsBefore;
    let cpuAtGo = process.cpuUsage();
    let workersCpuAtGo = 0;
    const workersCpu = (): number => server.tlsWorkerPids().reduce((sum, pid) => sum + cpuSecondsOf(pid), 0);
    const result = await runLoad(
      {
        mode: h2 ? 'orch-h2' : 'orch',
        streamsPerConnection: h2Streams,
        host: '127.0.0.1',
        port: server.port,
        watchers,
        rate,
        durationMs: durationS * 1000,
        caFile: join(dir, 'ca.pem'),
        certFile: join(dir, 'cert.pem'),
        keyFile: join(dir, 'key.pem'),
        namespace: 'bench',
        startRevision: ns,
        valueSize,
      },
      async () => {
        await settle();
        after = process.memoryUsage();
        workersAfter = workersRss();
        held = server.watch.stats().watchers;
        fdsAfter = openFds();
        cpuAtGo = process.cpuUsage();
        workersCpuAtGo = workersCpu();
      },
    );
    const cpu = process.cpuUsage(cpuAtGo);
    const stats = server.watch.stats();
    return {
      ...result,
      serverWatchersHeld: held,
      // descriptors the server process holds per watch (TLS socket, unix-socket ends)
      serverFdsPerWatcher: +((fdsAfter - fdsBefore) / Math.max(1, held)).toFixed(2),
      // CPU of the server process (and TLS workers) from the first write to the last event: encryption included
      serverCpuMs: Math.round((cpu.user + cpu.system) / 1000),
      ...(tlsWorkers > 0 ? { tlsWorkersCpuMs: Math.round((workersCpu() - workersCpuAtGo) * 1000) } : {}),
      slowWatchersEnded: stats.slowWatchersEnded,
      serverMemory: {
        rssBeforeBytes: before.rss,
        rssWithWatchersBytes: after.rss,
        rssPerWatcherBytes: Math.round((after.rss - before.rss) / Math.max(1, held)),
        heapPerWatcherBytes: Math.round((after.heapUsed - before.heapUsed) / Math.max(1, held)),
        ...(tlsWorkers > 0
          ? {
              tlsWorkersRssBeforeBytes: workersBefore,
              tlsWorkersRssWithWatchersBytes: workersAfter,
              tlsWorkersRssPerWatcherBytes: Math.round((workersAfter - workersBefore) / Math.max(1, held)),
            }
          : {}),
      },
    };
  } finally {
    await server.shutdown();
    await rm(dir, { recursive: true, force: true });
  }
}

/** creates the namespace through the API; returns its resourceVersion (the watchers start there) */
async function fetchNamespaceCreate(server: Awaited<ReturnType<typeof startServer>>, name: string): Promise<number> {
  const { request } = await import('node:https');
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ metadata: { name } });
    const req = request(
      {
        host: '127.0.0.1',
        port: server.port,
        method: 'POST',
        path: '/api/v1/namespaces',
        ca: server.caPem,
        cert: server.adminCertPem,
        key: server.adminKeyPem,
        headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
      },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve(Number((JSON.parse(text) as { metadata: { resourceVersion: string } }).metadata.resourceVersion)));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function benchEtcd(watchers: number, mode: 'etcd' | 'etcd-grpc'): Promise<Record<string, unknown>> {
  const dir = await mkdtemp(join(tmpdir(), 'etcd-fanout-'));
  const client = await freePort();
  const peer = await freePort();
  const etcd: ChildProcess = spawn(
    'etcd',
    [
      '--name', 'bench',
      '--data-dir', join(dir, 'data'),
      '--listen-client-urls', `http://127.0.0.1:${client}`,
      '--advertise-client-urls', `http://127.0.0.1:${client}`,
      '--listen-peer-urls', `http://127.0.0.1:${peer}`,
      '--initial-advertise-peer-urls', `http://127.0.0.1:${peer}`,
      '--initial-cluster', `bench=http://127.0.0.1:${peer}`,
      '--log-level', 'error',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  etcd.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  try {
    await waitForEtcd(client, () => stderr);
    await new Promise((r) => setTimeout(r, 500));
    const before = rssOf(etcd.pid!);
    let after = before;
    let cpuAtGo = 0;
    const result = await runLoad(
      { mode, host: '127.0.0.1', port: client, watchers, rate, durationMs: durationS * 1000, namespace: 'bench', valueSize },
      async () => {
        await new Promise((r) => setTimeout(r, 1000));
        after = rssOf(etcd.pid!);
        cpuAtGo = cpuSecondsOf(etcd.pid!);
      },
    );
    const serverCpuMs = Math.round((cpuSecondsOf(etcd.pid!) - cpuAtGo) * 1000);
    return {
      ...result,
      serverCpuMs,
      serverMemory: { rssBeforeBytes: before, rssWithWatchersBytes: after, rssPerWatcherBytes: Math.round((after - before) / Math.max(1, result.watchers)) },
    };
  } finally {
    etcd.kill('SIGTERM');
    await new Promise((r) => etcd.once('exit', r));
    await rm(dir, { recursive: true, force: true });
  }
}

async function waitForEtcd(port: number, log: () => string): Promise<void> {
  const { request } = await import('node:http');
  for (let i = 0; i < 100; i++) {
    const ok = await new Promise<boolean>((resolve) => {
      const req = request({ host: '127.0.0.1', port, path: '/health' }, (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      });
      req.on('error', () => resolve(false));
      req.end();
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`etcd did not become healthy: ${log()}`);
}

function etcdAvailable(): Promise<boolean> {
  return new Promise((resolve) => {
    const p = spawn('etcd', ['--version'], { stdio: 'ignore' });
    p.on('error', () => resolve(false));
    p.on('exit', (code) => resolve(code === 0));
  });
}

const ratio = (a: number, b: number): number | null => (b > 0 ? +(a / b).toFixed(3) : null);

/** the open-files limit of this process (the orch server runs here) */
function fdLimit(): number {
  const m = /Max open files\s+(\d+)/.exec(readFileSync('/proc/self/limits', 'utf8'));
  return m ? Number(m[1]) : Infinity;
}

async function main(): Promise<void> {
  const limit = fdLimit();
  // in-process TLS: each orch watch holds 3 descriptors in the server process (the TLS socket and both ends of the
  // unix socket to the uWS gateway); with TLS workers the server holds 1 and a worker 2 (src/gateway/tls-workers.ts)
  const maxOrchWatchers =
    tlsWorkers > 0 ? Math.min(Math.floor(limit - 300), tlsWorkers * Math.floor((limit - 512) / 2)) : Math.floor((limit - 300) / 3);
  if (watcherCounts.some((n) => n > maxOrchWatchers)) {
    process.stderr.write(
      `note: open-files limit ${limit} lets the orch server hold about ${maxOrchWatchers} watches (${tlsWorkers > 0 ? '1 descriptor each, 2 in a TLS worker' : '3 descriptors each'}); runs are capped there (both systems); raise it (ulimit -n) or use --tls-workers for more\n`,
    );
  }
  const etcd = withEtcd && (await etcdAvailable());
  const runs: Record<string, unknown>[] = [];
  for (const requested of watcherCounts) {
    // beyond its open-files limit the server stops accepting (and spins on EMFILE): hold what it can, say so
    const n = Math.min(requested, maxOrchWatchers);
    type OrchRun = Record<string, unknown> & LoadResult & { serverCpuMs: number; serverMemory: { rssPerWatcherBytes: number; tlsWorkersRssPerWatcherBytes?: number } };
    const run: Record<string, unknown> = { requestedWatchers: requested, watchers: n };
    const orchRuns: [string, OrchRun][] = [];
    for (const m of orchModes) {
      const key = m === 'h2' ? 'orchH2' : 'orch';
      const r = (await benchOrch(n, m === 'h2')) as OrchRun;
      run[key] = r;
      orchRuns.push([key, r]);
    }
    const compare = (a: OrchRun, e: OrchRun | (LoadResult & { serverCpuMs: number; serverMemory: { rssPerWatcherBytes: number } })) => ({
      eventsPerSec: ratio(a.eventsPerSec, e.eventsPerSec),
      latencyP50: ratio(a.latencyMs.p50, e.latencyMs.p50),
      latencyP99: ratio(a.latencyMs.p99, e.latencyMs.p99),
      latencyFromSendP50: ratio(a.latencyFromSendMs.p50, e.latencyFromSendMs.p50),
      latencyFromSendP99: ratio(a.latencyFromSendMs.p99, e.latencyFromSendMs.p99),
      serverCpu: ratio(a.serverCpuMs, e.serverCpuMs),
    });
    const h1 = run['orch'] as OrchRun | undefined;
    const h2run = run['orchH2'] as OrchRun | undefined;
    if (h1 && h2run) run['orchH2OverOrch'] = compare(h2run, h1);
    if (etcd) {
      for (const via of etcdVias) {
        const e = (await benchEtcd(n, via === 'native' ? 'etcd-grpc' : 'etcd')) as Record<string, unknown> & LoadResult & { serverCpuMs: number; serverMemory: { rssPerWatcherBytes: number } };
        const key = via === 'native' ? 'etcdNative' : 'etcdGateway';
        run[key] = e;
        if (h2run) run[`orchH2Over${key[0]!.toUpperCase()}${key.slice(1)}`] = compare(h2run, e);
        const orch = h1;
        if (!orch) continue;
        run[`orchOver${key[0]!.toUpperCase()}${key.slice(1)}`] = {
          eventsPerSec: ratio(orch.eventsPerSec, e.eventsPerSec),
          latencyP50: ratio(orch.latencyMs.p50, e.latencyMs.p50),
          latencyP99: ratio(orch.latencyMs.p99, e.latencyMs.p99),
          latencyFromSendP50: ratio(orch.latencyFromSendMs.p50, e.latencyFromSendMs.p50),
          latencyFromSendP99: ratio(orch.latencyFromSendMs.p99, e.latencyFromSendMs.p99),
          // with TLS workers the TLS connection state lives there: count both processes
          memoryPerWatcher: ratio(orch.serverMemory.rssPerWatcherBytes + (orch.serverMemory.tlsWorkersRssPerWatcherBytes ?? 0), e.serverMemory.rssPerWatcherBytes),
        };
      }
    }
    runs.push(run);
  }
  const out = {
    bench: 'watch-fanout',
    config: { watcherCounts, orchModes, writeRatePerSec: rate, durationS, valueSize, openFilesLimit: limit, tlsWorkers, maxOrchWatchersAtThisLimit: maxOrchWatchers, etcd: etcd ? 'compared' : withEtcd ? 'etcd not installed (bench/setup-etcd.sh)' : 'skipped (--no-etcd)' },
    notes: [
      'orch: HTTPS with client certificates (TLS front + uWS gateway), JSON watch events, one HTTP/1.1 connection per watch; orchH2: the same watches as streams of one HTTP/2 connection (writes on a second); etcdNative: plain gRPC (etcd3 client), every watch on one stream of one HTTP/2 connection, writes on a second client; etcdGateway: plain HTTP JSON gateway, one connection per watch',
      'latencyMs: write acknowledged (HTTP response) to event received by a watcher; an event received before the ack counts 0 (eventsBeforeAck says how many); latencyFromSendMs: from the write request being sent',
      'events per second are bounded by rate x watchers: a run that keeps up delivers exactly that; the latencies show the headroom',
      'orch memory: in-process RSS/heap delta after GC with the watchers open; etcd memory: VmRSS delta of the etcd process',
    ],
    runs,
  };
  process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
  process.exit(0);
}

void main();
