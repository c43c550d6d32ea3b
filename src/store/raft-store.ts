// The replicated revisioned store: the same MVCC state machine as LocalStore
// (mvcc-state.ts), driven by Raft-committed log entries instead of a local
// write-ahead log (docs/raft.md "The replicated store").
//
// Write path: txn() wraps the encoded `Command` in an envelope carrying a
// proposal id unique to this member incarnation and proposes it to the local
// RawNode (a follower's core forwards it to the leader). The proposal
// resolves when an entry with that id is applied HERE, so a member that
// acknowledged a write can read it back at once (read-your-writes on that
// member). It fails with a retryable error, never a false success:
//   - 503 ServiceUnavailable when it was certainly not accepted (no leader,
//     the core dropped it synchronously);
//   - 504 Timeout ("outcome unknown") when leadership changed or the wait ran
//     out after it may have reached a leader's log.
// Consistent reads use Raft ReadIndex (Raft thesis §6.4): readIndex() resolves
// once this member has applied up to the index the leader confirmed, so the
// revision it returns covers every write acknowledged anywhere before the call.
// Watches and onApplied are served from this member's own applied state.

import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { RaftMetrics } from '../raft/metrics.js';
import type { MemoryLogStorage, MemoryNetwork } from '../raft/memory.js';
import { RaftDriver, type LogStorage, type RaftHost, type Transport } from '../raft/node.js';
import { RawNode } from '../raft/raw-node.js';
import { RaftStorage } from '../raft/storage.js';
import { FaultInjector, PeerTransport, startFaultAdmin, type FaultAdmin, type TransportStats, type TransportTls } from '../raft/transport.js';
import { NONE, ProposalDroppedError, type Entry, type NodeId, type RaftConfig, type ReadState, type Role, type Snapshot } from '../raft/types.js';
import { decodeCommand, decodeMsgpack, encodeCommand, encodeMsgpack } from './codec.js';
import { StoreClosedError } from './local-store.js';
import { MvccState } from './mvcc-state.js';
import { StateMachineStore } from './state-machine-store.js';
import {
  FutureRevisionError,
  prefixEnd,
  type AppliedWrite,
  type Command,
  type CommandResult,
  type KeyValue,
  type RangeRequest,
  type RangeResult,
  type RevisionedStore,
  type StoreEvent,
  type TxnRequest,
  type TxnResult,
  type WatchRequest,
  type Watcher,
  StoreUnavailableError,
} from './types.js';

export interface RaftStoreOptions {
  /** this member's name (its Raft node id) */
  name: NodeId;
  /** every member's name -> peer address (host:port); the initial voters */
  initialCluster: Record<NodeId, string>;
  /** where the Raft log, hard state and snapshots live */
  dataDir: string;
  /** peer listen address (host:port); defaults to initialCluster[name] */
  peerListen?: string;
  /** mutual TLS between members (the cluster's shared PKI) */
  tls?: TransportTls;
  /** ms per Raft tick (default 100) */
  tickMs?: number;
  /** election timeout in ticks, randomized in [electionTick, 2*electionTick) (default 10) */
  electionTick?: number;
  /** heartbeat interval in ticks (default 1) */
  heartbeatTick?: number;
  /** take a state-machine snapshot every this many applied entries (default 10000) */
  snapshotEvery?: number;
  /** how long a proposal waits to be applied before failing with 504 (default 7000) */
  proposalTimeoutMs?: number;
  /** how long a ReadIndex waits (default 5000) */
  readTimeoutMs?: number;
  /** how long a request waits for a leader to be known before 503 (default 3000) */
  leaderWaitMs?: number;
  /** history kept readable/watchable, ms (spec 000 §8: default 5 minutes) */
  historyMs?: number;
  /** how often the leader checks for auto-compaction, ms; 0 disables it */
  compactIntervalMs?: number;
  /** start the loopback fault-injection admin endpoint on this port (chaos tests; 0 = ephemeral) */
  faultAdminPort?: number;
  now?: () => number;
  log?: (msg: string) => void;
}

export interface RaftMemberStatus {
  name: NodeId;
  peerAddress: string;
  /** this member's stream to it is up (undefined for self) */
  connected?: boolean;
  /** leader's view of its replication progress */
  match?: number;
}

