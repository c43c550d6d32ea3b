// CPU time (user + system) of a process tree from /proc: on a shared machine
// throughput moves with the neighbours' load, CPU per operation much less, so
// the benches report both.

import { readdirSync, readFileSync } from 'node:fs';

const TICKS = 100; // USER_HZ on Linux

function stat(pid: number): { ppid: number; cpuMs: number } | undefined {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    // fields after the name: state(0) ppid(1) ... utime(11) stime(12)
    return { ppid: Number(f[1]), cpuMs: ((Number(f[11]) + Number(f[12])) * 1000) / TICKS };
  } catch {
    return undefined;
  }
}

/** CPU ms used so far by the given processes and all their descendants */
export function treeCpuMs(roots: number[]): number {
  const all = new Map<number, { ppid: number; cpuMs: number }>();
  for (const e of readdirSync('/proc')) {
    const pid = Number(e);
    if (!Number.isInteger(pid)) continue;
    const s = stat(pid);
    if (s) all.set(pid, s);
  }
  const inTree = new Set(roots);
  let grew = true;
  while (grew) {
    grew = false;
    for (const [pid, s] of all) {
      if (!inTree.has(pid) && inTree.has(s.ppid)) {
        inTree.add(pid);
        grew = true;
      }
    }
  }
  let ms = 0;
  for (const pid of inTree) ms += all.get(pid)?.cpuMs ?? 0;
  return ms;
}

/** CPU ms used so far by exactly these processes */
export function processCpuMs(pids: number[]): number {
  return pids.reduce((sum, pid) => sum + (stat(pid)?.cpuMs ?? 0), 0);
}

/** CPU ms of this process (all threads) */
export function selfCpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/**
 * CPU ms so far of one process split into its JavaScript thread (`main`, the
 * thread whose id is the pid), its other threads (`threads`: V8's GC and
 * compiler helpers, libuv's pool running fsyncs and level batches, LevelDB's
 * compaction; Node 20 names them all "node", so they are not told apart), and
 * its descendant processes (`children`: a member's TLS workers).
 */
export function threadCpuMs(pid: number): { main: number; threads: number; children: number } {
  const out = { main: 0, threads: 0, children: 0 };
  let tids: string[] = [];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const s = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
      const ms = ((Number(f[11]) + Number(f[12])) * 1000) / TICKS;
      if (Number(tid) === pid) out.main += ms;
      else out.threads += ms;
    } catch {
      // the thread ended
    }
  }
  out.children = treeCpuMs([pid]) - (stat(pid)?.cpuMs ?? 0);
  return out;
}
