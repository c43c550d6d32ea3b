// Host readings (spec 002 §1, §2.1): CPU, memory, disk and process counts
// from /proc, statfs and the cgroup v2 files when present. A JSON readings
// file (`hostReadingsFile`) may replace any measured value; it is re-read on
// every sample, so a simulation or test changes what the agent sees without
// touching the agent.

import { parseQuantity } from '../core/quantity.js';
import { readdir, readFile, statfs } from 'node:fs/promises';
import { availableParallelism } from 'node:os';

export interface HostReadings {
  cpuCores: number;
  memoryTotalBytes: number;
  memoryAvailableBytes: number;
  diskTotalBytes: number;
  diskAvailableBytes: number;
  pidsMax: number;
  pidsUsed: number;
  /** false when the network is misconfigured (NetworkUnavailable) */
  networkReady: boolean;
}

const readText = (p: string) => readFile(p, 'utf8').then((s) => s.trim(), () => undefined);

async function meminfo(): Promise<{ total: number; available: number }> {
  const text = (await readText('/proc/meminfo')) ?? '';
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? 0) * 1024;
  return { total: kb('MemTotal'), available: kb('MemAvailable') };
}

/** cgroup v2 limits of the agent's own cgroup (the unified hierarchy at /sys/fs/cgroup) */
async function cgroup(): Promise<{ memMax?: number; memCurrent?: number; cpu?: number; pidsMax?: number; pidsCurrent?: number }> {
  const num = async (f: string) => {
    const v = await readText(`/sys/fs/cgroup/${f}`);
    return v && /^\d+$/.test(v) ? Number(v) : undefined;
  };
  const cpuMax = await readText('/sys/fs/cgroup/cpu.max');
  const m = cpuMax ? /^(\d+)\s+(\d+)$/.exec(cpuMax) : null;
  return {
    memMax: await num('memory.max'),
    memCurrent: await num('memory.current'),
    cpu: m ? Number(m[1]) / Number(m[2]) : undefined,
    pidsMax: await num('pids.max'),
    pidsCurrent: await num('pids.current'),
  };
}

export async function measureHost(diskPath: string): Promise<HostReadings> {
  const [mem, cg] = await Promise.all([meminfo(), cgroup()]);
  let memoryTotalBytes = mem.total;
  let memoryAvailableBytes = mem.available;
  if (cg.memMax !== undefined && cg.memMax < memoryTotalBytes) {
    memoryTotalBytes = cg.memMax;
    memoryAvailableBytes = Math.max(0, Math.min(mem.available, cg.memMax - (cg.memCurrent ?? 0)));
  }
  let diskTotalBytes = 0;
  let diskAvailableBytes = 0;
  try {
    const s = await statfs(diskPath);
    diskTotalBytes = s.blocks * s.bsize;
    diskAvailableBytes = s.bavail * s.bsize;
  } catch {
    /* path not there yet */
  }
  const pidMax = Number((await readText('/proc/sys/kernel/pid_max')) ?? 32768);
  const procs = (await readdir('/proc').catch(() => [] as string[])).filter((n) => /^\d+$/.test(n)).length;
  const cores = cg.cpu !== undefined ? Math.min(availableParallelism(), cg.cpu) : availableParallelism();
  return {
    cpuCores: cores,
    memoryTotalBytes,
    memoryAvailableBytes,
    diskTotalBytes,
    diskAvailableBytes,
    pidsMax: cg.pidsMax !== undefined ? Math.min(cg.pidsMax, pidMax) : pidMax,
    pidsUsed: cg.pidsMax !== undefined && cg.pidsCurrent !== undefined ? cg.pidsCurrent : procs,
    networkReady: true,
  };
}

/** measured readings with the readings file's values over them; a bad file is reported, not fatal */
export async function sampleHost(diskPath: string, readingsFile: string, warn: (m: string) => void): Promise<HostReadings> {
  const measured = await measureHost(diskPath);
  if (!readingsFile) return measured;
  const text = await readText(readingsFile);
  if (text === undefined) return measured;
  try {
    const o = JSON.parse(text) as Record<string, unknown>;
    const out: HostReadings = { ...measured };
    for (const k of Object.keys(measured) as (keyof HostReadings)[]) {
      const v = o[k];
      if (v === undefined) continue;
      if (typeof v !== typeof measured[k]) throw new Error(`field "${k}" must be a ${typeof measured[k]}`);
      (out as unknown as Record<string, unknown>)[k] = v;
    }
    return out;
  } catch (e) {
    warn(`host readings file ${readingsFile}: ${(e as Error).message}; using measured values`);
    return measured;
  }
}

/** a Kubernetes quantity (100Mi, 1G, 512) in base units, or a percentage of `total` ("10%") */
export function parseThreshold(v: string, total: number): number | undefined {
  const pct = /^(\d+(?:\.\d+)?)%$/.exec(v);
  if (pct) return (Number(pct[1]) / 100) * total;
  const q = parseQuantity(v);
  return q !== undefined && q >= 0 ? q : undefined;
}

export interface Pressure {
  memory: boolean;
  disk: boolean;
  pid: boolean;
}

/** compare readings with `evictionHard` (memory.available, nodefs.available, pid.available) */
export function pressures(r: HostReadings, evictionHard: Record<string, string>): Pressure {
  const below = (key: string, available: number, total: number) => {
    const t = evictionHard[key];
    if (!t) return false;
    const threshold = parseThreshold(t, total);
    return threshold !== undefined && available < threshold;
  };
  return {
    memory: below('memory.available', r.memoryAvailableBytes, r.memoryTotalBytes),
    disk: r.diskTotalBytes > 0 && below('nodefs.available', r.diskAvailableBytes, r.diskTotalBytes),
    pid: below('pid.available', r.pidsMax - r.pidsUsed, r.pidsMax),
  };
}
