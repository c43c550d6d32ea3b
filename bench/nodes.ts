// Node heartbeat load (issue 13 item 4): N simulated node agents in this one
// process, each a real HTTPS client with its own identity (a client
// certificate CN=system:node:<name>, O=system:nodes from the cluster's CA,
// as `orch node-kubeconfig` issues), registering its Node and Lease and then
// doing what a node agent does: a Lease renewal every 10 s (one PUT of the
// Lease it holds; kubelet's pattern) and a Node status update (one merge
// PATCH of .status) every --status-interval, both jittered, against
//   single   one orch member
//   cluster  three orch members (Raft), the nodes spread over them as
//            behind a load balancer
//   etcd     three etcd members with the same pattern straight into etcd
//            (native gRPC, the etcd3 client: a Lease renewal is one put of
//            an object of the same size, a status update one put)
// Reports per target: sustained heartbeat writes/s, write latency p50/p99,
// server CPU (cores, and µs per write, every process of the members, TLS
// workers included) and RSS, and — orch only — how many nodes the node
// lifecycle controller wrongly marked Unknown (watched on a Node watch;
// must be 0). Prints one JSON document; `ratio` = cluster / etcd of the
// same run (the host is shared, so absolute figures are noisy).
//
//   npx tsx bench/nodes.ts [--nodes 1000,5000] [--targets single,cluster,etcd]
//                          [--warmup 20] [--duration 60] [--lease-interval 10]
//                          [--status-interval 60] [--tls-workers 2] [--workers 0]
//                          [--register-concurrency 32]
// --workers K splits the simulated agents over K worker processes (forked,
// IPC for the measurement window); simulatorCpuCores is this process plus
// its workers in the window either way.

import { type ChildProcess, fork, spawn } from 'node:child_process';
import { cp, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { Agent, request } from 'node:https';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Etcd3 } from 'etcd3';
import { issueClientCertificate, loadPki } from '../src/server/pki.js';
import { freePort } from '../test/helpers/ports.js';
import { startEtcd } from './etcd.js';
import { leaseObject, micro, nodeStatus, rfc } from './node-objects.js';

const REPO = fileURLToPath(new URL('..', import.meta.url));

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && process.argv[i + 1] ? process.argv[i + 1]! : dflt;
}
const NODES = arg('nodes', '1000,5000').split(',').map(Number);
const TARGETS = arg('targets', 'single,cluster,etcd').split(',');
const WARMUP_S = Number(arg('warmup', '20'));
const DURATION_S = Number(arg('duration', '60'));
const LEASE_S = Number(arg('lease-interval', '10'));
const STATUS_S = Number(arg('status-interval', '60'));
// TLS terminator workers per member: the server's default, 2 (`--tls-workers 0` terminates TLS
// in the main process; on a loaded shared host three members with two workers each did not
// always start in time)
const TLS_WORKERS = arg('tls-workers', '2');
// nodes registering at once (all simulator processes together): a fleet coming up is bounded
// by how many agents start together, and an unbounded burst only measures the accept queue
const REGISTER_CONCURRENCY = Number(arg('register-concurrency', '32'));
// simulated agents split over this many worker processes (0: all in this process); the
// simulator's own CPU (this process and its workers) is reported either way
const WORKERS = Number(arg('workers', '0'));
const JITTER = 0.1;
// extra Node.js flags for the members' main processes, e.g. BENCH_SERVER_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof'
// (a profile is written when the member exits on the bench's SIGTERM)
const SERVER_NODE_ARGS = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter((x) => x !== '');
// extra `orch server` flags for every member, e.g. BENCH_SERVER_ARGS='--raft-tick 300ms'
const SERVER_ARGS = (process.env.BENCH_SERVER_ARGS ?? '').split(' ').filter((x) => x !== '');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const jittered = (s: number) => s * 1000 * (1 - JITTER / 2 + Math.random() * JITTER);

interface Reply {
  status: number;
  text: string;
}
function call(agent: Agent, port: number, method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      { host: '127.0.0.1', port, method, path, agent, headers: data ? { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(data) } : {} },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
        res.on('error', reject);
      },
    );
    req.setTimeout(30_000, () => req.destroy(new Error('timeout')));
    // a failure on a kept-alive connection reused from the agent's pool is told apart from one on a new connection
    req.on('error', (e) => reject(new Error(`${e.message} (${req.reusedSocket ? 'reused' : 'new'} connection)`)));
    req.end(data);
  });
}

