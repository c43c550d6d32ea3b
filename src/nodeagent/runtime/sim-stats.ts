// Resource usage of the simulated runtime's containers (CRI `ContainerStats` /
// `ListContainerStats`, proto/runtime.proto; docs/metrics.md):
// - a container that runs a real process (sim-process.ts) reports real figures:
//   its process group (the process leads its own) read from /proc — CPU is the
//   time every live member has run, in ns (/proc/<pid>/schedstat: the scheduler's
//   sum_exec_runtime, what a container cgroup's cpu usage adds up; utime+stime
//   where schedstat is missing), plus cutime+cstime (a reaped child's time is in
//   its reaper's cutime, in 10 ms ticks), memory the sum of VmRSS (the working set
//   of processes that have no page cache of their own); the cumulative CPU never
//   goes down (a member reaped outside the group takes its time with it);
// - a container the simulator only pretends to run reports small, deterministic
//   figures: memory its image-derived size (4–63 MiB, sim-state.ts) and CPU a
//   constant 1–10 millicores from its image name, for the time it has run.
// Times are the simulator's clock (../clock.ts), in ns since the epoch.
//
// Until 2026-11-30 a live process's CPU was its utime+stime ticks too: a container
// that had run less than a tick (`sh -c 'echo hi && sleep 3600'`) read 0, and
// metrics-server's decoder (as orch's) drops a pod any of whose containers reports
// 0 CPU, so it never had metrics (the Python client's metrics e2e test).

import { readdir, readFile } from 'node:fs/promises';
import type { ContainerStats } from './types.js';

/** what the stats need of a simulated container (sim-state.ts's SimContainer has it) */
export interface StatsContainer {
  id: string;
  config: { metadata: { name: string; attempt: number }; image: { image: string }; labels?: Record<string, string>; annotations?: Record<string, string> };
  state: string;
  startedAt: number;
  finishedAt: number;
  memoryBytes: number;
  proc?: { pid?: number | undefined };
  /** the highest cumulative CPU reported (ns): kept monotonic */
  cpuSeen?: number;
}

/** one process of /proc: its group, CPU time in ns (its own and its reaped children's) and resident kB */
export interface ProcSample {
  pgrp: number;
  cpuNs: number;
  rssKb: number;
}

/** Linux's USER_HZ: /proc times are in 1/100 s on every architecture Node runs on */
const TICK_NS = 10_000_000;

/**
 * The fields after `(comm)` of /proc/<pid>/stat (comm may hold spaces and parentheses): the group,
 * the process's own ticks (utime+stime) and its reaped children's (cutime+cstime).
 */
export function parseProcStat(text: string): { pgrp: number; ownTicks: number; childTicks: number } | undefined {
  const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // field 5 pgrp, 14 utime, 15 stime, 16 cutime, 17 cstime (proc(5)); rest[0] is field 3
  const n = (field: number) => Number(rest[field - 3]);
  const pgrp = n(5);
  const ownTicks = n(14) + n(15);
  const childTicks = n(16) + n(17);
  return [pgrp, ownTicks, childTicks].every(Number.isFinite) ? { pgrp, ownTicks, childTicks } : undefined;
}

/** the first field of /proc/<pid>/schedstat: the ns the task has run on a CPU (undefined: none such) */
export function parseSchedstat(text: string): number | undefined {
  const ns = Number(text.trim().split(/\s+/)[0] || Number.NaN);
  return Number.isFinite(ns) && ns >= 0 ? ns : undefined;
}

/** VmRSS of /proc/<pid>/status, kB (absent for kernel threads and zombies: 0) */
export function parseVmRss(text: string): number {
  return Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(text)?.[1] ?? 0);
}

/** every process of the host, read once per stats call; processes that end meanwhile are skipped */
export async function readProcesses(procRoot = '/proc'): Promise<ProcSample[]> {
  const pids = (await readdir(procRoot).catch(() => [] as string[])).filter((d) => /^\d+$/.test(d));
  const out: ProcSample[] = [];
  await Promise.all(
    pids.map(async (pid) => {
      try {
        const stat = parseProcStat(await readFile(`${procRoot}/${pid}/stat`, 'utf8'));
        if (!stat) return;
        const [status, schedstat] = await Promise.all([
          readFile(`${procRoot}/${pid}/status`, 'utf8').catch(() => ''),
          readFile(`${procRoot}/${pid}/schedstat`, 'utf8').catch(() => ''),
        ]);
        const ownNs = parseSchedstat(schedstat) ?? stat.ownTicks * TICK_NS;
        out.push({ pgrp: stat.pgrp, cpuNs: ownNs + stat.childTicks * TICK_NS, rssKb: parseVmRss(status) });
      } catch {
        /* the process ended */
      }
    }),
  );
  return out;
}

function hash(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619) >>> 0;
  return h;
}

/** the constant CPU use of a container the simulator only pretends to run: 1–10 millicores */
export function simulatedMillicores(image: string): number {
  return 1 + (hash(`cpu:${image}`) % 10);
}

/**
 * The stats of one container at `nowNs`. `procs`: the host's processes (readProcesses), needed
 * only when some container runs a real process.
 */
export function containerStats(c: StatsContainer, nowNs: number, procs: ProcSample[] | undefined): ContainerStats {
  const running = c.state === 'CONTAINER_RUNNING';
  let cpu: number;
  let memory: number;
  const pid = c.proc?.pid;
  if (pid !== undefined && procs) {
    const group = procs.filter((p) => p.pgrp === pid);
    cpu = group.reduce((s, p) => s + p.cpuNs, 0);
    memory = running ? group.reduce((s, p) => s + p.rssKb, 0) * 1024 : 0;
  } else {
    const end = running ? nowNs : c.finishedAt;
    const ranNs = c.startedAt > 0 ? Math.max(0, end - c.startedAt) : 0;
    cpu = Math.floor((ranNs * simulatedMillicores(c.config.image.image)) / 1000);
    memory = running ? c.memoryBytes : 0;
  }
  cpu = Math.max(cpu, c.cpuSeen ?? 0);
  c.cpuSeen = cpu;
  return {
    attributes: { id: c.id, metadata: c.config.metadata, labels: c.config.labels ?? {}, annotations: c.config.annotations ?? {} },
    cpu: { timestamp: nowNs, usageCoreNanoSeconds: { value: cpu } },
    memory: { timestamp: nowNs, workingSetBytes: { value: memory } },
  };
}