export interface RaftStoreStatus {
  name: NodeId;
  members: RaftMemberStatus[];
  leader: NodeId;
  role: Role;
  term: number;
  commit: number;
  applied: number;
  firstIndex: number;
  lastIndex: number;
  snapshotIndex: number;
  revision: number;
  compactRevision: number;
  pendingProposals: number;
  metrics: RaftMetrics;
  /** peer transport counters (messages, frames) */
  transport: TransportStats;
  faultAdminPort?: number;
}

/** Options of an in-memory member (RaftStore.openInMemory). */
export interface RaftStoreMemoryOptions
  extends Omit<RaftStoreOptions, 'initialCluster' | 'dataDir' | 'peerListen' | 'tls' | 'faultAdminPort'> {
  /** every member's name: the initial voters */
  members: NodeId[];
  network: MemoryNetwork;
  storage: MemoryLogStorage;
}

function checkMember(name: NodeId, members: NodeId[]): void {
  if (!members.includes(name)) throw new Error(`member "${name}" is not in the initial cluster (${members.join(', ')})`);
}

/** A retryable failure of the replicated store, answered as a Status with Retry-After. */
export class RaftUnavailableError extends StoreUnavailableError {
  override name = 'RaftUnavailableError';
}

interface Pending {
  resolve: (r: CommandResult) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
  /** performance.now() at propose (RaftMetrics.proposeToApplyMs) */
  start: number;
}

interface PendingRead {
  resolve: (revision: number) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
  /** set once the leader confirmed: serve when applied >= index */
  index?: number;
}

export class RaftStore extends StateMachineStore implements RevisionedStore, RaftHost {
  readonly metrics = new RaftMetrics();
  private appliedIndex: number;
  private snapshotIndex: number;
  private readonly pending = new Map<string, Pending>();
  private readonly reads = new Map<string, PendingRead>();
  private readonly leaderWaiters = new Set<() => void>();
  private readonly leadershipListeners = new Set<(leader: boolean) => void>();
  /** the value last reported to leadershipListeners */
  private reportedLeader = false;
  private transport!: Transport;
  private faultAdmin: FaultAdmin | undefined;
  private closed = false;
  private closePromise: Promise<void> | undefined;
  private readonly driver: RaftDriver;
  private seq = 0;
  private leader: NodeId = NONE;
  private role: Role = 'follower';
  /** proposal ids are unique per incarnation: a restarted member never resolves an old id */
  private readonly nonce = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
  private readonly opts: Required<
    Pick<RaftStoreOptions, 'proposalTimeoutMs' | 'readTimeoutMs' | 'leaderWaitMs' | 'snapshotEvery'>
  >;
  private readonly log: (msg: string) => void;
  readonly faults = new FaultInjector();

  private constructor(
    private readonly options: RaftStoreOptions,
    private readonly node: RawNode,
    storage: LogStorage,
    snapshot: Snapshot | undefined,
  ) {
    super(snapshot ? MvccState.restore(snapshot.data) : new MvccState(), options);
    this.driver = new RaftDriver(node, storage, this, this.metrics);
    this.opts = {
      proposalTimeoutMs: options.proposalTimeoutMs ?? 7000,
      readTimeoutMs: options.readTimeoutMs ?? 5000,
      leaderWaitMs: options.leaderWaitMs ?? 3000,
      snapshotEvery: Math.max(1, options.snapshotEvery ?? 10_000),
    };
    this.log = options.log ?? (() => {});
    this.appliedIndex = snapshot?.metadata.index ?? 0;
    this.snapshotIndex = this.appliedIndex;
  }

  /** Opens this member: loads (or bootstraps) its Raft state, starts the peer transport and the clock. */
  static async open(options: RaftStoreOptions): Promise<RaftStore> {
    checkMember(options.name, Object.keys(options.initialCluster));
    await mkdir(options.dataDir, { recursive: true });
    const storage = await RaftStorage.open(join(options.dataDir, 'raft'));
    return RaftStore.start(options, storage, async (store) => {
      const transport = await PeerTransport.start({
        self: options.name,
        listen: options.peerListen ?? options.initialCluster[options.name],
        peers: options.initialCluster,
        tls: options.tls,
        faults: store.faults,
        onMessage: (m) => store.driver.step(m),
        onUnreachable: (peer) => store.node.reportUnreachable(peer),
        log: store.log,
      });
      if (options.faultAdminPort !== undefined) store.faultAdmin = await startFaultAdmin(store.faults, options.faultAdminPort);
      return transport;
    });
  }

