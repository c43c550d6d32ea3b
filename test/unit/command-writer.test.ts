// The single-node log writes each command by hand (src/store/command-writer.ts)
// into its record (command-log.ts recordOf): the bytes must be exactly what
// msgpackr gives for the command's own copy, so the log format is unchanged
// and decodeCommand reads every record back to the command applied.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeCommand, encodeCommand } from '../../src/store/codec.js';
import { commandSize, writeCommand } from '../../src/store/command-writer.js';
import { decodeGroup, encodeGroup, recordOf } from '../../src/store/command-log.js';
import { ownCopy } from '../../src/store/local-store.js';
import type { Command, Compare, Op } from '../../src/store/types.js';

/** keys of every length class and kind: ASCII, 2- and 3-byte, surrogate pairs, lone surrogates, around 32/64/256 */
const key = fc.oneof(
  fc.string({ minLength: 1, maxLength: 40 }),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 80 }),
  fc.string({ unit: fc.constantFrom('a', 'é', '€', '😀', '\ud800', '\udc00', '/'), minLength: 1, maxLength: 140 }),
  fc.integer({ min: 1, max: 70_000 }).map((n) => 'k'.repeat(n)),
);
const num = fc.oneof(
  fc.integer({ min: -0x80000000, max: 0xffffffff }),
  fc.constantFrom(0, 0x7f, 0x80, 0xff, 0x100, 0xffff, 0x10000, -0x20, -0x21, -0x80, -0x81, -0x8000, -0x8001, 2 ** 32, 1_764_000_000_000, -1.5, 0.25, Number.MAX_SAFE_INTEGER),
  // -0 is written as 0 by both (msgpackr's integer test), so it does not read back as -0
  fc.double({ noNaN: true, noDefaultInfinity: true }).filter((v) => !Object.is(v, -0)),
);
const value = fc.oneof(
  fc.uint8Array({ maxLength: 300 }),
  fc.constantFrom(0, 255, 256, 65_535, 65_536).map((n) => new Uint8Array(n).fill(7)),
  fc.uint8Array({ minLength: 1, maxLength: 40 }).map((b) => Buffer.from(b)),
);
const compare: fc.Arbitrary<Compare> = fc.record({
  key,
  target: fc.constantFrom('mod' as const, 'create' as const, 'version' as const),
  op: fc.constantFrom('=' as const, '!=' as const, '<' as const, '>' as const),
  value: num,
});
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ type: fc.constant('put' as const), key, value }),
  fc.record({ type: fc.constant('delete' as const), key }),
  fc.record({ type: fc.constant('get' as const), key }),
);
const command: fc.Arbitrary<Command> = fc.oneof(
  fc.record({
    type: fc.constant('txn' as const),
    time: num,
    txn: fc.record({ compare: fc.array(compare, { maxLength: 3 }), success: fc.array(op, { maxLength: 20 }), failure: fc.array(op, { maxLength: 3 }) }),
  }),
  fc.record({ type: fc.constant('compact' as const), revision: num, time: num }),
);

/** lone surrogates: msgpackr writes them (as bytes the writer must match) but does not read them back */
const LONE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const wellFormed = (cmd: Command): boolean =>
  cmd.type === 'compact' || ![...cmd.txn.compare, ...cmd.txn.success, ...cmd.txn.failure].some((x) => LONE.test(x.key));

function written(cmd: Command): Uint8Array {
  const out = new Uint8Array(commandSize(cmd));
  const end = writeCommand(cmd, out, new DataView(out.buffer), 0);
  expect(end).toBe(out.byteLength);
  return out;
}

describe('command writer', () => {
  it('writes exactly the bytes msgpackr gives for the command own copy, and they decode to it', () => {
    fc.assert(
      fc.property(command, (cmd) => {
        const own = ownCopy(cmd);
        const bytes = written(own);
        expect(Buffer.from(bytes).equals(Buffer.from(encodeCommand(own)))).toBe(true);
        if (wellFormed(own)) expect(decodeCommand(bytes)).toEqual(own);
      }),
      { numRuns: 1000 },
    );
  });

  it('a record of several commands equals the group of their msgpackr encodings; a record of one is the command', () => {
    fc.assert(
      fc.property(fc.array(command, { minLength: 1, maxLength: 6 }), (cmds) => {
        const entries = cmds.map((c, i) => ({ index: 10 + i, cmd: ownCopy(c) }));
        const record = recordOf(entries);
        const encoded = entries.map((e) => ({ index: e.index, bytes: encodeCommand(e.cmd) }));
        const expected = entries.length === 1 ? encoded[0]!.bytes : encodeGroup(encoded);
        expect(Buffer.from(record).equals(Buffer.from(expected))).toBe(true);
        if (entries.length > 1 && entries.every((e) => wellFormed(e.cmd))) {
          expect(decodeGroup(record).map((b) => decodeCommand(b))).toEqual(entries.map((e) => e.cmd));
        }
      }),
      { numRuns: 100 },
    );
  });
});
