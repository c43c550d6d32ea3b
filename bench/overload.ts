// Overload: drive far more writes than the server sustains and check that it
// stays up, answers health checks throughout, sheds the excess with 429 and
// Retry-After, keeps its memory bounded, and recovers its full rate after
// (issue #15 item 5). The server is a real process (`orch server`), the load
// comes from many concurrent HTTPS clients as a non-admin user (the admin
// identity is exempt from overload protection by design).
//
//   npx tsx bench/overload.ts [seconds=60] [inflightFactor=10] [create|update|churn]
//
// ORCH_BENCH_STRACE=<file>: the server runs under `strace -f -e accept4`
// (seccomp-filtered: only accepts stop), and the report says which process
// (main or a TLS worker) accepted each fresh-connection probe, the slow ones
// apart (docs/reliability.md "The parent stops accepting").
//
// Phases: measure the sustainable rate (64 in flight, 10 s), then overload with
// factor × 64 in flight for `seconds`, then measure again (10 s). Prints JSON.

import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { issueClientCertificate, loadPki } from '../src/server/pki.js';
import { freePort } from '../test/helpers/ports.js';

const seconds = Number(process.argv[2] ?? 60);
const factor = Number(process.argv[3] ?? 10);
/**
 * `create` (default): every write creates a new ConfigMap, so the data grows
 * with the rate. `update`: unconditional PUTs to a fixed set of 1,000
 * ConfigMaps, so memory that grows is memory held by the overload, not by
 * the data.
 */
const mode = process.argv[4] === 'update' || process.argv[4] === 'churn' ? process.argv[4] : 'create';
/** `churn`: each writer creates a ConfigMap of its own fixed set and deletes it again, so the data does not grow either */
const UPDATE_KEYS = 1000;
/** strace output of the server's accepts (see the header) */
const straceFile = process.env['ORCH_BENCH_STRACE'];
/** extra node flags for the server (e.g. ORCH_SERVER_NODE_FLAGS=--trace-gc) */
const serverNodeFlags = (process.env['ORCH_SERVER_NODE_FLAGS'] ?? '').split(' ').filter(Boolean);
/** extra `orch server` flags (e.g. ORCH_SERVER_FLAGS=--health-in-tls-workers) */
const serverFlags = (process.env['ORCH_SERVER_FLAGS'] ?? '').split(' ').filter(Boolean);

interface Phase {
  inFlight: number;
  seconds: number;
  created: number;
  createdPerSec: number;
  tooMany: number;
  otherErrors: number;
  p99Ms: number;
}

