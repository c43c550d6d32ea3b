// The MVCC state machine: etcd's mvcc layer in memory.
//
// Deterministic by construction: the only inputs are the commands and their
// log indices (commands carry their own `time`), so every replica that applies
// the same sequence reaches the same state and emits the same writes. No I/O,
// no clock, no randomness in here (docs/store.md "State machine").
//
// Revision accounting: one global revision, +1 per txn whose chosen branch
// changed at least one key; all events of that txn share the revision. The
// API layer exposes it as `metadata.resourceVersion` (spec 000 §4.6).

import { asUint8Array, decodeMsgpack, encodeMsgpack } from './codec.js';
import { KeyHistory, toKeyValue, type VersionEntry } from './key-history.js';
import { ChangeLog, type ChangeColumns, recordKeys } from './change-log.js';
import { SortedKeyIndex } from './sorted-key-index.js';
import {
  CompactedError,
  FutureRevisionError,
  type AppliedWrite,
  type Command,
  type CommandResult,
  type Compare,
  type KeyValue,
  type OpResult,
  type RangeRequest,
  type RangeResult,
  type StoreEvent,
  type TxnRequest,
  type TxnResult,
} from './types.js';

export { type ChangeRecord, recordKeys } from './change-log.js';

export const SNAPSHOT_FORMAT = 1;

/**
 * What snapshot() encodes, taken at one applied index (snapshotCut): the key
 * histories as copied arrays of their entries (entries and values are never
 * mutated, only replaced, appended and dropped from the front), the change
 * records likewise, and an upper bound of the encoding's size. Encoded later,
 * in slices, by snapshot-encoder.ts while the state moves on.
 */
export interface SnapshotCut {
  revision: number;
  compactRevision: number;
  appliedIndex: number;
  /** sorted keys, parallel to `entries` */
  keys: string[];
  entries: VersionEntry[][];
  changes: ChangeColumns;
}

interface SnapshotData {
  format: number;
  revision: number;
  compactRevision: number;
  appliedIndex: number;
  /** alternating key, flat entries [rev, create, version, value|null, ...] */
  keys: Array<string | Array<number | Uint8Array | null>>;
  /** [rev, time, indexTime, keys] */
  changes: Array<[number, number, number, string[]]>;
}

export type KeyFilter = (key: string) => boolean;

export class MvccState {
  private readonly index = new SortedKeyIndex();
  private readonly histories = new Map<string, KeyHistory>();
  /** keys whose history compaction may shrink (more than one entry, or a tombstone) */
  private readonly compactable = new Set<string>();
  /**
   * the keys each write revision touched, in first-touch order (its events
   * are rebuilt from the key histories), with the write's time: one record
   * per write revision >= compactRevision, contiguous, stored by column
   * (change-log.ts says why)
   */
  private changes = new ChangeLog();
  private _revision = 0;
  private _compactRevision = 0;
  private _appliedIndex = 0;
  private writeListener: ((write: AppliedWrite) => void) | undefined;

  /** current revision (0 before the first write) */
  get revision(): number {
    return this._revision;
  }

  /** the oldest readable revision (reads below it fail with CompactedError) */
  get compactRevision(): number {
    return this._compactRevision;
  }

  /** the log index of the last applied command (0 = none) */
  get appliedIndex(): number {
    return this._appliedIndex;
  }

  /** keys compaction may shrink (more than one entry, or a tombstone): what compact() visits */
  get compactableKeys(): number {
    return this.compactable.size;
  }

  /** number of keys with retained history (live or tombstoned, not yet compacted) */
  get indexedKeys(): number {
    return this.index.size;
  }

  /**
   * Set by the owner (LocalStore, the Raft node) to observe every applied
   * write synchronously, in order. Called after the state is updated.
   */
  setWriteListener(listener: ((write: AppliedWrite) => void) | undefined): void {
    this.writeListener = listener;
  }

  /**
   * Applies the command at log `index` (strictly increasing; gaps allowed
   * because Raft logs carry entries that are not commands).
   */
  apply(index: number, cmd: Command): CommandResult {
    if (!(index > this._appliedIndex)) {
      throw new Error(`log index ${index} is not after the last applied index ${this._appliedIndex}`);
    }
    this._appliedIndex = index;
    if (cmd.type === 'compact') {
      // Clamp instead of throwing: apply must never fail on a replica
      // (the proposer validated it against its own, possibly older, view).
      const target = Math.min(cmd.revision, this._revision);
      return { type: 'compact', revision: this.compact(target) };
    }
    return { type: 'txn', result: this.applyTxn(cmd.txn, cmd.time) };
  }