/** what every target records */
class Recorder {
  lat: number[] = [];
  errors = 0;
  /** failed writes by HTTP status (or error message) */
  errorsBy: Record<string, number> = {};
  measuring = false;
  /** latencies by the member (API port index) the write went to: leader and followers differ */
  byMember: Record<string, number[]> = {};
  /** failed writes by member, then by status and message (the leader's and a follower's differ) */
  errorsByMember: Record<string, Record<string, number>> = {};
  /** conflicts (409) answered to a renewal that the agent then re-read and retried, as kubelet does, by message */
  retried: Record<string, number> = {};
  /** `fn` resolves true, or the status (and reason) of a failed write */
  async time(fn: () => Promise<true | number | string>, member?: string): Promise<void> {
    const t = performance.now();
    let r: true | number | string;
    try {
      r = await fn();
    } catch (e) {
      r = (e as Error).message.slice(0, 60);
    }
    if (!this.measuring) return;
    if (r === true) {
      const ms = performance.now() - t;
      this.lat.push(ms);
      if (member !== undefined) (this.byMember[member] ??= []).push(ms);
    } else {
      this.errors++;
      add(this.errorsBy, String(r));
      if (member !== undefined) add((this.errorsByMember[member] ??= {}), String(r));
    }
  }
  /** a failed attempt that the agent retried within the same heartbeat (counted only in the window) */
  retry(why: string): void {
    if (this.measuring) add(this.retried, why);
  }
  summary(seconds: number): { writesPerSec: number; p50Ms: number; p99Ms: number; errors: number; errorsBy: Record<string, number>; errorsByMember: Record<string, Record<string, number>>; retried: Record<string, number>; writes: number; byMember?: Record<string, { writes: number; p50Ms: number; p99Ms: number }> } {
    const s = [...this.lat].sort((a, b) => a - b);
    const byMember = Object.keys(this.byMember).length > 1 ? Object.fromEntries(Object.entries(this.byMember).map(([m, l]) => [m, { writes: l.length, p50Ms: quantile(l, 0.5), p99Ms: quantile(l, 0.99) }])) : undefined;
    return { writesPerSec: +(s.length / seconds).toFixed(1), p50Ms: quantile(s, 0.5), p99Ms: quantile(s, 0.99), errors: this.errors, errorsBy: this.errorsBy, errorsByMember: this.errorsByMember, retried: this.retried, writes: s.length, ...(byMember ? { byMember } : {}) };
  }
}
function add(m: Record<string, number>, k: string, v = 1): void {
  m[k] = (m[k] ?? 0) + v;
}
function quantile(lat: number[], p: number): number {
  const s = [...lat].sort((a, b) => a - b);
  return +(s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? 0).toFixed(2);
}

// ---- process CPU and memory from /proc (a member and its TLS workers) ----

