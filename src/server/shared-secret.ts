// Secrets every member must agree on (the continue-token signing key) live in
// the replicated store, outside the `/registry/` keys the API serves. The
// first member to start creates it (create-if-absent), everyone reads the
// same bytes, and it survives restarts, so a continue token issued by one
// member is accepted by another and after a restart (spec 000 §4.5).

import { randomBytes } from 'node:crypto';
import { StoreUnavailableError, type RevisionedStore, type TxnResult } from '../store/types.js';

export const CONTINUE_TOKEN_SECRET_KEY = '/orch/secrets/continue-token-hmac';

export async function sharedSecret(store: RevisionedStore, key: string, bytes = 32): Promise<Buffer> {
  const existing = store.range({ key }).kvs[0];
  if (existing) return Buffer.from(existing.value);
  const res = await createIfAbsent(store, key, bytes);
  const kv = res.succeeded ? store.range({ key }).kvs[0] : res.results[0]?.type === 'get' ? res.results[0].kv : undefined;
  if (!kv) throw new Error(`cannot read the shared secret ${key}`);
  return Buffer.from(kv.value);
}

/**
 * Every member runs this at start: a leader change at that moment is a retryable
 * "outcome unknown" (StoreUnavailableError), not a reason to exit — the
 * create-if-absent txn is idempotent, so it is retried for up to a minute
 * (seen on a loaded host: a member exited and the chaos test could not start).
 */
async function createIfAbsent(store: RevisionedStore, key: string, bytes: number): Promise<TxnResult> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      return await store.txn({
        compare: [{ key, target: 'create', op: '=', value: 0 }],
        success: [{ type: 'put', key, value: new Uint8Array(randomBytes(bytes)) }],
        failure: [{ type: 'get', key }],
      });
    } catch (e) {
      if (!(e instanceof StoreUnavailableError) || Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}
