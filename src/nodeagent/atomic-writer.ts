// kubelet's AtomicWriter (pkg/volume/util/atomic_writer.go): the files of a
// configMap, secret, downwardAPI or projected volume change all at once, so a
// process never reads a half-updated set. Layout of a volume directory:
//
//   ..2026_11_28_14_05_09.1234567890/   the payload, one directory per version
//   ..data -> ..2026_11_28_14_05_09.1234567890
//   token -> ..data/token               one link per top-level name
//
// An update writes a new version directory, points `..data_tmp` at it and
// renames that over `..data` (rename(2) replaces a symlink atomically), then
// adds the top-level links of new names, removes those of names gone, and
// removes the old version. An unchanged payload is not written.

import { randomBytes } from 'node:crypto';
import { chmod, lstat, mkdir, readFile, readlink, readdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

export interface FileProjection {
  data: Buffer;
  /** permission bits (420 = 0644 by default in every volume source) */
  mode: number;
}

export const DATA_DIR = '..data';
const DATA_DIR_TMP = '..data_tmp';

/** relative paths must stay inside the volume: no absolute paths, no `..` element, no leading `..` */
export function validPayloadPath(p: string): boolean {
  if (p === '' || p.startsWith('/') || p.startsWith('..')) return false;
  return !p.split('/').some((e) => e === '..' || e === '');
}

/** the current payload's files (relative path → content), undefined when the directory has none yet */
async function current(dir: string): Promise<Map<string, { data: Buffer; mode: number }> | undefined> {
  let target: string;
  try {
    target = await readlink(join(dir, DATA_DIR));
  } catch {
    return undefined;
  }
  const out = new Map<string, { data: Buffer; mode: number }>();
  const walk = async (rel: string): Promise<void> => {
    for (const e of await readdir(join(dir, target, rel), { withFileTypes: true })) {
      const p = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) await walk(p);
      else {
        const full = join(dir, target, p);
        out.set(p, { data: await readFile(full), mode: (await lstat(full)).mode & 0o777 });
      }
    }
  };
  await walk('');
  return out;
}

function same(a: Map<string, { data: Buffer; mode: number }>, b: Map<string, FileProjection>): boolean {
  if (a.size !== b.size) return false;
  for (const [p, f] of b) {
    const x = a.get(p);
    if (!x || x.mode !== (f.mode & 0o777) || !x.data.equals(f.data)) return false;
  }
  return true;
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** `..2006_01_02_15_04_05.<random>` as kubelet names a version */
function versionName(nowMs: number): string {
  const d = new Date(nowMs);
  const stamp = `${d.getUTCFullYear()}_${pad(d.getUTCMonth() + 1)}_${pad(d.getUTCDate())}_${pad(d.getUTCHours())}_${pad(d.getUTCMinutes())}_${pad(d.getUTCSeconds())}`;
  return `..${stamp}.${randomBytes(5).readUInt32BE(0)}`;
}

/** writes `payload` into `dir` atomically; returns whether anything changed */
export async function writeAtomically(dir: string, payload: Map<string, FileProjection>, nowMs: number): Promise<boolean> {
  for (const p of payload.keys()) if (!validPayloadPath(p)) throw new Error(`invalid path ${JSON.stringify(p)}: must be relative and may not contain '..'`);
  await mkdir(dir, { recursive: true, mode: 0o755 });
  const old = await current(dir);
  if (old && same(old, payload)) return false;
  const oldTarget = old ? await readlink(join(dir, DATA_DIR)) : undefined;
  const version = versionName(nowMs);
  const versionDir = join(dir, version);
  await mkdir(versionDir, { mode: 0o755 });
  for (const [p, f] of payload) {
    const file = join(versionDir, p);
    await mkdir(dirname(file), { recursive: true, mode: 0o755 });
    await writeFile(file, f.data, { mode: f.mode & 0o777 });
    // writeFile's mode is filtered by the umask; the volume's mode is what the pod asked for
    await chmod(file, f.mode & 0o777);
  }
  await rm(join(dir, DATA_DIR_TMP), { force: true });
  await symlink(version, join(dir, DATA_DIR_TMP));
  await rename(join(dir, DATA_DIR_TMP), join(dir, DATA_DIR));
  const top = new Set([...payload.keys()].map((p) => p.split('/')[0]!));
  for (const name of top) {
    const link = join(dir, name);
    const exists = await lstat(link).then(
      () => true,
      () => false,
    );
    if (!exists) await symlink(join(DATA_DIR, name), link);
  }
  for (const e of await readdir(dir)) {
    if (e.startsWith('..') || top.has(e)) continue;
    await rm(join(dir, e), { force: true, recursive: true });
  }
  if (oldTarget && oldTarget !== version) await rm(join(dir, oldTarget), { recursive: true, force: true });
  return true;
}
