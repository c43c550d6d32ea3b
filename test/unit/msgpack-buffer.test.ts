// The shared msgpack encoder must not keep the buffer of a large encoding
// (a snapshot) alive: later small results are views into the encoder's
// buffer, so they would hold it (docs/store.md, "Memory per stored object").
import { describe, expect, it } from 'vitest';
import { decodeMsgpack, encodeMsgpack, LARGE_ENCODING_BYTES } from '../../src/raft/codec.js';

describe('encodeMsgpack after a large encoding', () => {
  it('encodes small values into a small buffer again', () => {
    const big = { keys: Array.from({ length: 4096 }, (_, i) => [`k${i}`, new Uint8Array(1024).fill(i & 0xff)]) };
    const bigOut = encodeMsgpack(big);
    expect(bigOut.byteLength).toBeGreaterThan(LARGE_ENCODING_BYTES);
    const small = encodeMsgpack({ a: 1, b: 'x' });
    expect(decodeMsgpack(small)).toEqual({ a: 1, b: 'x' });
    // the small result's backing buffer is not the snapshot-sized one
    expect(small.buffer.byteLength).toBeLessThan(LARGE_ENCODING_BYTES);
    expect(small.buffer).not.toBe(bigOut.buffer);
    // the large result is intact (not overwritten by later encodings)
    const back = decodeMsgpack(bigOut) as typeof big;
    expect(back.keys.length).toBe(4096);
    expect(Array.from(back.keys[4095]![1] as Uint8Array).every((b) => b === 4095 % 256)).toBe(true);
  });
});
