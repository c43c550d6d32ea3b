// The closed-loop load driver the write benches share: `total` calls of
// `one(i)` from `inFlight` concurrent callers, with throughput and latency
// percentiles (and, given a CPU reading, server CPU per call).

import { readFileSync } from 'node:fs';

export interface DriveStats {
  opsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  /** server CPU (user + system, all its processes) per call, µs: steadier than throughput on a shared machine */
  cpuUsPerOp?: number;
  /**
   * the host's idle share of all cores over the run (/proc/stat idle + iowait), %: a closed loop that
   * leaves the host idle is bound by a wait (fsync, a hop, a convoy), not by CPU
   */
  hostIdlePct?: number;
}

/** the host's idle and total jiffies so far (the `cpu` line of /proc/stat), undefined off Linux */
function hostJiffies(): { idle: number; total: number } | undefined {
  try {
    const f = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
    return { idle: (f[3] ?? 0) + (f[4] ?? 0), total: f.reduce((a, b) => a + b, 0) };
  } catch {
    return undefined;
  }
}

function idlePctSince(j0: { idle: number; total: number } | undefined): { hostIdlePct?: number } {
  const j1 = hostJiffies();
  if (!j0 || !j1 || j1.total <= j0.total) return {};
  return { hostIdlePct: +((100 * (j1.idle - j0.idle)) / (j1.total - j0.total)).toFixed(1) };
}

export function latencyStats(lat: number[], elapsedMs: number): DriveStats {
  const s = [...lat].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? 0;
  return { opsPerSec: Math.round((lat.length / elapsedMs) * 1000), p50Ms: +q(0.5).toFixed(3), p99Ms: +q(0.99).toFixed(3) };
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** runs `total` calls of `one(i)` with `inFlight` concurrent callers */
export async function drive(total: number, inFlight: number, one: (i: number) => Promise<void>, cpuMs?: () => number): Promise<DriveStats> {
  const lat: number[] = [];
  let next = 0;
  const cpu0 = cpuMs?.() ?? 0;
  const j0 = hostJiffies();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < total) {
        const i = next++;
        const s = performance.now();
        await one(i);
        lat.push(performance.now() - s);
      }
    }),
  );
  const st = { ...latencyStats(lat, performance.now() - t0), ...idlePctSince(j0) };
  return cpuMs ? { ...st, cpuUsPerOp: Math.round(((cpuMs() - cpu0) * 1000) / total) } : st;
}