  /**
   * A member whose log lives in memory and whose peers are in the same
   * process (tests, development): no disk, no sockets. `storage` survives a
   * close, so a member can be restarted from it.
   */
  static async openInMemory(options: RaftStoreMemoryOptions): Promise<RaftStore> {
    checkMember(options.name, options.members);
    const initialCluster = Object.fromEntries(options.members.map((m) => [m, `memory:${m}`]));
    return RaftStore.start({ ...options, initialCluster, dataDir: '' }, options.storage, async (store) =>
      options.network.join(options.name, (m) => store.driver.step(m)),
    );
  }

  private static async start(options: RaftStoreOptions, storage: LogStorage, connect: (store: RaftStore) => Promise<Transport>): Promise<RaftStore> {
    try {
      const persisted = await storage.load();
      const cfg: RaftConfig = {
        id: options.name,
        electionTick: options.electionTick ?? 10,
        heartbeatTick: options.heartbeatTick ?? 1,
        random: Math.random,
        preVote: true,
        checkQuorum: true,
        maxSizePerMsg: 1024 * 1024,
        maxInflightMsgs: 256,
        maxCommittedSizePerReady: 4 * 1024 * 1024,
      };
      const node = persisted.empty
        ? RawNode.bootstrap(cfg, Object.keys(options.initialCluster).sort())
        : new RawNode(cfg, persisted);
      const store = new RaftStore(options, node, storage, persisted.snapshot);
      store.transport = await connect(store);
      store.driver.start(store.transport, options.tickMs ?? 100);
      store.startAutoCompaction(options.compactIntervalMs);
      return store;
    } catch (err) {
      await storage.close().catch(() => {});
      throw err;
    }
  }

  // ------------------------------------------------------------ RevisionedStore

  async readIndex(): Promise<number> {
    if (this.closed) throw new StoreClosedError();
    await this.awaitLeader();
    const ctx = `${this.options.name}.${this.nonce}.r${++this.seq}`;
    return new Promise<number>((resolve, reject) => {
      const read: PendingRead = {
        resolve,
        reject,
        timer: setTimeout(() => {
          this.reads.delete(ctx);
          this.metrics.readIndexFailed += 1;
          reject(new RaftUnavailableError('timed out waiting for a ReadIndex confirmation from the leader', false));
        }, this.opts.readTimeoutMs),
      };
      this.reads.set(ctx, read);
      this.driver.readIndex(ctx);
    });
  }

  healthy(): boolean {
    return !this.closed && this.driver.fatal === undefined && this.node.raft.lead !== NONE;
  }

  /** this member is the Raft leader (from the core's soft state) and still running */
  isLeader(): boolean {
    return this.role === 'leader' && !this.closed && this.driver.fatal === undefined;
  }

  onLeadershipChange(listener: (leader: boolean) => void): () => void {
    this.leadershipListeners.add(listener);
    return () => this.leadershipListeners.delete(listener);
  }

  /** tells the listeners when isLeader() differs from what they were last told */
  private reportLeadership(): void {
    const now = this.isLeader();
    if (now === this.reportedLeader) return;
    this.reportedLeader = now;
    for (const l of [...this.leadershipListeners]) {
      try {
        l(now);
      } catch (err) {
        this.log(`raft: ${this.options.name}: leadership listener failed: ${(err as Error).message}`);
      }
    }
  }

  close(): Promise<void> {
    this.closePromise ??= this.doClose();
    return this.closePromise;
  }

  // ------------------------------------------------------------ cluster API

