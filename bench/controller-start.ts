// How long a leader change stalls the event loop (issue 13; docs/scale.md,
// docs/controllers.md "Start and stop in slices"): three real orch members in
// this process (startServer, Raft over gRPC on loopback, TLS served in the
// main process), N Nodes with a full status and N node Leases (and optionally
// P pods per node) stored, then leadership is handed from the leader to a
// follower: the follower starts every leader-only controller (shared
// informers' first lists, the garbage collector's monitors, the node
// lifecycle machines) and the old leader stops its own. A setImmediate
// ticker and perf_hooks.monitorEventLoopDelay measure the longest stall of
// the process from the transfer until the new leader's /readyz
// informer-sync passes and a quiet second follows. The three members share
// the one event loop, so a stall here is the longest any member saw (the
// old leader's stop and the new one's start overlap). On a loaded host a
// stall's wall time includes the other processes' share of the cores:
// `maxTurnCpuMs` (this process's CPU time between two ticks, from
// process.cpuUsage, so helper threads' too) is the steadier figure. Each of
// the longest stalls has `hrUs`, the monotonic clock in µs at its start, which
// is the clock of a .cpuprofile's timestamps: the samples of that turn are
// the ones between hrUs and hrUs + ms.
//
//   npx tsx bench/controller-start.ts [--nodes 5000] [--pods 0] [--transfers 2]
//
// Prints one JSON document. `--cpu-prof` on node (NODE_OPTIONS or
// `node --import tsx --cpu-prof bench/controller-start.ts`) profiles it.

import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:https';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { SchemaAdmission } from '../src/registry/admission.js';
import { GenericStore } from '../src/registry/generic-store.js';
import { sharedDefinitions } from '../src/registry/kinds/index.js';
import type { ApiObject } from '../src/registry/types.js';
import type { RaftStore } from '../src/store/raft-store.js';
import { ensurePki } from '../src/server/pki.js';
import { type RunningServer, startServer } from '../src/server/server.js';
import { freePort } from '../test/helpers/ports.js';
import { leaseObject, nodeStatus } from './node-objects.js';

const D = 'orch.io';

function arg(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
}

const N = arg('nodes', 5000);
const PODS = arg('pods', 0);
const TRANSFERS = arg('transfers', 2);

function nodeObject(name: string, now: number): ApiObject {
  return { apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'kubernetes.io/hostname': name } }, spec: {}, status: nodeStatus(now) } as unknown as ApiObject;
}

function podObject(name: string, node: string): ApiObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' }, spec: { nodeName: node, containers: [{ name: 'c', image: 'busybox' }] } } as unknown as ApiObject;
}

