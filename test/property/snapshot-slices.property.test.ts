// The sliced snapshot encoding (src/store/snapshot-encoder.ts) against the
// synchronous one (MvccState.snapshot): the same bytes, so the same restored
// state, for random histories with deletes, multi-key txns and compactions,
// while writes and compactions go on between the slices.
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MvccState } from '../../src/store/mvcc-state.js';
import { encodeSnapshotCut } from '../../src/store/snapshot-encoder.js';
import { prefixEnd, type Command, type Op } from '../../src/store/types.js';

// short, long (str8/str16 headers) and multi-byte keys: below and from 64 UTF-16 units (msgpackr's
// own UTF-8 loop, then Buffer's) and a surrogate pair (keys are written in place since the fifth pass;
// a lone surrogate does not survive UTF-8 in either encoder, so it cannot restore equal)
const keyArb = fc.constantFrom('a', 'b/c', 'd', '/registry/leases/orch-node-lease/node-17', 'k'.repeat(300), 'é/ü/€', 'z', 'é'.repeat(70), '/😀/x');
// small values, and now and then one past bin16 (a 65,536-byte value takes bin32)
const valueArb = fc.oneof(
  { weight: 20, arbitrary: fc.uint8Array({ maxLength: 40 }) },
  { weight: 1, arbitrary: fc.constant(new Uint8Array(70_000).fill(7)) },
);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ type: fc.constant('put' as const), key: keyArb, value: valueArb }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('delete' as const), key: keyArb }) },
);
type Step = { kind: 'txn'; ops: Op[]; dt: number } | { kind: 'compact'; fraction: number };
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  // times from 0 to past 2^32 ms (float64 in msgpack), not always increasing
  { weight: 8, arbitrary: fc.record({ kind: fc.constant('txn' as const), ops: fc.array(opArb, { minLength: 1, maxLength: 3 }), dt: fc.integer({ min: -5, max: 2 ** 33 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('compact' as const), fraction: fc.double({ min: 0, max: 1, noNaN: true }) }) },
);

class Driver {
  readonly state = new MvccState();
  private index = 0;
  private time = 0;
  step(s: Step): void {
    let cmd: Command;
    if (s.kind === 'txn') {
      this.time = Math.max(0, this.time + s.dt);
      cmd = { type: 'txn', time: this.time, txn: { compare: [], success: s.ops, failure: [] } };
    } else {
      const { revision, compactRevision } = this.state;
      cmd = { type: 'compact', time: this.time, revision: compactRevision + Math.floor((revision - compactRevision) * s.fraction) };
    }
    // gaps in the log index, as Raft's non-command entries make
    this.index += 1 + (this.index % 3 === 0 ? 1 : 0);
    this.state.apply(this.index, cmd);
  }
}

/** everything a reader can see: every retained revision's writes, the current keys, the counters (values by digest) */
function observable(s: MvccState): string {
  return JSON.stringify(
    {
      revision: s.revision,
      compactRevision: s.compactRevision,
      appliedIndex: s.appliedIndex,
      kvs: s.range({ key: '', end: prefixEnd('') }).kvs,
      writes: s.writesSince(s.compactRevision),
      compactable: s.compactableKeys,
    },
    (_k, v: unknown) => (v instanceof Uint8Array ? `${v.byteLength}:${createHash('sha1').update(v).digest('hex')}` : v),
  );
}

describe('sliced snapshot encoding', () => {
  it('gives the synchronous snapshot\'s bytes and state, with writes and compactions between the slices', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { maxLength: 60 }), fc.array(stepArb, { maxLength: 40 }), fc.integer({ min: 1, max: 5 }), async (before, during, chunkElements) => {
        const d = new Driver();
        for (const s of before) d.step(s);
        const expected = d.state.snapshot();
        const seen = observable(d.state);
        const cut = d.state.snapshotCut();
        const queue = [...during];
        let turns = 0;
        const bytes = await encodeSnapshotCut(cut, {
          sliceMs: 0, // yield after every chunk
          chunkElements,
          nextTurn: async () => {
            turns += 1;
            const s = queue.shift();
            if (s) d.step(s);
          },
        });
        for (const s of queue) d.step(s);
        expect(bytes).toBeDefined();
        expect(Buffer.from(bytes!).equals(Buffer.from(expected))).toBe(true);
        const restored = MvccState.restore(bytes!);
        expect(observable(restored)).toEqual(seen);
        expect(observable(restored)).toEqual(observable(MvccState.restore(expected)));
        // more than one slice whenever there is more than one chunk
        if (cut.keys.length * 2 > chunkElements) expect(turns).toBeGreaterThan(0);
      }),
      { numRuns: 200 },
    );
  });

  it('gives the same bytes past 65,535 elements (32-bit array headers)', async () => {
    const d = new Driver();
    for (let i = 0; i < 40_000; i++) d.step({ kind: 'txn', ops: [{ type: 'put', key: `/k/${i}`, value: Uint8Array.of(i & 0xff) }], dt: 1 });
    for (let i = 0; i < 30_000; i++) d.step({ kind: 'txn', ops: [{ type: 'put', key: `/k/${i % 7}`, value: Uint8Array.of(i & 0xff) }], dt: 1 });
    const expected = d.state.snapshot();
    const bytes = await encodeSnapshotCut(d.state.snapshotCut(), { sliceMs: 0, chunkElements: 1000 });
    expect(Buffer.from(bytes!).equals(Buffer.from(expected))).toBe(true);
  });

  it('gives the same bytes for keys with lone surrogates (short and from 64 UTF-16 units)', async () => {
    const d = new Driver();
    for (const key of ['a\ud800b', '\udc00'.repeat(65), 'x\ud83d', `${'é'.repeat(40)}\ud800${'€'.repeat(40)}`]) {
      d.step({ kind: 'txn', ops: [{ type: 'put', key, value: Uint8Array.of(1) }], dt: 1 });
    }
    const bytes = await encodeSnapshotCut(d.state.snapshotCut(), { sliceMs: 0, chunkElements: 2 });
    expect(Buffer.from(bytes!).equals(Buffer.from(d.state.snapshot()))).toBe(true);
  });

  it('an empty state', async () => {
    const s = new MvccState();
    const bytes = await encodeSnapshotCut(s.snapshotCut());
    expect(Buffer.from(bytes!).equals(Buffer.from(s.snapshot()))).toBe(true);
  });

  it('stops at the next slice once cancelled', async () => {
    const d = new Driver();
    for (let i = 0; i < 50; i++) d.step({ kind: 'txn', ops: [{ type: 'put', key: `/k/${i}`, value: Uint8Array.of(i) }], dt: 1 });
    let cancelled = false;
    let turns = 0;
    const bytes = await encodeSnapshotCut(d.state.snapshotCut(), {
      sliceMs: 0,
      chunkElements: 2,
      cancelled: () => cancelled,
      nextTurn: async () => {
        turns += 1;
        cancelled = turns === 3;
      },
    });
    expect(bytes).toBeUndefined();
    expect(turns).toBe(3);
  });
});
