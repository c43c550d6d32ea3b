// The store conformance suite: what every RevisionedStore backend must do,
// exported so each backend runs the same assertions (LocalStore on disk and
// in memory, RaftStore with 1 and 3 members in memory; the etcd backend
// later). Its core is the model-based property test (formerly
// test/property/store-model.property.test.ts): random txns (with compares),
// puts, deletes, compactions and reopen-from-disk, checked after every step
// against a plain Map per revision (docs/store.md "Invariants").
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CompactedError,
  FutureRevisionError,
  prefixEnd,
  type AppliedWrite,
  type Compare,
  type Op,
  type OpResult,
  type RevisionedStore,
  type TxnRequest,
} from '../../src/store/types.js';

/** One store under test. */
export interface OpenedStore {
  store: RevisionedStore;
  /** closes the store and opens it again from what it persisted; absent when the backend keeps nothing */
  reopen?: () => Promise<RevisionedStore>;
  /** closes the store (if still open) and removes what it left behind */
  dispose: () => Promise<void>;
}

export interface StoreBackend {
  name: string;
  /** a fresh, empty store (snapshots often, no auto-compaction: the suite compacts itself) */
  open: () => Promise<OpenedStore>;
  /** property runs (default 30) */
  numRuns?: number;
}

interface ModelKV {
  value: string;
  create: number;
  mod: number;
  version: number;
}
type Snapshot = Map<string, ModelKV>;

const KEYS = ['a', 'a/1', 'a/2', 'b', 'b/1'];
const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
const dec = (b: Uint8Array): string => new TextDecoder().decode(b);

type Step =
  | { kind: 'txn'; txn: TxnRequest }
  | { kind: 'compact'; pick: number }
  | { kind: 'reopen' };

const keyArb = fc.constantFrom(...KEYS);
const valueArb = fc.string({ maxLength: 4 });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ type: fc.constant('put' as const), key: keyArb, value: valueArb.map(enc) }),
  fc.record({ type: fc.constant('delete' as const), key: keyArb }),
  fc.record({ type: fc.constant('get' as const), key: keyArb }),
);
const compareArb: fc.Arbitrary<Compare> = fc.record({
  key: keyArb,
  target: fc.constantFrom('mod' as const, 'create' as const, 'version' as const),
  op: fc.constantFrom('=' as const, '!=' as const, '<' as const, '>' as const),
  value: fc.nat({ max: 8 }),
});
/** Drops repeated writes of a key within a branch (the store rejects them, like etcd). */
const branch = (ops: Op[]): Op[] => {
  const written = new Set<string>();
  return ops.filter((op) => {
    if (op.type === 'get') return true;
    if (written.has(op.key)) return false;
    written.add(op.key);
    return true;
  });
};
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .record({ compare: fc.array(compareArb, { maxLength: 2 }), success: fc.array(opArb, { maxLength: 3 }), failure: fc.array(opArb, { maxLength: 3 }) })
      .map((t) => ({ kind: 'txn' as const, txn: { compare: t.compare, success: branch(t.success), failure: branch(t.failure) } })),
  },
  { weight: 3, arbitrary: fc.tuple(keyArb, valueArb).map(([key, v]) => ({ kind: 'txn' as const, txn: { compare: [], success: [{ type: 'put' as const, key, value: enc(v) }], failure: [] } })) },
  { weight: 1, arbitrary: keyArb.map((key) => ({ kind: 'txn' as const, txn: { compare: [], success: [{ type: 'delete' as const, key }], failure: [] } })) },
  { weight: 2, arbitrary: fc.nat({ max: 1000 }).map((pick) => ({ kind: 'compact' as const, pick })) },
  { weight: 1, arbitrary: fc.constant({ kind: 'reopen' as const }) },
);

class Model {
  /** revs[r] = the key space at revision r */
  revs: Snapshot[] = [new Map()];
  compactRevision = 0;
  get revision(): number {
    return this.revs.length - 1;
  }

  /** the key space at revision `rev` (0 <= rev <= revision) */
  at(rev: number): Snapshot {
    const snap = this.revs[rev];
    if (!snap) throw new Error(`model: no revision ${rev} (latest ${this.revision})`);
    return snap;
  }

