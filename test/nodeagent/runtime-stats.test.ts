// CRI ContainerStats / ListContainerStats of the simulated runtime over its
// Unix socket (docs/metrics.md): deterministic figures for containers it only
// pretends to run (on its clock), real /proc figures for real processes.

import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/nodeagent/clock.js';
import { RuntimeClient } from '../../src/nodeagent/runtime/client.js';
import { type RunningSim, startRuntimeSim } from '../../src/nodeagent/runtime/sim-server.js';
import { parseProcStat, parseSchedstat, parseVmRss, readProcesses, simulatedMillicores } from '../../src/nodeagent/runtime/sim-stats.js';

let dir: string;
let sim: RunningSim;
let rt: RuntimeClient;
/** the simulator's clock stands still unless a test moves it: pretended CPU use grows only then */
let now = 1_700_000_000_000;
const clock: Clock = { now: () => now, setTimeout: (fn, ms) => setTimeout(fn, ms), clearTimeout: (t) => clearTimeout(t as NodeJS.Timeout) };

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'orch-rt-stats-'));
  sim = await startRuntimeSim(join(dir, 'runtime.sock'), [], clock);
  rt = new RuntimeClient(`unix://${sim.socket}`, undefined, 10_000, { ...clock, now: () => Date.now() });
});
afterAll(async () => {
  rt.close();
  await sim.stop();
  await rm(dir, { recursive: true, force: true });
});

const sandbox = async (name: string) => {
  const config = { metadata: { name, uid: `uid-${name}`, namespace: 'default', attempt: 0 } };
  return { id: await rt.runPodSandbox(config), config };
};

/** a busybox container of its own sandbox running `sh -c <script>` (a real process) */
async function startScript(name: string, script: string): Promise<string> {
  await rt.pullImage('busybox');
  const sb = await sandbox(name);
  const id = await rt.createContainer(sb.id, { metadata: { name, attempt: 0 }, image: { image: 'busybox' }, command: ['sh', '-c', script] }, sb.config);
  await rt.startContainer(id);
  return id;
}

async function until<T>(f: () => Promise<T | undefined>, what: string): Promise<T> {
  for (let i = 0; i < 400; i++) {
    const v = await f();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`not reached: ${what}`);
}

