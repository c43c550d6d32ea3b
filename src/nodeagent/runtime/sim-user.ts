// The container's user in the simulated runtime (docs/nodeagent.md "What the
// simulator runs"). Images: the few whose USER kube's e2e tests depend on
// (sim-images.ts) report it in ImageStatus (CRI `Image.uid` / `username`, parsed as containerd
// parses an image config's USER); every other image has none, which kubelet
// takes for root. Processes: a container's real processes (script, host
// command, exec) run as the CRI config's run_as_user / run_as_group when the
// simulator runs as root and these differ from its own user — group 0 when
// only a user is given (no image /etc/passwd to look the user's group up in);
// supplementary groups and a run_as_username are not applied. A simulator
// that is not root runs every process as itself, as before.
//
// Such a process has no mount namespace: it reaches a volume through the
// volume's host path, so each directory above a mount's host path must let it
// through (a real runtime bind-mounts the volume, and the container needs no
// access to the host's parents of it). The simulator adds search permission
// for group and others (g+x, o+x, never read) to those that lack it, for the
// agent's own files only (not a hostPath volume's parents); its working directory
// is the container's when the host has it, else `/`, and HOME is `/` unless
// the container sets it (what containerd gives a user the image's
// /etc/passwd does not name).

import { chmodSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { imageConfig } from './sim-images.js';
import type { ContainerConfig, Image } from './types.js';

export { imageRepository } from './sim-images.js';

/** an image config's USER (`uid`, `name`, `uid:gid`) as CRI's Image fields: a number is the uid, else the name */
export function userFields(user: string | undefined): Pick<Image, 'uid' | 'username'> {
  const u = (user ?? '').split(':')[0]!;
  if (!u) return {};
  return /^\d+$/.test(u) ? { uid: { value: Number(u) } } : { username: u };
}

/** what ImageStatus reports of the image's user */
export const imageUserFields = (image: string): Pick<Image, 'uid' | 'username'> => userFields(imageConfig(image)?.user);

/** the uid and gid to spawn the container's processes with, or undefined: as the simulator itself */
export function processUser(config: ContainerConfig, self = { uid: process.getuid?.(), gid: process.getgid?.() }): { uid: number; gid: number } | undefined {
  const sc = config.linux?.securityContext;
  if (self.uid !== 0 || (!sc?.runAsUser && !sc?.runAsGroup)) return undefined;
  const uid = Number(sc.runAsUser?.value ?? 0);
  const gid = Number(sc.runAsGroup?.value ?? 0);
  return uid === self.uid && gid === self.gid ? undefined : { uid, gid };
}

/**
 * adds search permission for group and others to every directory above each mount's host path that
 * lacks it (the group's too: a process of group 0 is judged by a root-owned directory's group bits).
 * Only for the agent's own files (`<root>/pods/<uid>/…`: volumes, the managed /etc/hosts, termination
 * messages), whose directories lie under the root directory the agent was given: the parents of a
 * hostPath volume are the host's and stay as they are (a process of another user may then not reach
 * it, a documented limit).
 */
export function reachMounts(config: ContainerConfig): void {
  const seen = new Set<string>();
  for (const m of config.mounts ?? []) {
    if (!m.hostPath.startsWith('/') || !m.hostPath.includes('/pods/')) continue;
    for (let dir = dirname(m.hostPath); !seen.has(dir); dir = dirname(dir)) {
      seen.add(dir);
      try {
        const mode = statSync(dir).mode & 0o7777;
        if ((mode & 0o011) !== 0o011) chmodSync(dir, mode | 0o011);
      } catch {
        /* a missing directory: the process finds out itself */
      }
      if (dir === '/') break;
    }
  }
}
