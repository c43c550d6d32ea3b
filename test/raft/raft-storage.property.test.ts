// RaftStorage (src/raft/storage.ts) against a simple model of a Raft log:
// fast-check runs appends (one Ready's entries, from any index after the
// snapshot up to one past the end: a new leader's overwrite of a suffix
// when inside), snapshots the host takes, snapshots from a leader and
// reopens, and after each reopen what load() returns must be exactly the
// model's log.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RaftStorage } from '../../src/raft/storage.js';
import type { Entry } from '../../src/raft/types.js';

type Op =
  | { kind: 'append'; back: number; count: number }
  | { kind: 'compact'; back: number }
  | { kind: 'leaderSnapshot'; ahead: number }
  | { kind: 'reopen' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('append' as const), back: fc.nat({ max: 8 }), count: fc.integer({ min: 1, max: 6 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('compact' as const), back: fc.nat({ max: 6 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('leaderSnapshot' as const), ahead: fc.integer({ min: -4, max: 4 }) }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'reopen' as const }) },
);

/** the model: entries after the snapshot, by index; what each one says names the op that wrote it */
interface Model {
  snapshotIndex: number;
  log: Map<number, string>;
  last: number;
}

const text = (e: Entry): string => new TextDecoder().decode(e.data);

describe('RaftStorage (property)', () => {
  it('load() returns the model\'s log after any sequence of appends, overwrites, snapshots and reopens', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 40 }), async (ops) => {
        const base = await mkdtemp(join(tmpdir(), 'orch-raft-storage-prop-'));
        const path = join(base, 'raft');
        let s = await RaftStorage.open(path);
        await s.load();
        const m: Model = { snapshotIndex: 0, log: new Map(), last: 0 };
        let term = 1;
        const check = async (): Promise<void> => {
          await s.close();
          s = await RaftStorage.open(path);
          const st = await s.load();
          expect(st.snapshot?.metadata.index ?? 0).toBe(m.snapshotIndex);
          const want = [...m.log.entries()].sort((a, b) => a[0] - b[0]).map(([i, t]) => `${i}:${t}`);
          expect(st.entries.map((e) => `${e.index}:${text(e)}`)).toEqual(want);
          expect(s.stats()).toMatchObject({ snapshotIndex: m.snapshotIndex, lastIndex: m.last });
        };
        try {
          for (const [n, op] of ops.entries()) {
            if (op.kind === 'append') {
              // from anywhere after the snapshot up to one past the end (an overwrite when inside)
              const from = Math.max(m.snapshotIndex + 1, m.last + 1 - op.back);
              term += 1;
              const entries: Entry[] = Array.from({ length: op.count }, (_, k) => ({ index: from + k, term, type: 'normal', data: new TextEncoder().encode(`op${n}`) }));
              await s.save({ entries, hardState: { term, vote: 'a', commit: m.snapshotIndex } });
              for (let i = from; i <= m.last; i++) m.log.delete(i);
              for (const e of entries) m.log.set(e.index, `op${n}`);
              m.last = from + op.count - 1;
            } else if (op.kind === 'compact') {
              const idx = m.last - op.back;
              if (idx <= m.snapshotIndex) continue;
              await s.saveSnapshot({ metadata: { index: idx, term, confState: { voters: ['a'] } }, data: new Uint8Array([n]) });
              for (const i of [...m.log.keys()]) if (i <= idx) m.log.delete(i);
              m.snapshotIndex = idx;
            } else if (op.kind === 'leaderSnapshot') {
              const idx = m.last + op.ahead;
              if (idx <= m.snapshotIndex) continue;
              term += 1;
              await s.save({ snapshot: { metadata: { index: idx, term, confState: { voters: ['a'] } }, data: new Uint8Array([n]) }, entries: [], hardState: { term, vote: 'a', commit: idx } });
              m.log.clear();
              m.snapshotIndex = idx;
              m.last = idx;
            } else {
              await check();
            }
          }
          await check();
        } finally {
          await s.close().catch(() => {});
          await rm(base, { recursive: true, force: true });
        }
      }),
      { numRuns: 60 },
    );
  });
});
