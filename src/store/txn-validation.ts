// Checks a TxnRequest before it is proposed, so that every command that
// reaches a log is well formed (apply must never fail on a replica).
// Like etcd, a branch may not write the same key twice: one revision holds
// at most one change per key.

import type { Op, TxnRequest } from './types.js';

const TARGETS = new Set(['mod', 'create', 'version']);
const OPS = new Set(['=', '!=', '<', '>']);

export class InvalidTxnError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidTxnError';
  }
}

export function validateTxnRequest(req: TxnRequest): void {
  if (!req || !Array.isArray(req.compare) || !Array.isArray(req.success) || !Array.isArray(req.failure)) {
    throw new InvalidTxnError('txn needs compare, success and failure arrays');
  }
  for (const c of req.compare) {
    checkKey(c?.key);
    if (!TARGETS.has(c.target)) throw new InvalidTxnError(`invalid compare target ${String(c.target)}`);
    if (!OPS.has(c.op)) throw new InvalidTxnError(`invalid compare op ${String(c.op)}`);
    if (typeof c.value !== 'number' || !Number.isFinite(c.value)) throw new InvalidTxnError('compare value must be a finite number');
  }
  checkBranch(req.success);
  checkBranch(req.failure);
}

function checkBranch(ops: Op[]): void {
  const written = new Set<string>();
  for (const op of ops) {
    checkKey(op?.key);
    if (op.type === 'put') {
      if (!(op.value instanceof Uint8Array)) throw new InvalidTxnError(`put ${op.key}: value must be a Uint8Array`);
    } else if (op.type !== 'delete' && op.type !== 'get') {
      throw new InvalidTxnError(`invalid op type ${String((op as { type: unknown }).type)}`);
    }
    if (op.type !== 'get') {
      if (written.has(op.key)) throw new InvalidTxnError(`duplicate key given in txn request: ${op.key}`);
      written.add(op.key);
    }
  }
}

function checkKey(key: unknown): void {
  if (typeof key !== 'string' || key.length === 0) throw new InvalidTxnError('key must be a non-empty string');
}
