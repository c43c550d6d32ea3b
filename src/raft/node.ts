// The Raft driver (etcd's `Node` over `RawNode`): owns the Ready loop, the
// tick clock and the persist / send / apply ordering, over two ports — log
// storage (RaftStorage on level, MemoryLogStorage in memory) and transport
// (PeerTransport over gRPC, MemoryNetwork in one process). The state machine
// above it (src/store/raft-store.ts) sees committed entries, snapshots, read
// states and leadership changes through RaftHost, and nothing of the order in
// which they must happen (docs/raft.md "Structure").

import { type Clock, type TimerHandle, every } from '../core/clock.js';
import type { RaftMetrics } from './metrics.js';
import type { RawNode } from './raw-node.js';
import type { PersistRequest } from './storage.js';
import type { TransportStats } from './transport.js';
import type { Entry, Message, NodeId, PersistentState, ReadState, Ready, Role, Snapshot } from './types.js';

/** Durable Raft state (src/raft/storage.ts documents the contract). */
export interface LogStorage {
  load(): Promise<PersistentState & { empty: boolean }>;
  /** persists one Ready's state as one batch; resolves to whether it was synced */
  save(req: PersistRequest): Promise<boolean>;
  saveSnapshot(snap: Snapshot): Promise<void>;
  /** lastIndex: the last log index written (the driver applies committed entries at or below it during a save) */
  stats(): { lastIndex: number };
  close(): Promise<void>;
}

/** Sends messages to peers; lossy (Raft retries). */
export interface Transport {
  send(messages: Message[]): void;
  stats(): TransportStats;
  close(): Promise<void>;
}

/** What the state machine above the driver is told, in Ready order. */
export interface RaftHost {
  onSoftState(leader: NodeId, role: Role): void;
  /** committed entries in log order (called possibly twice per Ready: during and after the fsync) */
  applyEntries(entries: Entry[]): void;
  /** a snapshot received from the leader, persisted */
  installSnapshot(snap: Snapshot): void;
  /** ReadIndex confirmations; called after this Ready's entries are applied */
  onReadStates(states: ReadState[]): void;
  /** after each Ready (the host may take a snapshot through compact()) */
  afterReady(): Promise<void>;
  /** the driver stopped for good (a failed fsync) */
  onFatal(err: Error): void;
}

interface QueuedProposal {
  data: Uint8Array;
  /** false once the caller gave up (timeout, leader change): not proposed late */
  live: () => boolean;
  fail: (err: Error) => void;
  /** the core took it in this term (RawNode.proposeBatch; ProposalTerms) */
  proposed: (term: number) => void;
}

export class RaftDriver {
  private transport: Transport | undefined;
  private queue: QueuedProposal[] = [];
  private ticker: TimerHandle | undefined;
  private scheduled = false;
  private loop: Promise<void> | undefined;
  private stopped = false;
  private fatalError: Error | undefined;

  constructor(
    readonly node: RawNode,
    readonly storage: LogStorage,
    private readonly host: RaftHost,
    private readonly metrics: RaftMetrics,
    private readonly clock: Clock,
  ) {}

  /** attaches the transport (created after the driver: it delivers into step()) and starts the clock */
  start(transport: Transport, tickMs: number): void {
    this.transport = transport;
    this.ticker = every(this.clock, tickMs, () => {
      this.node.tick();
      this.kick();
    });
    this.kick();
  }

  get fatal(): Error | undefined {
    return this.fatalError;
  }

  /** a message from a peer */
  step(m: Message): void {
    if (this.stopped) return;
    this.node.step(m);
    this.kick();
  }

  /**
   * Queues a proposal; everything queued in this turn goes to the core as one
   * batch at the next kick (group commit: one log append, one append message
   * per follower, one leader fsync).
   */
  propose(data: Uint8Array, live: () => boolean, fail: (err: Error) => void, proposed: (term: number) => void = () => {}): void {
    this.queue.push({ data, live, fail, proposed });
    this.kick();
  }

  readIndex(context: string): void {
    this.node.readIndex(context);
    this.kick();
  }

  transferLeadership(to: NodeId): void {
    this.node.transferLeadership(to);
    this.kick();
  }

