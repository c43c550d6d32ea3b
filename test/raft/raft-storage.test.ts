// RaftStorage (src/raft/storage.ts) on a real level database: what one Ready
// persists comes back on load, a conflicting suffix is overwritten, a
// snapshot drops the log it covers, and the keys are the ones the "log" and
// "meta" sublevels read (the write path spells the prefixes out itself).

import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Level } from 'level';
import { afterEach, describe, expect, it } from 'vitest';
import { decodeMsgpack, encodeMsgpack, logIndexFromKey, logKey } from '../../src/raft/codec.js';
import { RaftStorage } from '../../src/raft/storage.js';
import type { Entry } from '../../src/raft/types.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});
async function dir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'orch-raft-storage-'));
  dirs.push(d);
  return join(d, 'raft');
}
const ent = (index: number, term: number, text: string): Entry => ({ index, term, type: 'normal', data: new TextEncoder().encode(text) });
const texts = (es: Entry[]): string[] => es.map((e) => `${e.index}/${e.term}/${new TextDecoder().decode(e.data)}`);

describe('RaftStorage', () => {
  it('loads what was saved, with a conflicting suffix overwritten and the hard state', async () => {
    const path = await dir();
    const s = await RaftStorage.open(path);
    expect((await s.load()).empty).toBe(true);
    expect(await s.save({ entries: [ent(1, 1, 'a'), ent(2, 1, 'b'), ent(3, 1, 'c')], hardState: { term: 1, vote: 'n1', commit: 1 } })).toBe(true);
    // a new leader's entries from index 2 on replace 2..3
    expect(await s.save({ entries: [ent(2, 2, 'x')], hardState: { term: 2, vote: 'n2', commit: 1 } })).toBe(true);
    // commit-only: not synced
    expect(await s.save({ entries: [], hardState: { term: 2, vote: 'n2', commit: 2 } })).toBe(false);
    await s.close();
    const r = await RaftStorage.open(path);
    const st = await r.load();
    expect(st.empty).toBe(false);
    expect(texts(st.entries)).toEqual(['1/1/a', '2/2/x']);
    expect(st.hardState).toEqual({ term: 2, vote: 'n2', commit: 2 });
    await r.close();
  });

  it('a commit-only hard state is written with the next batch, not on its own', async () => {
    const path = await dir();
    const s = await RaftStorage.open(path);
    await s.load();
    await s.save({ entries: [ent(1, 1, 'a'), ent(2, 1, 'b')], hardState: { term: 1, vote: 'n1', commit: 0 } });
    const before = s.stats().batches;
    expect(await s.save({ entries: [], hardState: { term: 1, vote: 'n1', commit: 2 } })).toBe(false);
    expect(s.stats().batches).toBe(before); // nothing written
    // the next batch with entries carries it
    expect(await s.save({ entries: [ent(3, 1, 'c')] })).toBe(true);
    expect(s.stats().batches).toBe(before + 1);
    // a new term is synced at once and supersedes a deferred commit
    expect(await s.save({ entries: [], hardState: { term: 1, vote: 'n1', commit: 3 } })).toBe(false);
    expect(await s.save({ entries: [], hardState: { term: 2, vote: '', commit: 2 } })).toBe(true);
    // close writes a deferred one
    expect(await s.save({ entries: [], hardState: { term: 2, vote: '', commit: 3 } })).toBe(false);
    await s.close();
    const r = await RaftStorage.open(path);
    const st = await r.load();
    expect(texts(st.entries)).toEqual(['1/1/a', '2/1/b', '3/1/c']);
    expect(st.hardState).toEqual({ term: 2, vote: '', commit: 3 });
    await r.close();
  });

  it('a commit index carried by a later batch is that batch\'s, as of when it was deferred', async () => {
    const path = await dir();
    const s = await RaftStorage.open(path);
    await s.load();
    await s.save({ entries: [ent(1, 1, 'a')], hardState: { term: 1, vote: 'n1', commit: 0 } });
    await s.save({ entries: [], hardState: { term: 1, vote: 'n1', commit: 1 } });
    await s.save({ entries: [ent(2, 1, 'b')] });
    // reopen without the close path writing anything deferred (none is left)
    await s.close();
    const r = await RaftStorage.open(path);
    expect((await r.load()).hardState).toEqual({ term: 1, vote: 'n1', commit: 1 });
    await r.close();
  });

  it('a snapshot drops the entries it covers; later entries stay', async () => {
    const path = await dir();
    const s = await RaftStorage.open(path);
    await s.load();
    await s.save({ entries: [1, 2, 3, 4].map((i) => ent(i, 1, `e${i}`)), hardState: { term: 1, vote: 'a', commit: 4 } });
    await s.saveSnapshot({ metadata: { index: 2, term: 1, confState: { voters: ['a'] } }, data: new Uint8Array([9]) });
    await s.close();
    const r = await RaftStorage.open(path);
    const st = await r.load();
    expect(st.snapshot?.metadata.index).toBe(2);
    expect([...st.snapshot!.data]).toEqual([9]);
    expect(texts(st.entries)).toEqual(['3/1/e3', '4/1/e4']);
    expect(r.stats()).toMatchObject({ firstIndex: 3, lastIndex: 4, snapshotIndex: 2 });
    await r.close();
  });

  it('a large snapshot clears the log keys it covers (a range delete after the synced snapshot)', async () => {
    const path = await dir();
    const s = await RaftStorage.open(path);
    await s.load();
    await s.save({ entries: Array.from({ length: 50 }, (_, i) => ent(i + 1, 1, `e${i + 1}`)), hardState: { term: 1, vote: 'a', commit: 50 } });
    const data = new Uint8Array(300_000).fill(5);
    await s.saveSnapshot({ metadata: { index: 40, term: 1, confState: { voters: ['a'] } }, data });
    await s.save({ entries: [ent(51, 1, 'e51')], hardState: { term: 1, vote: 'a', commit: 51 } });
    await s.close();
    const db = new Level<Uint8Array, Uint8Array>(path, { keyEncoding: 'view', valueEncoding: 'view' });
    await db.open();
    const log = db.sublevel<Uint8Array, Uint8Array>('log', { keyEncoding: 'view', valueEncoding: 'view' });
    const indexes: number[] = [];
    for await (const k of log.keys()) indexes.push(logIndexFromKey(k));
    expect(indexes).toEqual(Array.from({ length: 11 }, (_, i) => 41 + i));
    await db.close();
    const r = await RaftStorage.open(path);
    const st = await r.load();
    expect(st.snapshot?.metadata.index).toBe(40);
    expect(st.snapshot!.data.byteLength).toBe(300_000);
    expect(st.snapshot!.data.every((b) => b === 5)).toBe(true);
    expect(st.entries.map((e) => e.index)).toEqual(Array.from({ length: 11 }, (_, i) => 41 + i));
    await r.close();
  });

  it('keeps a snapshot\'s image in a file named by its level record; an older image is removed; a leader\'s snapshot too', async () => {
    const path = await dir();
    const s = await RaftStorage.open(path);
    await s.load();
    await s.save({ entries: Array.from({ length: 30 }, (_, i) => ent(i + 1, 1, `e${i + 1}`)), hardState: { term: 1, vote: 'a', commit: 30 } });
    await s.saveSnapshot({ metadata: { index: 10, term: 1, confState: { voters: ['a'] } }, data: new Uint8Array(100_000).fill(1) });
    await s.saveSnapshot({ metadata: { index: 20, term: 1, confState: { voters: ['a'] } }, data: new Uint8Array(200_000).fill(2) });
    expect(await readdir(join(path, 'snap'))).toEqual(['0000000000000014.snap']);
    // a snapshot from the leader (Ready.snapshot) replaces the log and the image
    await s.save({ snapshot: { metadata: { index: 40, term: 2, confState: { voters: ['a'] } }, data: new Uint8Array(50_000).fill(4) }, entries: [], hardState: { term: 2, vote: 'b', commit: 40 } });
    expect(await readdir(join(path, 'snap'))).toEqual(['0000000000000028.snap']);
    await s.close();
    const db = new Level<Uint8Array, Uint8Array>(path, { keyEncoding: 'view', valueEncoding: 'view' });
    await db.open();
    const meta = db.sublevel<Uint8Array, Uint8Array>('meta', { keyEncoding: 'view', valueEncoding: 'view' });
    const record = decodeMsgpack((await meta.get(new TextEncoder().encode('snapshot')))!) as Record<string, unknown>;
    expect(record).toEqual({ metadata: { index: 40, term: 2, confState: { voters: ['a'] } }, file: '0000000000000028.snap' });
    await db.close();
    const r = await RaftStorage.open(path);
    const st = await r.load();
    expect(st.snapshot?.metadata.index).toBe(40);
    expect(st.snapshot!.data.byteLength).toBe(50_000);
    expect(st.snapshot!.data.every((b) => b === 4)).toBe(true);
    expect(st.entries).toEqual([]);
    await r.close();
  });

  it('loads a snapshot written before the images moved to files (image inside the level record)', async () => {
    const path = await dir();
    const s = await RaftStorage.open(path);
    await s.load();
    await s.save({ entries: [ent(1, 1, 'a'), ent(2, 1, 'b'), ent(3, 1, 'c')], hardState: { term: 1, vote: 'a', commit: 3 } });
    await s.close();
    const db = new Level<Uint8Array, Uint8Array>(path, { keyEncoding: 'view', valueEncoding: 'view' });
    await db.open();
    const meta = db.sublevel<Uint8Array, Uint8Array>('meta', { keyEncoding: 'view', valueEncoding: 'view' });
    const old = { metadata: { index: 2, term: 1, confState: { voters: ['a'] } }, data: new Uint8Array([7, 8, 9]) };
    await meta.put(new TextEncoder().encode('snapshot'), encodeMsgpack(old));
    await db.close();
    const r = await RaftStorage.open(path);
    const st = await r.load();
    expect(st.snapshot?.metadata).toEqual(old.metadata);
    expect([...st.snapshot!.data]).toEqual([7, 8, 9]);
    expect(texts(st.entries)).toEqual(['3/1/c']);
    // the next snapshot goes to a file and reads back
    await r.saveSnapshot({ metadata: { index: 3, term: 1, confState: { voters: ['a'] } }, data: new Uint8Array([3]) });
    await r.close();
    const again = await RaftStorage.open(path);
    expect([...(await again.load()).snapshot!.data]).toEqual([3]);
    await again.close();
  });

  it('writes the keys of the "log" and "meta" sublevels (the on-disk layout is unchanged)', async () => {
    const path = await dir();
    const s = await RaftStorage.open(path);
    await s.load();
    await s.save({ entries: [ent(7, 3, 'v')], hardState: { term: 3, vote: 'b', commit: 0 } });
    await s.close();
    const db = new Level<Uint8Array, Uint8Array>(path, { keyEncoding: 'view', valueEncoding: 'view' });
    await db.open();
    const log = db.sublevel<Uint8Array, Uint8Array>('log', { keyEncoding: 'view', valueEncoding: 'view' });
    const meta = db.sublevel<Uint8Array, Uint8Array>('meta', { keyEncoding: 'view', valueEncoding: 'view' });
    const stored = await log.get(logKey(7));
    expect(stored).toBeDefined();
    const [term, type, data] = decodeMsgpack(stored!) as [number, string, Uint8Array];
    expect([term, type, new TextDecoder().decode(data)]).toEqual([3, 'normal', 'v']);
    expect(decodeMsgpack((await meta.get(new TextEncoder().encode('hardState')))!)).toEqual({ term: 3, vote: 'b', commit: 0 });
    await db.close();
  });
});
