// Store keys that are not API objects (the Service allocation table of
// src/api/allocators/, which the registry writes in the same transaction as
// the Service): the one place a controller sees raw keys, so that the
// controllers themselves stay on informers and the registry. Reads go to the
// store (the table is small and read only by repair passes); a release is a
// compare-and-delete on the key's mod revision, so a value claimed again
// meanwhile is never freed.

import type { RevisionedStore } from '../../store/types.js';
import { prefixEnd } from '../../store/types.js';

export interface RawEntry {
  key: string;
  value: Uint8Array;
  modRevision: number;
}

/** what a raw range needs of the store; a RevisionedStore satisfies it */
export type RawSource = Pick<RevisionedStore, 'range' | 'txn'>;

export class RawRange {
  constructor(
    private readonly store: RawSource,
    private readonly prefix: string,
  ) {}

  list(): RawEntry[] {
    return this.store.range({ key: this.prefix, end: prefixEnd(this.prefix) }).kvs.map(entryOf);
  }

  get(key: string): RawEntry | undefined {
    if (!key.startsWith(this.prefix)) return undefined;
    const kv = this.store.range({ key }).kvs[0];
    return kv && entryOf(kv);
  }

  /** deletes `entry.key` if it was not written since `entry` was read; whether it was deleted */
  async deleteIfUnchanged(entry: RawEntry): Promise<boolean> {
    const r = await this.store.txn({ compare: [{ key: entry.key, target: 'mod', op: '=', value: entry.modRevision }], success: [{ type: 'delete', key: entry.key }], failure: [] });
    return r.succeeded;
  }
}

function entryOf(kv: { key: string; value: Uint8Array; modRevision: number }): RawEntry {
  return { key: kv.key, value: kv.value, modRevision: kv.modRevision };
}
