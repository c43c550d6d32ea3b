// The single-node revisioned store: a write-ahead log of `Command`s in level,
// applied in log order to the MVCC state machine (docs/store.md).
//
// Write path: txn() encodes a command and queues it; one writer at a time
// appends everything queued as one level batch with sync (group commit), then
// applies the entries in index order and acknowledges each. A write is thus
// durable before it is visible or acknowledged, and txn compares are judged
// at apply time in log order (compare-and-swap is safe under concurrency).

import { mkdir } from 'node:fs/promises';
import { LevelCommandLog, MemoryCommandLog, type CommandLog } from './command-log.js';
import { MvccState } from './mvcc-state.js';
import { encodeSnapshotCut } from './snapshot-encoder.js';
import { StateMachineStore, type StateMachineOptions } from './state-machine-store.js';

export { rangeFilter } from './applied-feed.js';
import { type Command, type CommandResult, type Op, type RevisionedStore, takeHandedOverValue } from './types.js';

export interface LocalStoreOptions extends StateMachineOptions {
  /** take a snapshot (and drop the log it covers) every this many log entries */
  snapshotEvery?: number;
  /**
   * ...and only once the log written since the last snapshot holds at least
   * this fraction of that snapshot's bytes (default 0.5). A snapshot encodes
   * the whole state (in slices, snapshot-encoder.ts), so on a growing state a
   * fixed entry count makes its CPU per write grow with the state; tying it to the log's size
   * keeps it bounded per byte written. The log still covers everything, so
   * crash safety is the same, and a restart replays at most this fraction
   * of the state (plus `snapshotEvery` entries) from the log.
   */
  snapshotLogRatio?: number;
}

export interface LocalStoreStats {
  /** synced log batches written (one per group commit) */
  syncBatches: number;
  /** log entries written */
  entriesWritten: number;
  snapshots: number;
  /** log index covered by the latest snapshot */
  snapshotIndex: number;
  appliedIndex: number;
  revision: number;
  compactRevision: number;
  /** keys with retained history */
  indexedKeys: number;
}

export class StoreClosedError extends Error {
  constructor() {
    super('store is closed');
    this.name = 'StoreClosedError';
  }
}

interface Proposal {
  /** the command in the store's own copy (ownCopy): what the log writes and the state applies */
  cmd: Command;
  resolve: (r: CommandResult) => void;
  reject: (e: Error) => void;
}

/** Upper bound of entries per group-commit batch. */
const MAX_BATCH_ENTRIES = 1024;

export class LocalStore extends StateMachineStore implements RevisionedStore {
  private queue: Proposal[] = [];
  private flushing: Promise<void> | undefined;
  private nextIndex: number;
  private closePromise: Promise<void> | undefined;
  private writeError: Error | undefined;
  private snapshotInFlight: Promise<void> | undefined;
  private snapshotIndex: number;
  private readonly counters = { syncBatches: 0, entriesWritten: 0, snapshots: 0 };
  private readonly snapshotEvery: number;
  private readonly snapshotLogRatio: number;
  private readonly snapshotEncoding: LocalStoreOptions['snapshotEncoding'];
  /** bytes of the latest snapshot taken, and of log entries written since */
  private lastSnapshotBytes = 0;
  private logBytesSinceSnapshot = 0;

  private constructor(
    state: MvccState,
    private readonly log: CommandLog,
    opts: LocalStoreOptions,
  ) {
    super(state, opts);
    this.snapshotEvery = Math.max(1, opts.snapshotEvery ?? 10_000);
    this.snapshotLogRatio = Math.max(0, opts.snapshotLogRatio ?? 0.5);
    this.snapshotEncoding = opts.snapshotEncoding;
    this.nextIndex = state.appliedIndex + 1;
    this.snapshotIndex = state.appliedIndex;
    this.startAutoCompaction(opts.compactIntervalMs);
  }