  private applyTxn(txn: TxnRequest, time: number): TxnResult {
    const succeeded = txn.compare.every((c) => this.compareHolds(c));
    const ops = succeeded ? txn.success : txn.failure;
    const rev = this._revision + 1;
    const results: OpResult[] = [];
    // the keys this txn wrote, in first-touch order, and the live entry of
    // each before the txn (parallel arrays, searched linearly: a branch
    // writes a key at most once, txn-validation.ts, and nearly every txn
    // writes one key, so a Map per txn was an allocation for nothing)
    const touched: string[] = [];
    const before: Array<VersionEntry | undefined> = [];

    for (const op of ops) {
      if (op.type === 'get') {
        const cur = this.liveLatest(op.key);
        results.push({ type: 'get', kv: cur && toKeyValue(op.key, cur) });
      } else if (op.type === 'put') {
        let h = this.histories.get(op.key);
        if (!h) {
          h = new KeyHistory(op.key);
          this.histories.set(op.key, h);
          this.index.insert(op.key);
        }
        const last = h.latest;
        const cur = last && last.value !== null ? last : undefined;
        if (!touched.includes(op.key)) {
          touched.push(op.key);
          before.push(cur);
        }
        const entry: VersionEntry = {
          rev,
          create: cur ? cur.create : rev,
          version: cur ? cur.version + 1 : 1,
          value: op.value,
        };
        if (last?.rev === rev) h.entries[h.entries.length - 1] = entry;
        else h.append(entry);
        results.push({ type: 'put', prevKv: cur && toKeyValue(op.key, cur), kv: toKeyValue(op.key, entry) });
      } else {
        const h = this.histories.get(op.key);
        const last = h?.latest;
        const cur = last && last.value !== null ? last : undefined;
        if (!h || !cur) {
          results.push({ type: 'delete', deleted: false });
          continue;
        }
        let t = touched.indexOf(op.key);
        if (t < 0) {
          t = touched.push(op.key) - 1;
          before.push(cur);
        }
        const tomb: VersionEntry = { rev, create: 0, version: 0, value: null };
        if (cur.rev === rev) {
          // Written earlier in this txn: if the key did not exist before the
          // txn, the net effect is nothing at all.
          if (before[t]) h.entries[h.entries.length - 1] = tomb;
          else h.entries.pop();
        } else {
          h.append(tomb);
        }
        results.push({ type: 'delete', prevKv: toKeyValue(op.key, cur), deleted: true });
      }
    }

    if (touched.length === 0) return { succeeded, revision: this._revision, results };

    const events: StoreEvent[] = [];
    const keys: string[] = [];
    for (let t = 0; t < touched.length; t++) {
      const key = touched[t]!;
      const h = this.histories.get(key)!;
      const last = h.latest;
      if (last === undefined || last.rev !== rev) {
        // created and deleted within the txn: no net change
        if (h.entries.length === 0) this.dropKey(key);
        continue;
      }
      keys.push(key);
      // only a key compaction can shrink joins the set compact() walks: a
      // create (one live entry) does not, so the set stays the size of the
      // updated and deleted keys, not of every key ever written
      if (h.compactable) this.compactable.add(key);
      const prev = before[t];
      events.push({
        type: last.value === null ? 'delete' : 'put',
        kv: toKeyValue(key, last),
        prevKv: prev && toKeyValue(key, prev),
      });
    }
    if (events.length === 0) return { succeeded, revision: this._revision, results };

    this._revision = rev;
    // one key (nearly every write): the string itself, not an array per record kept for the whole window
    this.changes.push(rev, time, keys.length === 1 ? keys[0]! : keys);
    this.writeListener?.({ revision: rev, time, events });
    return { succeeded, revision: rev, results };
  }

  private compareHolds(c: Compare): boolean {
    const cur = this.liveLatest(c.key);
    const actual = cur === undefined ? 0 : c.target === 'mod' ? cur.rev : c.target === 'create' ? cur.create : cur.version;
    switch (c.op) {
      case '=':
        return actual === c.value;
      case '!=':
        return actual !== c.value;
      case '<':
        return actual < c.value;
      case '>':
        return actual > c.value;
      default:
        return false;
    }
  }

  private liveLatest(key: string): VersionEntry | undefined {
    const last = this.histories.get(key)?.latest;
    return last && last.value !== null ? last : undefined;
  }

  private dropKey(key: string): void {
    this.histories.delete(key);
    this.index.delete(key);
    this.compactable.delete(key);
  }

