// A free loopback TCP port (for peer ports and servers started on a chosen port).
//
// Picked below Linux's ephemeral range (ip_local_port_range, 32768–60999 by
// default), not with listen(0): between this check and the server's own
// bind (seconds later for a member process that starts up), any other
// process's listen(0) on the host — other tests, other benches — may be
// given a port from the ephemeral range that was just released here, and the
// member then exits with EADDRINUSE ("m2 exited while starting", a chaos run
// failing during start-up; docs/performance.md "The chaos test over the TLS
// frames, 40 runs"). Below the range only a process that names the port
// itself can take it.
//
// Test files run in parallel workers (vitest's pool): each worker picks from
// its own slice of the range (VITEST_POOL_ID), so a port one worker checked
// but has not bound yet cannot be handed to another; within a worker a port
// is handed out once.
import { createServer } from 'node:net';

const SLICES = 4;
const SLICE = 3_000;
const slot = (Math.max(1, Number(process.env.VITEST_POOL_ID ?? 1)) - 1) % SLICES;
const LOW = 20_000 + slot * SLICE;
const HIGH = LOW + SLICE;
const handedOut = new Set<number>();

function tryListen(port: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', (err: NodeJS.ErrnoException) => (err.code === 'EADDRINUSE' || err.code === 'EACCES' ? resolve(false) : reject(err)));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = LOW + Math.floor(Math.random() * (HIGH - LOW));
    if (handedOut.has(port)) continue;
    if (await tryListen(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error(`no free port in ${LOW}–${HIGH}`);
}

/** `n` consecutive free ports (a script that numbers its members' ports from one base) */
export async function freePortRun(n: number): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const base = LOW + Math.floor(Math.random() * (HIGH - LOW - n));
    const run = Array.from({ length: n }, (_, i) => base + i);
    if (run.some((p) => handedOut.has(p))) continue;
    let free = true;
    for (const p of run) if (!(await tryListen(p))) free = false;
    if (!free) continue;
    for (const p of run) handedOut.add(p);
    return base;
  }
  throw new Error(`no ${n} consecutive free ports in ${LOW}–${HIGH}`);
}
