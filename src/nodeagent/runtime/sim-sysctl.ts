// The simulator's `sysctl` (docs/nodeagent.md "What the simulator runs"): its
// processes share the host's kernel, so a real `sysctl kernel.shm_rmid_forced`
// would print the host's value, not the one the pod's sandbox was configured
// with (CRI LinuxPodSandboxConfig.sysctls). A container or exec command whose
// argv[0] is `sysctl` or a path ending in `/sysctl`, with only names and the
// options `-n` (values only) and `-e` (no error for unknown names), is answered
// here: `name = value` lines as procps and busybox print them, the sandbox's
// value for the names it set, the host's /proc/sys value for the others. Any
// other form (`-w`, `-a`, `name=value`, `sh -c 'sysctl …'`) runs as before.

import { readFileSync } from 'node:fs';
import { normalizeSysctlName } from '../../core/sysctl.js';

export interface SysctlAnswer {
  stdout: string;
  stderr: string;
  code: number;
}

/** a dotted name's file under /proc/sys (a `/` inside a dotted name stands for a `.` of the file name) */
export const procSysPath = (dotted: string): string => `/proc/sys/${dotted.replace(/[./]/g, (c) => (c === '.' ? '/' : '.'))}`;

function readHost(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').replace(/\n$/, '');
  } catch {
    return undefined;
  }
}

const isSysctl = (argv0: string | undefined): boolean => argv0 === 'sysctl' || (argv0 ?? '').endsWith('/sysctl');

/**
 * the answer to `argv` when it is a sysctl read the simulator answers, else
 * undefined; `sandbox`: the sandbox's sysctls by dotted name
 */
export function sysctlAnswer(argv: readonly string[], sandbox: Readonly<Record<string, string>> = {}, host: (path: string) => string | undefined = readHost): SysctlAnswer | undefined {
  if (!isSysctl(argv[0])) return undefined;
  const opts = argv.slice(1).filter((a) => a.startsWith('-'));
  const names = argv.slice(1).filter((a) => !a.startsWith('-'));
  if (names.length === 0 || opts.some((o) => !/^-[ne]+$/.test(o)) || names.some((n) => n.includes('='))) return undefined;
  const valuesOnly = opts.some((o) => o.includes('n'));
  const ignoreUnknown = opts.some((o) => o.includes('e'));
  const own = new Map(Object.entries(sandbox).map(([k, v]) => [normalizeSysctlName(k), v]));
  let stdout = '';
  let stderr = '';
  let code = 0;
  for (const raw of names) {
    const name = normalizeSysctlName(raw);
    const value = own.get(name) ?? host(procSysPath(name));
    if (value === undefined) {
      if (!ignoreUnknown) {
        stderr += `sysctl: cannot stat ${procSysPath(name)}: No such file or directory\n`;
        code = 255;
      }
      continue;
    }
    stdout += valuesOnly ? `${value}\n` : `${name} = ${value}\n`;
  }
  return { stdout, stderr, code };
}

const shellQuote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/** a script printing an answer (the simulator's real processes run scripts: sim-process.ts) */
export const answerScript = (a: SysctlAnswer): string => `printf '%s' ${shellQuote(a.stdout)}; printf '%s' ${shellQuote(a.stderr)} >&2; exit ${a.code}`;

/** a container's sysctl command as a script, else undefined */
export function sysctlScript(argv: readonly string[], sandbox?: Readonly<Record<string, string>>): string | undefined {
  const a = sysctlAnswer(argv, sandbox);
  return a ? answerScript(a) : undefined;
}

/** an exec command: a sysctl read becomes `/bin/sh -c <script>`, anything else stays as it is */
export function execArgv(argv: string[], sandbox?: Readonly<Record<string, string>>): string[] {
  const script = sysctlScript(argv, sandbox);
  return script === undefined ? argv : ['/bin/sh', '-c', script];
}