  /** Checks a read revision (0/absent = current) and returns the revision to serve. */
  resolveReadRevision(revision: number | undefined): number {
    if (revision === undefined || revision === 0) return this._revision;
    if (!Number.isInteger(revision) || revision < 0) throw new RangeError(`invalid revision ${revision}`);
    if (revision > this._revision) throw new FutureRevisionError(revision, this._revision);
    if (revision < this._compactRevision) throw new CompactedError(revision, this._compactRevision);
    return revision;
  }

  range(req: RangeRequest): RangeResult {
    const rev = this.resolveReadRevision(req.revision);
    const limit = req.limit !== undefined && req.limit > 0 ? req.limit : Infinity;
    const kvs: KeyValue[] = [];
    let count = 0;
    if (req.end === undefined) {
      // one key (every create, get and update reads one): no callback. A
      // named closure per call also cost an Object.defineProperty under tsx
      // (esbuild's keepNames), ≈ 0.4 % of a create's main thread.
      const entry = this.histories.get(req.key)?.at(rev);
      if (entry) {
        count = 1;
        if (!req.countOnly) kvs.push(toKeyValue(req.key, entry));
      }
    } else if (req.end > req.key) {
      const stopAtLimit = req.skipCount === true && !req.countOnly;
      this.index.scan(req.key, req.end, (key) => {
        const entry = this.histories.get(key)!.at(rev);
        if (!entry) return true;
        count += 1;
        if (!req.countOnly && kvs.length < limit) kvs.push(toKeyValue(key, entry));
        // one key past the limit: `more` is known, the rest is not visited
        else if (stopAtLimit) return false;
        return true;
      });
    }
    return { kvs, count, more: !req.countOnly && count > kvs.length, revision: rev };
  }

  /** The value of one key at `revision` (0/absent = current). */
  get(key: string, revision?: number): KeyValue | undefined {
    return this.range({ key, revision }).kvs[0];
  }

  /**
   * Drops history older than `revision`: reads at revisions >= it keep
   * working, reads below fail with CompactedError. Returns the compact
   * revision afterwards (unchanged when `revision` is not newer).
   */
  compact(revision: number): number {
    if (revision > this._revision) throw new FutureRevisionError(revision, this._revision);
    if (revision <= this._compactRevision) return this._compactRevision;
    for (const key of this.compactable) {
      const h = this.histories.get(key);
      if (!h) {
        this.compactable.delete(key);
        continue;
      }
      h.compact(revision);
      if (h.entries.length === 0) this.dropKey(key);
      else if (!h.compactable) this.compactable.delete(key);
    }
    if (this.changes.length > 0) {
      const drop = Math.min(revision - this.changes.rev(0), this.changes.length);
      if (drop > 0) this.changes.dropOldest(drop);
    }
    this._compactRevision = revision;
    return revision;
  }

  /**
   * The writes with revision >= `startRevision`, oldest first, rebuilt from
   * the retained history (events in the order the txn first touched each
   * key, with prevKv). With a filter, events on other keys are dropped and
   * writes left without events are skipped.
   */
  writesSince(startRevision: number, filter?: KeyFilter): AppliedWrite[] {
    if (startRevision < this._compactRevision) throw new CompactedError(startRevision, this._compactRevision);
    const out: AppliedWrite[] = [];
    const c = this.changes;
    if (c.length === 0) return out;
    // changes holds consecutive revisions, so the one for startRevision is at startRevision - the oldest's
    for (let i = Math.max(0, startRevision - c.rev(0)); i < c.length; i++) {
      const w = this.rebuildWrite(c.rev(i), c.time(i), c.keys(i), filter);
      if (w) out.push(w);
    }
    return out;
  }

  private rebuildWrite(rev: number, time: number, keys: string | string[], filter: KeyFilter | undefined): AppliedWrite | undefined {
    // a one-key write on another range (most, for a watch cache's backfill of one type): nothing allocated
    if (filter && typeof keys === 'string' && !filter(keys)) return undefined;
    const events: StoreEvent[] = [];
    for (const key of recordKeys(keys)) {
      if (filter && !filter(key)) continue;
      const h = this.histories.get(key)!;
      const i = h.indexAt(rev);
      const entry = h.entries[i];
      // the record lists the keys written at rev; compaction keeps their entries while the record is retained
      if (entry === undefined) throw new Error(`mvcc: no entry of ${key} at retained revision ${rev}`);
      const prev = h.entries[i - 1]; // undefined when i = 0
      events.push({
        type: entry.value === null ? 'delete' : 'put',
        kv: toKeyValue(key, entry),
        prevKv: prev && prev.value !== null ? toKeyValue(key, prev) : undefined,
      });
    }
    return events.length > 0 ? { revision: rev, time, events } : undefined;
  }

