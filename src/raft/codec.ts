// Byte encodings the Raft layer owns: msgpack for persisted entries and wire
// messages, and the log key order. The store builds its command codec on top
// of this module (src/store/codec.ts); Raft imports nothing from the store.

import { Packr } from 'msgpackr';

// Plain msgpack maps (no record extension) so every decoder agrees; copy
// binary values out of the input so a decoded snapshot or log batch does not
// keep its whole source buffer alive.
const packr = new Packr({ useRecords: false, copyBuffers: true, int64AsType: 'number' });

/**
 * After a result at least this large (a snapshot of the whole state, a
 * snapshot message) the encoder gets a fresh small buffer. msgpackr keeps the
 * buffer it grew to (one buffer for the whole process, shared by every
 * Packr), returns every later result as a view into it, and when it is full
 * allocates another of the same size: after one snapshot of a 40 MiB state,
 * each group of small commands held a 54 MiB buffer alive for as long as any
 * of them was referenced (docs/store.md, "Memory per stored object").
 */
export const LARGE_ENCODING_BYTES = 1 << 20;
/** msgpackr's own initial buffer size */
const FRESH_BUFFER_BYTES = 8192;

/**
 * `sizeHint`: the caller's estimate of the encoding's size (a snapshot). When
 * it is large, the encoder starts in a buffer of that size instead of growing
 * its own by doubling from 4 MiB, which copied what was encoded so far and
 * touched fresh pages at each step (a third of a 14 MB snapshot's time).
 */
export function encodeMsgpack(value: unknown, sizeHint = 0): Uint8Array {
  if (sizeHint >= LARGE_ENCODING_BYTES) packr.useBuffer(Buffer.allocUnsafeSlow(sizeHint));
  const out = packr.pack(value);
  if (out.byteLength >= LARGE_ENCODING_BYTES) packr.useBuffer(Buffer.allocUnsafeSlow(FRESH_BUFFER_BYTES));
  return out;
}

export function decodeMsgpack(bytes: Uint8Array): unknown {
  return packr.unpack(bytes);
}

// The same decoding, but binary values are views into the input (no copy, no
// new ArrayBuffer per value): for input whose binaries are used only while
// the input is (the [id, command] envelope of an entry being applied) or that
// is kept as long as they are anyway (a received message, whose entries the
// log keeps). Three copies per entry per member otherwise.
const viewPackr = new Packr({ useRecords: false, copyBuffers: false, int64AsType: 'number' });

/** decodeMsgpack whose binaries are views into `bytes` (see above) */
export function decodeMsgpackView(bytes: Uint8Array): unknown {
  return viewPackr.unpack(bytes);
}

/** Decoded binaries are Buffers; hand plain Uint8Arrays to the state machine. */
export function asUint8Array(v: Uint8Array): Uint8Array {
  return Buffer.isBuffer(v) ? new Uint8Array(v.buffer, v.byteOffset, v.byteLength) : v;
}

/** Log key: the 8-byte big-endian log index, so level's byte order is log order. */
export function logKey(index: number): Uint8Array {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigUint64(0, BigInt(index));
  return b;
}

export function logIndexFromKey(key: Uint8Array): number {
  return Number(new DataView(key.buffer, key.byteOffset, key.byteLength).getBigUint64(0));
}
