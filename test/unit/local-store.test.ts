import { mkdtemp, rm } from 'node:fs/promises';
import { ManualClock } from '../../src/core/clock.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LevelCommandLog } from '../../src/store/command-log.js';
import { LocalStore, StoreClosedError } from '../../src/store/local-store.js';
import { InvalidTxnError } from '../../src/store/txn-validation.js';
import { CompactedError, FutureRevisionError, prefixEnd, type AppliedWrite, type TxnRequest } from '../../src/store/types.js';

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
const dec = (b: Uint8Array | undefined): string | undefined => (b === undefined ? undefined : new TextDecoder().decode(b));
const put = (key: string, value: string): TxnRequest => ({ compare: [], success: [{ type: 'put', key, value: enc(value) }], failure: [] });
const del = (key: string): TxnRequest => ({ compare: [], success: [{ type: 'delete', key }], failure: [] });
const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

const dirs: string[] = [];
const stores: LocalStore[] = [];
async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'orch-local-store-'));
  dirs.push(d);
  return d;
}
async function open(dir: string, opts: Parameters<typeof LocalStore.open>[1] = {}): Promise<LocalStore> {
  const s = await LocalStore.open(dir, { compactIntervalMs: 0, ...opts });
  stores.push(s);
  return s;
}

afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

describe('LocalStore group commit', () => {
  it('commits 64 concurrent txns with revisions 1..64 in fewer sync batches than txns', async () => {
    const store = await open(await tempDir());
    const results = await Promise.all(
      Array.from({ length: 64 }, (_, i) =>
        store.txn({
          compare: [{ key: `k${i}`, target: 'create', op: '=', value: 0 }],
          success: [{ type: 'put', key: `k${i}`, value: enc(`v${i}`) }],
          failure: [],
        }),
      ),
    );
    expect(results.every((r) => r.succeeded)).toBe(true);
    expect(results.map((r) => r.revision).sort((a, b) => a - b)).toEqual(Array.from({ length: 64 }, (_, i) => i + 1));
    const stats = store.stats();
    expect(stats.entriesWritten).toBe(64);
    expect(stats.syncBatches).toBeGreaterThan(0);
    expect(stats.syncBatches).toBeLessThan(64);
    expect(store.range({ key: 'k', end: prefixEnd('k'), countOnly: true }).count).toBe(64);
  });

  it('judges compares at apply time, so concurrent compare-and-swap increments never lose an update', async () => {
    const store = await open(await tempDir());
    await store.txn(put('counter', '0'));
    const increment = async (): Promise<number> => {
      for (let attempt = 0; ; attempt++) {
        const cur = store.range({ key: 'counter' }).kvs[0];
        const r = await store.txn({
          compare: [{ key: 'counter', target: 'mod', op: '=', value: cur!.modRevision }],
          success: [{ type: 'put', key: 'counter', value: enc(String(Number(dec(cur!.value)) + 1)) }],
          failure: [],
        });
        if (r.succeeded) return attempt;
      }
    };
    const attempts = await Promise.all(Array.from({ length: 20 }, increment));
    expect(dec(store.range({ key: 'counter' }).kvs[0]!.value)).toBe('20');
    expect(store.range({ key: 'counter' }).kvs[0]!.version).toBe(21);
    // all started from the same revision, so most had to retry
    expect(attempts.some((a) => a > 0)).toBe(true);
  });

  it('rejects malformed txns before they reach the log', async () => {
    const store = await open(await tempDir());
    await expect(store.txn({ compare: [], success: [{ type: 'put', key: '', value: enc('x') }], failure: [] })).rejects.toThrow(InvalidTxnError);
    await expect(
      store.txn({ compare: [], success: [{ type: 'put', key: 'a', value: enc('x') }, { type: 'delete', key: 'a' }], failure: [] }),
    ).rejects.toThrow(/duplicate key/);
    expect(store.stats().entriesWritten).toBe(0);
  });
});

describe('LocalStore durability, snapshots and reopen', () => {
  it('reopens from snapshot + log tail with the same state, and drops covered log entries', async () => {
    const dir = await tempDir();
    const a = await LocalStore.open(dir, { snapshotEvery: 10, compactIntervalMs: 0 });
    for (let i = 0; i < 35; i++) await a.txn(put(`k${i % 12}`, `v${i}`));
    await a.txn(del('k3'));
    await a.compact(20);
    const before = a.range({ key: '', end: prefixEnd(''), revision: 25 });
    const current = a.range({ key: '', end: prefixEnd('') });
    expect(a.stats().snapshots).toBeGreaterThanOrEqual(1);
    await a.close();
    expect(a.healthy()).toBe(false);
    await expect(a.txn(put('x', 'y'))).rejects.toThrow(StoreClosedError);

    const raw = await LevelCommandLog.open(dir);
    const tail = await raw.readAfter(0);
    expect(await raw.loadSnapshot()).toBeDefined();
    await raw.close();
    expect(tail.length).toBeLessThan(37); // 36 txns + 1 compact written
    expect(tail.length).toBeGreaterThan(0);

    const b = await open(dir);
    expect(b.revision).toBe(36);
    expect(b.compactRevision).toBe(20);
    expect(b.range({ key: '', end: prefixEnd(''), revision: 25 })).toEqual(before);
    expect(b.range({ key: '', end: prefixEnd('') })).toEqual(current);
    expect(() => b.range({ key: 'k1', revision: 19 })).toThrow(CompactedError);
    const r = await b.txn(put('k1', 'again'));
    expect(r.revision).toBe(37);
    expect(b.stats().appliedIndex).toBe(38);
  });

  it('the in-memory variant behaves the same without disk', async () => {
    const s = await LocalStore.openInMemory({ compactIntervalMs: 0, snapshotEvery: 3 });
    stores.push(s);
    for (let i = 0; i < 10; i++) await s.txn(put('a', String(i)));
    expect(s.revision).toBe(10);
    expect(dec(s.range({ key: 'a', revision: 4 }).kvs[0]!.value)).toBe('3');
  });
});

