// Adapts the store's applied feed to the authorizers' ObjectSource contract
// (src/auth/authz/types.ts): the current objects of a resource, then every
// committed change in order. Runs on every member (authorization is local),
// not behind the leader gate.

import { decodeObject, storagePrefix } from '../registry/generic-store.js';
import type { Registry } from '../registry/registry.js';
import type { ObjectSource, ObjectSources, SourceEvent, SourceObject } from '../auth/authz/types.js';
import { type RevisionedStore, prefixEnd } from '../store/types.js';

export function storeObjectSources(store: RevisionedStore, registry: Registry, log: (msg: string) => void): ObjectSources {
  return (group, resource) => {
    const def = registry.all().find((d) => d.group === group && d.resource === resource);
    if (!def) throw new Error(`object source: no resource ${resource} in group "${group}"`);
    const prefix = storagePrefix(def, '');
    return sourceForPrefix(store, prefix, log);
  };
}

function sourceForPrefix(store: RevisionedStore, prefix: string, log: (msg: string) => void): ObjectSource {
  const end = prefixEnd(prefix);
  const decode = (kv: Parameters<typeof decodeObject>[0]): SourceObject | undefined => {
    try {
      return decodeObject(kv) as SourceObject;
    } catch (e) {
      log(`object source: skipping undecodable ${kv.key}: ${(e as Error).message}`);
      return undefined;
    }
  };
  return {
    subscribe(handler: (e: SourceEvent) => void): () => void {
      // subscribe before the scan: a write applied in between is seen twice
      // at worst (as MODIFIED after ADDED), never lost
      let scannedAt = Infinity;
      const unsubscribe = store.onApplied((w) => {
        if (w.revision <= scannedAt) return;
        for (const ev of w.events) {
          const key = ev.kv.key;
          if (key < prefix || key >= end) continue;
          if (ev.type === 'delete') {
            const last = ev.prevKv ? decode(ev.prevKv) : undefined;
            if (last) handler({ type: 'DELETED', object: last });
          } else {
            const obj = decode(ev.kv);
            if (obj) handler({ type: ev.prevKv ? 'MODIFIED' : 'ADDED', object: obj });
          }
        }
      });
      const r = store.range({ key: prefix, end });
      scannedAt = r.revision;
      for (const kv of r.kvs) {
        const obj = decode(kv);
        if (obj) handler({ type: 'ADDED', object: obj });
      }
      return unsubscribe;
    },
  };
}