  /**
   * The newest retained revision written at or before `timeMs` (by the times
   * recorded in the log), or undefined when every retained write is newer.
   * Auto-compaction uses it to keep a time window of history (spec 000 §8:
   * watch history retained, default 5 minutes).
   */
  newestRevisionAtOrBefore(timeMs: number): number | undefined {
    const n = this.changes.countIndexedAtOrBefore(timeMs);
    return n > 0 ? this.changes.rev(n - 1) : undefined;
  }

  /**
   * The state at this applied index, for snapshot-encoder.ts (SnapshotCut):
   * references only, no value copied. Keys, entries and change records are
   * copied as arrays of references (3–30 ms for 10,000 keys with 175,000
   * versions, by the load; the encoding of their 250 MB took seconds).
   */
  snapshotCut(): SnapshotCut {
    const keys: string[] = [];
    const entries: VersionEntry[][] = [];
    this.index.scan('', undefined, (key) => {
      keys.push(key);
      entries.push(this.histories.get(key)!.entries.slice());
    });
    return {
      revision: this._revision,
      compactRevision: this._compactRevision,
      appliedIndex: this._appliedIndex,
      keys,
      entries,
      changes: this.changes.columns(),
    };
  }

  /**
   * Encodes the whole state (including the last applied log index) with
   * msgpackr, synchronously: the reference the sliced encoding
   * (snapshot-encoder.ts) is tested against, byte for byte.
   */
  snapshot(): Uint8Array {
    const keys: SnapshotData['keys'] = [];
    // an upper bound of the encoding's size, so the encoder never grows its buffer
    let size = 64;
    this.index.scan('', undefined, (key) => {
      const flat: Array<number | Uint8Array | null> = [];
      const list = this.histories.get(key)!.entries;
      for (const e of list) flat.push(e.rev, e.create, e.version, e.value);
      keys.push(key, flat);
      size += entrySizeBound(key, list);
    });
    const records = this.changes.records();
    for (const c of records) size += changeSizeBound(c.keys);
    const data: SnapshotData = {
      format: SNAPSHOT_FORMAT,
      revision: this._revision,
      compactRevision: this._compactRevision,
      appliedIndex: this._appliedIndex,
      keys,
      changes: records.map((c) => [c.rev, c.time, c.indexTime, recordKeys(c.keys)]),
    };
    return encodeMsgpack(data, size);
  }

  static restore(bytes: Uint8Array): MvccState {
    const data = decodeMsgpack(bytes) as SnapshotData;
    if (data.format !== SNAPSHOT_FORMAT) throw new Error(`unsupported snapshot format ${String(data.format)}`);
    const s = new MvccState();
    s._revision = data.revision;
    s._compactRevision = data.compactRevision;
    s._appliedIndex = data.appliedIndex;
    for (let i = 0; i < data.keys.length; i += 2) {
      const key = data.keys[i] as string;
      const flat = data.keys[i + 1] as Array<number | Uint8Array | null>;
      const h = new KeyHistory(key);
      for (let j = 0; j < flat.length; j += 4) {
        const value = flat[j + 3] as Uint8Array | null;
        h.append({
          rev: flat[j] as number,
          create: flat[j + 1] as number,
          version: flat[j + 2] as number,
          value: value === null ? null : asUint8Array(value),
        });
      }
      s.histories.set(key, h);
      s.index.insert(key);
      if (h.compactable) s.compactable.add(key);
    }
    for (const [rev, time, indexTime, keys] of data.changes) s.changes.pushRecord({ rev, time, indexTime, keys: keys.length === 1 ? keys[0]! : keys });
    return s;
  }
}

/** bound of one key's encoding: values, the key at 3 bytes a UTF-16 unit, 9 bytes a number, headers */
export function entrySizeBound(key: string, list: readonly VersionEntry[]): number {
  let size = 10 + 3 * key.length;
  for (const e of list) size += 32 + (e.value === null ? 0 : e.value.byteLength);
  return size;
}

/** bound of one change record's encoding (as entrySizeBound), by its keys */
export function changeSizeBound(keys: string | string[]): number {
  if (typeof keys === 'string') return 45 + 3 * keys.length;
  let size = 40;
  for (const k of keys) size += 5 + 3 * k.length;
  return size;
}