async function childrenOf(pid: number): Promise<number[]> {
  const out: number[] = [];
  for (const d of await readdir('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    const st = await readFile(`/proc/${d}/stat`, 'utf8').catch(() => '');
    const ppid = Number(st.slice(st.lastIndexOf(')') + 2).split(' ')[1]);
    if (ppid === pid) out.push(Number(d));
  }
  return out;
}
async function tree(pids: number[]): Promise<number[]> {
  const all = [...pids];
  for (const p of pids) all.push(...(await tree(await childrenOf(p))));
  return all;
}
const TICK = 100; // USER_HZ
async function cpuSeconds(pids: number[]): Promise<number> {
  let t = 0;
  for (const p of pids) {
    const st = await readFile(`/proc/${p}/stat`, 'utf8').catch(() => '');
    const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
    t += (Number(f[11] ?? 0) + Number(f[12] ?? 0)) / TICK;
  }
  return t;
}
/** seconds the processes spent runnable but waiting for a CPU (/proc/<pid>/schedstat, 2nd field, ns) */
async function runQueueSeconds(pids: number[]): Promise<number> {
  let ns = 0;
  for (const p of pids) ns += Number((await readFile(`/proc/${p}/schedstat`, 'utf8').catch(() => '0 0')).split(' ')[1] ?? 0);
  return ns / 1e9;
}
async function rssMiB(pids: number[]): Promise<number> {
  let kb = 0;
  for (const p of pids) kb += Number(/VmRSS:\s+(\d+)/.exec(await readFile(`/proc/${p}/status`, 'utf8').catch(() => ''))?.[1] ?? 0);
  return Math.round(kb / 1024);
}

// ---- the objects (also sized for the etcd side) ----

/**
 * a failed write's status with its Status reason and message (digits folded to `#`, so that the
 * same failure on different objects and revisions counts as one kind)
 */
function failure(r: Reply): string {
  try {
    const st = JSON.parse(r.text) as { reason?: unknown; message?: unknown };
    return `${r.status} ${String(st.reason ?? '')}: ${String(st.message ?? '').replace(/node-\d+/g, 'node-#').replace(/\d+/g, '#').slice(0, 120)}`;
  } catch {
    return `${r.status} ${r.text.slice(0, 60)}`;
  }
}

// ---- one simulated node agent against orch ----

class SimNode {
  lease?: Record<string, unknown> & { metadata: Record<string, unknown> };
  private timers: NodeJS.Timeout[] = [];
  constructor(
    readonly name: string,
    private readonly agent: Agent,
    private readonly port: number,
    private readonly rec: Recorder,
    /** the member this node talks to (m1..m3), for the per-member latency split */
    private readonly member?: string,
  ) {}

  private leasePath(): string {
    return `/apis/coordination.orch.io/v1/namespaces/orch-node-lease/leases/${this.name}`;
  }

  /** each step retried on its own: a follower may not have applied the previous write yet (404) */
  private async step(what: string, fn: () => Promise<Reply>, ok: number[]): Promise<Reply> {
    for (let i = 0; ; i++) {
      const r = await fn().catch((e: Error) => ({ status: 0, text: e.message }));
      if (ok.includes(r.status)) return r;
      this.registerRetries++;
      if (i >= 40) throw new Error(`${this.name}: ${what}: ${r.status} ${r.text.slice(0, 200)}`);
      await sleep(100 + Math.random() * 200);
    }
  }

  /** ms the registration took (its four steps with their retries), and how many retries it needed */
  registerMs = 0;
  /** of which the first request: the new connection's TLS handshake (client certificate) and the Node create */
  registerFirstMs = 0;
  registerRetries = 0;

  async register(): Promise<void> {
    const t0 = performance.now();
    await this.registerSteps();
    this.registerMs = performance.now() - t0;
  }

  private async registerSteps(): Promise<void> {
    const now = Date.now();
    const t0 = performance.now();
    await this.step('node create', () => call(this.agent, this.port, 'POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: this.name, labels: { 'kubernetes.io/hostname': this.name } } }), [201, 409]);
    this.registerFirstMs = performance.now() - t0;
    await this.step('node status', () => call(this.agent, this.port, 'PATCH', `/api/v1/nodes/${this.name}/status`, { status: nodeStatus(now) }, 'application/merge-patch+json'), [200]);
    const l = await this.step('lease create', () => call(this.agent, this.port, 'POST', '/apis/coordination.orch.io/v1/namespaces/orch-node-lease/leases', leaseObject(this.name, now)), [201, 409]);
    this.lease = JSON.parse(l.status === 201 ? l.text : (await this.step('lease get', () => call(this.agent, this.port, 'GET', this.leasePath()), [200])).text);
  }

  start(): void {
    const renew = () => {
      void this.rec.time(() => this.renew(), this.member).then(() => this.timers.push(setTimeout(renew, jittered(LEASE_S))));
    };
    const status = () => {
      void this.rec.time(() => this.postStatus(), this.member).then(() => this.timers.push(setTimeout(status, jittered(STATUS_S))));
    };
    this.timers.push(setTimeout(renew, Math.random() * LEASE_S * 1000));
    this.timers.push(setTimeout(status, Math.random() * STATUS_S * 1000));
  }

  stop(): void {
    for (const t of this.timers) clearTimeout(t);
    this.agent.destroy();
  }

  /**
   * one PUT of the Lease last returned (kubelet's pattern); a conflict re-reads it and tries again
   * at once, up to 5 attempts in all, as kubelet's lease controller does (retryUpdateLease:
   * maxUpdateRetries 5, a conflict → GET → update); the conflicts are counted in `retried`.
   * Any other failure ends the heartbeat (counted as an error; the next one comes 10 s later).
   */
  private async renew(): Promise<true | string> {
    for (let attempt = 1; ; attempt++) {
      const lease = { ...this.lease!, spec: { ...(this.lease!.spec as Record<string, unknown>), renewTime: micro(Date.now()) } };
      const r = await call(this.agent, this.port, 'PUT', this.leasePath(), lease);
      if (r.status === 200) {
        this.lease = JSON.parse(r.text);
        return true;
      }
      if (r.status !== 409 || attempt >= 5) return failure(r);
      this.rec.retry(failure(r));
      const g = await call(this.agent, this.port, 'GET', this.leasePath());
      if (g.status !== 200) return `after a conflict, GET: ${failure(g)}`;
      this.lease = JSON.parse(g.text);
    }
  }

  private async postStatus(): Promise<true | string> {
    const r = await call(this.agent, this.port, 'PATCH', `/api/v1/nodes/${this.name}/status`, { status: nodeStatus(Date.now()) }, 'application/merge-patch+json');
    return r.status === 200 || failure(r);
  }
}

/** how the bench's Node watch ended once (it is resumed at once from the last resourceVersion it saw) */
interface WatchEnd {
  /** seconds since the watch began */
  atS: number;
  /** what ended it: the response's end, a socket error, a non-200 answer, or an ERROR event's Status */
  how: string;
  /** events received on that stream before it ended */
  events: number;
  /** the resourceVersion it resumed from ('' when it had to list again) */
  resumedFrom: string;
}

/**
 * counts nodes whose Ready condition leaves True (the lifecycle controller marking them Unknown).
 * A watch that ends before the bench stops it is recorded (when, why) and resumed from the last
 * resourceVersion it saw, as an informer does; a 410 (history compacted) lists the Nodes again
 * (their Ready condition is checked in the list) and watches from the list's resourceVersion.
 */
function watchNodes(agent: Agent, port: number): { wronglyUnknown: Set<string>; ends: WatchEnd[]; lost(): boolean; stop(): void } {
  const wronglyUnknown = new Set<string>();
  const ends: WatchEnd[] = [];
  const t0 = performance.now();
  let stopped = false;
  let req: ReturnType<typeof request> | undefined;
  let rv = '';
  const wasReady = new Set<string>();
  type NodeObj = { metadata: { name: string; resourceVersion?: string }; status?: { conditions?: { type: string; status: string }[] } };
  const see = (o: NodeObj) => {
    const r = o.status?.conditions?.find((x) => x.type === 'Ready');
    // a node counts once it was Ready and its Ready condition then left True
    if (r?.status === 'True') wasReady.add(o.metadata.name);
    else if (r && wasReady.has(o.metadata.name)) wronglyUnknown.add(o.metadata.name);
  };
  const relist = async (): Promise<void> => {
    for (let i = 0; !stopped; i++) {
      const r = await call(agent, port, 'GET', '/api/v1/nodes').catch((e: Error) => ({ status: 0, text: e.message }));
      if (r.status === 200) {
        const list = JSON.parse(r.text) as { metadata: { resourceVersion: string }; items: NodeObj[] };
        list.items.forEach(see);
        rv = list.metadata.resourceVersion;
        return;
      }
      await sleep(500);
    }
  };
  const open = () => {
    if (stopped) return;
    let events = 0;
    let how = '';
    let ended = false;
    const end = (why: string) => {
      if (ended || stopped) return;
      ended = true;
      if (/\b410\b|Expired|Gone/.test(why)) rv = '';
      ends.push({ atS: +((performance.now() - t0) / 1000).toFixed(1), how: why, events, resumedFrom: rv });
      void (rv === '' ? relist() : Promise.resolve()).then(() => setTimeout(open, 100));
    };
    const q = rv === '' ? '' : `&resourceVersion=${rv}&allowWatchBookmarks=true`;
    req = request({ host: '127.0.0.1', port, method: 'GET', path: `/api/v1/nodes?watch=1${q}`, agent }, (res) => {
      if (res.statusCode !== 200) how = `status ${res.statusCode}`;
      let buf = '';
      res.on('data', (c: Buffer) => {
        buf += c.toString();
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          try {
            const ev = JSON.parse(line) as { type: string; object: NodeObj & { code?: number; reason?: string; message?: string } };
            events++;
            if (ev.type === 'ERROR') {
              how = `ERROR event ${ev.object.code ?? ''} ${ev.object.reason ?? ''}: ${String(ev.object.message ?? '').slice(0, 120)}`;
              continue;
            }
            if (ev.object.metadata?.resourceVersion) rv = ev.object.metadata.resourceVersion;
            if (ev.type !== 'BOOKMARK') see(ev.object);
          } catch {
            // a partial or non-JSON line
          }
        }
      });
      res.on('error', (e) => end(how || `response error: ${e.message}`));
      res.on('end', () => end(how || 'the server ended the response'));
      res.on('close', () => end(how || 'the connection closed'));
    });
    req.on('error', (e) => end(how || `request error: ${e.message}`));
    req.end();
  };
  open();
  return {
    wronglyUnknown,
    ends,
    lost: () => ends.length > 0,
    stop: () => {
      stopped = true;
      req?.destroy();
    },
  };
}

function makePki(pki: string): Promise<void> {
  return new Promise<void>((res, rej) =>
    spawn(process.execPath, ['--import', 'tsx', 'deploy/init-pki.ts', pki], { cwd: REPO, stdio: 'ignore' }).on('exit', (c) => (c === 0 ? res() : rej(new Error('init-pki failed')))),
  );
}

async function pool<T>(items: T[], n: number, fn: (t: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: n }, async () => {
    while (next < items.length) await fn(items[next++]!);
  }));
}

