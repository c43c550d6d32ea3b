// The state-machine host every RevisionedStore shares (docs/store.md
// "Structure"): the MVCC state, the applied feed (watches, onApplied, waits),
// validation of writes and compaction (explicit and automatic). What differs
// between stores is only the sequencer — how a command gets ordered and made
// durable before it is applied: a local write-ahead log (LocalStore) or Raft
// (RaftStore). A store implements `propose` (the sequencer port) and applies
// each ordered command through `state.apply`, in order.

import type { SnapshotEncoding } from './snapshot-encoder.js';
import { type Clock, type TimerHandle, every, sleep, systemClock } from '../core/clock.js';
import { AppliedFeed, rangeFilter } from './applied-feed.js';
import type { MvccState } from './mvcc-state.js';
import { validateTxnRequest } from './txn-validation.js';
import {
  FutureRevisionError,
  prefixEnd,
  type AppliedWrite,
  type Command,
  type CommandResult,
  type KeyValue,
  type RangeRequest,
  type RangeResult,
  type StoreEvent,
  type TxnRequest,
  type TxnResult,
  type WatchRequest,
  type Watcher,
} from './types.js';

export interface StateMachineOptions {
  /** history kept readable/watchable, ms (spec 000 §8: default 5 minutes) */
  historyMs?: number;
  /** how often auto-compaction runs, ms; 0 disables it */
  compactIntervalMs?: number;
  /** wall clock and timers for command times, auto-compaction and waits (the composition root's; tests pass a ManualClock) */
  clock?: Clock;
  /** how a snapshot is encoded in slices (snapshot-encoder.ts; tests drive its turns) */
  snapshotEncoding?: SnapshotEncoding;
}

export abstract class StateMachineStore {
  protected readonly feed: AppliedFeed;
  /** set once close() started: no new proposals, no auto-compaction */
  protected closed = false;
  protected readonly historyMs: number;
  protected readonly clock: Clock;
  private compactTimer: TimerHandle | undefined;

  protected constructor(
    protected state: MvccState,
    opts: StateMachineOptions,
  ) {
    this.historyMs = opts.historyMs ?? 300_000;
    this.clock = opts.clock ?? systemClock;
    this.feed = new AppliedFeed(() => this.state, this.clock);
    state.setWriteListener((w) => this.feed.publish(w));
  }

  /** The sequencer port: orders `cmd` durably and resolves with its result once applied here. */
  protected abstract propose(cmd: Command): Promise<CommandResult>;

  /** the store's consistent-read barrier (RevisionedStore.readIndex) */
  abstract readIndex(): Promise<number>;

  /** Resolves once a consistent read succeeds (a Raft member: a leader is known and everything committed then is applied). */
  async waitUntilReady(timeoutMs: number): Promise<void> {
    const deadline = this.clock.now() + timeoutMs;
    for (;;) {
      try {
        await this.readIndex();
        return;
      } catch (err) {
        if (this.closed || this.clock.now() > deadline) throw err;
        await sleep(this.clock, 200);
      }
    }
  }

  /** whether this member runs auto-compaction now (a Raft follower leaves it to the leader) */
  protected mayAutoCompact(): boolean {
    return !this.closed;
  }

  /** starts the auto-compaction timer (once the store is open) */
  protected startAutoCompaction(intervalMs: number | undefined): void {
    const interval = intervalMs ?? Math.max(1000, Math.min(60_000, Math.floor(this.historyMs / 4)));
    if (interval <= 0) return;
    this.compactTimer = every(this.clock, interval, () => void this.autoCompact());
  }

  get revision(): number {
    return this.state.revision;
  }

  get compactRevision(): number {
    return this.state.compactRevision;
  }

  async txn(req: TxnRequest): Promise<TxnResult> {
    validateTxnRequest(req);
    const r = await this.propose({ type: 'txn', txn: req, time: this.clock.now() });
    if (r.type !== 'txn') throw new Error('unexpected command result');
    return r.result;
  }

  range(req: RangeRequest): RangeResult {
    return this.state.range(req);
  }

  waitForRevision(revision: number, timeoutMs: number): Promise<boolean> {
    return this.feed.waitForRevision(revision, timeoutMs);
  }

  /** retained history then live writes, no gap, no duplicate (see AppliedFeed.watch) */
  watch(req: WatchRequest, onEvents: (write: AppliedWrite) => void, onError?: (err: Error) => void): Watcher {
    return this.feed.watch(req, onEvents, onError);
  }

  /** see RevisionedStore.writesAfter: the history a watch from `revision` replays, from the state machine's records */
  writesAfter(revision: number, key: string, end?: string): AppliedWrite[] {
    return this.state.writesSince(revision + 1, rangeFilter(key, end));
  }

  onApplied(listener: (write: AppliedWrite) => void): () => void {
    return this.feed.onApplied(listener);
  }

  async compact(revision: number): Promise<void> {
    if (revision > this.state.revision) throw new FutureRevisionError(revision, this.state.revision);
    if (revision <= this.state.compactRevision) return;
    await this.propose({ type: 'compact', revision, time: this.clock.now() });
  }

  /** Keeps `historyMs` of history: compacts at the newest revision written before now - historyMs. */
  protected autoCompact(): Promise<void> {
    if (!this.mayAutoCompact()) return Promise.resolve();
    const target = this.state.newestRevisionAtOrBefore(this.clock.now() - this.historyMs);
    if (target === undefined || target <= this.state.compactRevision) return Promise.resolve();
    return this.propose({ type: 'compact', revision: target, time: this.clock.now() }).then(
      () => {},
      () => {
        // a failed write shows in healthy(); the next tick retries
      },
    );
  }

  protected stopAutoCompaction(): void {
    this.compactTimer?.cancel();
  }

  /**
   * Replaces the state machine with a snapshot's (a Raft leader's). Watchers
   * and the watch cache see one synthetic write at the new revision with the
   * difference (every key whose latest version changed), so they stay
   * consistent.
   */
  protected replaceState(next: MvccState): void {
    const old = this.state;
    old.setWriteListener(undefined);
    this.state = next;
    next.setWriteListener((w) => this.feed.publish(w));
    if (next.revision <= old.revision) return;
    const all = { key: '', end: prefixEnd('') };
    const before = new Map<string, KeyValue>(old.range(all).kvs.map((kv) => [kv.key, kv]));
    const events: StoreEvent[] = [];
    for (const kv of next.range(all).kvs) {
      const prev = before.get(kv.key);
      before.delete(kv.key);
      if (!prev || prev.modRevision !== kv.modRevision) events.push(prev ? { type: 'put', kv, prevKv: prev } : { type: 'put', kv });
    }
    for (const prev of before.values()) {
      events.push({
        type: 'delete',
        kv: { key: prev.key, value: new Uint8Array(0), createRevision: 0, modRevision: next.revision, version: 0 },
        prevKv: prev,
      });
    }
    if (events.length > 0) this.feed.publish({ revision: next.revision, time: this.clock.now(), events });
  }
}
