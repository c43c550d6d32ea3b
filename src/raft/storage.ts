// Durable Raft state of one member: log entries, hard state and the latest
// snapshot, in one level database, encoded with msgpackr (docs/raft.md
// "Storage").
//
// Layout (sublevels, binary keys and values):
//   log!<8-byte big-endian index>  -> msgpackr([term, type, data])
//   meta!hardState                 -> msgpackr(HardState)
//   meta!snapshot                  -> msgpackr({metadata, file}): the state-machine image is the
//                                     file `snap/<file>` (snapshot-file.ts); before 2026-11-27
//                                     msgpackr(Snapshot), metadata + image, still read
// Writes go to the root database with the sublevel prefix ("!log!", "!meta!")
// spelled out in the key: the same bytes on disk as a sublevel write, without
// abstract-level's per-operation sublevel and transcoder work (a third of a
// follower's storage CPU at 64 writes in flight). The batch goes straight to
// classic-level's implementation (`_batch`, the method every abstract-level
// implementation provides under the public `batch`): the public method copies
// and re-validates every operation (object spreads, encoding lookups), ≈ 8 %
// of a follower's CPU at 64 writes in flight, for keys and values that are
// already the database's bytes. This class keeps what that method would
// check: the database is open before the first write and closed only after
// the last (close waits for the write queue). Reads (load) use the sublevels.
//
// Ready contract (src/raft/types.ts step 1): everything a Ready asks to
// persist is written as ONE level batch before its messages leave, with
// `sync: true` (fsync) whenever it holds entries, a snapshot or a new
// term/vote, so a vote or an append acknowledgement is never promised for
// state a crash could lose (Raft §5, Figure 2 "updated on stable storage
// before responding to RPCs"). A Ready that only moves the commit index is
// not written at all: its hard state goes into the next batch that is
// written (entries, a snapshot, a new term or vote) or on close. commitIndex
// is volatile state in Raft Figure 2 (a restarted member relearns it from
// the leader; etcd's raft.MustSync makes the same distinction and skips the
// fsync), and a commit index written with a later batch never points past
// entries that batch keeps (committed entries are never overwritten). Before,
// it was a level batch without fsync, but still one trip through libuv's
// thread pool that the next Ready waited for: on every member, once per
// write at one write in flight (docs/raft.md "Commit-only Readies").

import { join } from 'node:path';
import type { Level } from 'level';
import { type BinarySublevel, binarySublevel, openLogDb } from './log-db.js';
import { asUint8Array, decodeMsgpack, encodeMsgpack, logIndexFromKey, logKey } from './codec.js';
import { SnapshotFiles } from './snapshot-file.js';
import { NONE, type Entry, type EntryType, type HardState, type PersistentState, type Snapshot } from './types.js';

type Bytes = Uint8Array;
type StoredEntry = [term: number, type: EntryType, data: Uint8Array];
/** an operation on the root database, the key already prefixed (logOpKey, META_*) */
type BatchOp = { type: 'put'; key: Bytes; value: Bytes } | { type: 'del'; key: Bytes };

type Sub = BinarySublevel;

const HARD_STATE_KEY = new TextEncoder().encode('hardState');
const SNAPSHOT_KEY = new TextEncoder().encode('snapshot');

/** "!<name>!" + key: how a sublevel named `name` stores `key` in the root database */
function prefixed(name: string, key: Bytes): Bytes {
  const prefix = new TextEncoder().encode(`!${name}!`);
  const out = new Uint8Array(prefix.length + key.length);
  out.set(prefix);
  out.set(key, prefix.length);
  return out;
}
const META_HARD_STATE = prefixed('meta', HARD_STATE_KEY);
const META_SNAPSHOT = prefixed('meta', SNAPSHOT_KEY);
const LOG_PREFIX = new TextEncoder().encode('!log!');

/** the root-database key of log entry `index` ("!log!" + logKey(index)) */
function logOpKey(index: number): Bytes {
  const out = new Uint8Array(LOG_PREFIX.length + 8);
  out.set(LOG_PREFIX);
  new DataView(out.buffer).setBigUint64(LOG_PREFIX.length, BigInt(index));
  return out;
}

/** classic-level's batch implementation (abstract-level's private API; see the header) */
interface RawBatch {
  _batch(ops: BatchOp[], options: { sync: boolean }): Promise<void>;
}

/** What one Ready asks to persist (a subset of Ready). */
export interface PersistRequest {
  hardState?: HardState;
  entries: Entry[];
  snapshot?: Snapshot;
}

export interface RaftStorageStats {
  /** synced batches written */
  syncs: number;
  /** batches written, synced or not */
  batches: number;
  entriesWritten: number;
  firstIndex: number;
  lastIndex: number;
  snapshotIndex: number;
}

