// The audit log file's rotation (issue 16 item 3): lumberjack's rules as
// kube-apiserver uses them — rotate before passing maxsize, backups named
// with their UTC time, at most maxbackup kept, none older than maxage days.

import { mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LogFileWriter, backupName, backupTime } from '../../src/audit/log-file.js';

const DAY = 24 * 60 * 60 * 1000;

describe('audit log rotation', () => {
  let dir: string;
  let now: number;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'orch-rotate-'));
    now = Date.parse('2026-11-25T11:28:53.123Z');
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const line = (i: number) => JSON.stringify({ i, pad: 'x'.repeat(80) }); // 99 bytes + newline

  it('names backups as lumberjack does, and reads the time back', () => {
    const p = join(dir, 'audit.log');
    expect(backupName(p, now)).toBe(join(dir, 'audit-2026-11-25T11-28-53.123.log'));
    expect(backupTime(p, 'audit-2026-11-25T11-28-53.123.log')).toBe(now);
    expect(backupTime(p, 'audit.log')).toBeUndefined();
    expect(backupTime(p, 'other-2026-11-25T11-28-53.123.log')).toBeUndefined();
  });

  it('rotates before a write would pass maxsize, and loses no line', async () => {
    const p = join(dir, 'audit.log');
    const w = new LogFileWriter(p, { maxSizeMiB: 0, maxBackups: 0, maxAgeDays: 0, maxSizeBytes: 350, now: () => (now += 1000) });
    for (let i = 0; i < 20; i += 2) await w.write([], [line(i), line(i + 1)]);
    await w.close();
    const files = (await readdir(dir)).sort();
    expect(files).toContain('audit.log');
    const backups = files.filter((f) => f !== 'audit.log');
    expect(backups.length).toBeGreaterThanOrEqual(6);
    const seen: number[] = [];
    for (const f of files) {
      expect((await stat(join(dir, f))).size).toBeLessThanOrEqual(350);
      for (const l of (await readFile(join(dir, f), 'utf8')).split('\n').filter(Boolean)) seen.push((JSON.parse(l) as { i: number }).i);
    }
    expect(seen.sort((a, b) => a - b)).toEqual([...Array(20).keys()]);
    // the file is private: it holds request bodies and user names
    expect((await stat(p)).mode & 0o777).toBe(0o600);
  });

  it('keeps at most maxbackup backups, the newest', async () => {
    const p = join(dir, 'audit.log');
    const w = new LogFileWriter(p, { maxSizeMiB: 0, maxBackups: 2, maxAgeDays: 0, maxSizeBytes: 150, now: () => (now += 1000) });
    for (let i = 0; i < 10; i++) await w.write([], [line(i)]);
    await w.close();
    const backups = (await readdir(dir)).filter((f) => f !== 'audit.log').sort();
    expect(backups).toHaveLength(2);
    const kept = await Promise.all(backups.map(async (f) => (JSON.parse((await readFile(join(dir, f), 'utf8')).trim()) as { i: number }).i));
    expect(kept).toEqual([7, 8]);
    expect((JSON.parse((await readFile(p, 'utf8')).trim()) as { i: number }).i).toBe(9);
  });

  it('deletes backups older than maxage days, and leaves files that are not backups', async () => {
    const p = join(dir, 'audit.log');
    await writeFile(backupName(p, now - 10 * DAY), 'old\n');
    await writeFile(backupName(p, now - 2 * DAY), 'recent\n');
    await writeFile(join(dir, 'notes.txt'), 'keep\n');
    const w = new LogFileWriter(p, { maxSizeMiB: 0, maxBackups: 0, maxAgeDays: 3, maxSizeBytes: 150, now: () => now });
    await w.write([], [line(1)]);
    await w.write([], [line(2)]);
    await w.close();
    const files = (await readdir(dir)).sort();
    expect(files).not.toContain(backupName(p, now - 10 * DAY).slice(dir.length + 1));
    expect(files).toContain(backupName(p, now - 2 * DAY).slice(dir.length + 1));
    expect(files).toContain('notes.txt');
    expect(files).toContain(backupName(p, now).slice(dir.length + 1));
  });

  it('a write that cannot succeed rejects (to be counted), and a later one recovers', async () => {
    const blocker = join(dir, 'not-a-dir');
    await writeFile(blocker, '');
    const w = new LogFileWriter(join(blocker, 'audit.log'));
    await expect(w.write([], [line(1)])).rejects.toThrow(/ENOTDIR|EEXIST/);
    await rm(blocker);
    await w.write([], [line(2)]);
    await w.close();
    expect((await readFile(join(blocker, 'audit.log'), 'utf8')).trim()).toBe(line(2));
  });

  it('a full disk rejects the write', async () => {
    const w = new LogFileWriter('/dev/full');
    await expect(w.write([], [line(1)])).rejects.toThrow(/ENOSPC/);
    await w.close();
  });
});