  /** Opens (creating if needed) the store in `dir`: latest snapshot, then the log after it. */
  static async open(dir: string, opts: LocalStoreOptions = {}): Promise<LocalStore> {
    await mkdir(dir, { recursive: true });
    return LocalStore.start(await LevelCommandLog.open(dir), opts);
  }

  /** A store without disk (no durability), for tests of upper layers. */
  static async openInMemory(opts: LocalStoreOptions = {}): Promise<LocalStore> {
    return LocalStore.start(new MemoryCommandLog(), opts);
  }

  private static async start(log: CommandLog, opts: LocalStoreOptions): Promise<LocalStore> {
    try {
      const snap = await log.loadSnapshot();
      const state = snap ? MvccState.restore(snap) : new MvccState();
      const snapIndex = state.appliedIndex;
      // Entries written but not applied before a crash are replayed too: they
      // were durable, only their acknowledgement was lost.
      for (const e of await log.readAfter(state.appliedIndex)) state.apply(e.index, e.cmd);
      const store = new LocalStore(state, log, opts);
      store.snapshotIndex = snapIndex;
      return store;
    } catch (err) {
      await log.close().catch(() => {});
      throw err;
    }
  }

  stats(): LocalStoreStats {
    return {
      ...this.counters,
      snapshotIndex: this.snapshotIndex,
      appliedIndex: this.state.appliedIndex,
      revision: this.state.revision,
      compactRevision: this.state.compactRevision,
      indexedKeys: this.state.indexedKeys,
    };
  }

  async readIndex(): Promise<number> {
    // One node: every acknowledged write is already applied.
    return this.state.revision;
  }

  healthy(): boolean {
    return !this.closed && this.writeError === undefined;
  }

  close(): Promise<void> {
    this.closePromise ??= this.doClose();
    return this.closePromise;
  }

  private async doClose(): Promise<void> {
    this.closed = true;
    this.feed.refuse(() => new StoreClosedError());
    this.stopAutoCompaction();
    // Proposals accepted before close are still written and acknowledged.
    while (this.flushing) await this.flushing;
    while (this.snapshotInFlight) await this.snapshotInFlight;
    this.feed.close(() => new StoreClosedError());
    await this.log.close();
  }

  protected propose(cmd: Command): Promise<CommandResult> {
    if (this.closed) return Promise.reject(new StoreClosedError());
    // Copy now: the caller may reuse its buffers after txn() returns. The log
    // record is written from this copy at flush (command-log.ts recordOf,
    // byte for byte what msgpackr gives), and the state applies the same copy,
    // so what is applied is exactly what the log holds without decoding it
    // (decodeCommand of every entry was ~2% of a create's CPU in the server
    // profile) and without encoding each command on its own first.
    const own = ownCopy(cmd);
    return new Promise((resolve, reject) => {
      this.queue.push({ cmd: own, resolve, reject });
      this.kick();
    });
  }

  private kick(): void {
    if (this.flushing) return; // the running loop picks the new proposals up
    // Start in a microtask so proposals made in the same tick share the first batch.
    this.flushing = Promise.resolve()
      .then(() => this.flushLoop())
      .finally(() => {
        this.flushing = undefined;
        if (this.queue.length > 0) this.kick();
      });
  }