  txn(t: TxnRequest): { succeeded: boolean; revision: number; results: OpResult[] } {
    const cur = this.at(this.revision);
    const holds = (c: Compare): boolean => {
      const kv = cur.get(c.key);
      const actual = !kv ? 0 : c.target === 'mod' ? kv.mod : c.target === 'create' ? kv.create : kv.version;
      return c.op === '=' ? actual === c.value : c.op === '!=' ? actual !== c.value : c.op === '<' ? actual < c.value : actual > c.value;
    };
    const succeeded = t.compare.every(holds);
    const next = new Map(cur);
    const rev = this.revision + 1;
    let changed = false;
    const results: OpResult[] = [];
    const asKv = (key: string, m: ModelKV) => ({ key, value: enc(m.value), createRevision: m.create, modRevision: m.mod, version: m.version });
    for (const op of succeeded ? t.success : t.failure) {
      const prev = next.get(op.key);
      if (op.type === 'get') {
        results.push({ type: 'get', kv: prev && asKv(op.key, prev) });
      } else if (op.type === 'put') {
        const kv = { value: dec(op.value), create: prev ? prev.create : rev, mod: rev, version: prev ? prev.version + 1 : 1 };
        next.set(op.key, kv);
        changed = true;
        results.push({ type: 'put', prevKv: prev && asKv(op.key, prev), kv: asKv(op.key, kv) });
      } else if (prev) {
        next.delete(op.key);
        changed = true;
        results.push({ type: 'delete', prevKv: asKv(op.key, prev), deleted: true });
      } else {
        results.push({ type: 'delete', deleted: false });
      }
    }
    if (changed) this.revs.push(next);
    return { succeeded, revision: this.revision, results };
  }
}

function normalizeResults(results: OpResult[]): unknown {
  // Uint8Array vs Buffer and absent-vs-undefined fields do not matter; values do.
  return JSON.parse(
    JSON.stringify(results, (_k, v: unknown) => (v instanceof Uint8Array ? dec(v) : v)),
  ) as unknown;
}

function expectAgrees(store: RevisionedStore, model: Model): void {
  expect(store.revision).toBe(model.revision);
  expect(store.compactRevision).toBe(model.compactRevision);
  for (let rev = Math.max(1, model.compactRevision); rev <= model.revision; rev++) {
    const snap = model.at(rev);
    const expected = [...snap.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([key, m]) => `${key}=${m.value}@c${m.create}m${m.mod}v${m.version}`);
    const all = store.range({ key: '', end: prefixEnd(''), revision: rev });
    expect(all.kvs.map((kv) => `${kv.key}=${dec(kv.value)}@c${kv.createRevision}m${kv.modRevision}v${kv.version}`), `revision ${rev}`).toEqual(expected);
    expect(all.count).toBe(expected.length);
    // prefix with limit
    const inA = expected.filter((e) => e.startsWith('a/'));
    const limited = store.range({ key: 'a/', end: prefixEnd('a/'), revision: rev, limit: 1 });
    expect(limited.count).toBe(inA.length);
    expect(limited.kvs.length).toBe(Math.min(1, inA.length));
    expect(limited.more).toBe(inA.length > 1);
    // single key
    const b = store.range({ key: 'b', revision: rev }).kvs[0];
    expect(b && dec(b.value)).toBe(snap.get('b')?.value);
  }
  if (model.compactRevision > 1) {
    expect(() => store.range({ key: 'a', revision: model.compactRevision - 1 })).toThrow(CompactedError);
  }
}

/** the model's changes at `revision` on keys `filter` passes, as `describeEvents` writes them, sorted */
function modelEvents(model: Model, revision: number, filter: (key: string) => boolean = () => true): string[] {
  const before = model.at(revision - 1);
  const after = model.at(revision);
  const expected: string[] = [];
  for (const key of new Set([...before.keys(), ...after.keys()])) {
    if (!filter(key)) continue;
    const b = before.get(key);
    const a = after.get(key);
    if (a && a.mod === revision) expected.push(`put ${key}=${a.value} prev=${b?.value}`);
    else if (!a && b) expected.push(`delete ${key} prev=${b.value}`);
  }
  return expected.sort();
}

function describeEvents(wr: AppliedWrite): string[] {
  return wr.events
    .map((e) =>
      e.type === 'put' ? `put ${e.kv.key}=${dec(e.kv.value)} prev=${e.prevKv && dec(e.prevKv.value)}` : `delete ${e.kv.key} prev=${e.prevKv && dec(e.prevKv.value)}`,
    )
    .sort();
}

/** The retained history, as a watch from the compact revision replays it, matches the model's diffs. */
async function expectHistoryAgrees(store: RevisionedStore, model: Model): Promise<void> {
  const start = Math.max(1, model.compactRevision);
  const writes: AppliedWrite[] = [];
  const w = store.watch({ key: '', end: prefixEnd(''), startRevision: start }, (wr) => writes.push(wr));
  await new Promise((r) => setImmediate(r));
  w.cancel();
  expect(writes.map((x) => x.revision)).toEqual(Array.from({ length: model.revision - start + 1 }, (_, i) => start + i));
  for (const wr of writes) expect(describeEvents(wr)).toEqual(modelEvents(model, wr.revision));
  expectWritesAfterAgrees(store, model);
}

