// Containers whose command is a program the host has (docs/nodeagent.md
// "What the simulator runs"): `python -u /opt/server.py 1234`, `cat`,
// `sleep infinity`, `/usr/bin/env …` run as real processes, like `sh -c`
// ones (sim-process.ts), with the pod's mount paths mapped to host paths in
// every argument, as for scripts. The rule: argv[0] (command, else args) is an
// absolute path to an executable file, or a bare name found executable on the
// simulator's PATH. Anything else (`/server`, `nginx-ingress-controller`, no
// command at all) is only pretended, as before.
//
// Security note: there is no isolation. The process runs on the host as the
// simulator's (the agent's) user — or, the simulator being root, as the
// container's runAsUser/runAsGroup (sim-user.ts) — sees the host's files and network, and
// takes whatever the pod spec says as its argv. This is a simulator for
// tests and development, not a runtime for untrusted pods.

import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { mapMounts } from './sim-process.js';
import type { ContainerConfig } from './types.js';

const shellQuote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

function executable(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** the host path of a program name: absolute as given, else the first match on PATH */
export function hostExecutable(name: string, path = process.env.PATH ?? ''): string | undefined {
  if (!name) return undefined;
  if (isAbsolute(name)) return executable(name) ? name : undefined;
  if (name.includes('/')) return undefined;
  for (const dir of path.split(delimiter)) if (dir && executable(join(dir, name))) return join(dir, name);
  return undefined;
}

/**
 * an `exec …` script running the container's argv when argv[0] is on the
 * host (startContainerProcess runs scripts; `exec` leaves no shell between
 * the process and the signals that stop it), else undefined
 */
export function hostCommandScript(config: ContainerConfig): string | undefined {
  // no mount namespace: container paths of the pod's mounts become their host paths (sim-process.ts mapMounts)
  const argv = [...(config.command ?? []), ...(config.args ?? [])].map((a) => mapMounts(a, config.mounts));
  if (argv.length === 0 || !hostExecutable(argv[0]!)) return undefined;
  return `exec ${argv.map(shellQuote).join(' ')}`;
}
