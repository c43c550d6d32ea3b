// Overload: drive far more writes than the server sustains and check that it
// stays up, answers health checks throughout, sheds the excess with 429 and
// Retry-After, keeps its memory bounded, and recovers its full rate after
// (issue #15 item 5). The server is a real process (`orch server`), the load
// comes from many concurrent HTTPS clients as a non-admin user (the admin
// identity is exempt from overload protection by design).
//
//   npx tsx bench/overload.ts [seconds=60] [inflightFactor=10] [create|update]
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
const mode = process.argv[4] === 'update' ? 'update' : 'create';
const UPDATE_KEYS = 1000;
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
let failures = 0;
(async () => {
  while (probing) {
    const t0 = performance.now();
    const ok = await new Promise((resolve) => {
      const req = request({ host: '127.0.0.1', port, path: '/readyz', agent, ...(fresh ? { ca, cert, key } : {}) }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode === 200));
      });
      req.setTimeout(60000, () => req.destroy());
      req.on('error', () => resolve(false));
      req.end();
    });
    times.push(performance.now() - t0);
    if (!ok) failures++;
    await new Promise((r) => setTimeout(r, 200));
  }
  if (agent) agent.destroy();
  parentPort.postMessage({ times, failures });
  // the message listener keeps the thread (and so the bench) alive otherwise
  parentPort.close();
})();
`;

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'orch-overload-'));
  const port = await freePort();
  const server = spawn(process.execPath, [...serverNodeFlags, '--import', 'tsx', 'src/cli/main.ts', 'server', '--data-dir', dir, '--secure-port', String(port), '--authorization-mode', 'AlwaysAllow', '--tls-workers', '2', ...serverFlags], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // ORCH_SERVER_LOG=<file>: the server's output (e.g. with --trace-gc) is kept there
  const serverLog = process.env['ORCH_SERVER_LOG'] ? createWriteStream(process.env['ORCH_SERVER_LOG']) : undefined;
  if (serverLog) server.stdout!.pipe(serverLog);
  await new Promise<void>((resolve, reject) => {
    server.stdout!.on('data', (d: Buffer) => d.toString().includes('serving on') && resolve());
    server.once('exit', (c) => reject(new Error(`server exited ${c}`)));
  });
  const pki = await loadPki(join(dir, 'pki'));
  const user = await issueClientCertificate(pki, { commonName: 'loadgen', organizations: ['load'] });
  const agent = new Agent({ keepAlive: true, maxSockets: 64 * factor, ca: pki.ca.certPem, cert: user.certPem, key: user.keyPem });
  let seq = 0;
  const post = (create = mode === 'create'): Promise<number> =>
    new Promise((resolve) => {
      const name = mode === 'create' ? `c${seq++}` : `u${seq++ % UPDATE_KEYS}`;
      const method = create ? 'POST' : 'PUT';
      const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { v: 'x'.repeat(1024), n: String(seq) } });
      const req = request(
        { host: '127.0.0.1', port, method, path: `/api/v1/namespaces/default/configmaps${create ? '' : `/${name}`}`, agent, headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } },
        (res) => {
          res.resume();
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
      Array.from({ length: inFlight }, async () => {
        while (Date.now() < end) {
          const t0 = performance.now();
          const code = await post();
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
    const result = new Promise<{ times: number[]; failures: number }>((resolve, reject) => {
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
    const children = (await readFile(`/proc/${server.pid}/task/${server.pid}/children`, 'utf8').catch(() => '')).trim().split(/\s+/).filter(Boolean).map(Number);
    let sum = await rssKbOf(server.pid!);
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
    const children = (await readFile(`/proc/${server.pid}/task/${server.pid}/children`, 'utf8').catch(() => '')).trim().split(/\s+/).filter(Boolean).map(Number);
    let workers = 0;
    for (const c of children) workers += await cpuSecOf(c);
    return { main: await cpuSecOf(server.pid!), workers };
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
  const mark = async (name: string) => (rssMiB[name] = Math.round((await rssKb()) / 1024));
  const sampler = setInterval(() => void rssKb().then((r) => (peakRss = Math.max(peakRss, r))), 500);

  if (mode === 'update') {
    // the fixed set, created before the clock starts
    for (let i = 0; i < UPDATE_KEYS; i += 64) await Promise.all(Array.from({ length: Math.min(64, UPDATE_KEYS - i) }, () => post(true)));
    seq = 0;
  }
  await mark('start');
  const before = await measured('before', () => run(64, 10));
  await mark('afterBefore');
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
  server.kill('SIGTERM');
  await new Promise((r) => server.once('exit', r));
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
        recoveredRatio: +(after.createdPerSec / Math.max(1, before.createdPerSec)).toFixed(2),
      },
      null,
      2,
    ) + '\n',
  );
  agent.destroy();
}

main().catch((e: unknown) => {
  process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});