/**
 * writesAfter (the watch cache's backfill) from every retained revision, for
 * a prefix, one key and everything: exactly the model's writes after it that
 * touch the range, each with only those events; older than the history is
 * CompactedError.
 */
function expectWritesAfterAgrees(store: RevisionedStore, model: Model): void {
  const ranges: Array<{ key: string; end?: string; filter: (k: string) => boolean }> = [
    { key: '', end: prefixEnd(''), filter: () => true },
    { key: 'a/', end: prefixEnd('a/'), filter: (k) => k.startsWith('a/') },
    { key: 'b', filter: (k) => k === 'b' },
  ];
  const oldest = Math.max(0, model.compactRevision - 1);
  for (const r of ranges) {
    for (let after = oldest; after <= model.revision; after++) {
      const got = store.writesAfter(after, r.key, r.end);
      const expected: Array<{ revision: number; events: string[] }> = [];
      for (let rev = after + 1; rev <= model.revision; rev++) {
        const events = modelEvents(model, rev, r.filter);
        if (events.length > 0) expected.push({ revision: rev, events });
      }
      expect(got.map((wr) => ({ revision: wr.revision, events: describeEvents(wr) })), `writesAfter(${after}, ${r.key})`).toEqual(expected);
    }
    if (model.compactRevision > 1) expect(() => store.writesAfter(model.compactRevision - 2, r.key, r.end)).toThrow(CompactedError);
  }
}


/** Registers the conformance tests for `backend`. */
export function storeConformanceSuite(backend: StoreBackend): void {
  describe(`store conformance: ${backend.name}`, () => {
    it('agrees with a per-revision model at every retained revision after every step (and after reopening)', async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: 25 }), async (steps) => {
          const opened = await backend.open();
          let store = opened.store;
          const model = new Model();
          try {
            for (const step of steps) {
              if (step.kind === 'txn') {
                const expected = model.txn(step.txn);
                const actual = await store.txn(step.txn);
                expect(actual.succeeded).toBe(expected.succeeded);
                expect(actual.revision).toBe(expected.revision);
                expect(normalizeResults(actual.results)).toEqual(normalizeResults(expected.results));
              } else if (step.kind === 'compact') {
                // any revision from the compact revision to the current one
                const target = model.compactRevision + (step.pick % (model.revision - model.compactRevision + 1));
                await store.compact(target);
                model.compactRevision = Math.max(model.compactRevision, target);
              } else if (opened.reopen) {
                store = await opened.reopen();
              }
              expectAgrees(store, model);
            }
            await expectHistoryAgrees(store, model);
            if (opened.reopen) {
              store = await opened.reopen();
              expectAgrees(store, model);
              await expectHistoryAgrees(store, model);
            }
          } finally {
            await opened.dispose();
          }
        }),
        { numRuns: backend.numRuns ?? 30 },
      );
    });

    it('refuses a compaction beyond the current revision and keeps serving', async () => {
      const opened = await backend.open();
      try {
        const { store } = opened;
        const put = await store.txn({ compare: [], success: [{ type: 'put', key: 'k', value: enc('v') }], failure: [] });
        await expect(store.compact(put.revision + 5)).rejects.toBeInstanceOf(FutureRevisionError);
        expect(store.range({ key: 'k' }).kvs.map((kv) => dec(kv.value))).toEqual(['v']);
        expect(await store.readIndex()).toBeGreaterThanOrEqual(put.revision);
      } finally {
        await opened.dispose();
      }
    });

    it('delivers every applied write to onApplied in revision order and lets waitForRevision see it', async () => {
      const opened = await backend.open();
      try {
        const { store } = opened;
        const seen: number[] = [];
        const off = store.onApplied((w) => seen.push(w.revision));
        const revs: number[] = [];
        for (const v of ['1', '2', '3']) {
          revs.push((await store.txn({ compare: [], success: [{ type: 'put', key: `k${v}`, value: enc(v) }], failure: [] })).revision);
        }
        off();
        const [first = 0, , last = 0] = revs;
        expect(await store.waitForRevision(last, 1000)).toBe(true);
        expect(seen).toEqual(revs);
        expect(revs).toEqual([first, first + 1, first + 2]);
      } finally {
        await opened.dispose();
      }
    });
  });
}
