// The revisions of one key, oldest first: what etcd's keyIndex records
// (generations of create..tombstone), flattened into one sorted list.

import type { KeyValue } from './types.js';
import { partitionPoint } from '../core/sorted.js';

export interface VersionEntry {
  /** revision of this write */
  rev: number;
  /** create revision of the incarnation (0 for a tombstone) */
  create: number;
  /** version within the incarnation (0 for a tombstone) */
  version: number;
  /** null = tombstone (the key was deleted at `rev`) */
  value: Uint8Array | null;
}

export class KeyHistory {
  /** sorted by rev, strictly increasing */
  entries: VersionEntry[] = [];

  constructor(readonly key: string) {}

  /**
   * Appends the entry of a newer revision. The first entry gets an array of
   * its own size: a push onto `[]` reserves 17 slots (152 B), and most keys
   * keep one entry for as long as they are stored (issue 14: what each
   * stored object keeps alive).
   */
  append(entry: VersionEntry): void {
    if (this.entries.length === 0) this.entries = [entry];
    else this.entries.push(entry);
  }

  get latest(): VersionEntry | undefined {
    return this.entries[this.entries.length - 1];
  }

  /** Index of the last entry with rev <= `rev`, or -1. */
  indexAt(rev: number): number {
    const e = this.entries;
    // Fast path: reads at the current revision hit the last entry.
    const last = e[e.length - 1];
    if (last !== undefined && last.rev <= rev) return e.length - 1;
    return partitionPoint(0, e.length, (i) => e[i]!.rev <= rev) - 1;
  }

  /** The live value at `rev`, or undefined when absent/deleted then. */
  at(rev: number): VersionEntry | undefined {
    const entry = this.entries[this.indexAt(rev)]; // undefined for -1 (nothing at or before rev)
    return entry === undefined || entry.value === null ? undefined : entry;
  }

  /**
   * Drops history not needed to read at revisions >= `rev`: entries older
   * than `rev` except the newest of them when it is live (it is the value at
   * `rev` for a key not written at `rev`, and the prevKv of the key's first
   * write at or after `rev`).
   */
  compact(rev: number): void {
    const i = this.indexAt(rev - 1); // newest entry older than rev
    const entry = this.entries[i];
    if (entry === undefined) return; // i = -1: nothing older than rev
    const keepFrom = entry.value === null ? i + 1 : i;
    if (keepFrom > 0) this.entries.splice(0, keepFrom);
  }

  /** True when compaction could drop something (more than one entry, or a tombstone). */
  get compactable(): boolean {
    const n = this.entries.length;
    return n > 1 || (n === 1 && this.entries[0]?.value === null);
  }
}

export function toKeyValue(key: string, entry: VersionEntry): KeyValue {
  return {
    key,
    value: entry.value ?? new Uint8Array(0),
    createRevision: entry.create,
    modRevision: entry.rev,
    version: entry.version,
  };
}
