// ExecSync of the simulated runtime (proto/runtime.proto; the agent's exec
// probes): runs the command as a real host process, as ExecStream does
// (sim-streams.ts), and answers with its output and exit code once it ends.
// Past `timeout` seconds the process group is killed and the call fails with
// DEADLINE_EXCEEDED, which the agent reads as kubelet reads a CRI timeout.

import { spawn } from 'node:child_process';
import { systemClock } from '../clock.js';
import { exitCodeOf, killProcessTree, mapMounts, processOptions } from './sim-process.js';
import { SimError, type SimState } from './sim-state.js';
import { execArgv } from './sim-sysctl.js';
import type { ExecSyncResponse } from './types.js';

const INVALID_ARGUMENT = 3;
const DEADLINE_EXCEEDED = 4;
const FAILED_PRECONDITION = 9;
/** as much output as a CRI runtime keeps of an ExecSync (containerd: 16 MiB) */
const MAX_OUTPUT = 16 * 1024 * 1024;

export function execSync(state: SimState) {
  return (r: Record<string, unknown>): Promise<ExecSyncResponse> => {
    const c = state.container(String(r.containerId ?? ''));
    if (c.state !== 'CONTAINER_RUNNING') throw new SimError(FAILED_PRECONDITION, `container ${c.id} is not running (${c.state})`);
    // no mount namespace: container paths in the command become host paths, as for ExecStream (sim-process.ts mapMounts)
    const cmd = execArgv(((r.cmd ?? []) as string[]).map((a) => mapMounts(a, c.config.mounts)), state.sandbox(c.sandboxId).config.linux?.sysctls);
    if (cmd.length === 0) throw new SimError(INVALID_ARGUMENT, 'exec needs a command');
    const timeoutS = Number(r.timeout ?? 0);
    return new Promise((resolve, reject) => {
      const proc = spawn(cmd[0]!, cmd.slice(1), { ...processOptions(c.config), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      let size = 0;
      const keep = (into: Buffer[]) => (d: Buffer) => {
        if (size >= MAX_OUTPUT) return;
        into.push(d.subarray(0, MAX_OUTPUT - size));
        size += d.length;
      };
      proc.stdout.on('data', keep(out));
      proc.stderr.on('data', keep(err));
      let spawnError: NodeJS.ErrnoException | undefined;
      proc.on('error', (e) => (spawnError = e));
      let timedOut = false;
      // a real timer: the command runs in real time whatever clock the state has
      const timer = timeoutS > 0 ? systemClock.setTimeout(() => ((timedOut = true), killProcessTree(proc, 'SIGKILL')), timeoutS * 1000) : undefined;
      proc.on('close', (code, signal) => {
        if (timer !== undefined) systemClock.clearTimeout(timer);
        if (timedOut) return reject(new SimError(DEADLINE_EXCEEDED, `timeout ${timeoutS}s exceeded: context deadline exceeded`));
        if (spawnError) {
          // as ExecStream: the runtime reports an executable it cannot start on stderr, 126/127
          const missing = spawnError.code === 'ENOENT';
          const why = missing ? 'executable file not found in $PATH' : spawnError.message;
          return resolve({ stdout: Buffer.alloc(0), stderr: Buffer.from(`exec failed: ${cmd[0]}: ${why}\n`), exitCode: missing ? 127 : 126 });
        }
        resolve({ stdout: Buffer.concat(out), stderr: Buffer.concat(err), exitCode: exitCodeOf(code, signal) });
      });
    });
  };
}