describe('LocalStore watch', () => {
  it('replays retained history from startRevision then delivers live writes in order, filtered to the range', async () => {
    const store = await open(await tempDir());
    await store.txn(put('/a/1', 'x')); // 1
    await store.txn(put('/b/1', 'x')); // 2
    await store.txn(put('/a/2', 'x')); // 3
    const seen: AppliedWrite[] = [];
    const w = store.watch({ key: '/a/', end: prefixEnd('/a/'), startRevision: 2 }, (wr) => seen.push(wr));
    expect(seen).toEqual([]); // delivery starts after watch() returns
    await store.txn({
      compare: [],
      success: [
        { type: 'put', key: '/a/1', value: enc('y') },
        { type: 'put', key: '/b/2', value: enc('y') },
      ],
      failure: [],
    }); // 4
    await store.txn(put('/b/3', 'z')); // 5: not delivered
    await store.txn(del('/a/2')); // 6
    await tick();
    expect(seen.map((x) => x.revision)).toEqual([3, 4, 6]);
    expect(seen[1]!.events.map((e) => e.kv.key)).toEqual(['/a/1']);
    expect(seen[1]!.events[0]!.prevKv?.modRevision).toBe(1);
    expect(seen[2]!.events[0]).toMatchObject({ type: 'delete', kv: { key: '/a/2', modRevision: 6 }, prevKv: { modRevision: 3 } });
    w.cancel();
    await store.txn(put('/a/3', 'x'));
    await tick();
    expect(seen).toHaveLength(3);
  });

  it('with no startRevision delivers only future writes', async () => {
    const store = await open(await tempDir());
    await store.txn(put('k', '1'));
    const seen: number[] = [];
    store.watch({ key: 'k' }, (wr) => seen.push(wr.revision));
    await store.txn(put('k', '2'));
    await tick();
    expect(seen).toEqual([2]);
  });

  it('fails with CompactedError for a start below the compact revision', async () => {
    const store = await open(await tempDir());
    for (let i = 0; i < 5; i++) await store.txn(put('k', String(i)));
    await store.compact(4);
    let error: Error | undefined;
    store.watch({ key: 'k', startRevision: 3 }, () => {}, (e) => (error = e));
    expect(error).toBeInstanceOf(CompactedError);
    expect(() => store.watch({ key: 'k', startRevision: 1 }, () => {})).toThrow(CompactedError);
    // at the compact revision itself history (with prevKv) is still there
    const seen: AppliedWrite[] = [];
    store.watch({ key: 'k', startRevision: 4 }, (wr) => seen.push(wr));
    await tick();
    expect(seen.map((x) => x.revision)).toEqual([4, 5]);
    expect(dec(seen[0]!.events[0]!.prevKv?.value)).toBe('2');
  });

  it('onApplied sees every write synchronously and in order; close ends watches', async () => {
    const store = await LocalStore.open(await tempDir(), { compactIntervalMs: 0 });
    const revs: number[] = [];
    const off = store.onApplied((w) => revs.push(w.revision));
    await Promise.all(Array.from({ length: 10 }, (_, i) => store.txn(put(`k${i}`, 'v'))));
    expect(revs).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
    off();
    await store.txn(put('x', 'v'));
    expect(revs).toHaveLength(10);
    let closedErr: Error | undefined;
    store.watch({ key: 'x' }, () => {}, (e) => (closedErr = e));
    await store.close();
    expect(closedErr).toBeInstanceOf(StoreClosedError);
  });
});

describe('LocalStore revisions and compaction', () => {
  it('waitForRevision resolves when the revision is applied, false on timeout; readIndex is the current revision', async () => {
    const store = await open(await tempDir());
    const waiting = store.waitForRevision(2, 60_000);
    await store.txn(put('a', '1'));
    await store.txn(put('a', '2'));
    expect(await waiting).toBe(true);
    expect(await store.readIndex()).toBe(2);
    expect(await store.waitForRevision(1, 10)).toBe(true);
    expect(await store.waitForRevision(50, 5)).toBe(false);
  });

  it('compact rejects future revisions', async () => {
    const store = await open(await tempDir());
    await store.txn(put('a', '1'));
    await expect(store.compact(5)).rejects.toThrow(FutureRevisionError);
    await store.compact(1);
    expect(store.compactRevision).toBe(1);
  });

  it('auto-compaction keeps historyMs of history by the times recorded in the log', async () => {
    const clock = new ManualClock(1_000_000);
    const store = await open(await tempDir(), { historyMs: 300_000, clock });
    await store.txn(put('a', '1')); // rev 1 at t0
    clock.advance(60_000);
    await store.txn(put('a', '2')); // rev 2 at t0+60s
    clock.advance(60_000);
    await store.txn(put('a', '3')); // rev 3 at t0+120s
    clock.advance(200_000); // t0+320s: cutoff t0+20s -> newest revision written before it is 1
    await store.runAutoCompaction();
    expect(store.compactRevision).toBe(1);
    clock.advance(70_000); // cutoff t0+90s -> revision 2
    await store.runAutoCompaction();
    expect(store.compactRevision).toBe(2);
    expect(() => store.range({ key: 'a', revision: 1 })).toThrow(CompactedError);
    expect(dec(store.range({ key: 'a', revision: 2 }).kvs[0]!.value)).toBe('2');
    expect(store.healthy()).toBe(true);
  });
});
