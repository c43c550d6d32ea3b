// Real processes of the simulated runtime (docs/nodeagent.md "Streams"): a
// container whose command is `sh -c <script>` (and not one of the forms the
// simulator only pretends to run), or `echo …`, runs the script on the host, its output
// becoming the container's log; `exec` runs its command as a process of its
// own. There is no isolation: processes run as the simulator's user (or the
// container's runAsUser/runAsGroup when the simulator is root: sim-user.ts), in its
// working directory, with the container's environment and the host's PATH and
// HOME only (see containerEnv). Each process leads its own process group, so
// stopping a container ends everything its script started.
//
// Mounts (CRI `Mount`s: a pod's volumes, its service-account token): with no
// mount namespace, a process cannot see a host directory at the container
// path, so the simulator rewrites every occurrence of a mount's container
// path, as a whole path or a path prefix, to its host path in the script, the
// exec command's arguments and the working directory (`mapMounts`; the
// longest container path wins). `cat /var/run/secrets/…/token` so reads the
// file the agent wrote (docs/nodeagent.md "Volumes").

import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { constants } from 'node:os';
import type { ContainerConfig, Mount } from './types.js';
import type { ContainerLog } from './sim-logs.js';
import { processUser, reachMounts } from './sim-user.js';

/** what a container process needs of the simulated container (sim-state.ts's SimContainer has it) */
export interface ProcessContainer {
  config: ContainerConfig;
  log: ContainerLog;
  proc?: ChildProcess;
}

const shellQuote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

const escapeRe = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * `text` with each container path of `mounts` replaced by its host path where
 * it stands as a path: not preceded by a path character, and followed by the
 * end, `/` or a character that cannot continue a file name
 */
export function mapMounts(text: string, mounts: readonly Mount[] | undefined): string {
  const list = (mounts ?? []).filter((m) => m.containerPath.startsWith('/') && m.containerPath.length > 1 && m.hostPath);
  if (list.length === 0) return text;
  const byPath = new Map(list.map((m) => [m.containerPath.replace(/\/+$/, ''), m.hostPath]));
  const alternatives = [...byPath.keys()].sort((a, b) => b.length - a.length).map(escapeRe);
  const re = new RegExp(`(?<![\\w.\\-/])(${alternatives.join('|')})(?![\\w.\\-])`, 'g');
  return text.replace(re, (p: string) => byPath.get(p) ?? p);
}

/**
 * the script of an `sh -c <script>` / `/bin/sh -c <script>` container, or of
 * a plain `echo …` (as `kubectl create job x --image=busybox -- echo hi`
 * makes: it prints and exits 0), else undefined
 */
export function realScript(config: ContainerConfig): string | undefined {
  const argv = [...(config.command ?? []), ...(config.args ?? [])];
  if ((argv[0] === 'sh' || argv[0] === '/bin/sh') && argv[1] === '-c' && argv.length === 3) return mapMounts(argv[2]!, config.mounts);
  if (argv[0] === 'echo' || argv[0] === '/bin/echo') return ['echo', ...argv.slice(1).map((a) => shellQuote(mapMounts(a, config.mounts)))].join(' ');
  return undefined;
}

/** the container's working directory when the host has it (images are not unpacked), else the simulator's */
export function containerCwd(config: ContainerConfig): string | undefined {
  const dir = config.workingDir ? mapMounts(config.workingDir, config.mounts) : '';
  return dir && existsSync(dir) ? dir : undefined;
}

/**
 * a container's environment: what the agent set (CRI `envs`) over the host's
 * PATH and HOME — the two a runtime gives every container (the image's PATH,
 * the user's HOME) — and nothing else of the simulator's own environment: in
 * kube a container never sees the node's variables (kube's downwardapi.go and
 * configmap.go e2e tests print a container's whole `env`)
 */
export function containerEnv(config: ContainerConfig): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const k of ['PATH', 'HOME']) if (process.env[k] !== undefined) env[k] = process.env[k];
  for (const e of config.envs ?? []) env[e.key] = e.value;
  return env;
}

/**
 * how a process of the container is spawned: its working directory and environment, and — when the
 * simulator runs as root and the container asks for another user — that uid and gid, with HOME `/`
 * unless the container sets it, `/` as the working directory the host lacks, and the mounts' host
 * parents made traversable (sim-user.ts)
 */
export function processOptions(config: ContainerConfig): { cwd?: string; env: NodeJS.ProcessEnv; uid?: number; gid?: number } {
  const cwd = containerCwd(config);
  const env = containerEnv(config);
  const user = processUser(config);
  if (!user) return { cwd, env };
  reachMounts(config);
  if (!config.envs?.some((e) => e.key === 'HOME')) env.HOME = '/';
  return { cwd: cwd ?? '/', env, ...user };
}

/** the shell's convention: 128 + signal number for a process ended by a signal */
export function exitCodeOf(code: number | null, signal: NodeJS.Signals | null): number {
  if (code !== null) return code;
  const n = signal ? (constants.signals as Record<string, number>)[signal] : undefined;
  return 128 + (n ?? 9);
}

export function killProcessTree(proc: ChildProcess, signal: NodeJS.Signals): void {
  if (proc.pid === undefined || proc.exitCode !== null || proc.signalCode !== null) return;
  try {
    process.kill(-proc.pid, signal);
  } catch {
    try {
      proc.kill(signal);
    } catch {
      /* already gone */
    }
  }
}

/**
 * the shell that runs containers' scripts: bash where the host has it. Kube's
 * test images' `sh` is busybox ash, which passes variables whose names are not
 * shell identifiers (`data-1`, from `envFrom` of a ConfigMap; kubelet 1.32
 * allows them) on to the commands it runs; dash, Debian's /bin/sh, drops them
 * (kube's configmap.go "should be consumable via the environment" test), bash
 * keeps them. bash also knows ash's `[[ … ]]`, which dash does not. `--norc`: bash
 * sources ~/.bashrc when its stdin is a socket (it takes that for rshd), and a
 * container's stdin is one (Node's pipe); the host user's startup file must not
 * run in, nor set variables for, every container.
 */
export const SCRIPT_SHELL: readonly string[] = existsSync('/bin/bash') ? ['/bin/bash', '--norc'] : ['/bin/sh'];

/** runs the container's script; `onExit` when the process ended and its output was read */
export function startContainerProcess(c: ProcessContainer, script: string, onExit: (code: number, reason: string) => void): void {
  const proc = spawn(SCRIPT_SHELL[0]!, [...SCRIPT_SHELL.slice(1), '-c', script], {
    ...processOptions(c.config),
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
  });
  c.proc = proc;
  proc.stdout!.on('data', (d: Buffer) => c.log.write('stdout', d));
  proc.stderr!.on('data', (d: Buffer) => c.log.write('stderr', d));
  // stdin belongs to whoever attaches; a write after the process ended must not crash the simulator
  proc.stdin!.on('error', () => undefined);
  proc.on('error', (e) => {
    c.log.write('stderr', Buffer.from(`${e.message}\n`));
    onExit(127, 'Error');
  });
  // 'close' comes after the output streams ended, so the log is complete
  proc.on('close', (code, signal) => {
    const exit = exitCodeOf(code, signal);
    onExit(exit, exit === 0 ? 'Completed' : 'Error');
  });
  proc.unref();
}
