// kube's e2e test image agnhost, emulated in the simulated runtime
// (docs/nodeagent.md "What the simulator runs"). Its container runs
// `/agnhost <subcommand> <flags>` (the image's ENTRYPOINT, with CMD `pause`
// when the pod gives neither command nor args: sim-images.ts); a command of
// `/agnhost-2` is the image's second copy of the binary. Emulated:
//   pause             prints `Paused`, runs until stopped; SIGTERM ends it with 2
//   entrypoint-tester prints its whole argv as Go prints a []string, exits 0
//   mounttest         the file flags: --new_file_0644/0666/0660/0777 (write
//                     `mount-tester new file`, read back), --file_mode,
//                     --file_perm, --file_content, --file_content_in_loop with
//                     --retry_time and --break_on_expected_content (a read every
//                     2 s); exit 1 when a step failed. Paths are the container's,
//                     read through the mounts' host paths (mapMounts), as the
//                     simulator's user. --fs_type and --file_owner are not
//                     emulated (no mounts, one user): they print nothing.
// Other subcommands run until stopped and log nothing, as before.

import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import type { Clock } from '../clock.js';
import type { ContainerLog } from './sim-logs.js';
import { mapMounts } from './sim-process.js';
import { AGNHOST_REPOSITORY, imageRepository } from './sim-images.js';
import type { ContainerConfig } from './types.js';

const NEW_FILE_CONTENT = 'mount-tester new file\n';

/** the running emulation: what SIGTERM ends it with, and how it stops */
export interface AgnhostProcess {
  sigtermExit: number;
  stop(): void;
}

interface Container {
  config: ContainerConfig;
  log: ContainerLog;
}

/** agnhost's argv when the container runs the agnhost binary of the agnhost image, else undefined */
export function agnhostArgv(config: ContainerConfig): string[] | undefined {
  if (imageRepository(config.image.image) !== AGNHOST_REPOSITORY) return undefined;
  const argv = [...(config.command ?? []), ...(config.args ?? [])];
  return /^agnhost(-2)?$/.test(basename(argv[0] ?? '')) ? argv : undefined;
}

/** Go's os.FileMode String of a stat mode: type and special letters, then rwx bits */
export function goFileMode(mode: number, isDir: boolean): string {
  const letters = `${isDir ? 'd' : ''}${mode & 0o4000 ? 'u' : ''}${mode & 0o2000 ? 'g' : ''}${mode & 0o1000 ? 't' : ''}`;
  const rwx = [...'rwxrwxrwx'].map((ch, i) => (mode & (1 << (8 - i)) ? ch : '-')).join('');
  return `${letters || '-'}${rwx}`;
}

/** `--name=value` or `--name value` flags (cobra's forms) */
function parseFlags(args: readonly string[]): Map<string, string> {
  const flags = new Map<string, string>();
  for (let i = 0; i < args.length; i++) {
    const m = /^--?([\w-]+)(?:=(.*))?$/s.exec(args[i]!);
    if (!m) continue;
    if (m[2] !== undefined) flags.set(m[1]!, m[2]);
    else if (i + 1 < args.length && !args[i + 1]!.startsWith('-')) flags.set(m[1]!, args[++i]!);
    else flags.set(m[1]!, 'true');
  }
  return flags;
}

const errText = (e: unknown): string => {
  const err = e as NodeJS.ErrnoException;
  const what = err.code === 'ENOENT' ? 'no such file or directory' : err.code === 'EACCES' ? 'permission denied' : err.code === 'EISDIR' ? 'is a directory' : err.message;
  return `open ${err.path ?? ''}: ${what}`;
};

/**
 * mounttest's steps in its order; `out` gets its lines. The loop of
 * --file_content_in_loop runs on `clock`; `done` gets the exit code.
 */
