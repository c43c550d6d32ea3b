// Secrets every member must agree on (the continue-token signing key) live in
// the replicated store, outside the `/registry/` keys the API serves. The
// first member to start creates it (create-if-absent), everyone reads the
// same bytes, and it survives restarts, so a continue token issued by one
// member is accepted by another and after a restart (spec 000 §4.5).

import { randomBytes } from 'node:crypto';
import type { RevisionedStore } from '../store/types.js';

export const CONTINUE_TOKEN_SECRET_KEY = '/orch/secrets/continue-token-hmac';

export async function sharedSecret(store: RevisionedStore, key: string, bytes = 32): Promise<Buffer> {
  const existing = store.range({ key }).kvs[0];
  if (existing) return Buffer.from(existing.value);
  const res = await store.txn({
    compare: [{ key, target: 'create', op: '=', value: 0 }],
    success: [{ type: 'put', key, value: new Uint8Array(randomBytes(bytes)) }],
    failure: [{ type: 'get', key }],
  });
  const kv = res.succeeded ? store.range({ key }).kvs[0] : res.results[0]?.type === 'get' ? res.results[0].kv : undefined;
  if (!kv) throw new Error(`cannot read the shared secret ${key}`);
  return Buffer.from(kv.value);
}