type Certs = { certPem: string; keyPem: string }[];
/** each node's registration time (ms) and the retries of its steps */
interface Registration {
  ms: number[];
  /** the first request of each (connection, TLS handshake, Node create) */
  firstMs: number[];
  retries: number;
}
function registrationSummary(seconds: number, r: Registration): Record<string, number> {
  return { registerSeconds: seconds, registerNodesPerSec: +(r.ms.length / seconds).toFixed(1), registerP50Ms: quantile(r.ms, 0.5), registerP99Ms: quantile(r.ms, 0.99), registerFirstRequestP50Ms: quantile(r.firstMs, 0.5), registerFirstRequestP99Ms: quantile(r.firstMs, 0.99), registerRetries: r.retries, registerConcurrency: REGISTER_CONCURRENCY };
}

// BENCH_PKI_CACHE=DIR keeps the cluster PKI and the node certificates between runs (issuing 5,000 takes
// over a minute on this host and is not measured anyway); a cache with fewer certificates is extended
const PKI_CACHE = process.env.BENCH_PKI_CACHE;
async function pkiAndCerts(pki: string, n: number): Promise<Certs> {
  const cached = PKI_CACHE ? await readFile(join(PKI_CACHE, 'certs.json'), 'utf8').then((t) => JSON.parse(t) as Certs, () => undefined) : undefined;
  if (cached) await cp(join(PKI_CACHE!, 'pki'), pki, { recursive: true });
  else await makePki(pki);
  const certs = cached ?? [];
  if (certs.length < n) {
    const pkiLoaded = await loadPki(pki);
    for (let i = certs.length; i < n; i++) certs.push(await issueClientCertificate(pkiLoaded, { commonName: `system:node:node-${i}`, organizations: ['system:nodes'] }));
    if (PKI_CACHE) {
      await cp(pki, join(PKI_CACHE, 'pki'), { recursive: true });
      await writeFile(join(PKI_CACHE, 'certs.json'), JSON.stringify(certs));
    }
  }
  return certs.slice(0, n);
}

