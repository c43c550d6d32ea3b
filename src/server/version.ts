// `/version`: the Kubernetes version.Info shape. orch serves the 1.32 API
// surface (spec 000 §9.3 lists removals up to 1.32), so it reports 1.32 as
// its compatibility level; gitVersion carries orch's own version.
//
// kube fills gitCommit and buildDate at build time (buildDate never empty:
// "1970-01-01T00:00:00Z" when unset). orch has no build stamp, so buildDate is
// when this module's file was written (the build, or the checkout under tsx)
// and gitCommit the checkout's HEAD when the server runs from one ('' else).

import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ORCH_VERSION = '0.1.0';

const HERE = fileURLToPath(import.meta.url);

/** RFC 3339 in seconds, as Go's time.RFC3339 prints a UTC time */
function rfc3339(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** the commit HEAD names in the git checkout holding `from` (a worktree's `.git` file followed), or '' */
export function gitCommitOf(from: string): string {
  try {
    let dir = from;
    while (!existsSync(join(dir, '.git'))) {
      const up = dirname(dir);
      if (up === dir) return '';
      dir = up;
    }
    let gitDir = join(dir, '.git');
    if (statSync(gitDir).isFile()) gitDir = readFileSync(gitDir, 'utf8').trim().replace(/^gitdir: /, '');
    const head = readFileSync(join(gitDir, 'HEAD'), 'utf8').trim();
    const ref = /^ref: (.+)$/.exec(head)?.[1];
    if (!ref) return /^[0-9a-f]{40}$/.test(head) ? head : '';
    // a worktree's refs live in the common directory
    const common = existsSync(join(gitDir, 'commondir')) ? join(gitDir, readFileSync(join(gitDir, 'commondir'), 'utf8').trim()) : gitDir;
    for (const base of [gitDir, common]) {
      const loose = join(base, ref);
      if (existsSync(loose)) return readFileSync(loose, 'utf8').trim();
    }
    const packed = join(common, 'packed-refs');
    if (!existsSync(packed)) return '';
    const line = readFileSync(packed, 'utf8').split('\n').find((l) => l.endsWith(` ${ref}`));
    return line?.slice(0, 40) ?? '';
  } catch {
    return '';
  }
}

let build: { gitCommit: string; buildDate: string } | undefined;

export function versionInfo(): Record<string, string> {
  build ??= { gitCommit: gitCommitOf(dirname(HERE)), buildDate: rfc3339(statSync(HERE).mtimeMs) };
  return {
    major: '1',
    minor: '32',
    gitVersion: `v1.32.0+orch.${ORCH_VERSION}`,
    gitCommit: build.gitCommit,
    gitTreeState: 'clean',
    buildDate: build.buildDate,
    goVersion: `node ${process.version}`,
    compiler: 'tsc',
    platform: `${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}`,
  };
}