  /** schedules a Ready turn */
  kick(): void {
    if (this.scheduled || this.stopped || this.fatalError) return;
    this.scheduled = true;
    // setImmediate: everything proposed or received in this turn shares one Ready (one fsync)
    setImmediate(() => {
      this.scheduled = false;
      if (this.stopped || this.fatalError) return;
      // even while the loop waits for a fsync: the entries join the next Ready
      this.flushProposals();
      if (!this.loop) {
        this.loop = this.runReadyLoop().finally(() => {
          this.loop = undefined;
        });
      } else {
        // a Ready is being persisted: what promises nothing about it leaves now
        // (forwarded proposals, ReadIndex requests/answers, heartbeat acks; RawNode.takeMessagesNow)
        const now = this.node.takeMessagesNow();
        if (now.length > 0) {
          this.transport!.send(now);
          this.metrics.messagesSent += now.length;
        }
        // and committed entries already on disk (an earlier batch whose acknowledgements came in
        // during this fsync) apply now instead of after it (RawNode.takeCommittedNow)
        const committed = this.node.takeCommittedNow();
        if (committed.length > 0) {
          this.host.applyEntries(committed);
          this.host.onReadStates([]);
          this.metrics.entriesAppliedEarly += committed.length;
          const durable = this.node.raft.log.unstableFrom - 1;
          for (const e of committed) if (e.index > durable) this.metrics.entriesAppliedBeforeOwnWrite += 1;
        }
      }
    });
  }

  /** stops the clock and waits for the Ready in progress; the ports are the caller's to close */
  async stop(): Promise<void> {
    this.stopped = true;
    this.ticker?.cancel();
    while (this.loop) await this.loop;
  }

  private flushProposals(): void {
    const batch = this.queue.filter((p) => p.live());
    this.queue = [];
    if (batch.length === 0) return;
    let term: number;
    try {
      term = this.node.proposeBatch(batch.map((p) => p.data));
    } catch (err) {
      const e = err instanceof Error ? err : new Error(String(err));
      for (const p of batch) p.fail(e);
      return;
    }
    for (const p of batch) p.proposed(term);
  }

  private async runReadyLoop(): Promise<void> {
    try {
      for (let rd = this.node.ready(); rd; rd = this.stopped ? undefined : this.node.ready()) {
        await this.handleReady(rd);
      }
    } catch (err) {
      // A failed fsync leaves the node's view ahead of its disk: stop
      // participating rather than send promises we may not keep.
      this.fatalError = err instanceof Error ? err : new Error(String(err));
      this.ticker?.cancel();
      this.host.onFatal(this.fatalError);
    }
  }

  private async handleReady(rd: Ready): Promise<void> {
    if (rd.softState) this.host.onSoftState(rd.softState.leader, rd.softState.role);
    this.metrics.readies += 1;
    // Thesis §10.2.1: the core marks the leader's appends that may replicate
    // while the leader writes them to its own disk (Ready.sendBeforePersist).
    // They promise nothing about this Ready's state: a commit index they
    // carry covers only entries of earlier Readies, which are on disk; that
    // they commit is told to anyone only by a later Ready, after this persist.
    const early = rd.sendBeforePersist;
    const late = early.length > 0 ? rd.messages.filter((m) => !early.includes(m)) : rd.messages;
    if (early.length > 0) this.transport!.send(early);
    // 1. persist (fsync) before anything that depends on it leaves.
    // Committed entries already on disk (from earlier Readies, not rewritten
    // by this one) are applied while the fsync runs; the rest after it.
    let committed = rd.committedEntries;
    if (rd.hardState || rd.entries.length > 0 || rd.snapshot) {
      const t0 = performance.now();
      // synced unless only the commit index moved (storage.ts header)
      const saving = this.storage.save({ hardState: rd.hardState, entries: rd.entries, snapshot: rd.snapshot });
      if (!rd.snapshot) {
        const durableTo = Math.min(this.storage.stats().lastIndex, (rd.entries[0]?.index ?? Infinity) - 1);
        let n = 0;
        while (n < committed.length && committed[n]!.index <= durableTo) n++; // n < committed.length
        if (n > 0) {
          this.host.applyEntries(committed.slice(0, n));
          committed = committed.slice(n);
        }
      }
      if (await saving) {
        this.metrics.storageSyncs += 1;
        this.metrics.storageSyncMs += performance.now() - t0;
      }
      this.metrics.entriesPersisted += rd.entries.length;
    }
    if (this.stopped) return;
    // 2. send (what may promise this Ready's persisted state)
    this.transport!.send(late);
    this.metrics.messagesSent += rd.messages.length;
    // 3. apply
    if (rd.snapshot) this.host.installSnapshot(rd.snapshot);
    this.host.applyEntries(committed);
    // 4. reads
    this.host.onReadStates(rd.readStates);
    // 5. advance
    this.node.advance(rd);
    await this.host.afterReady();
  }
}