/** the measurement window shared by both kinds of target */
/** the simulated agents of one target: in this process, or split over worker processes */
interface Simulator {
  start(): void;
  /** ends the window; the workers' latencies are merged into `rec`; resolves their CPU seconds in the window */
  stop(rec: Recorder): Promise<number>;
}

async function measure(rec: Recorder, pids: () => Promise<number[]>, sim?: Simulator): Promise<Record<string, unknown>> {
  await sleep(WARMUP_S * 1000);
  const ps = await pids();
  const cpu0 = await cpuSeconds(ps);
  const self0 = process.cpuUsage();
  const t0 = performance.now();
  const load0 = loadavg()[0]!;
  rec.measuring = true;
  sim?.start();
  await sleep(DURATION_S * 1000);
  rec.measuring = false;
  const workerCpu = (await sim?.stop(rec)) ?? 0;
  const seconds = (performance.now() - t0) / 1000;
  const cpu = (await cpuSeconds(ps)) - cpu0;
  const self = process.cpuUsage(self0);
  const simCpu = (self.user + self.system) / 1e6 + workerCpu;
  const s = rec.summary(seconds);
  return {
    ...s,
    serverCpuCores: +(cpu / seconds).toFixed(3),
    serverCpuUsPerWrite: s.writes ? Math.round((cpu / s.writes) * 1e6) : 0,
    serverRssMiB: await rssMiB(ps),
    // the bench process (and its workers): the simulated agents' TLS clients and timers
    simulatorCpuCores: +(simCpu / seconds).toFixed(3),
    simulatorProcesses: 1 + (sim ? WORKERS : 0),
    seconds: +seconds.toFixed(1),
    // the host's 1-minute load average at the start and the end of the window (the host is shared)
    loadAverage: [+load0.toFixed(2), +loadavg()[0]!.toFixed(2)],
  };
}

// ---- simulated agents in worker processes (--workers K) ----

interface WorkerInit {
  nodes: { i: number; certPem: string; keyPem: string }[];
  ports: number[];
  names: string[];
  ca: string;
}
type ToWorker = { init: WorkerInit } | { measure: true } | { stop: true };
type FromWorker = { registered: Registration } | { result: { lat: number[]; byMember: Record<string, number[]>; errors: number; errorsBy: Record<string, number>; errorsByMember: Record<string, Record<string, number>>; retried: Record<string, number>; cpuSeconds: number } } | { failed: string };

/** runs in a worker process: its share of the agents, registered then heartbeating until told to stop */
function workerMain(): void {
  const rec = new Recorder();
  let cpu0 = process.cpuUsage();
  process.on('message', (msg: ToWorker) => {
    if ('init' in msg) {
      const { nodes, ports, names, ca } = msg.init;
      const sims = nodes.map(({ i, certPem, keyPem }) => new SimNode(`node-${i}`, new Agent({ keepAlive: true, maxSockets: 1, ca, cert: certPem, key: keyPem }), ports[i % ports.length]!, rec, names[i % names.length]));
      pool(sims, Math.max(1, Math.ceil(REGISTER_CONCURRENCY / Math.max(1, WORKERS))), async (s) => {
        await s.register();
        s.start();
      }).then(
        () => process.send!({ registered: { ms: sims.map((x) => x.registerMs), firstMs: sims.map((x) => x.registerFirstMs), retries: sims.reduce((a, x) => a + x.registerRetries, 0) } } satisfies FromWorker),
        (e: Error) => process.send!({ failed: e.message } satisfies FromWorker),
      );
    } else if ('measure' in msg) {
      cpu0 = process.cpuUsage();
      rec.measuring = true;
    } else {
      rec.measuring = false;
      const c = process.cpuUsage(cpu0);
      process.send!({ result: { lat: rec.lat, byMember: rec.byMember, errors: rec.errors, errorsBy: rec.errorsBy, errorsByMember: rec.errorsByMember, retried: rec.retried, cpuSeconds: (c.user + c.system) / 1e6 } } satisfies FromWorker);
    }
  });
}

