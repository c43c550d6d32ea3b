// The single-node write-ahead log stores a group commit as one record keyed
// by its last index (src/store/command-log.ts): every entry reads back with
// its own index, a snapshot that covers part of a group keeps the rest, a
// log of single-entry records (the layout before groups) reads the same,
// and a store reopened after concurrent writes and snapshots has its state.
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Level } from 'level';
import { afterEach, describe, expect, it } from 'vitest';
import { decodeGroup, encodeGroup, GROUP_MAGIC, LevelCommandLog } from '../../src/store/command-log.js';
import { encodeCommand, logKey } from '../../src/store/codec.js';
import { LocalStore } from '../../src/store/local-store.js';
import { prefixEnd, type Command } from '../../src/store/types.js';

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
const cmd = (i: number): Command => ({ type: 'txn', time: 1000 + i, txn: { compare: [], success: [{ type: 'put', key: `k${i}`, value: enc(`v${i}`) }], failure: [] } });
const entry = (i: number) => ({ index: i, bytes: encodeCommand(cmd(i)), cmd: cmd(i) });
const keysOf = (entries: { index: number; cmd: Command }[]) => entries.map((e) => [e.index, e.cmd.type === 'txn' ? e.cmd.txn.success[0]!.key : '']);

const dirs: string[] = [];
async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'orch-log-groups-'));
  dirs.push(d);
  return d;
}
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

describe('group records of the command log', () => {
  it('encode/decode round-trips and refuses malformed records', () => {
    const entries = [entry(1), entry(2), entry(3)];
    const g = encodeGroup(entries);
    expect(g[0]).toBe(GROUP_MAGIC);
    expect(decodeGroup(g).map((b) => [...b])).toEqual(entries.map((e) => [...e.bytes]));
    expect(() => decodeGroup(g.subarray(0, g.length - 1))).toThrow(/truncated/);
    expect(() => decodeGroup(new Uint8Array([...g, 0]))).toThrow(/trailing/);
    expect(() => decodeGroup(entries[0]!.bytes)).toThrow(/not a group/);
  });

  it('every entry of groups of 1, 3 and 5 reads back with its index, from any starting index', async () => {
    const dir = await tempDir();
    const log = await LevelCommandLog.open(dir);
    await log.append([entry(1)]);
    await log.append([entry(2), entry(3), entry(4)]);
    await log.append([entry(5), entry(6), entry(7), entry(8), entry(9)]);
    for (let after = 0; after <= 9; after++) {
      const got = await log.readAfter(after);
      expect(keysOf(got)).toEqual(Array.from({ length: 9 - after }, (_, j) => [after + 1 + j, `k${after + 1 + j}`]));
      // the commands themselves, not only their keys
      expect(got.map((e) => e.cmd.time)).toEqual(Array.from({ length: 9 - after }, (_, j) => 1000 + after + 1 + j));
    }
    await log.close();
  });

  it('a snapshot covering part of a group keeps the group: the entries past it still read back', async () => {
    const dir = await tempDir();
    const log = await LevelCommandLog.open(dir);
    await log.append([entry(1), entry(2)]);
    await log.append([entry(3), entry(4), entry(5), entry(6)]);
    await log.saveSnapshot(enc('snap'), 4);
    expect(keysOf(await log.readAfter(4))).toEqual([
      [5, 'k5'],
      [6, 'k6'],
    ]);
    // the group wholly covered is gone, the straddling one is not
    expect(keysOf(await log.readAfter(0)).map(([i]) => i)).toEqual([3, 4, 5, 6]);
    await log.close();
  });

  it('keeps the snapshot image in a file (the older one removed); a snapshot in level (the layout before) still loads', async () => {
    const dir = await tempDir();
    // the former layout: the image under meta!snapshot
    const db = new Level<Uint8Array, Uint8Array>(dir, { keyEncoding: 'view', valueEncoding: 'view' });
    const meta = db.sublevel<Uint8Array, Uint8Array>('meta', { keyEncoding: 'view', valueEncoding: 'view' });
    await meta.put(enc('snapshot'), enc('old image'));
    await db.close();
    const log = await LevelCommandLog.open(dir);
    expect(new TextDecoder().decode(await log.loadSnapshot())).toBe('old image');
    await log.append([entry(1), entry(2), entry(3)]);
    await log.saveSnapshot(enc('image at 2'), 2);
    await log.saveSnapshot(enc('image at 3'), 3);
    expect(await readdir(join(dir, 'snap'))).toEqual(['0000000000000003.snap']);
    await log.close();
    const again = await LevelCommandLog.open(dir);
    expect(new TextDecoder().decode(await again.loadSnapshot())).toBe('image at 3');
    await again.close();
  });

  it('a log of single-entry records (the layout before groups) followed by groups reads in order', async () => {
    const dir = await tempDir();
    // the former layout, written directly: one record per entry under its own index
    const db = new Level<Uint8Array, Uint8Array>(dir, { keyEncoding: 'view', valueEncoding: 'view' });
    const sub = db.sublevel<Uint8Array, Uint8Array>('log', { keyEncoding: 'view', valueEncoding: 'view' });
    await db.batch([1, 2, 3].map((i) => ({ type: 'put' as const, sublevel: sub, key: logKey(i), value: entry(i).bytes })), { sync: true });
    await db.close();
    const log = await LevelCommandLog.open(dir);
    await log.append([entry(4), entry(5)]);
    expect(keysOf(await log.readAfter(0)).map(([i]) => i)).toEqual([1, 2, 3, 4, 5]);
    await log.close();
  });

  it('a store written by concurrent txns (group commits) and snapshots reopens with the same state', async () => {
    const dir = await tempDir();
    const a = await LocalStore.open(dir, { snapshotEvery: 7, snapshotLogRatio: 0, compactIntervalMs: 0 });
    for (let round = 0; round < 5; round++) {
      await Promise.all(Array.from({ length: 13 }, (_, i) => a.txn({ compare: [], success: [{ type: 'put', key: `k${(round * 13 + i) % 20}`, value: enc(`v${round}.${i}`) }], failure: [] })));
    }
    // a snapshot is encoded in slices and saved beside the writes (snapshot-encoder.ts): wait for it
    await a.snapshotSettled();
    const stats = a.stats();
    // several entries per synced batch, so groups were written
    expect(stats.syncBatches).toBeLessThan(stats.entriesWritten);
    expect(stats.snapshots).toBeGreaterThan(0);
    const all = a.range({ key: '', end: prefixEnd('') });
    const old = a.range({ key: '', end: prefixEnd(''), revision: 30 });
    await a.close();
    const b = await LocalStore.open(dir, { compactIntervalMs: 0 });
    expect(b.revision).toBe(65);
    expect(b.range({ key: '', end: prefixEnd('') })).toEqual(all);
    expect(b.range({ key: '', end: prefixEnd(''), revision: 30 })).toEqual(old);
    await b.close();
  });
});
