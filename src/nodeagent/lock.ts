// The agent's lock file (spec 002 §4.2 `--lock-file`, default /var/run/nodeagent.lock):
// created with O_EXCL and holding the owner's pid. A file whose pid is no
// longer a live process is stale (the owner crashed) and is taken over.
// Node has no flock(2) without native code; pid + O_EXCL gives the same
// "one agent per lock path" guarantee on one host (docs/nodeagent.md).

import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

export class LockHeldError extends Error {}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export interface FileLock {
  path: string;
  release(): void;
}

export function acquireLock(path: string): FileLock {
  mkdirSync(dirname(path), { recursive: true });
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o644);
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      let released = false;
      return {
        path,
        release() {
          if (released) return;
          released = true;
          try {
            if (readFileSync(path, 'utf8').trim() === String(process.pid)) rmSync(path, { force: true });
          } catch {
            /* already gone */
          }
        },
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw new LockHeldError(`cannot create lock file ${path}: ${(e as Error).message}`);
    }
    let owner = NaN;
    try {
      owner = Number.parseInt(readFileSync(path, 'utf8').trim(), 10);
    } catch {
      continue; // removed in between: try again
    }
    if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && alive(owner)) {
      throw new LockHeldError(`another node agent (pid ${owner}) holds the lock file ${path}; stop it or use a different --lock-file`);
    }
    rmSync(path, { force: true }); // stale: its owner is gone
  }
  throw new LockHeldError(`cannot acquire the lock file ${path}`);
}
