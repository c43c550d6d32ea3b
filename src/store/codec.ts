// Byte encodings of the store: log entries (msgpackr-encoded `Command`s,
// the unit the Raft layer replicates too), snapshots, and log keys.

import { Packr } from 'msgpackr';
import type { Command, Op } from './types.js';

// Plain msgpack maps (no record extension) so every decoder agrees; copy
// binary values out of the input so a decoded snapshot or log batch does not
// keep its whole source buffer alive.
const packr = new Packr({ useRecords: false, copyBuffers: true, int64AsType: 'number' });

export function encodeMsgpack(value: unknown): Uint8Array {
  return packr.pack(value);
}

export function decodeMsgpack(bytes: Uint8Array): unknown {
  return packr.unpack(bytes);
}

export function encodeCommand(cmd: Command): Uint8Array {
  return packr.pack(cmd);
}

export function decodeCommand(bytes: Uint8Array): Command {
  const cmd = packr.unpack(bytes) as Command;
  if (cmd.type === 'txn') {
    normalizeOps(cmd.txn.success);
    normalizeOps(cmd.txn.failure);
    cmd.txn.compare ??= [];
  }
  return cmd;
}

/** Decoded binaries are Buffers; hand plain Uint8Arrays to the state machine. */
export function asUint8Array(v: Uint8Array): Uint8Array {
  return Buffer.isBuffer(v) ? new Uint8Array(v.buffer, v.byteOffset, v.byteLength) : v;
}

function normalizeOps(ops: Op[] | undefined): void {
  if (!ops) return;
  for (const op of ops) if (op.type === 'put') op.value = asUint8Array(op.value);
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