describe('container stats of the simulated runtime', () => {
  it('pretended containers: their image-derived memory and 1–10 millicores for the time they ran', async () => {
    await rt.pullImage('nginx');
    const sb = await sandbox('web');
    const id = await rt.createContainer(sb.id, { metadata: { name: 'nginx', attempt: 0 }, image: { image: 'nginx' } }, sb.config);
    await rt.startContainer(id);
    const first = await rt.containerStats(id);
    expect(first.attributes).toMatchObject({ id, metadata: { name: 'nginx', attempt: 0 } });
    expect(first.cpu).toEqual({ timestamp: now * 1e6, usageCoreNanoSeconds: { value: 0 } });
    const mem = first.memory!.workingSetBytes!.value;
    expect(mem % (1024 * 1024)).toBe(0);
    expect(mem).toBeGreaterThanOrEqual(4 * 1024 * 1024);
    expect(mem).toBeLessThan(64 * 1024 * 1024);

    now += 10_000;
    const [s] = await rt.listContainerStats({ podSandboxId: sb.id });
    const m = simulatedMillicores('nginx');
    expect(m).toBeGreaterThanOrEqual(1);
    expect(m).toBeLessThanOrEqual(10);
    // 10 s at m millicores = m × 10 ms of CPU
    expect(s!.cpu).toEqual({ timestamp: now * 1e6, usageCoreNanoSeconds: { value: m * 10_000_000 } });
    expect(s!.memory!.workingSetBytes!.value).toBe(mem);

    await rt.stopContainer(id, 0);
    now += 10_000;
    const after = await rt.containerStats(id);
    // an exited container keeps its CPU time and uses no memory
    expect(after.cpu!.usageCoreNanoSeconds!.value).toBe(m * 10_000_000);
    expect(after.memory!.workingSetBytes!.value).toBe(0);
  });

  it('real processes: the CPU time and resident memory of the process group, children included', async () => {
    // a child in the background burns CPU and is reaped by the shell (its time moves to cutime), then the shell sleeps
    const id = await startScript('busy', '(i=0; while [ $i -lt 150000 ]; do i=$((i+1)); done) & wait; sleep 60');
    // the clock stands still: only real CPU time can be above 0
    const s = await until(async () => {
      const x = await rt.containerStats(id);
      return x.cpu!.usageCoreNanoSeconds!.value >= 50_000_000 ? x : undefined;
    }, 'the busy child used 50 ms of CPU');
    const rss = s.memory!.workingSetBytes!.value;
    expect(rss).toBeGreaterThan(0);
    expect(rss % 1024).toBe(0);
    const [listed] = (await rt.listContainerStats()).filter((x) => x.attributes?.id === id);
    expect(listed!.cpu!.usageCoreNanoSeconds!.value).toBeGreaterThanOrEqual(s.cpu!.usageCoreNanoSeconds!.value);
    await rt.stopContainer(id, 0);
    const stopped = await rt.containerStats(id);
    // the group is gone; the CPU reported never goes down
    expect(stopped.cpu!.usageCoreNanoSeconds!.value).toBeGreaterThanOrEqual(listed!.cpu!.usageCoreNanoSeconds!.value);
    expect(stopped.memory!.workingSetBytes!.value).toBe(0);
  });

  it('a process that ran less than a 10 ms tick still reports CPU time (metrics-server drops a container at 0)', async () => {
    // the Python client's metrics e2e pod: the shell execs `sleep` (bash does for a last command), so the
    // group is one process whose utime+stime is 0 ticks; the scheduler's ns count it ran all the same
    const id = await startScript('hello', 'echo Hello Kubernetes! && sleep 60');
    const s = await until(async () => {
      const x = await rt.containerStats(id);
      return x.memory!.workingSetBytes!.value > 0 ? x : undefined;
    }, 'the shell is running');
    expect(s.cpu!.usageCoreNanoSeconds!.value).toBeGreaterThan(0);
    await rt.stopContainer(id, 0);
  });

  it('CPU of a process: its schedstat ns (utime+stime ticks without one) and its reaped children\'s ticks', async () => {
    const proc = join(dir, 'proc');
    const stat = (pid: number, pgrp: number, own: [number, number], children: [number, number]) =>
      `${pid} (sh) S 1 ${pgrp} ${pgrp} 0 -1 4194560 100 0 0 0 ${own[0]} ${own[1]} ${children[0]} ${children[1]} 20 0 1 0 12345 1000 50`;
    await mkdir(join(proc, '700'), { recursive: true });
    await writeFile(join(proc, '700', 'stat'), stat(700, 700, [0, 0], [2, 1]));
    await writeFile(join(proc, '700', 'schedstat'), '2271536 2615681 7\n');
    await writeFile(join(proc, '700', 'status'), 'Name:\tsh\nVmRSS:\t    1536 kB\n');
    await mkdir(join(proc, '701'));
    await writeFile(join(proc, '701', 'stat'), stat(701, 700, [4, 1], [0, 0]));
    await mkdir(join(proc, 'self'));
    const procs = (await readProcesses(proc)).sort((a, b) => a.cpuNs - b.cpuNs);
    expect(procs).toEqual([
      // 2.27 ms run + 3 reaped ticks
      { pgrp: 700, cpuNs: 2_271_536 + 30_000_000, rssKb: 1536 },
      // no schedstat: 5 ticks of its own
      { pgrp: 700, cpuNs: 50_000_000, rssKb: 0 },
    ]);
    expect(parseSchedstat('')).toBeUndefined();
    expect(parseSchedstat('12 34 5')).toBe(12);
  });

  it('reads /proc lines whose command holds spaces and parentheses', () => {
    const line = '4242 (my (odd) cmd) S 1 4242 4242 0 -1 4194560 100 0 0 0 7 3 11 2 20 0 1 0 12345 1000 50';
    expect(parseProcStat(line)).toEqual({ pgrp: 4242, ownTicks: 7 + 3, childTicks: 11 + 2 });
    expect(parseVmRss('Name:\tsh\nVmRSS:\t    1536 kB\n')).toBe(1536);
    expect(parseVmRss('Name:\tkthreadd\n')).toBe(0);
  });
});
