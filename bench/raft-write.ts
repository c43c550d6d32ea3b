// Write throughput and latency, orch side by side with etcd on loopback, same
// number of writes, same value size, at 1 and 64 writes in flight, with 1 or 3
// members (BENCH_MEMBERS=1|3, default 3):
//   orch api:    real `orch server` processes, writes through the HTTPS API of the leader;
//   orch store:  orch's store without the API in this process (1 member: LocalStore;
//                3 members: three RaftStore members, peers gRPC over loopback);
//   etcd native: etcd's gRPC API through the `etcd3` npm client (as kube-apiserver talks to etcd);
//   etcd gateway: etcd's v3 JSON gateway over HTTPS (the first measurement's client).
//
//   sh bench/setup-etcd.sh            # once, as root: installs etcd-server if missing
//   npx tsx bench/raft-write.ts [writes=2000] [valueSize=1024]
//
// Prints one JSON document; ratio = orch / etcd native (throughput: >1 is
// faster; latency: <1 is faster), and per member what it did per write (fsyncs,
// entries per fsync, Raft messages, gRPC frames, propose->apply time).
//
// What one write is on each side (docs/raft.md "Performance", docs/performance.md):
//   orch api: HTTPS POST of a ConfigMap (JSON) to the leader's API, client
//         certificate authentication, Node,RBAC authorization, admission/defaulting,
//         the object encoded into a create-if-absent store transaction, one Raft
//         entry; peers talk gRPC over mutual TLS; reply: the created object (JSON).
//   orch store: the same create-if-absent txn of a value of that size.
//   etcd: a create-if-absent txn (compare create_revision = 0, put) of the same
//         value size on the leader, client and peer links on mutual TLS with
//         orch's CA; reply: the txn header. BENCH_ETCD_PLAIN=1: plain HTTP everywhere.
// Both fsync their log on every member before acknowledging.