/** GET `path` on `s` with its admin certificate: status and body */
function get(s: RunningServer, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const u = new URL(path, s.url);
    const req = request({ host: u.hostname, port: u.port, path: u.pathname + u.search, method: 'GET', ca: s.caPem, cert: s.adminCertPem, key: s.adminKeyPem, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** event-loop stalls: the gaps between setImmediate ticks, and the delay histogram */
class StallMeter {
  private last = performance.now();
  private lastCpu = process.cpuUsage();
  private running = true;
  readonly gaps: { at: number; ms: number; cpuMs: number; hrUs: number }[] = [];
  private lastHr = process.hrtime.bigint();
  /** the most CPU time the process used between two ticks: the stall without the other processes' share of the cores */
  private maxCpu = 0;
  private readonly h = monitorEventLoopDelay({ resolution: 10 });
  constructor(private readonly t0: number) {
    this.h.enable();
    const tick = () => {
      const now = performance.now();
      const gap = now - this.last;
      const c = process.cpuUsage();
      const cpu = (c.user - this.lastCpu.user + c.system - this.lastCpu.system) / 1000;
      this.lastCpu = c;
      if (cpu > this.maxCpu) this.maxCpu = cpu;
      const hr = process.hrtime.bigint();
      if (gap >= 20) this.gaps.push({ at: Math.round(now - gap - this.t0), ms: Math.round(gap), cpuMs: Math.round(cpu), hrUs: Number(this.lastHr / 1000n) });
      this.lastHr = hr;
      this.last = now;
      if (this.running) setImmediate(tick);
    };
    setImmediate(tick);
  }
  stop(): { maxStallMs: number; maxTurnCpuMs: number; stallsOver50Ms: number; stallsOver20Ms: number; top: { at: number; ms: number; cpuMs: number; hrUs: number }[]; delayMaxMs: number; delayP99Ms: number } {
    this.running = false;
    this.h.disable();
    const top = [...this.gaps].sort((a, b) => b.cpuMs - a.cpuMs).slice(0, 8);
    return {
      maxStallMs: Math.max(0, ...this.gaps.map((g) => g.ms)),
      maxTurnCpuMs: Math.round(this.maxCpu),
      stallsOver50Ms: this.gaps.filter((g) => g.ms > 50).length,
      stallsOver20Ms: this.gaps.length,
      top,
      delayMaxMs: Math.round(this.h.max / 1e6),
      delayP99Ms: Math.round(this.h.percentile(99) / 1e6),
    };
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'ctlstart-'));
  const names = ['m1', 'm2', 'm3'];
  const initialCluster: Record<string, string> = {};
  for (const n of names) initialCluster[n] = `127.0.0.1:${await freePort()}`;
  const logs: { at: number; member: string; msg: string }[] = [];
  const servers = new Map<string, RunningServer>();
  const quiet = (member: string) => (msg: string) => {
    if (/leads; starting|no longer leads; stopping/.test(msg)) logs.push({ at: performance.now(), member, msg });
  };
  // one PKI for the three (made once, before the members start together)
  await ensurePki(join(root, 'pki'), { hosts: ['localhost', '127.0.0.1', '::1'] });
  await Promise.all(
    names.map(async (name) => {
      const s = await startServer({
        dataDir: join(root, name),
        pkiDir: join(root, 'pki'),
        bindAddress: '127.0.0.1',
        securePort: 0,
        apiDomain: D,
        tlsWorkers: 0,
        log: quiet(name),
        cluster: { name, initialCluster },
      });
      servers.set(name, s);
    }),
  );
  const leaderName = () => names.find((n) => (servers.get(n)!.store as RaftStore).isLeader());
  const waitLeader = async (): Promise<string> => {
    for (;;) {
      const l = leaderName();
      if (l) return l;
      await sleep(50);
    }
  };
  let leader = await waitLeader();
  const s = servers.get(leader)!;
  const defs = sharedDefinitions(D);
  const admission = new SchemaAdmission(defs);
  const gsOf = (group: string, resource: string) => new GenericStore(s.registry.lookup(group, 'v1', resource)!, s.store, admission);
  const nodes = gsOf('', 'nodes');
  const leases = gsOf(`coordination.${D}`, 'leases');
  const pods = gsOf('', 'pods');
  const now = Date.now();
  const t = performance.now();
  const jobs: (() => Promise<unknown>)[] = [];
  for (let i = 0; i < N; i++) {
    const name = `node-${i}`;
    jobs.push(() => nodes.create('', nodeObject(name, now), { dryRun: false, manager: 'bench' }));
    jobs.push(() => leases.create('orch-node-lease', leaseObject(name, now) as unknown as ApiObject, { dryRun: false, manager: 'bench' }));
    for (let p = 0; p < PODS; p++) jobs.push(() => pods.create('default', podObject(`pod-${i}-${p}`, name), { dryRun: false, manager: 'bench' }));
  }
  let next = 0;
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      while (next < jobs.length) await jobs[next++]!();
    }),
  );
  const populateSeconds = (performance.now() - t) / 1000;
  await sleep(2000);

  const transfers = [];
  for (let k = 0; k < TRANSFERS; k++) {
    const from = leader;
    const to = names.find((n) => n !== from)!;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    logs.length = 0;
    const meter = new StallMeter(t0);
    (servers.get(from)!.store as RaftStore).transferLeadership(to);
    // the new leader is ready once every leader-only controller has synced (readiness.ts informer-sync)
    let readyMs = -1;
    for (let i = 0; i < 600; i++) {
      await sleep(25);
      if (leaderName() !== to) continue;
      const r = await get(servers.get(to)!, '/readyz/informer-sync').catch(() => ({ status: 0, body: '' }));
      if (r.status === 200) {
        readyMs = Math.round(performance.now() - t0);
        break;
      }
    }
    await sleep(1500);
    const stalls = meter.stop();
    const cpu = process.cpuUsage(cpu0);
    const started = logs.filter((l) => l.msg.includes('starting'));
    const stopped = logs.filter((l) => l.msg.includes('stopping'));
    transfers.push({
      from,
      to,
      newLeader: leaderName(),
      ...stalls,
      // from the transfer until the new leader's informer-sync readiness passes
      startToSyncedMs: readyMs,
      firstControllerStartAtMs: started.length ? Math.round(started[0]!.at - t0) : -1,
      controllersStarted: started.length,
      controllersStopped: stopped.length,
      cpuMs: Math.round((cpu.user + cpu.system) / 1000),
      loadavg: loadavg().map((x) => Math.round(x * 100) / 100),
    });
    leader = leaderName() ?? (await waitLeader());
    await sleep(2000);
  }
  console.log(JSON.stringify({ nodes: N, leases: N, pods: N * PODS, populateSeconds: Math.round(populateSeconds * 10) / 10, transfers }));
  await Promise.all([...servers.values()].map((x) => x.shutdown()));
  await rm(root, { recursive: true, force: true });
  process.exit(0);
}

await main();