/** forks the workers, hands each a share of the nodes and waits until all of them registered */
async function startWorkers(certs: Certs, n: number, ports: number[], names: string[], ca: string): Promise<Simulator & { kill(): void; registration: Registration }> {
  const workers = Array.from({ length: WORKERS }, () => fork(fileURLToPath(import.meta.url), ['--worker', '--workers', String(WORKERS), '--lease-interval', String(LEASE_S), '--status-interval', String(STATUS_S), '--register-concurrency', String(REGISTER_CONCURRENCY)], { execArgv: ['--import', 'tsx'], cwd: REPO }));
  const next = (w: ChildProcess) => new Promise<FromWorker>((res, rej) => {
    w.once('message', (m: FromWorker) => res(m));
    w.once('exit', (code) => rej(new Error(`simulator worker exited (${code})`)));
  });
  const registered = workers.map(next);
  workers.forEach((w, k) => {
    const nodes = [];
    for (let i = k; i < n; i += WORKERS) nodes.push({ i, ...certs[i]! });
    w.send({ init: { nodes, ports, names, ca } } satisfies ToWorker);
  });
  const registration: Registration = { ms: [], firstMs: [], retries: 0 };
  for (const m of await Promise.all(registered)) {
    if ('failed' in m) throw new Error(m.failed);
    if ('registered' in m) {
      registration.ms.push(...m.registered.ms);
      registration.firstMs.push(...m.registered.firstMs);
      registration.retries += m.registered.retries;
    }
  }
  return {
    registration,
    start: () => workers.forEach((w) => w.send({ measure: true } satisfies ToWorker)),
    async stop(rec: Recorder): Promise<number> {
      const results = workers.map(next);
      workers.forEach((w) => w.send({ stop: true } satisfies ToWorker));
      let cpu = 0;
      for (const m of await Promise.all(results)) {
        if (!('result' in m)) continue;
        const r = m.result;
        rec.lat.push(...r.lat);
        for (const [k, v] of Object.entries(r.byMember)) (rec.byMember[k] ??= []).push(...v);
        rec.errors += r.errors;
        for (const [k, v] of Object.entries(r.errorsBy)) add(rec.errorsBy, k, v);
        for (const [k, v] of Object.entries(r.retried)) add(rec.retried, k, v);
        for (const [m, by] of Object.entries(r.errorsByMember)) for (const [k, v] of Object.entries(by)) add((rec.errorsByMember[m] ??= {}), k, v);
        cpu += r.cpuSeconds;
      }
      return cpu;
    },
    kill: () => workers.forEach((w) => w.kill('SIGTERM')),
  };
}