  /** Members, leader, term, commit and applied index (the /raftz document). */
  status(): RaftStoreStatus {
    const s = this.node.status();
    const t = this.transport.stats();
    const members: RaftMemberStatus[] = Object.entries(this.options.initialCluster)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([name, peerAddress]) => ({
        name,
        peerAddress,
        ...(name === this.options.name ? {} : { connected: t.connected[name] ?? false }),
        ...(s.progress[name] ? { match: s.progress[name].match } : {}),
      }));
    return {
      name: this.options.name,
      members,
      leader: s.leader,
      role: s.role,
      term: s.term,
      commit: s.commit,
      applied: this.appliedIndex,
      firstIndex: s.firstIndex,
      lastIndex: s.lastIndex,
      snapshotIndex: this.snapshotIndex,
      revision: this.state.revision,
      compactRevision: this.state.compactRevision,
      pendingProposals: this.pending.size,
      metrics: this.metrics,
      transport: t,
      ...(this.faultAdmin ? { faultAdminPort: this.faultAdmin.port } : {}),
    };
  }

  /** ask the cluster to hand leadership to `to` (operators, tests) */
  transferLeadership(to: NodeId): void {
    this.driver.transferLeadership(to);
  }

  /** Resolves once a leader is known and this member applied everything committed at that moment. */
  async waitUntilReady(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        await this.readIndex();
        return;
      } catch (err) {
        if (this.closed || Date.now() > deadline) throw err;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  }

  /** live numbers for RaftMetrics.register */
  liveMetrics(): { term: number; commit: number; applied: number; isLeader: boolean; hasLeader: boolean; pending: number } {
    const r = this.node.raft;
    return {
      term: r.term,
      commit: r.log.committed,
      applied: this.appliedIndex,
      isLeader: r.role === 'leader',
      hasLeader: r.lead !== NONE,
      pending: this.pending.size,
    };
  }

  // ------------------------------------------------------------ proposals

  protected async propose(cmd: Command): Promise<CommandResult> {
    if (this.closed) throw new StoreClosedError();
    const fatal = this.driver.fatal;
    if (fatal) throw new RaftUnavailableError(`raft storage failed: ${fatal.message}`, false);
    // Encode now: what is proposed must be exactly what the caller passed.
    const id = `${this.options.name}.${this.nonce}.${++this.seq}`;
    const data = encodeMsgpack([id, encodeCommand(cmd)]);
    await this.awaitLeader();
    return new Promise<CommandResult>((resolve, reject) => {
      const p: Pending = {
        resolve,
        reject,
        timer: setTimeout(() => {
          if (this.pending.delete(id)) {
            this.metrics.proposalsFailed += 1;
            reject(new RaftUnavailableError('timed out waiting for the write to commit; it may or may not have been applied', true));
          }
        }, this.opts.proposalTimeoutMs),
        start: performance.now(),
      };
      this.pending.set(id, p);
      this.driver.propose(
        data,
        () => this.pending.has(id),
        (err) => this.failProposal(id, err),
      );
    });
  }

  /** the core refused a batch: 503 when it was certainly not accepted */
  private failProposal(id: string, err: Error): void {
    const p = this.pending.get(id);
    if (!p) return;
    clearTimeout(p.timer);
    this.pending.delete(id);
    this.metrics.proposalsFailed += 1;
    p.reject(err instanceof ProposalDroppedError ? new RaftUnavailableError(err.message, false) : err);
  }

  /** waits up to leaderWaitMs for a leader; 503 when none shows up */
  private async awaitLeader(): Promise<void> {
    if (this.node.raft.lead !== NONE) return;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.leaderWaiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, this.opts.leaderWaitMs);
      this.leaderWaiters.add(done);
    });
    if (this.closed) throw new StoreClosedError();
    if (this.node.raft.lead === NONE) throw new RaftUnavailableError('no Raft leader is known (election in progress or quorum lost)', false);
  }

  // ------------------------------------------------------------ RaftHost (called by the driver in Ready order)

  onFatal(err: Error): void {
    this.log(`raft: member ${this.options.name} stopped: ${err.message}`);
    this.failPending(`raft storage failed: ${err.message}`);
    this.reportLeadership();
  }

  onReadStates(states: ReadState[]): void {
    for (const rs of states) {
      const read = this.reads.get(rs.context);
      if (read) read.index = rs.index;
    }
    this.serveReads();
  }

  onSoftState(leader: NodeId, role: Role): void {
    const changed = leader !== this.leader;
    this.role = role;
    this.reportLeadership();
    if (!changed) return;
    const previous = this.leader;
    this.leader = leader;
    this.metrics.leaderChanges += 1;
    this.log(`raft: ${this.options.name}: leader ${previous || '(none)'} -> ${leader || '(none)'}`);
    if (previous !== NONE) {
      // Entries proposed under the old leader may or may not survive: their
      // callers get a retryable "outcome unknown", never a false success.
      this.failPending('leadership changed while the write was in flight; it may or may not have been applied');
    }
    if (leader !== NONE) for (const w of [...this.leaderWaiters]) w();
  }

  private failPending(message: string): void {
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      this.pending.delete(id);
      this.metrics.proposalsFailed += 1;
      p.reject(new RaftUnavailableError(message, true));
    }
    for (const [ctx, r] of this.reads) {
      clearTimeout(r.timer);
      this.reads.delete(ctx);
      this.metrics.readIndexFailed += 1;
      r.reject(new RaftUnavailableError('leadership changed during a consistent read; retry', false));
    }
  }

  applyEntries(entries: Entry[]): void {
    for (const e of entries) {
      if (e.index <= this.appliedIndex) continue;
      if (e.type === 'normal' && e.data.length > 0) {
        const [id, bytes] = decodeMsgpack(e.data) as [string, Uint8Array];
        let result: CommandResult | undefined;
        let error: Error | undefined;
        try {
          result = this.state.apply(e.index, decodeCommand(bytes));
        } catch (err) {
          error = err instanceof Error ? err : new Error(String(err));
        }
        const p = this.pending.get(id);
        if (p) {
          this.pending.delete(id);
          clearTimeout(p.timer);
          if (result) {
            this.metrics.proposalsCommitted += 1;
            this.metrics.proposeToApplyMs += performance.now() - p.start;
            p.resolve(result);
          } else {
            this.metrics.proposalsFailed += 1;
            p.reject(error!);
          }
        }
      }
      this.appliedIndex = e.index;
      this.metrics.entriesApplied += 1;
    }
  }

  private serveReads(): void {
    for (const [ctx, r] of this.reads) {
      if (r.index !== undefined && r.index <= this.appliedIndex) {
        this.reads.delete(ctx);
        clearTimeout(r.timer);
        r.resolve(this.state.revision);
      }
    }
  }

  /** a leader's snapshot replaces the state machine (watchers see the difference as one write) */
  installSnapshot(snap: Snapshot): void {
    if (snap.metadata.index <= this.appliedIndex) return;
    this.replaceState(MvccState.restore(snap.data));
    this.appliedIndex = snap.metadata.index;
    this.snapshotIndex = snap.metadata.index;
    this.metrics.snapshotsInstalled += 1;
  }

  async afterReady(): Promise<void> {
    if (this.appliedIndex - this.snapshotIndex < this.opts.snapshotEvery) return;
    const index = this.appliedIndex;
    // taken synchronously: a consistent cut at `index`
    const snap = this.node.compact(index, this.state.snapshot());
    await this.driver.storage.saveSnapshot(snap);
    this.snapshotIndex = index;
    this.metrics.snapshotsTaken += 1;
  }

  /** the leader keeps `historyMs` of history; followers apply its compact commands */
  protected override mayAutoCompact(): boolean {
    return !this.closed && this.node.raft.role === 'leader';
  }

  private async doClose(): Promise<void> {
    this.closed = true;
    // controllers stop before the store goes away under them
    this.reportLeadership();
    this.feed.refuse(() => new StoreClosedError());
    this.stopAutoCompaction();
    await this.driver.stop();
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      this.pending.delete(id);
      p.reject(new RaftUnavailableError('the member is shutting down; the write may or may not have been applied', true));
    }
    for (const [ctx, r] of this.reads) {
      clearTimeout(r.timer);
      this.reads.delete(ctx);
      r.reject(new StoreClosedError());
    }
    for (const w of [...this.leaderWaiters]) w();
    this.feed.close(() => new StoreClosedError());
    await this.faultAdmin?.close();
    await this.transport.close();
    await this.driver.storage.close();
  }
}

