// The audit log file (`--audit-log-path`, `--audit-log-maxsize`,
// `--audit-log-maxbackup`, `--audit-log-maxage`): JSON lines appended with
// asynchronous writes (the thread pool, never the event loop), rotated as
// kube-apiserver's lumberjack rotates: when the next write would pass maxsize
// MiB (0 = 100 MiB) the file is renamed to `<name>-<UTC time>.<ext>`
// (e.g. `audit-2026-11-25T11-28-53.123.log`) and a new one started; backups
// beyond maxbackup (0 = all kept) or older than maxage days (0 = no age limit)
// are deleted. `-` writes to standard output, without rotation.
//
// Nothing here throws into request serving: errors reject the write, and the
// buffer (buffer.ts) counts and logs them. A file that cannot be opened is
// retried on the next batch.

import { systemClock } from '../core/clock.js';
import { write as writeFd } from 'node:fs';
import { type FileHandle, mkdir, open, readdir, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';
import { promisify } from 'node:util';
import type { BatchWriter } from './buffer.js';
import type { AuditEvent } from './types.js';

const writeFdAsync = promisify(writeFd);
const MiB = 1024 * 1024;
const DAY_MS = 24 * 60 * 60 * 1000;

export interface RotationOptions {
  /** --audit-log-maxsize in MiB; 0 = 100 (lumberjack's default) */
  maxSizeMiB: number;
  /** --audit-log-maxbackup; 0 = keep all */
  maxBackups: number;
  /** --audit-log-maxage in days; 0 = no age limit */
  maxAgeDays: number;
  /** overrides maxSizeMiB (tests) */
  maxSizeBytes?: number;
  now?: () => number;
}

/** `<name>-2006-01-02T15-04-05.000<ext>` in UTC, lumberjack's backup name */
export function backupName(path: string, at: number): string {
  const ext = extname(path);
  const base = basename(path, ext);
  const stamp = new Date(at).toISOString().slice(0, 23).replace(/:/g, '-');
  return join(dirname(path), `${base}-${stamp}${ext}`);
}

/** the time encoded in a backup's name, or undefined when the name is not one of ours */
export function backupTime(path: string, file: string): number | undefined {
  const ext = extname(path);
  const prefix = `${basename(path, ext)}-`;
  if (!file.startsWith(prefix) || !file.endsWith(ext)) return undefined;
  const stamp = file.slice(prefix.length, file.length - ext.length);
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})\.(\d{3})$/.exec(stamp);
  if (!m) return undefined;
  const t = Date.parse(`${m[1]}T${m[2]}:${m[3]}:${m[4]}.${m[5]}Z`);
  return Number.isNaN(t) ? undefined : t;
}

/** Appends JSON lines to stdout (`-`) or a rotated file. */
export class LogFileWriter implements BatchWriter {
  private fh: FileHandle | undefined;
  private size = 0;
  private readonly maxSize: number;
  private readonly now: () => number;

  constructor(
    readonly path: string,
    private readonly rotation: RotationOptions = { maxSizeMiB: 0, maxBackups: 0, maxAgeDays: 0 },
  ) {
    this.maxSize = rotation.maxSizeBytes ?? (rotation.maxSizeMiB > 0 ? rotation.maxSizeMiB : 100) * MiB;
    this.now = rotation.now ?? systemClock.now;
  }

  /** opens the file now (so a bad path is reported at start-up); failure is not fatal */
  async open(): Promise<void> {
    if (this.path === '-') return;
    await this.ensureOpen();
  }

  async write(_events: AuditEvent[], lines: string[]): Promise<void> {
    if (this.path === '-') {
      const buf = Buffer.from(lines.join('\n') + '\n');
      let off = 0;
      while (off < buf.length) {
        const { bytesWritten } = await writeFdAsync(1, buf, off, buf.length - off);
        off += bytesWritten;
      }
      return;
    }
    // group lines into chunks that fit the current file; rotate between chunks
    let chunk: string[] = [];
    let chunkBytes = 0;
    for (const line of lines) {
      const n = Buffer.byteLength(line) + 1;
      if (this.size + chunkBytes + n > this.maxSize && (chunk.length > 0 || this.size > 0)) {
        await this.append(chunk);
        chunk = [];
        chunkBytes = 0;
        await this.rotate();
      }
      chunk.push(line);
      chunkBytes += n;
    }
    await this.append(chunk);
  }

  private async append(lines: string[]): Promise<void> {
    if (lines.length === 0) return;
    const fh = await this.ensureOpen();
    const buf = Buffer.from(lines.join('\n') + '\n');
    let off = 0;
    try {
      while (off < buf.length) {
        const { bytesWritten } = await fh.write(buf, off, buf.length - off);
        off += bytesWritten;
        this.size += bytesWritten;
      }
    } catch (e) {
      // reopen on the next batch: the file may have been replaced or its disk remounted
      if (this.fh === fh) this.fh = undefined;
      await fh.close().catch(() => {});
      throw e;
    }
  }

  private async ensureOpen(): Promise<FileHandle> {
    if (this.fh) return this.fh;
    await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
    // 0600: audit logs hold request bodies and user names
    const fh = await open(this.path, 'a', 0o600);
    try {
      this.size = (await fh.stat()).size;
    } catch (e) {
      await fh.close().catch(() => {});
      throw e;
    }
    this.fh = fh;
    return fh;
  }

  async rotate(): Promise<void> {
    const fh = this.fh;
    this.fh = undefined;
    this.size = 0;
    await fh?.close().catch(() => {});
    let at = this.now();
    let target = backupName(this.path, at);
    // two rotations in one millisecond must not overwrite each other
    while (await exists(target)) target = backupName(this.path, ++at);
    try {
      await rename(this.path, target);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    await this.ensureOpen();
    await this.prune().catch(() => {});
  }

  /** deletes backups beyond maxBackups (oldest first) and older than maxAge */
  async prune(): Promise<string[]> {
    const { maxBackups, maxAgeDays } = this.rotation;
    if (maxBackups <= 0 && maxAgeDays <= 0) return [];
    const dir = dirname(this.path);
    const backups: { file: string; at: number }[] = [];
    for (const f of await readdir(dir)) {
      const at = backupTime(this.path, f);
      if (at !== undefined) backups.push({ file: f, at });
    }
    backups.sort((a, b) => b.at - a.at);
    const cutoff = this.now() - maxAgeDays * DAY_MS;
    const doomed = backups.filter((b, i) => (maxBackups > 0 && i >= maxBackups) || (maxAgeDays > 0 && b.at < cutoff));
    for (const d of doomed) await unlink(join(dir, d.file)).catch(() => {});
    return doomed.map((d) => d.file);
  }

  async close(): Promise<void> {
    const fh = this.fh;
    this.fh = undefined;
    await fh?.close().catch(() => {});
  }
}

async function exists(p: string): Promise<boolean> {
  try {
    await stat(p);
    return true;
  } catch {
    return false;
  }
}