function mounttest(c: Container, flags: Map<string, string>, out: (text: string) => void, clock: Clock, done: (code: number) => void): { cancel(): void } {
  const host = (p: string) => mapMounts(p, c.config.mounts);
  let failed = false;
  const readContent = (p: string): void => {
    try {
      out(`content of file "${p}": ${readFileSync(host(p), 'utf8')}\n`);
    } catch (e) {
      out(`error reading file content for "${p}": ${errText(e).replace(host(p), p)}\n`);
      failed = true;
    }
  };
  for (const [flag, perm] of [['new_file_0644', 0o644], ['new_file_0666', 0o666], ['new_file_0660', 0o660], ['new_file_0777', 0o777]] as const) {
    const p = flags.get(flag);
    if (!p) continue;
    try {
      writeFileSync(host(p), NEW_FILE_CONTENT, { mode: perm });
      chmodSync(host(p), perm); // mounttest clears its umask
      readContent(p);
    } catch (e) {
      out(`error writing new file "${p}": ${errText(e).replace(host(p), p)}\n`);
      failed = true;
    }
  }
  for (const [flag, label, show] of [
    ['file_mode', 'mode', (m: number, d: boolean) => goFileMode(m, d)],
    ['file_perm', 'perms', (m: number, d: boolean) => goFileMode(m & 0o777, d).replace(/^d/, '-')],
  ] as const) {
    const p = flags.get(flag);
    if (!p) continue;
    try {
      const st = statSync(host(p));
      out(`${label} of file "${p}": ${show(st.mode & 0o7777, st.isDirectory())}\n`);
    } catch (e) {
      out(`error reading file ${label} of ${p}: ${errText(e).replace(host(p), p)}\n`);
      failed = true;
    }
  }
  const content = flags.get('file_content');
  if (content) readContent(content);
  const loop = flags.get('file_content_in_loop');
  let timer: unknown;
  const finish = (loopFailed: boolean) => done(failed || loopFailed ? 1 : 0);
  if (!loop) {
    timer = clock.setTimeout(() => finish(false), 0);
    return { cancel: () => clock.clearTimeout(timer) };
  }
  const retryMs = Number(flags.get('retry_time') ?? 180) * 1000;
  const breakOnExpected = flags.get('break_on_expected_content') !== 'false';
  const start = clock.now();
  const round = (): void => {
    let err = false;
    try {
      const text = readFileSync(host(loop), 'utf8');
      out(`content of file "${loop}": ${text}\n`);
      if (breakOnExpected && text === NEW_FILE_CONTENT) return finish(false);
      if (breakOnExpected) out(`Unexpected content. Expected: ${NEW_FILE_CONTENT}. Retrying`);
    } catch (e) {
      out(`Error reading file ${loop}: ${errText(e).replace(host(loop), loop)}, retrying\n`);
      err = true;
    }
    timer = clock.setTimeout(() => (clock.now() - start < retryMs ? round() : finish(err)), 2000);
  };
  round();
  return { cancel: () => clock.clearTimeout(timer) };
}

/**
 * starts the emulated agnhost of container `c` (argv from agnhostArgv), or
 * answers undefined for a subcommand that is not emulated; `exit` ends the
 * container with a code
 */
export function startAgnhost(c: Container, argv: readonly string[], clock: Clock, exit: (code: number) => void): AgnhostProcess | undefined {
  // Go's Printf: each line carries its own newline (mounttest's "Unexpected content" has none)
  const out = (text: string) => c.log.write('stdout', Buffer.from(text));
  const sub = argv[1];
  if (sub === 'pause') {
    out('Paused\n');
    return { sigtermExit: 2, stop: () => undefined };
  }
  if (sub === 'entrypoint-tester') {
    out(`[${argv.join(' ')}]\n`);
    const t = clock.setTimeout(() => exit(0), 0);
    return { sigtermExit: 143, stop: () => clock.clearTimeout(t) };
  }
  if (sub === 'mounttest') {
    const run = mounttest(c, parseFlags(argv.slice(2)), out, clock, exit);
    return { sigtermExit: 143, stop: () => run.cancel() };
  }
  return undefined;
}
