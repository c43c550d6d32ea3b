// LocalStore applies its own copy of a proposed command instead of decoding
// the log entry it just wrote: the copy must be what the log holds.

import { describe, expect, it } from 'vitest';
import { decodeCommand, encodeCommand } from '../../src/store/codec.js';
import { LocalStore, ownCopy } from '../../src/store/local-store.js';
import { type Command, handOverValue, takeHandedOverValue } from '../../src/store/types.js';

const commands: Command[] = [
  {
    type: 'txn',
    time: 1700000000123,
    txn: {
      compare: [{ key: '/a', target: 'create', op: '=', value: 0 }],
      success: [
        { type: 'put', key: '/a', value: new TextEncoder().encode('{"x":1}') },
        { type: 'put', key: '/b', value: Buffer.from('pooled small buffer') },
        { type: 'delete', key: '/c' },
        { type: 'get', key: '/d' },
      ],
      failure: [{ type: 'get', key: '/a' }],
    },
  },
  { type: 'compact', revision: 42, time: 5 },
];

describe('LocalStore ownCopy', () => {
  it('equals decodeCommand(encodeCommand(cmd)) and shares no buffer with the caller', () => {
    for (const cmd of commands) {
      const copy = ownCopy(cmd);
      expect(copy).toEqual(decodeCommand(encodeCommand(cmd)));
      if (cmd.type !== 'txn' || copy.type !== 'txn') continue;
      cmd.txn.success.forEach((op, i) => {
        const c = copy.txn.success[i]!;
        if (op.type !== 'put' || c.type !== 'put') return;
        expect(c.value.buffer).not.toBe(op.value.buffer);
        expect(Buffer.isBuffer(c.value)).toBe(false);
        expect(c.value.byteLength).toBe(c.value.buffer.byteLength); // not a view into a pool slab
      });
    }
  });

  it('a caller reusing its buffer after txn() does not change what was stored', async () => {
    const store = await LocalStore.openInMemory();
    try {
      const value = new TextEncoder().encode('before');
      const pending = store.txn({ compare: [], success: [{ type: 'put', key: '/k', value }], failure: [] });
      value.set(new TextEncoder().encode('AFTER!')); // same length, mutated before the apply
      await pending;
      expect(new TextDecoder().decode(store.range({ key: '/k' }).kvs[0]!.value)).toBe('before');
    } finally {
      await store.close();
    }
  });

  it('a handed-over value is kept as it is; a view into a larger buffer or a Buffer is still copied', async () => {
    const own = handOverValue(new TextEncoder().encode('{"own":1}'));
    const view = handOverValue(new TextEncoder().encode('xx{"view":1}').subarray(2));
    const buf = handOverValue(Buffer.from('{"buf":1}'));
    // the mark is taken once: a second use of the same array is copied
    const probe = handOverValue(new TextEncoder().encode('p'));
    expect([takeHandedOverValue(probe), takeHandedOverValue(probe)]).toEqual([true, false]);
    expect(takeHandedOverValue(new TextEncoder().encode('never marked'))).toBe(false);
    const copy = ownCopy({ type: 'txn', time: 1, txn: { compare: [], success: [{ type: 'put', key: '/o', value: own }, { type: 'put', key: '/v', value: view }, { type: 'put', key: '/b', value: buf }], failure: [] } });
    if (copy.type !== 'txn') throw new Error('not a txn');
    const [o, v, b] = copy.txn.success.map((op) => (op.type === 'put' ? op.value : undefined));
    expect(o).toBe(own);
    // its mark was taken by that copy: offered again, it is copied
    const again = ownCopy({ type: 'txn', time: 1, txn: { compare: [], success: [{ type: 'put', key: '/o', value: own }], failure: [] } });
    expect(again.type === 'txn' && again.txn.success[0]!.type === 'put' && again.txn.success[0]!.value).not.toBe(own);
    expect(v).not.toBe(view);
    expect(v!.byteLength).toBe(v!.buffer.byteLength);
    expect(b!.buffer).not.toBe(buf.buffer);
    expect(Buffer.isBuffer(b)).toBe(false);
    // and what is stored reads back the same
    const store = await LocalStore.openInMemory();
    try {
      await store.txn({ compare: [], success: [{ type: 'put', key: '/o', value: own }], failure: [] });
      expect(new TextDecoder().decode(store.range({ key: '/o' }).kvs[0]!.value)).toBe('{"own":1}');
    } finally {
      await store.close();
    }
  });
});