  /** Group commit: everything queued while a batch is being synced goes out in the next batch. */
  private async flushLoop(): Promise<void> {
    while (this.queue.length > 0) {
      let batch: Proposal[];
      if (this.queue.length <= MAX_BATCH_ENTRIES) {
        batch = this.queue;
        this.queue = [];
      } else {
        // Bound one batch so a burst cannot make a single huge write that
        // delays every writer in it (and holds all their bytes at once).
        batch = this.queue.splice(0, MAX_BATCH_ENTRIES);
      }
      const first = this.nextIndex;
      const entries = batch.map((p, i) => ({ index: first + i, cmd: p.cmd }));
      let written: number;
      try {
        written = await this.log.append(entries);
      } catch (err) {
        this.writeError = err instanceof Error ? err : new Error(String(err));
        for (const p of batch) p.reject(this.writeError);
        continue;
      }
      this.writeError = undefined;
      this.nextIndex = first + batch.length;
      this.counters.syncBatches += 1;
      this.counters.entriesWritten += batch.length;
      this.logBytesSinceSnapshot += written;
      for (const [i, p] of batch.entries()) {
        let result: CommandResult;
        try {
          result = this.state.apply(first + i, p.cmd);
        } catch (err) {
          p.reject(err instanceof Error ? err : new Error(String(err)));
          continue;
        }
        p.resolve(result);
      }
      this.maybeSnapshot();
    }
  }

  private maybeSnapshot(): void {
    if (this.snapshotInFlight) return;
    if (this.state.appliedIndex - this.snapshotIndex < this.snapshotEvery) return;
    if (this.logBytesSinceSnapshot < this.lastSnapshotBytes * this.snapshotLogRatio) return;
    const index = this.state.appliedIndex;
    // a consistent cut at `index`, by reference, encoded in slices across event-loop turns while
    // writes go on (snapshot-encoder.ts): one synchronous encoding stalled the store for seconds
    // on a large state with its history
    const cut = this.state.snapshotCut();
    this.logBytesSinceSnapshot = 0;
    this.snapshotInFlight = encodeSnapshotCut(cut, { ...this.snapshotEncoding, cancelled: () => this.closed })
      .then(async (bytes) => {
        if (!bytes) return; // closed while encoding: the log still covers everything
        this.lastSnapshotBytes = bytes.length;
        await this.log.saveSnapshot(bytes, index);
        this.snapshotIndex = index;
        this.counters.snapshots += 1;
      })
      .catch((err: unknown) => {
        // The log still holds everything; a later snapshot retries.
        console.error('store: snapshot failed', err);
      })
      .finally(() => {
        this.snapshotInFlight = undefined;
      });
  }

  /** Waits for the snapshot being encoded or saved, if any (tests: it runs beside the writes). */
  async snapshotSettled(): Promise<void> {
    while (this.snapshotInFlight) await this.snapshotInFlight;
  }

  /** Runs one auto-compaction check now and waits for it (tests; the timer does the same). */
  runAutoCompaction(): Promise<void> {
    return this.autoCompact();
  }
}

/**
 * The command as `decodeCommand(encodeCommand(cmd))` would give it: values
 * copied into plain `Uint8Array`s of their own (the caller may reuse its
 * buffers, and a small Buffer is a view into a shared pool slab the state
 * must not keep alive), a missing compare list empty, only the fields the
 * state machine reads. Tested against the codec in test/unit/local-store-apply.test.ts.
 */
export function ownCopy(cmd: Command): Command {
  if (cmd.type === 'compact') return { type: 'compact', revision: cmd.revision, time: cmd.time };
  const t = cmd.txn;
  return {
    type: 'txn',
    time: cmd.time,
    txn: {
      compare: (t.compare ?? []).map((c) => ({ key: c.key, target: c.target, op: c.op, value: c.value })),
      success: (t.success ?? []).map(copyOp),
      failure: (t.failure ?? []).map(copyOp),
    },
  };
}

function copyOp(op: Op): Op {
  return op.type === 'put' ? { type: 'put', key: op.key, value: ownBytes(op.value) } : { type: op.type, key: op.key };
}

/**
 * a plain Uint8Array copy: `slice` (a memcpy) for plain arrays, the copying
 * constructor for Buffers (whose `slice` is a view); none for a value handed
 * over (handOverValue: the registry's freshly encoded JSON, one off-heap
 * allocation and copy per write less)
 */
function ownBytes(v: Uint8Array): Uint8Array {
  if (takeHandedOverValue(v)) return v;
  return Buffer.isBuffer(v) ? new Uint8Array(v) : v.slice();
}