import { freePort } from '../test/helpers/ports.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import type { request as httpRequest } from 'node:http';
import { Agent, request } from 'node:https';
import http2 from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LocalStore } from '../src/store/local-store.js';
import { RaftStore } from '../src/store/raft-store.js';
import type { RevisionedStore } from '../src/store/types.js';
import { processCpuMs, selfCpuMs, threadCpuMs, treeCpuMs } from './cpu.js';
import { etcdAvailable, gatewayCreate, nativeCreate, startEtcd } from './etcd.js';
import { type DriveStats, drive, sleep } from './drive.js';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const writes = Number(process.argv[2] ?? 2000);
const valueSize = Number(process.argv[3] ?? 1024);
// profiling/iteration knobs: extra node flags for the orch members (e.g.
// "--cpu-prof --cpu-prof-dir=/tmp/prof") and which sides to run ("orch", "etcd" or both)
const memberNodeArgs = (process.env.ORCH_BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
// extra `orch server` flags for the members (e.g. "--tls-workers 0": the TLS front in the main process)
const serverArgs = (process.env.BENCH_SERVER_ARGS ?? '').split(' ').filter(Boolean);
// which sides to run: orch (API), store (orch without the API), native, gateway (etcd)
const sides = (process.env.BENCH_SIDES ?? 'orch,store,native,gateway').split(',');
const members = Number(process.env.BENCH_MEMBERS ?? 3);
// BENCH_MEMBER_LOGS=1 shows the orch members' output
// BENCH_INFLIGHT=1,64: the concurrency levels to run
const inFlights = (process.env.BENCH_INFLIGHT ?? '1,64').split(',').map(Number);
// BENCH_API_PROTOCOL=h2: the orch api side's creates as streams of one HTTP/2 connection
// (as client-go and kubectl talk to an API server); default h1: 64 keep-alive HTTP/1.1 connections
const apiProtocol = process.env.BENCH_API_PROTOCOL === 'h2' ? 'h2' : 'h1';
// BENCH_ORCH_BUILD=dist: the members run the compiled server (`npm run build` first), as `npm start`
// runs it; default: the TypeScript sources through tsx (whose keepNames wrapper costs a call per closure)
// BENCH_WARMUP=n: creates before each measured phase (default 200). V8 needs thousands to optimise
// the server's hot paths: a warm server spends about half the CPU per create of one warmed by 200
// (docs/performance.md "Warm and cold"); etcd (Go) has no warm-up
const warmupOf = (n: number): number => (process.env.BENCH_WARMUP ? Number(process.env.BENCH_WARMUP) : Math.min(200, n));
const orchEntry = process.env.BENCH_ORCH_BUILD === 'dist' ? ['dist/src/cli/main.js'] : ['--import', 'tsx', 'src/cli/main.ts'];

interface Stats extends DriveStats {
  /** orch api: of which the members' main processes (the rest is in the TLS worker processes) */
  mainCpuUsPerOp?: number;
  /** CPU of the bench process (the client) per write: both clients share the 2 cores with their server */
  clientCpuUsPerOp?: number;
}

/** one HTTP/2 connection, a POST per stream (client-go's pattern) */
function h2Poster(port: number, tls: { ca: string; cert: string; key: string }): { post(path: string, body: string, expect: number): Promise<string>; close(): void } {
  const session = http2.connect(`https://127.0.0.1:${port}`, { ...tls, servername: 'localhost' });
  session.on('error', () => undefined);
  return {
    post: (path, body, expect) =>
      new Promise((resolve, reject) => {
        const st = session.request({ ':method': 'POST', ':path': path, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
        let status = 0;
        const chunks: Buffer[] = [];
        st.on('response', (h) => (status = Number(h[':status'])));
        st.on('data', (c: Buffer) => chunks.push(c));
        st.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          if (status === expect) resolve(text);
          else reject(new Error(`status ${status}: ${text.slice(0, 200)}`));
        });
        st.on('error', reject);
        st.end(body);
      }),
    close: () => session.close(),
  };
}


function httpCall(
  mod: typeof request | typeof httpRequest,
  opts: Record<string, unknown>,
  body: string,
  expect: number,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = mod({ ...opts, headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        if (res.statusCode === expect) resolve(text);
        else reject(new Error(`status ${res.statusCode}: ${text.slice(0, 200)}`));
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

interface Raftz {
  role: string;
  metrics: Record<string, number>;
  transport?: Record<string, number>;
}

/** what one member did per write during a phase (from /raftz counter deltas) */
function perWrite(before: Raftz, after: Raftz, n: number): Record<string, number> {
  const d = (k: string) => (after.metrics[k] ?? 0) - (before.metrics[k] ?? 0);
  const t = (k: string) => (after.transport?.[k] ?? 0) - (before.transport?.[k] ?? 0);
  const r = (x: number) => +x.toFixed(3);
  const syncs = d('storageSyncs');
  return {
    readies: r(d('readies') / n),
    fsyncs: r(syncs / n),
    entriesPerFsync: r(syncs ? d('entriesPersisted') / syncs : 0),
    fsyncMs: r(syncs ? d('storageSyncMs') / syncs : 0),
    messagesSent: r(d('messagesSent') / n),
    // committed entries applied while the next batch was being written (RawNode.takeCommittedNow)
    appliedEarly: r(d('entriesAppliedEarly') / n),
    // of those, applied by the leader before its own fsync of them ended (both followers had them durable)
    appliedBeforeOwnWrite: r(d('entriesAppliedBeforeOwnWrite') / n),
    framesSent: r(t('frames') / n),
    messagesReceived: r(t('received') / n),
    ...(d('proposalsCommitted') > 0 ? { proposeToApplyMs: r(d('proposeToApplyMs') / d('proposalsCommitted')) } : {}),
  };
}

/** orch's shared PKI (CA, serving and admin certificates), used by both clusters */
function makePki(pki: string): Promise<void> {
  return new Promise<void>((res, rej) =>
    spawn(process.execPath, ['--import', 'tsx', 'deploy/init-pki.ts', pki], { cwd: REPO, stdio: 'ignore' }).on('exit', (c) => (c === 0 ? res() : rej(new Error('init-pki failed')))),
  );
}

/** BENCH_IDLE_MS: each orch member's CPU while idle, ms per second */
let idle: Record<string, { main: number; threads: number; children: number }> | undefined;

async function benchOrch(root: string, pki: string): Promise<{ stats: Record<string, Stats>; perWrite: Record<string, Record<string, Record<string, number>>> }> {
  const names = Array.from({ length: members }, (_, i) => `m${i + 1}`);
  const ports = await Promise.all(names.map(async (name) => ({ name, api: await freePort(), peer: await freePort() })));
  const ic = ports.map((p) => `${p.name}=127.0.0.1:${p.peer}`).join(',');
  const procs: ChildProcess[] = [];
  try {
    for (const { name: n, api, peer } of ports) {
      await cp(pki, join(root, n, 'pki'), { recursive: true });
      // one member: the single-node server (LocalStore, no Raft), as `orch server` runs by default
      const cluster = members > 1 ? ['--name', n, '--initial-cluster', ic, '--peer-port', String(peer)] : [];
      procs.push(
        spawn(process.execPath, [...memberNodeArgs, ...orchEntry, 'server', ...cluster, '--data-dir', join(root, n), '--secure-port', String(api), ...serverArgs], { cwd: REPO, stdio: process.env.BENCH_MEMBER_LOGS ? 'inherit' : 'ignore' }),
      );
    }
    const [ca, cert, key] = (await Promise.all(['ca.crt', 'admin.crt', 'admin.key'].map((f) => readFile(join(pki, f), 'utf8')))) as [string, string, string];
    const agent = new Agent({ keepAlive: true, maxSockets: 64, ca, cert, key });
    let leaderPort = 0;
    for (let attempt = 0; attempt < 900 && !leaderPort; attempt++) {
      for (const { api } of ports) {
        try {
          if (members === 1) {
            await httpCall(request, { host: '127.0.0.1', port: api, method: 'GET', path: '/readyz', agent }, '', 200);
            leaderPort = api;
            continue;
          }
          const raftz = JSON.parse(await httpCall(request, { host: '127.0.0.1', port: api, method: 'GET', path: '/raftz', agent }, '', 200)) as { leader: string; role: string };
          if (raftz.role === 'leader') leaderPort = api;
        } catch {
          // not up yet
        }
      }
      if (!leaderPort) await sleep(200);
    }
    if (!leaderPort) throw new Error('orch cluster did not elect a leader');
    // Let the members finish starting (module loading, controllers' first lists): the three
    // of them burn ~100 % of a core each for their first ~10-15 s, which would otherwise fall
    // into the first measured phase. Wait (up to 60 s) until they use < 25 % of a core together.
    for (let i = 0, prev = treeCpuMs(procs.map((p) => p.pid!)); i < 60; i++) {
      await sleep(1000);
      const now = treeCpuMs(procs.map((p) => p.pid!));
      if (now - prev < 250) break;
      prev = now;
    }
    // BENCH_IDLE_MS=n: first each member's CPU while nothing is written, in ms per second (main
    // thread / other threads / TLS worker processes): what a write pays for at low rates
    const idleMs = Number(process.env.BENCH_IDLE_MS ?? 0);
    if (idleMs > 0) {
      const t0 = procs.map((p) => threadCpuMs(p.pid!));
      await sleep(idleMs);
      const t1 = procs.map((p) => threadCpuMs(p.pid!));
      const perS = (a: number, b: number) => +(((b - a) * 1000) / idleMs).toFixed(1);
      idle = Object.fromEntries(ports.map((p, i) => [`${p.name}${p.api === leaderPort ? ' (leader)' : ''}`, { main: perS(t0[i]!.main, t1[i]!.main), threads: perS(t0[i]!.threads, t1[i]!.threads), children: perS(t0[i]!.children, t1[i]!.children) }]));
    }
    const value = 'x'.repeat(valueSize);
    const out: Record<string, Stats> = {};
    const raftz = async (): Promise<Raftz[]> =>
      members === 1 ? [] : Promise.all(ports.map(async (p) => JSON.parse(await httpCall(request, { host: '127.0.0.1', port: p.api, method: 'GET', path: '/raftz', agent }, '', 200)) as Raftz));
    const counters: Record<string, Record<string, Record<string, number>>> = {};
    const mainCpu: Record<string, number> = {};
    for (const inFlight of inFlights) {
      // the measured protocol's connection, made before the warm-up: an HTTP/2
      // warm-up over HTTP/1.1 left the worker's and the client's HTTP/2 code to
      // be compiled inside the measured window (docs/performance.md "TLS
      // workers: where a create's CPU goes")
      const h2 = apiProtocol === 'h2' ? h2Poster(leaderPort, { ca, cert, key }) : undefined;
      const create = (name: string): Promise<string> => {
        const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { v: value } });
        if (h2) return h2.post('/api/v1/namespaces/default/configmaps', body, 201);
        return httpCall(request, { host: '127.0.0.1', port: leaderPort, method: 'POST', path: '/api/v1/namespaces/default/configmaps', agent }, body, 201);
      };
      // a short warm-up (JIT, connections) that is not measured
      await drive(warmupOf(writes), inFlight, async (i) => {
        await create(`w${inFlight}-${i}`);
      });
      // the members' counters from here: the warm-up's writes are not the measured ones
      const before = await raftz();
      const main0 = processCpuMs(procs.map((p) => p.pid!));
      const threads0 = procs.map((p) => threadCpuMs(p.pid!));
      const client0 = selfCpuMs();
      out[`inFlight${inFlight}`] = await drive(writes, inFlight, async (i) => {
        await create(`b${inFlight}-${i}`);
      }, () => treeCpuMs(procs.map((p) => p.pid!)));
      out[`inFlight${inFlight}`]!.clientCpuUsPerOp = Math.round(((selfCpuMs() - client0) * 1000) / writes);
      h2?.close();
      // of which the members' main processes (the rest: TLS worker processes, tsx's loader)
      mainCpu[`inFlight${inFlight}`] = Math.round(((processCpuMs(procs.map((p) => p.pid!)) - main0) * 1000) / writes);
      // per member, µs per write: its main process's JavaScript thread, its other threads
      // (GC, libuv pool, LevelDB), and its child processes (the TLS workers)
      const threads1 = procs.map((p) => threadCpuMs(p.pid!));
      const after = await raftz();
      // before, after and ports list the members in the same order
      counters[`inFlight${inFlight}`] = Object.fromEntries(
        ports.flatMap((p, i) => {
          const [b, a] = [before[i], after[i]];
          const [t0, t1] = [threads0[i]!, threads1[i]!];
          const cpu = Object.fromEntries(Object.keys(t0).map((k) => [`cpuUs_${k}`, Math.round(((t1[k as keyof typeof t1] - t0[k as keyof typeof t0]) * 1000) / writes)]));
          const total = Object.values(cpu).reduce((x, y) => x + y, 0);
          const name = `${p.name}${p.api === leaderPort ? ' (leader)' : ''}`;
          return [[name, { ...(a && b ? perWrite(b, a, writes) : {}), cpuUs: total, ...cpu }]];
        }),
      );
    }
    agent.destroy();
    for (const [k, us] of Object.entries(mainCpu)) out[k] = { ...out[k]!, mainCpuUsPerOp: us };
    return { stats: out, perWrite: counters };
  } finally {
    for (const p of procs) p.kill('SIGTERM');
    // members exit after a graceful shutdown (and write their --cpu-prof profiles)
    await Promise.all(procs.map((p) => (p.exitCode !== null ? undefined : new Promise((r) => p.once('exit', r)))));
  }
}

/** orch's store without the API: the same create-if-absent txns (bench/store-direct.ts) */
async function benchOrchStore(root: string): Promise<Record<string, Stats>> {
  const value = new Uint8Array(Buffer.alloc(valueSize, 120));
  let stores: RevisionedStore[];
  if (members === 1) {
    stores = [await LocalStore.open(join(root, 'local'), { compactIntervalMs: 0 })];
  } else {
    const names = Array.from({ length: members }, (_, i) => `s${i + 1}`);
    const initialCluster = Object.fromEntries(await Promise.all(names.map(async (n) => [n, `127.0.0.1:${await freePort()}`] as const)));
    const rs = await Promise.all(names.map((name) => RaftStore.open({ name, initialCluster, dataDir: join(root, name), tickMs: 50, compactIntervalMs: 0 })));
    await Promise.all(rs.map((m) => m.waitUntilReady(30_000)));
    stores = [rs.find((m) => m.isLeader()) ?? rs[0]!, ...rs.filter((m) => !m.isLeader())];
  }
  try {
    const leader = stores[0]!;
    const out: Record<string, Stats> = {};
    for (const inFlight of inFlights) {
      out[`inFlight${inFlight}`] = await drive(writes, inFlight, async (i) => {
        const key = `/registry/configmaps/default/b${inFlight}-${i}`;
        const r = await leader.txn({ compare: [{ key, target: 'create', op: '=', value: 0 }], success: [{ type: 'put', key, value }], failure: [] });
        if (!r.succeeded) throw new Error(`${key} exists`);
      }, selfCpuMs);
    }
    return out;
  } finally {
    await Promise.all(stores.map((s) => s.close()));
  }
}

/**
 * etcd, set up like orch: mutual TLS on client and peer links (orch's PKI),
 * each write a create-if-absent transaction (compare create_revision = 0,
 * then put), which is what orch's create does in its store (and
 * kube-apiserver's in etcd); through the native gRPC client and through the
 * JSON gateway, each on a fresh cluster. BENCH_ETCD_PLAIN=1: plain HTTP.
 */
async function benchEtcd(root: string, pki: string, via: 'native' | 'gateway'): Promise<Record<string, Stats>> {
  const etcd = await startEtcd({ root, members, pki: process.env.BENCH_ETCD_PLAIN ? undefined : pki, logs: Boolean(process.env.BENCH_MEMBER_LOGS) });
  const client = via === 'native' ? etcd.native() : undefined;
  const value = Buffer.alloc(valueSize, 120);
  const create = (key: string): Promise<number> => (client ? nativeCreate(client, key, value) : gatewayCreate(etcd, key, value));
  try {
    await drive(warmupOf(writes), 64, async (i) => void (await create(`/warmup/${i}`)));
    const out: Record<string, Stats> = {};
    for (const inFlight of inFlights) {
      const client0 = selfCpuMs();
      out[`inFlight${inFlight}`] = await drive(writes, inFlight, async (i) => void (await create(`/registry/configmaps/default/b${inFlight}-${i}`)), () => treeCpuMs(etcd.pids));
      out[`inFlight${inFlight}`]!.clientCpuUsPerOp = Math.round(((selfCpuMs() - client0) * 1000) / writes);
    }
    return out;
  } finally {
    client?.close();
    await etcd.stop();
  }
}

function ratios(a: Record<string, Stats>, b: Record<string, Stats>): Record<string, Stats> {
  const ratio: Record<string, Stats> = {};
  for (const [k, x] of Object.entries(a)) {
    const y = b[k];
    if (!y) continue;
    ratio[k] = {
      opsPerSec: +(x.opsPerSec / y.opsPerSec).toFixed(3),
      p50Ms: +(x.p50Ms / y.p50Ms).toFixed(3),
      p99Ms: +(x.p99Ms / y.p99Ms).toFixed(3),
      ...(x.cpuUsPerOp && y.cpuUsPerOp ? { cpuUsPerOp: +(x.cpuUsPerOp / y.cpuUsPerOp).toFixed(3) } : {}),
    };
  }
  return ratio;
}

async function main(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'orch-raft-bench-'));
  try {
    const pki = join(root, 'pki');
    await makePki(pki);
    const orchRun = sides.includes('orch') ? await benchOrch(join(root, 'orch'), pki) : undefined;
    const orch = orchRun?.stats ?? {};
    const store = sides.includes('store') ? await benchOrchStore(join(root, 'store')) : {};
    const haveEtcd = await etcdAvailable();
    const native = haveEtcd && sides.includes('native') ? await benchEtcd(join(root, 'etcd-native'), pki, 'native') : {};
    const gateway = haveEtcd && sides.includes('gateway') ? await benchEtcd(join(root, 'etcd-gateway'), pki, 'gateway') : {};
    const plain = Boolean(process.env.BENCH_ETCD_PLAIN);
    process.stdout.write(
      `${JSON.stringify(
        {
          members,
          writes,
          valueSize,
          orch,
          orchStore: store,
          etcdNative: native,
          etcdGateway: gateway,
          ratio: { apiOverNative: ratios(orch, native), storeOverNative: ratios(store, native), apiOverGateway: ratios(orch, gateway), apiOverStore: ratios(orch, store) },
          orchPerWrite: orchRun?.perWrite,
          ...(idle ? { orchIdleCpuMsPerS: idle } : {}),
          apiProtocol,
          note: `orch: HTTPS API on the leader (create ConfigMap${apiProtocol === 'h2' ? ', streams of one HTTP/2 connection' : ', 64 HTTP/1.1 connections'}), store: create-if-absent txn on the leader's store in-process; etcd: ${plain ? 'plain HTTP' : 'mTLS'} create-if-absent txn on the leader via the etcd3 gRPC client (native) and the v3 JSON gateway; ${plain ? 'plain' : 'mTLS'} peers; loopback${haveEtcd ? '' : '; etcd not installed (bench/setup-etcd.sh)'}`,
        },
        null,
        2,
      )}\n`,
    );
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

await main();