async function runOrch(root: string, pki: string, certs: Certs, n: number, members: 1 | 3): Promise<Record<string, unknown>> {
  const names = members === 1 ? ['m1'] : ['m1', 'm2', 'm3'];
  const ports = await Promise.all(names.map(async () => ({ api: await freePort(), peer: await freePort() })));
  const ic = names.map((m, i) => `${m}=127.0.0.1:${ports[i]!.peer}`).join(',');
  const procs: ChildProcess[] = [];
  const sims: SimNode[] = [];
  let watch: ReturnType<typeof watchNodes> | undefined;
  let workers: Awaited<ReturnType<typeof startWorkers>> | undefined;
  const [ca, adminCert, adminKey] = await Promise.all(['ca.crt', 'admin.crt', 'admin.key'].map((f) => readFile(join(pki, f), 'utf8')));
  const admin = new Agent({ keepAlive: true, ca, cert: adminCert, key: adminKey });
  try {
    for (const [i, m] of names.entries()) {
      await cp(pki, join(root, m, 'pki'), { recursive: true });
      const cluster = members === 3 ? ['--name', m, '--initial-cluster', ic, '--peer-port', String(ports[i]!.peer)] : [];
      procs.push(spawn(process.execPath, [...SERVER_NODE_ARGS, '--import', 'tsx', 'src/cli/main.ts', 'server', '--data-dir', join(root, m), '--secure-port', String(ports[i]!.api), '--tls-workers', TLS_WORKERS, ...cluster, ...SERVER_ARGS], { cwd: REPO, stdio: process.env.BENCH_MEMBER_LOGS ? 'inherit' : 'ignore' }));
    }
    for (const p of ports) {
      for (let a = 0; ; a++) {
        const r = await call(admin, p.api, 'GET', '/readyz').catch(() => ({ status: 0, text: '' }));
        if (r.status === 200) break;
        if (a > 1500) throw new Error('orch did not become ready');
        await sleep(200);
      }
    }
    const rec = new Recorder();
    watch = watchNodes(admin, ports[0]!.api);
    const tReg = performance.now();
    const pidsOf = async () => tree(procs.map((p) => p.pid!));
    const regPids = await pidsOf();
    const [regCpu0, regWait0] = [await cpuSeconds(regPids), await runQueueSeconds(regPids)];
    if (WORKERS > 0) {
      workers = await startWorkers(certs, n, ports.map((p) => p.api), names, ca!);
    } else {
      for (let i = 0; i < n; i++) {
        const agent = new Agent({ keepAlive: true, maxSockets: 1, ca, cert: certs[i]!.certPem, key: certs[i]!.keyPem });
        sims.push(new SimNode(`node-${i}`, agent, ports[i % ports.length]!.api, rec, names[i % names.length]));
      }
      // as a real agent: heartbeats begin as soon as the node is registered, not when all are
      await pool(sims, REGISTER_CONCURRENCY, async (s) => {
        await s.register();
        s.start();
      });
    }
    const registerSeconds = +((performance.now() - tReg) / 1000).toFixed(1);
    const registration = {
      ...registrationSummary(registerSeconds, workers?.registration ?? { ms: sims.map((x) => x.registerMs), firstMs: sims.map((x) => x.registerFirstMs), retries: sims.reduce((a, x) => a + x.registerRetries, 0) }),
      // the members' CPU, and their time runnable but waiting for a CPU, during registration (cores)
      registerServerCpuCores: +(((await cpuSeconds(regPids)) - regCpu0) / registerSeconds).toFixed(3),
      registerServerRunQueueWaitCores: +(((await runQueueSeconds(regPids)) - regWait0) / registerSeconds).toFixed(3),
    };
    process.stderr.write(`nodes bench: registered ${n} nodes: ${JSON.stringify(registration)}\n`);
    const m = await measure(rec, pidsOf, workers);
    // also count the nodes that are not Ready at the end
    // (a failed list must not lose the measurement: counted as unknown, -1)
    const listed = await call(admin, ports[0]!.api, 'GET', '/api/v1/nodes').catch(() => ({ status: 0, text: '' }));
    const list = (listed.status === 200 ? JSON.parse(listed.text) : { items: [] }) as { items: { spec?: { taints?: unknown[] }; status?: { conditions?: { type: string; status: string }[] } }[] };
    process.stderr.write(`nodes bench: measured ${JSON.stringify(m)}\n`);
    const notReadyAtEnd = list.items.filter((x) => x.status?.conditions?.find((c) => c.type === 'Ready')?.status !== 'True').length;
    const tainted = list.items.filter((x) => (x.spec?.taints ?? []).length > 0).length;
    // each member's Raft counters since it started (registration included): leader changes, failed proposals and reads
    type Raftz = { leader?: string; role?: string; term?: number; metrics?: Record<string, number> };
    const raftz: Record<string, Raftz> = {};
    if (members === 3) {
      for (const [i, name] of names.entries()) {
        const r = await call(admin, ports[i]!.api, 'GET', '/raftz').catch(() => ({ status: 0, text: '' }));
        if (r.status === 200) raftz[name] = JSON.parse(r.text) as Raftz;
      }
    }
    const leader = raftz.m1?.leader;
    const raftCounters = Object.fromEntries(Object.entries(raftz).map(([k, z]) => {
      const c = z.metrics ?? {};
      return [k, { role: z.role, term: z.term, leaderChanges: c.leaderChanges, proposalsCommitted: c.proposalsCommitted, proposalsFailed: c.proposalsFailed, proposalsRetried: c.proposalsRetried, readIndexFailed: c.readIndexFailed, snapshotsTaken: c.snapshotsTaken, snapshotsInstalled: c.snapshotsInstalled, storageSyncs: c.storageSyncs, meanSyncMs: c.storageSyncs ? +(c.storageSyncMs! / c.storageSyncs).toFixed(2) : 0, entriesPersisted: c.entriesPersisted, readies: c.readies, meanProposeToApplyMs: c.proposalsCommitted ? +(c.proposeToApplyMs! / c.proposalsCommitted).toFixed(2) : 0 }];
    }));
    return { ...m, ...(leader ? { leader } : {}), ...(members === 3 ? { raftCounters } : {}), ...registration, nodesWronglyUnknown: watch.wronglyUnknown.size, ...(watch.lost() ? { nodeWatchLost: true, nodeWatchEnds: watch.ends } : {}), notReadyAtEnd, tainted };
  } finally {
    watch?.stop();
    workers?.kill();
    for (const s of sims) s.stop();
    admin.destroy();
    for (const p of procs) p.kill('SIGTERM');
    await Promise.all(procs.map((p) => (p.exitCode !== null ? undefined : new Promise((r) => p.once('exit', r)))));
  }
}