/** the health prober's thread (plain JavaScript: workers evaluate it without tsx) */
const PROBE_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { Agent, request } = require('node:https');
const { port, fresh, ca, cert, key } = workerData;
const agent = fresh ? false : new Agent({ keepAlive: true, maxSockets: 1, ca, cert, key });
let probing = true;
parentPort.on('message', () => (probing = false));
const times = [];
const ports = [];
const starts = [];
let failures = 0;
(async () => {
  while (probing) {
    const t0 = performance.now();
    starts.push(Date.now());
    let localPort = 0;
    const ok = await new Promise((resolve) => {
      const req = request({ host: '127.0.0.1', port, path: '/readyz', agent, ...(fresh ? { ca, cert, key } : {}) }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode === 200));
      });
      req.setTimeout(60000, () => req.destroy());
      req.on('error', () => resolve(false));
      // the client's port names the connection in the server's accept4 trace
      if (fresh) req.on('socket', (s) => s.once('connect', () => (localPort = s.localPort)));
      req.end();
    });
    times.push(performance.now() - t0);
    ports.push(localPort);
    if (!ok) failures++;
    await new Promise((r) => setTimeout(r, 200));
  }
  if (agent) agent.destroy();
  parentPort.postMessage({ times, ports, starts, failures });
  // the message listener keeps the thread (and so the bench) alive otherwise
  parentPort.close();
})();
`;

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'orch-overload-'));
  const port = await freePort();
  const serverArgs = [...serverNodeFlags, '--import', 'tsx', 'src/cli/main.ts', 'server', '--data-dir', dir, '--secure-port', String(port), '--authorization-mode', 'AlwaysAllow', '--tls-workers', '2', ...serverFlags];
  const server = straceFile
    ? spawn('strace', ['-f', '-yy', '--seccomp-bpf', '-qq', '-e', 'trace=accept4,accept', '-e', 'signal=none', '-o', straceFile, process.execPath, ...serverArgs], { stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn(process.execPath, serverArgs, { stdio: ['ignore', 'pipe', 'pipe'] });
  // ORCH_SERVER_LOG=<file>: the server's output (e.g. with --trace-gc) is kept there
  const serverLog = process.env['ORCH_SERVER_LOG'] ? createWriteStream(process.env['ORCH_SERVER_LOG']) : undefined;
  if (serverLog) server.stdout!.pipe(serverLog);
  await new Promise<void>((resolve, reject) => {
    server.stdout!.on('data', (d: Buffer) => d.toString().includes('serving on') && resolve());
    server.once('exit', (c) => reject(new Error(`server exited ${c}`)));
  });
  // under strace the server's main process is strace's child
  const serverPid = straceFile ? Number((await readFile(`/proc/${server.pid}/task/${server.pid}/children`, 'utf8')).trim().split(/\s+/)[0]) : server.pid!;
  const pki = await loadPki(join(dir, 'pki'));
  const user = await issueClientCertificate(pki, { commonName: 'loadgen', organizations: ['load'] });
  const agent = new Agent({ keepAlive: true, maxSockets: 64 * factor, ca: pki.ca.certPem, cert: user.certPem, key: user.keyPem });
  let seq = 0;
  /** churn: which writers' objects exist now (each writer creates and deletes its own) */
  const live = new Set<number>();
  const post = (create = mode === 'create', slot = 0): Promise<number> =>
    new Promise((resolve) => {
      // churn: create the writer's object, or delete it when it exists (state changes only on success)
      if (mode === 'churn') create = !live.has(slot);
      const name = mode === 'create' ? `c${seq++}` : mode === 'churn' ? `k${slot}` : `u${seq++ % UPDATE_KEYS}`;
      const method = mode === 'churn' && !create ? 'DELETE' : create ? 'POST' : 'PUT';
      const body = method === 'DELETE' ? '' : JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { v: 'x'.repeat(1024), n: String(seq) } });
      const req = request(
        { host: '127.0.0.1', port, method, path: `/api/v1/namespaces/default/configmaps${create ? '' : `/${name}`}`, agent, headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } },
        (res) => {
          res.resume();
          if (mode === 'churn' && res.statusCode === (create ? 201 : 200)) {
            if (create) live.add(slot);
            else live.delete(slot);
          }
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.setTimeout(30_000, () => req.destroy());
      req.on('error', () => resolve(0));
      req.end(body);
    });

  const run = async (inFlight: number, secs: number): Promise<Phase> => {
    const end = Date.now() + secs * 1000;
    const lat: number[] = [];
    let created = 0;
    let tooMany = 0;
    let other = 0;
    await Promise.all(
      Array.from({ length: inFlight }, async (_, slot) => {
        while (Date.now() < end) {
          const t0 = performance.now();
          const code = await post(mode === 'create', slot);
          lat.push(performance.now() - t0);
          if (code === 201 || code === 200) created++;
          else if (code === 429) tooMany++;
          else other++;
        }
      }),
    );
    lat.sort((a, b) => a - b);
    return { inFlight, seconds: secs, created, createdPerSec: Math.round(created / secs), tooMany, otherErrors: other, p99Ms: +(lat[Math.floor(lat.length * 0.99)] ?? 0).toFixed(1) };
  };

  // Health checks every 200 ms throughout, as the admin: on a fresh
  // connection each (TLS handshake included), as a kubelet probe makes it,
  // and over one kept-alive connection, which separates the server's answer
  // from the handshake queue. The probes run in their own thread: in the
  // load generator's event loop (640 HTTPS clients) a probe's time included
  // that loop's own lag, not only the server's.
  const prober = (fresh: boolean) => {
    const worker = new Worker(PROBE_WORKER, { eval: true, workerData: { port, fresh, ca: pki.ca.certPem, cert: pki.admin.certPem, key: pki.admin.keyPem } });
    const result = new Promise<{ times: number[]; ports: number[]; starts: number[]; failures: number }>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    return { stop: () => worker.postMessage('stop'), result };
  };
  const freshProbe = prober(true);
  const keptProbe = prober(false);
  const rssKbOf = async (pid: number): Promise<number> => Number(/VmRSS:\s+(\d+)/.exec(await readFile(`/proc/${pid}/status`, 'utf8').catch(() => ''))?.[1] ?? 0);
  /** the server and its TLS worker processes together */
  const rssKb = async (): Promise<number> => {
    const children = (await readFile(`/proc/${serverPid}/task/${serverPid}/children`, 'utf8').catch(() => '')).trim().split(/\s+/).filter(Boolean).map(Number);
    let sum = await rssKbOf(serverPid);
    for (const c of children) sum += await rssKbOf(c);
    return sum;
  };
  /** CPU seconds (user + system) of a process so far, from /proc (clock ticks of 10 ms) */
  const cpuSecOf = async (pid: number): Promise<number> => {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11] ?? 0) + Number(f[12] ?? 0)) / 100;
  };
  /** the main process, and its TLS workers together */
  const cpu = async (): Promise<{ main: number; workers: number }> => {
    const children = (await readFile(`/proc/${serverPid}/task/${serverPid}/children`, 'utf8').catch(() => '')).trim().split(/\s+/).filter(Boolean).map(Number);
    let workers = 0;
    for (const c of children) workers += await cpuSecOf(c);
    return { main: await cpuSecOf(serverPid), workers };
  };
  const cpuByPhase: Record<string, { mainSec: number; workersSec: number; mainMsPerRequest: number; workersMsPerRequest: number }> = {};
  const measured = async (name: string, phase: () => Promise<Phase>): Promise<Phase> => {
    const c0 = await cpu();
    const p = await phase();
    const c1 = await cpu();
    const requests = Math.max(1, p.created + p.tooMany + p.otherErrors);
    const mainSec = +(c1.main - c0.main).toFixed(2);
    const workersSec = +(c1.workers - c0.workers).toFixed(2);
    cpuByPhase[name] = { mainSec, workersSec, mainMsPerRequest: +((mainSec * 1000) / requests).toFixed(3), workersMsPerRequest: +((workersSec * 1000) / requests).toFixed(3) };
    return p;
  };
  let peakRss = 0;
  const rssMiB: Record<string, number> = {};
  /** RSS of the main process and of each TLS worker apart, at each mark: which one grows */
  const rssByProcessMiB: Record<string, { main: number; workers: number[] }> = {};
  const mark = async (name: string) => {
    const children = (await readFile(`/proc/${serverPid}/task/${serverPid}/children`, 'utf8').catch(() => '')).trim().split(/\s+/).filter(Boolean).map(Number);
    rssByProcessMiB[name] = { main: Math.round((await rssKbOf(serverPid)) / 1024), workers: await Promise.all(children.map(async (c) => Math.round((await rssKbOf(c)) / 1024))) };
    rssMiB[name] = Math.round((await rssKb()) / 1024);
  };
  /** [seconds since the first phase, MiB of the three processes] every 5 s: does RSS level off? */
  const rssSeries: [number, number][] = [];
  let t0Series = 0;
  let ticks = 0;
  const sampler = setInterval(
    () =>
      void rssKb().then((r) => {
        peakRss = Math.max(peakRss, r);
        if (t0Series > 0 && ticks++ % 10 === 0) rssSeries.push([Math.round((Date.now() - t0Series) / 1000), Math.round(r / 1024)]);
      }),
    500,
  );

  if (mode === 'update') {
    // the fixed set, created before the clock starts
    for (let i = 0; i < UPDATE_KEYS; i += 64) await Promise.all(Array.from({ length: Math.min(64, UPDATE_KEYS - i) }, () => post(true)));
    seq = 0;
  }
  await mark('start');
  t0Series = Date.now();
  const netBefore = await tcpCounters();
  const before = await measured('before', () => run(64, 10));
  await mark('afterBefore');
  const overloadStart = Date.now();
  const midTimer = setTimeout(() => void mark('overloadMidway'), (seconds * 1000) / 2);
  const overload = await measured('overload', () => run(64 * factor, seconds));
  clearTimeout(midTimer);
  await mark('overloadEnd');
  const after = await measured('after', () => run(64, 10));
  await mark('afterRecovery');
  freshProbe.stop();
  keptProbe.stop();
  const [freshResult, keptResult] = await Promise.all([freshProbe.result, keptProbe.result]);
  clearInterval(sampler);
  const summary = (p: { times: number[]; failures: number }) => {
    const h = [...p.times].sort((a, b) => a - b);
    return {
      probes: h.length,
      failures: p.failures,
      over1s: h.filter((ms) => ms > 1000).length,
      p50Ms: +(h[Math.floor(h.length / 2)] ?? 0).toFixed(1),
      p99Ms: +(h[Math.floor(h.length * 0.99)] ?? 0).toFixed(1),
      maxMs: +(h[h.length - 1] ?? 0).toFixed(1),
    };
  };
  const alive = server.exitCode === null;
  // under strace, the server itself (strace then exits with it)
  process.kill(serverPid, 'SIGTERM');
  await new Promise((r) => server.once('exit', r));
  const acceptedBy = straceFile ? await acceptingProcesses(straceFile, serverPid, freshResult, overloadStart) : undefined;
  const netAfter = await tcpCounters();
  await rm(dir, { recursive: true, force: true });
  process.stdout.write(
    JSON.stringify(
      {
        bench: 'overload',
        mode,
        before,
        overload,
        after,
        serverStayedUp: alive,
        health: { freshConnection: summary(freshResult), keptAlive: summary(keptResult) },
        loadAverage: (await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' '),
        cpu: cpuByPhase,
        peakRssMiB: Math.round(peakRss / 1024),
        rssMiB,
        rssSeriesMiB: rssSeries,
        rssByProcessMiB,
        // host-wide (other processes' connections count too): SYNs dropped for a full accept queue, and retransmitted
        tcpHostDeltas: Object.fromEntries(Object.entries(netAfter).map(([k, v]) => [k, v - (netBefore[k] ?? 0)])),
        ...(acceptedBy ? { freshProbesAcceptedBy: acceptedBy } : {}),
        recoveredRatio: +(after.createdPerSec / Math.max(1, before.createdPerSec)).toFixed(2),
      },
      null,
      2,
    ) + '\n',
  );
  agent.destroy();
}

/**
 * Which process accepted each fresh-connection probe: the server's accept4
 * trace names the client's port, the probe thread recorded its own. Slow =
 * over 500 ms.
 */
async function acceptingProcesses(file: string, mainPid: number, probes: { times: number[]; ports: number[]; starts: number[] }, overloadStart: number): Promise<Record<string, unknown>> {
  const byPort = new Map<number, number>();
  for (const line of (await readFile(file, 'utf8')).split('\n')) {
    // libuv passes no address buffer; -yy prints the new descriptor's ends: `= 20<TCP:[127.0.0.1:6443->127.0.0.1:54321]>`
    // (or, when another process's line came between, `<... accept4 resumed>) = 20<TCP:…>`)
    const m = /^(\d+)\s.*accept4?(?:\(| resumed>\)).*= \d+<TCPv?6?:\[[^\]]*->[^\]]*:(\d+)\]>/.exec(line);
    if (m) byPort.set(Number(m[2]), Number(m[1]));
  }
  const count = { main: 0, worker: 0, unknown: 0, slowMain: 0, slowWorker: 0, slowUnknown: 0, slowestByMainMs: 0, slowestByWorkerMs: 0 };
  probes.ports.forEach((port, i) => {
    const ms = probes.times[i] ?? 0;
    const pid = byPort.get(port);
    const who = pid === undefined ? 'unknown' : pid === mainPid ? 'main' : 'worker';
    count[who]++;
    if (ms > 500) count[who === 'main' ? 'slowMain' : who === 'worker' ? 'slowWorker' : 'slowUnknown']++;
    if (who === 'main') count.slowestByMainMs = Math.max(count.slowestByMainMs, Math.round(ms));
    if (who === 'worker') count.slowestByWorkerMs = Math.max(count.slowestByWorkerMs, Math.round(ms));
  });
  // the slow probes themselves: [ms, who, seconds after the overload began]
  const slow = probes.times.flatMap((ms, i) =>
    ms > 500 ? [[Math.round(ms), byPort.get(probes.ports[i]!) === undefined ? 'unknown' : byPort.get(probes.ports[i]!) === mainPid ? 'main' : 'worker', +(((probes.starts[i] ?? 0) - overloadStart) / 1000).toFixed(1)]] : [],
  );
  let mainAccepts = 0;
  for (const pid of byPort.values()) if (pid === mainPid) mainAccepts++;
  return { ...count, slow, connectionsAcceptedByMain: mainAccepts, connectionsAccepted: byPort.size };
}

/** the host's TCP listen-queue counters (/proc/net/netstat) */
async function tcpCounters(): Promise<Record<string, number>> {
  const lines = (await readFile('/proc/net/netstat', 'utf8')).split('\n');
  const out: Record<string, number> = {};
  for (let i = 0; i + 1 < lines.length; i += 2) {
    const names = lines[i]!.split(' ');
    const values = lines[i + 1]!.split(' ');
    names.forEach((n, j) => {
      if (n === 'ListenOverflows' || n === 'ListenDrops' || n === 'TCPSynRetrans') out[n] = Number(values[j]);
    });
  }
  return out;
}

main().catch((e: unknown) => {
  process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});
