// A data directory remembers the --api-domain it was created with (issue #11
// item 8): objects are stored per group, and the groups carry the domain, so
// starting the same data with another domain would silently hide them. The
// domain is kept in the replicated store (every member agrees), written by the
// first start (create-if-absent); a start with another domain is refused.

import type { KeyValue, RevisionedStore } from '../store/types.js';

export const API_DOMAIN_KEY = '/orch/config/api-domain';

export async function checkApiDomain(store: RevisionedStore, apiDomain: string): Promise<void> {
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  let kv: KeyValue | undefined = store.range({ key: API_DOMAIN_KEY }).kvs[0];
  if (!kv) {
    const res = await store.txn({
      compare: [{ key: API_DOMAIN_KEY, target: 'create', op: '=', value: 0 }],
      success: [{ type: 'put', key: API_DOMAIN_KEY, value: encoder.encode(apiDomain) }],
      failure: [{ type: 'get', key: API_DOMAIN_KEY }],
    });
    if (res.succeeded) return;
    kv = res.results[0]?.type === 'get' ? res.results[0].kv : undefined;
  }
  if (!kv) throw new Error('cannot read the API domain of the data directory');
  const stored = decoder.decode(kv.value);
  if (stored !== apiDomain) {
    throw new Error(`--api-domain ${apiDomain}: this data was created with --api-domain ${stored}; start it with --api-domain ${stored}, or use another --data-dir`);
  }
}
