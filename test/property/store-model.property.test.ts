// Model-based property test of the revisioned store: random txns (with
// compares), puts, deletes, compactions and reopen-from-disk, checked after
// every step against a plain Map per revision (docs/store.md "Invariants").
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LocalStore } from '../../src/store/local-store.js';
import {
  CompactedError,
  prefixEnd,
  type AppliedWrite,
  type Compare,
  type Op,
  type OpResult,
  type TxnRequest,
} from '../../src/store/types.js';

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

  txn(t: TxnRequest): { succeeded: boolean; revision: number; results: OpResult[] } {
    const cur = this.revs[this.revision];
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

function expectAgrees(store: LocalStore, model: Model): void {
  expect(store.revision).toBe(model.revision);
  expect(store.compactRevision).toBe(model.compactRevision);
  for (let rev = Math.max(1, model.compactRevision); rev <= model.revision; rev++) {
    const snap = model.revs[rev];
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

/** The retained history, as a watch from the compact revision replays it, matches the model's diffs. */
async function expectHistoryAgrees(store: LocalStore, model: Model): Promise<void> {
  const start = Math.max(1, model.compactRevision);
  const writes: AppliedWrite[] = [];
  const w = store.watch({ key: '', end: prefixEnd(''), startRevision: start }, (wr) => writes.push(wr));
  await new Promise((r) => setImmediate(r));
  w.cancel();
  expect(writes.map((x) => x.revision)).toEqual(Array.from({ length: model.revision - start + 1 }, (_, i) => start + i));
  for (const wr of writes) {
    const before = model.revs[wr.revision - 1];
    const after = model.revs[wr.revision];
    const expected: string[] = [];
    for (const key of new Set([...before.keys(), ...after.keys()])) {
      const b = before.get(key);
      const a = after.get(key);
      if (a && a.mod === wr.revision) expected.push(`put ${key}=${a.value} prev=${b?.value}`);
      else if (!a && b) expected.push(`delete ${key} prev=${b.value}`);
    }
    const actual = wr.events.map((e) =>
      e.type === 'put' ? `put ${e.kv.key}=${dec(e.kv.value)} prev=${e.prevKv && dec(e.prevKv.value)}` : `delete ${e.kv.key} prev=${e.prevKv && dec(e.prevKv.value)}`,
    );
    expect(actual.sort()).toEqual(expected.sort());
  }
}

describe('store against a per-revision model', () => {
  it('agrees at every retained revision after every step, and after reopening from disk', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: 25 }), async (steps) => {
        const dir = await mkdtemp(join(tmpdir(), 'orch-store-prop-'));
        const opts = { snapshotEvery: 4, compactIntervalMs: 0 };
        let store = await LocalStore.open(dir, opts);
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
            } else {
              await store.close();
              store = await LocalStore.open(dir, opts);
            }
            expectAgrees(store, model);
          }
          await expectHistoryAgrees(store, model);
          await store.close();
          store = await LocalStore.open(dir, opts);
          expectAgrees(store, model);
          await expectHistoryAgrees(store, model);
        } finally {
          await store.close();
          await rm(dir, { recursive: true, force: true });
        }
      }),
      { numRuns: 30 },
    );
  });
});
