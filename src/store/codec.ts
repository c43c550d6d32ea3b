// Byte encodings of the store: log entries (msgpackr-encoded `Command`s,
// the unit the Raft layer replicates too), snapshots, and log keys. The
// msgpack and log-key primitives live in src/raft/codec.ts (store → raft is
// the allowed direction); this module adds the command codec.

import { asUint8Array, decodeMsgpack, encodeMsgpack } from '../raft/codec.js';
import type { Command, Op } from './types.js';

export { asUint8Array, decodeMsgpack, decodeMsgpackView, encodeMsgpack, logIndexFromKey, logKey } from '../raft/codec.js';

export function encodeCommand(cmd: Command): Uint8Array {
  return encodeMsgpack(cmd);
}

export function decodeCommand(bytes: Uint8Array): Command {
  const cmd = decodeMsgpack(bytes) as Command;
  if (cmd.type === 'txn') {
    normalizeOps(cmd.txn.success);
    normalizeOps(cmd.txn.failure);
    cmd.txn.compare ??= [];
  }
  return cmd;
}

function normalizeOps(ops: Op[] | undefined): void {
  if (!ops) return;
  for (const op of ops) if (op.type === 'put') op.value = asUint8Array(op.value);
}