export class RaftStorage {
  /** persisted log spans [firstIndex, lastIndex]; empty when lastIndex < firstIndex */
  private firstIndex = 1;
  private lastIndex = 0;
  private snapshotIndex = 0;
  private syncs = 0;
  /** term and vote of the last durably written hard state */
  private durable: { term: number; vote: string } = { term: 0, vote: NONE };
  private entriesWritten = 0;
  /** a commit-only hard state not written yet (header): goes with the next batch */
  private deferredHardState: HardState | undefined;
  /** level batches written, synced or not */
  private batches = 0;
  /** writes are serialized: a later batch may depend on the index bookkeeping of an earlier one */
  private tail: Promise<void> = Promise.resolve();
  /** the range deletes of log entries covered by a snapshot (clearCovered), one after the other */
  private clearing: Promise<void> = Promise.resolve();

  private constructor(
    private readonly db: Level<Bytes, Bytes>,
    private readonly log: Sub,
    private readonly meta: Sub,
    private readonly files: SnapshotFiles,
  ) {}

  static async open(dir: string): Promise<RaftStorage> {
    const db = await openLogDb(dir);
    // the images beside level's own files (level ignores names it did not write)
    const files = await SnapshotFiles.open(join(dir, 'snap'));
    return new RaftStorage(db, binarySublevel(db, 'log'), binarySublevel(db, 'meta'), files);
  }

  /** Everything persisted, for RawNode's constructor (entries after the snapshot, contiguous). */
  async load(): Promise<PersistentState & { empty: boolean }> {
    const hsBytes = await this.meta.get(HARD_STATE_KEY);
    const snapBytes = await this.meta.get(SNAPSHOT_KEY);
    const hardState: HardState = hsBytes ? (decodeMsgpack(hsBytes) as HardState) : { term: 0, vote: NONE, commit: 0 };
    const snapshot = snapBytes ? await this.decodeSnapshot(snapBytes) : undefined;
    this.snapshotIndex = snapshot?.metadata.index ?? 0;
    this.durable = { term: hardState.term, vote: hardState.vote };
    const entries: Entry[] = [];
    for await (const [k, v] of this.log.iterator({ gt: logKey(this.snapshotIndex) })) {
      const index = logIndexFromKey(k);
      // only a contiguous run is meaningful; a gap would mean a torn write (cannot happen with one batch per Ready)
      const prev = entries[entries.length - 1]?.index ?? this.snapshotIndex;
      if (index !== prev + 1) break;
      const [term, type, data] = decodeMsgpack(v) as StoredEntry;
      entries.push({ term, index, type, data: asUint8Array(data) });
    }
    this.firstIndex = this.snapshotIndex + 1;
    this.lastIndex = entries[entries.length - 1]?.index ?? this.snapshotIndex;
    const empty = !hsBytes && !snapshot && entries.length === 0;
    return { hardState, snapshot, entries, empty };
  }

  /**
   * Persists a Ready's snapshot, entries and hard state as one batch, synced
   * unless it only moves the commit index (header). A snapshot replaces the
   * whole log; entries overwrite every persisted entry from entries[0].index
   * on. Resolves to whether the batch was synced.
   */
  save(req: PersistRequest): Promise<boolean> {
    if (!req.hardState && !req.snapshot && req.entries.length === 0) return Promise.resolve(false);
    const commitOnly = !req.snapshot && req.entries.length === 0 && req.hardState !== undefined && req.hardState.term === this.durable.term && req.hardState.vote === this.durable.vote;
    if (commitOnly) {
      this.deferredHardState = req.hardState;
      return Promise.resolve(false);
    }
    return this.enqueue(async () => {
      const ops: BatchOp[] = [];
      let first = this.firstIndex;
      let last = this.lastIndex;
      let snapIndex = this.snapshotIndex;
      if (req.snapshot) {
        for (let i = first; i <= last; i++) ops.push({ type: 'del', key: logOpKey(i) });
        ops.push({ type: 'put', key: META_SNAPSHOT, value: await this.writeImage(req.snapshot) });
        snapIndex = req.snapshot.metadata.index;
        first = snapIndex + 1;
        last = snapIndex;
      }
      const from = req.entries[0]?.index;
      const newLast = req.entries[req.entries.length - 1]?.index;
      if (from !== undefined && newLast !== undefined) {
        // drop a conflicting suffix beyond the new end (Raft §5.3)
        for (let i = Math.max(newLast + 1, first); i <= last; i++) ops.push({ type: 'del', key: logOpKey(i) });
        for (const e of req.entries) {
          const stored: StoredEntry = [e.term, e.type, e.data];
          ops.push({ type: 'put', key: logOpKey(e.index), value: encodeMsgpack(stored) });
        }
        if (from < first) first = from;
        last = newLast;
      }
      // a deferred commit-only hard state is older than the Ready's own
      const hs = req.hardState ?? this.deferredHardState;
      this.deferredHardState = undefined;
      if (hs) ops.push({ type: 'put', key: META_HARD_STATE, value: encodeMsgpack(hs) });
      const sync = req.snapshot !== undefined || req.entries.length > 0 || (hs !== undefined && (hs.term !== this.durable.term || hs.vote !== this.durable.vote));
      await this.writeBatch(ops, sync);
      this.batches += 1;
      this.firstIndex = first;
      this.lastIndex = last;
      this.snapshotIndex = snapIndex;
      if (sync) {
        this.syncs += 1;
        if (hs) this.durable = { term: hs.term, vote: hs.vote };
      }
      this.entriesWritten += req.entries.length;
      if (req.snapshot) await this.files.removeAllBut(SnapshotFiles.nameFor(snapIndex));
      return sync;
    });
  }

