// sortStrings (src/machinery/apply/fieldpath.ts) against the sort it replaces
// in created-fields.ts: `keys.sort(compareStrings)`, for any strings (astral
// code points and lone surrogates included, where code-point and UTF-16 orders
// differ), repeats, and lengths on both sides of the insertion-sort limit.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareStrings, sortStrings } from '../../src/machinery/apply/fieldpath.js';

const strArb = fc.oneof(
  fc.string({ maxLength: 6 }),
  fc.string({ unit: 'binary', maxLength: 4 }),
  fc.constantFrom('a', 'b', 'f:a', '\ud83d\ude00', '\uffff', '\ud800', '\udc00', ''),
);

describe('sortStrings', () => {
  it('orders as Array.prototype.sort(compareStrings)', () => {
    fc.assert(
      fc.property(fc.array(strArb, { maxLength: 40 }), (keys) => {
        const expected = [...keys].sort(compareStrings);
        const got = [...keys];
        sortStrings(got);
        expect(got).toEqual(expected);
      }),
      { numRuns: 2000 },
    );
  });

  it('sorts the keys of an object as a create sees them', () => {
    const keys = ['metadata', 'kind', 'data', 'apiVersion', 'binaryData', 'immutable'];
    sortStrings(keys);
    expect(keys).toEqual(['apiVersion', 'binaryData', 'data', 'immutable', 'kind', 'metadata']);
  });
});