async function runEtcd(root: string, pki: string, n: number): Promise<Record<string, unknown>> {
  const cluster = await startEtcd({ root, members: 3, pki });
  const [ca, cert, key] = await Promise.all(['ca.crt', 'admin.crt', 'admin.key'].map((f) => readFile(join(pki, f))));
  const client = new Etcd3({ hosts: cluster.clientUrls, credentials: { rootCertificate: ca!, certChain: cert!, privateKey: key! } });
  const timers: NodeJS.Timeout[] = [];
  try {
    for (let a = 0; ; a++) {
      try {
        await client.put('/bench/ready').value('1');
        break;
      } catch (e) {
        if (a > 300) throw e;
        await sleep(200);
      }
    }
    const rec = new Recorder();
    // what orch stores for the same objects (a Lease, a Node with its status), written the same way
    const now = Date.now();
    const nodeValue = (i: number) => JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name: `node-${i}`, uid: '0d6f6a5e-6bd1-4a3c-9d39-7c0f4d9c2b11', creationTimestamp: rfc(now), labels: { 'kubernetes.io/hostname': `node-${i}` } }, spec: {}, status: nodeStatus(Date.now()) });
    const leaseValue = (i: number) => JSON.stringify({ ...leaseObject(`node-${i}`, Date.now()), metadata: { name: `node-${i}`, namespace: 'orch-node-lease', uid: '0d6f6a5e-6bd1-4a3c-9d39-7c0f4d9c2b11', creationTimestamp: rfc(now) } });
    const tReg = performance.now();
    await pool(Array.from({ length: n }, (_, i) => i), 32, async (i) => {
      await client.put(`/registry/minions/node-${i}`).value(nodeValue(i));
      await client.put(`/registry/leases/orch-node-lease/node-${i}`).value(leaseValue(i));
    });
    const registerSeconds = +((performance.now() - tReg) / 1000).toFixed(1);
    for (let i = 0; i < n; i++) {
      const renew = () => void rec.time(async () => (await client.put(`/registry/leases/orch-node-lease/node-${i}`).value(leaseValue(i)), true as const)).then(() => timers.push(setTimeout(renew, jittered(LEASE_S))));
      const status = () => void rec.time(async () => (await client.put(`/registry/minions/node-${i}`).value(nodeValue(i)), true as const)).then(() => timers.push(setTimeout(status, jittered(STATUS_S))));
      timers.push(setTimeout(renew, Math.random() * LEASE_S * 1000));
      timers.push(setTimeout(status, Math.random() * STATUS_S * 1000));
    }
    const m = await measure(rec, async () => cluster.pids);
    return { ...m, registerSeconds };
  } finally {
    for (const t of timers) clearTimeout(t);
    client.close();
    await cluster.stop();
  }
}

async function main(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'orch-nodes-bench-'));
  const results: Record<string, Record<string, unknown>> = {};
  try {
    const pki = join(root, 'pki');
    const max = Math.max(...NODES);
    const tCerts = performance.now();
    const certs = await pkiAndCerts(pki, TARGETS.some((t) => t !== 'etcd') ? max : 0);
    process.stderr.write(`nodes bench: ${certs.length} node certificates issued in ${((performance.now() - tCerts) / 1000).toFixed(1)} s (not part of registration)\n`);
    for (const n of NODES) {
      const r: Record<string, unknown> = {};
      for (const t of TARGETS) {
        const dir = join(root, `${t}-${n}`);
        process.stderr.write(`nodes bench: ${t}, ${n} nodes\n`);
        if (t === 'single') r.single = await runOrch(dir, pki, certs, n, 1);
        else if (t === 'cluster') r.cluster = await runOrch(dir, pki, certs, n, 3);
        else if (t === 'etcd') r.etcd = await runEtcd(dir, pki, n);
        await rm(dir, { recursive: true, force: true });
        // partial results survive an interrupted run
        process.stderr.write(`nodes bench: ${t}, ${n} nodes: ${JSON.stringify(r[t])}\n`);
      }
      const c = r.cluster as Record<string, number> | undefined;
      const e = r.etcd as Record<string, number> | undefined;
      if (c && e) {
        r.ratioClusterToEtcd = {
          writesPerSec: +(c.writesPerSec! / e.writesPerSec!).toFixed(3),
          p50Ms: +(c.p50Ms! / e.p50Ms!).toFixed(3),
          p99Ms: +(c.p99Ms! / e.p99Ms!).toFixed(3),
          serverCpuUsPerWrite: +(c.serverCpuUsPerWrite! / e.serverCpuUsPerWrite!).toFixed(3),
          serverRssMiB: +(c.serverRssMiB! / e.serverRssMiB!).toFixed(3),
        };
      }
      results[`nodes${n}`] = r;
    }
    const offered = (n: number) => +(n / LEASE_S + n / STATUS_S).toFixed(1);
    process.stdout.write(
      `${JSON.stringify(
        {
          tlsWorkersPerMember: Number(TLS_WORKERS),
          leaseIntervalS: LEASE_S,
          statusIntervalS: STATUS_S,
          warmupS: WARMUP_S,
          durationS: DURATION_S,
          offeredWritesPerSec: Object.fromEntries(NODES.map((n) => [`nodes${n}`, offered(n)])),
          results,
          note: 'orch: every node its own HTTPS client (client certificate, keep-alive), Lease PUT + status merge PATCH; etcd: one etcd3 gRPC client, one put per Lease renewal / status update of the same object sizes; mTLS on client and peer links on both; loopback, one shared 2-core host (the bench process included)',
        },
        null,
        2,
      )}\n`,
    );
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

if (process.argv.includes('--worker')) workerMain();
else await main();
// sockets of the etcd client and the node agents' agents may linger
if (!process.argv.includes('--worker')) process.exit(0);