  /**
   * Persists a snapshot the host took itself (RawNode.compact) and drops the
   * log it covers; entries after it stay. Synced.
   */
  saveSnapshot(snap: Snapshot): Promise<void> {
    return this.enqueue<void>(async () => {
      const idx = snap.metadata.index;
      if (idx <= this.snapshotIndex) return;
      // The snapshot alone, synced; the entries it covers are cleared after, by a range delete
      // that runs in level's thread pool (clearCovered). Before, one `del` per covered entry
      // went into this batch — tens of thousands of keys built and copied on the event loop
      // while the member stalled on the snapshot (docs/raft.md "The replicated store").
      await this.writeBatch([{ type: 'put', key: META_SNAPSHOT, value: await this.writeImage(snap) }], true);
      this.batches += 1;
      this.snapshotIndex = idx;
      this.firstIndex = idx + 1;
      if (this.lastIndex < idx) this.lastIndex = idx;
      this.syncs += 1;
      this.clearCovered(idx);
      await this.files.removeAllBut(SnapshotFiles.nameFor(idx));
    });
  }

  /**
   * Writes the snapshot's image to its file (synced, snapshot-file.ts) and returns the record
   * that names it, for META_SNAPSHOT. Copying the image into a level batch stalled the event
   * loop 0.5–0.8 s for 250 MB (docs/raft.md "The replicated store").
   */
  private async writeImage(snap: Snapshot): Promise<Uint8Array> {
    const file = SnapshotFiles.nameFor(snap.metadata.index);
    await this.files.write(file, snap.data);
    const record: SnapshotRecord = { metadata: snap.metadata, file };
    return encodeMsgpack(record);
  }

  private async decodeSnapshot(bytes: Uint8Array): Promise<Snapshot> {
    const s = decodeMsgpack(bytes) as SnapshotRecord | Snapshot;
    if ('file' in s) return { metadata: s.metadata, data: await this.files.read(s.file) };
    return { metadata: s.metadata, data: asUint8Array(s.data) };
  }

  /**
   * Deletes every log key at or below `idx` (a persisted snapshot covers them), in the background:
   * load() reads only entries after the snapshot, so a crash before it ends leaves harmless
   * keys, and no later write touches that range (the log only grows past a snapshot). The
   * range starts at the first key, so one that failed is retried by the next.
   */
  private clearCovered(idx: number): void {
    const clearing = this.clearing.then(() => this.log.clear({ lte: logKey(idx) }));
    this.clearing = clearing.catch(() => {});
  }

  /** term and vote as last written with fsync (what a crash cannot take back) */
  durableHardState(): { term: number; vote: string } {
    return { ...this.durable };
  }

  stats(): RaftStorageStats {
    return {
      syncs: this.syncs,
      batches: this.batches,
      entriesWritten: this.entriesWritten,
      firstIndex: this.firstIndex,
      lastIndex: this.lastIndex,
      snapshotIndex: this.snapshotIndex,
    };
  }

  async close(): Promise<void> {
    await this.tail.catch(() => {});
    await this.clearing;
    const hs = this.deferredHardState;
    if (hs) {
      this.deferredHardState = undefined;
      await this.writeBatch([{ type: 'put', key: META_HARD_STATE, value: encodeMsgpack(hs) }], false).catch(() => {});
    }
    await this.db.close();
  }

  /** one level batch of already-encoded root-database operations (header: why `_batch`) */
  private writeBatch(ops: BatchOp[], sync: boolean): Promise<void> {
    return (this.db as unknown as RawBatch)._batch(ops, { sync });
  }

  private enqueue<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.tail.then(fn);
    this.tail = run.then(
      () => {},
      () => {},
    );
    return run;
  }
}

/** META_SNAPSHOT: the snapshot's metadata and the file holding its image */
interface SnapshotRecord {
  metadata: Snapshot['metadata'];
  file: string;
}
