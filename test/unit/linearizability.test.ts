// The Wing–Gong checker of the chaos test on small hand-made histories.
import { describe, expect, it } from 'vitest';
import {
  checkLinearizable,
  objectModel,
  type Model,
  type ObjectInput,
  type ObjectOutput,
  type Operation,
} from '../cluster/linearizability.js';

type Op = Operation<ObjectInput, ObjectOutput>;
const op = (key: string, call: number, ret: number, input: ObjectInput, output: ObjectOutput): Op => ({ key, call, ret, input, output });

describe('linearizability checker (object model)', () => {
  it('accepts a sequential history', () => {
    const h = [
      op('a', 1, 2, { type: 'create', value: 'x' }, { type: 'ok', rv: 5 }),
      op('a', 3, 4, { type: 'read' }, { type: 'ok', rv: 5, value: 'x' }),
      op('a', 5, 6, { type: 'update', value: 'y', expectRv: 5 }, { type: 'ok', rv: 9 }),
      op('a', 7, 8, { type: 'update', value: 'z', expectRv: 5 }, { type: 'conflict' }),
      op('a', 9, 10, { type: 'read' }, { type: 'ok', rv: 9, value: 'y' }),
    ];
    expect(checkLinearizable(h, objectModel).ok).toBe(true);
  });

  it('accepts concurrent operations that can be reordered within their windows', () => {
    // the read overlaps the update and sees its result
    const h = [
      op('a', 1, 2, { type: 'create', value: 'x' }, { type: 'ok', rv: 5 }),
      op('a', 3, 8, { type: 'update', value: 'y', expectRv: 5 }, { type: 'ok', rv: 6 }),
      op('a', 4, 5, { type: 'read' }, { type: 'ok', rv: 6, value: 'y' }),
      op('a', 6, 7, { type: 'read' }, { type: 'ok', rv: 6, value: 'y' }),
    ];
    expect(checkLinearizable(h, objectModel).ok).toBe(true);
  });

  it('rejects a stale read after an acknowledged write (a lost or unseen write)', () => {
    const h = [
      op('a', 1, 2, { type: 'create', value: 'x' }, { type: 'ok', rv: 5 }),
      op('a', 3, 4, { type: 'update', value: 'y', expectRv: 5 }, { type: 'ok', rv: 6 }),
      op('a', 5, 6, { type: 'read' }, { type: 'ok', rv: 5, value: 'x' }),
    ];
    const r = checkLinearizable(h, objectModel);
    expect(r.ok).toBe(false);
    expect(r.failedKeys).toEqual(['a']);
  });

  it('rejects two successful creates of the same object', () => {
    const h = [
      op('a', 1, 4, { type: 'create', value: 'x' }, { type: 'ok', rv: 5 }),
      op('a', 2, 3, { type: 'create', value: 'y' }, { type: 'ok', rv: 6 }),
    ];
    expect(checkLinearizable(h, objectModel).ok).toBe(false);
  });

  it('rejects a read that goes back in time (new value, then the old one)', () => {
    const h = [
      op('a', 1, 2, { type: 'create', value: 'x' }, { type: 'ok', rv: 5 }),
      op('a', 3, 10, { type: 'update', value: 'y', expectRv: 5 }, { type: 'ok', rv: 6 }),
      op('a', 4, 5, { type: 'read' }, { type: 'ok', rv: 6, value: 'y' }),
      op('a', 6, 7, { type: 'read' }, { type: 'ok', rv: 5, value: 'x' }),
    ];
    expect(checkLinearizable(h, objectModel).ok).toBe(false);
  });

  it('lets an operation with unknown outcome take effect or not, and binds its version when read', () => {
    const happened = [
      op('a', 1, 2, { type: 'create', value: 'x' }, { type: 'ok', rv: 5 }),
      op('a', 3, Infinity, { type: 'update', value: 'y', expectRv: 5 }, { type: 'unknown' }),
      op('a', 4, 5, { type: 'read' }, { type: 'ok', rv: 7, value: 'y' }),
      op('a', 6, 7, { type: 'update', value: 'z', expectRv: 7 }, { type: 'ok', rv: 8 }),
    ];
    expect(checkLinearizable(happened, objectModel).ok).toBe(true);
    const didNot = [
      op('a', 1, 2, { type: 'create', value: 'x' }, { type: 'ok', rv: 5 }),
      op('a', 3, Infinity, { type: 'update', value: 'y', expectRv: 5 }, { type: 'unknown' }),
      op('a', 4, 5, { type: 'read' }, { type: 'ok', rv: 5, value: 'x' }),
    ];
    expect(checkLinearizable(didNot, objectModel).ok).toBe(true);
    // but it cannot take effect before it was invoked
    const tooEarly = [
      op('a', 1, 2, { type: 'create', value: 'x' }, { type: 'ok', rv: 5 }),
      op('a', 3, 4, { type: 'read' }, { type: 'ok', rv: 7, value: 'y' }),
      op('a', 5, Infinity, { type: 'update', value: 'y', expectRv: 5 }, { type: 'unknown' }),
    ];
    expect(checkLinearizable(tooEarly, objectModel).ok).toBe(false);
  });

  it('checks keys independently (P-compositionality) and names the failing key', () => {
    const h = [
      op('a', 1, 2, { type: 'create', value: 'x' }, { type: 'ok', rv: 5 }),
      op('b', 1, 2, { type: 'read' }, { type: 'notFound' }),
      op('b', 3, 4, { type: 'create', value: 'q' }, { type: 'ok', rv: 6 }),
      op('b', 5, 6, { type: 'read' }, { type: 'notFound' }),
    ];
    const r = checkLinearizable(h, objectModel);
    expect(r.failedKeys).toEqual(['b']);
  });
});

describe('linearizability checker (register model, classic examples)', () => {
  type In = { w?: number };
  type Out = { r?: number };
  const register: Model<number, In, Out> = {
    init: () => 0,
    hash: (s) => String(s),
    step: (s, i, o) => (i.w !== undefined ? [i.w] : o.r === s ? [s] : []),
  };
  const o = (call: number, ret: number, input: In, output: Out): Operation<In, Out> => ({ key: 'x', call, ret, input, output });

  it('accepts the overlapping write/read example and rejects the non-linearizable one', () => {
    // w(1) overlaps two reads: r=1 then r=0 is not linearizable, r=0 then r=1 is
    const good = [o(1, 10, { w: 1 }, {}), o(2, 3, {}, { r: 0 }), o(4, 5, {}, { r: 1 })];
    const bad = [o(1, 10, { w: 1 }, {}), o(2, 3, {}, { r: 1 }), o(4, 5, {}, { r: 0 })];
    expect(checkLinearizable(good, register).ok).toBe(true);
    expect(checkLinearizable(bad, register).ok).toBe(false);
  });
});
