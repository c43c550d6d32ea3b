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
//   - 504 Timeout ("outcome unknown") when the wait ran out after it may have
//     reached a leader's log (a leader change does not end it: its entry may
//     still commit and is then acknowledged).
// A proposal that a leader change lost is proposed again, never twice in the
// log: once this member applies an entry of a later term than the one the
// core took it in, it certainly was not committed (docs/raft.md
// "Re-proposing lost proposals"; RaftRequests.appliedTerm).
// Consistent reads use Raft ReadIndex (Raft thesis §6.4): readIndex() resolves
// once this member has applied up to the index the leader confirmed, so the
// revision it returns covers every write acknowledged anywhere before the call.
// Watches and onApplied are served from this member's own applied state.

import { systemRandom } from '../core/random.js';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { RaftMetrics } from '../raft/metrics.js';
import { RaftDriver, type LogStorage, type RaftHost, type Transport } from '../raft/node.js';
import { RawNode } from '../raft/raw-node.js';
import { RaftStorage } from '../raft/storage.js';
import { FaultInjector, withFaults, type FaultAdmin } from '../raft/faults.js';
import { NONE, ProposalDroppedError, type Entry, type NodeId, type ReadState, type Role, type Snapshot } from '../raft/types.js';
import { decodeCommand, decodeMsgpackView, encodeCommand, encodeMsgpack } from './codec.js';
import { StoreClosedError, ownCopy } from './local-store.js';
import { LeaderSignal } from './leader-signal.js';
import { MvccState } from './mvcc-state.js';
import { encodeSnapshotCut } from './snapshot-encoder.js';
import { checkMember, connectPeers, liveRaftMetrics, memberStatus, raftConfig, waitOptions, type LiveRaftMetrics, type RaftStoreMemoryOptions, type RaftStoreOptions, type RaftStoreStatus } from './raft-options.js';
import { RaftRequests, RaftUnavailableError } from './raft-requests.js';
import { StateMachineStore } from './state-machine-store.js';
import type { Command, CommandResult, RevisionedStore } from './types.js';

export type { RaftMemberStatus, RaftStoreMemoryOptions, RaftStoreOptions, RaftStoreStatus } from './raft-options.js';
export { RaftUnavailableError } from './raft-requests.js';

export class RaftStore extends StateMachineStore implements RevisionedStore, RaftHost {
  readonly metrics = new RaftMetrics();
  /** RevisionedStore.readIndexIsRemote: a ReadIndex is a round trip to the leader and a quorum */
  readonly readIndexIsRemote = true;
  private appliedIndex: number;
  private snapshotIndex: number;
  /** bytes of the entries applied since the last snapshot, and that snapshot's size (snapshotLogRatio) */
  private logBytesSinceSnapshot = 0;
  private lastSnapshotBytes: number;
  /** the snapshot being encoded and saved (one at a time; close waits for it) */
  private snapshotting: Promise<void> | undefined;
  /** this member's snapshot turn: its position among the members, and their number (snapshotTurn) */
  private readonly snapshotSlot: { k: number; n: number };
  private readonly requests: RaftRequests;
  private readonly leadership: LeaderSignal;
  private transport!: Transport;
  private faultAdmin: FaultAdmin | undefined;
  private closePromise: Promise<void> | undefined;
  private readonly driver: RaftDriver;
  private seq = 0;
  private leader: NodeId = NONE;
  private role: Role = 'follower';
  /** proposal ids are unique per incarnation: a restarted member never resolves an old id */
  private readonly nonce: string;
  private readonly opts: ReturnType<typeof waitOptions>;
  private readonly log: (msg: string) => void;
  readonly faults: FaultInjector;

  private constructor(
    private readonly options: RaftStoreOptions,
    private readonly node: RawNode,
    storage: LogStorage,
    snapshot: Snapshot | undefined,
  ) {
    super(snapshot ? MvccState.restore(snapshot.data) : new MvccState(), options);
    this.opts = waitOptions(options);
    this.requests = new RaftRequests(this.metrics, this.clock, this.opts.proposalAttempts);
    this.faults = new FaultInjector(options.random);
    this.nonce = `${this.clock.now().toString(36)}${(options.random ?? systemRandom)().toString(36).slice(2, 8)}`;
    this.driver = new RaftDriver(node, storage, this, this.metrics, this.clock);
    this.log = options.log ?? (() => {});
    this.leadership = new LeaderSignal((msg) => this.log(`raft: ${options.name}: ${msg}`), this.clock);
    this.appliedIndex = snapshot?.metadata.index ?? 0;
    this.snapshotIndex = this.appliedIndex;
    this.lastSnapshotBytes = snapshot?.data.byteLength ?? 0;
    const names = Object.keys(options.initialCluster).sort();
    this.snapshotSlot = { k: Math.max(0, names.indexOf(options.name)), n: Math.max(1, names.length) };
  }

  /** Opens this member: loads (or bootstraps) its Raft state, starts the peer transport and the clock. */
  static async open(options: RaftStoreOptions): Promise<RaftStore> {
    checkMember(options.name, Object.keys(options.initialCluster));
    await mkdir(options.dataDir, { recursive: true });
    const storage = await RaftStorage.open(join(options.dataDir, 'raft'));
    return RaftStore.start(options, storage, async (store) => {
      const peers = await connectPeers(options, store.faults, store.driver, store.log);
      store.faultAdmin = peers.faultAdmin;
      return peers.transport;
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
    return RaftStore.start({ ...options, initialCluster, dataDir: '' }, options.storage, async (store) => {
      const faulty = withFaults(store.faults, (m) => store.driver.step(m), store.clock);
      return faulty.wrap(options.network.join(options.name, faulty.receive));
    });
  }

  private static async start(options: RaftStoreOptions, storage: LogStorage, connect: (store: RaftStore) => Promise<Transport>): Promise<RaftStore> {
    try {
      const persisted = await storage.load();
      const cfg = raftConfig(options);
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
    const read = this.requests.read(ctx, this.opts.readTimeoutMs);
    this.driver.readIndex(ctx);
    return read;
  }

  healthy(): boolean {
    return !this.closed && this.driver.fatal === undefined && this.node.raft.lead !== NONE;
  }

  /** this member is the Raft leader (from the core's soft state) and still running */
  isLeader(): boolean {
    return this.role === 'leader' && !this.closed && this.driver.fatal === undefined;
  }

  onLeadershipChange(listener: (leader: boolean) => void): () => void {
    return this.leadership.onChange(listener);
  }

  private reportLeadership(): void {
    this.leadership.report(this.isLeader());
  }

  close(): Promise<void> {
    this.closePromise ??= this.doClose();
    return this.closePromise;
  }

  // ------------------------------------------------------------ cluster API

  /** Members, leader, term, commit and applied index (the /raftz document). */
  status(): RaftStoreStatus {
    return memberStatus(this.options, this.node.status(), this.transport.stats(), {
      applied: this.appliedIndex,
      snapshotIndex: this.snapshotIndex,
      revision: this.state.revision,
      compactRevision: this.state.compactRevision,
      pendingProposals: this.requests.pendingProposals,
      metrics: this.metrics,
      ...(this.faultAdmin ? { faultAdminPort: this.faultAdmin.port } : {}),
    });
  }

  /** ask the cluster to hand leadership to `to` (operators, tests) */
  transferLeadership(to: NodeId): void {
    this.driver.transferLeadership(to);
  }

  /** live numbers for RaftMetrics.register */
  liveMetrics(): LiveRaftMetrics {
    return liveRaftMetrics(this.node.raft, this.appliedIndex, this.requests.pendingProposals);
  }

  // ------------------------------------------------------------ proposals

  protected async propose(cmd: Command): Promise<CommandResult> {
    if (this.closed) throw new StoreClosedError();
    const fatal = this.driver.fatal;
    if (fatal) throw new RaftUnavailableError(`raft storage failed: ${fatal.message}`, false);
    // Encode now: what is proposed must be exactly what the caller passed. The
    // copy taken at the same moment is what this member applies when the entry
    // comes back, instead of decoding it (as LocalStore does).
    const id = `${this.options.name}.${this.nonce}.${++this.seq}`;
    const data = encodeMsgpack([id, encodeCommand(cmd)]);
    const own = ownCopy(cmd);
    await this.awaitLeader();
    const applied = this.requests.proposal(id, this.opts.proposalTimeoutMs, data, own);
    this.submit(id, data);
    return applied;
  }

  /** hands proposal `id` to the driver (again, after a leader change lost it) */
  private submit(id: string, data: Uint8Array): void {
    this.driver.propose(
      data,
      () => this.requests.isPending(id),
      // the core refused the batch: 503 when it was certainly not accepted
      (err) => this.requests.settle(id, undefined, err instanceof ProposalDroppedError ? new RaftUnavailableError(err.message, false) : err),
      (term) => this.requests.proposed(id, term),
    );
  }

  /** waits up to leaderWaitMs for a leader; 503 when none shows up */
  private async awaitLeader(): Promise<void> {
    if (this.node.raft.lead !== NONE) return;
    await this.leadership.waitForLeader(this.opts.leaderWaitMs);
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
    this.requests.confirm(states);
    this.requests.serve(this.appliedIndex, this.state.revision);
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
      // A ReadIndex in flight is answered by the leader it went to, or never: fail it (retryable).
      // A proposal is not failed (etcd does not either): an entry proposed under the old leader
      // may still commit — a pre-candidate that lost its pre-vote goes back to the same leader, a
      // new leader commits what the old one replicated — and is then applied here by its id.
      // Failing it made the caller see 504 for a write that was applied, and the agent's next
      // Lease renewal a 409 (docs/scale.md). One that never commits is proposed again once an
      // entry of a later term is applied here (applyEntries), or fails at proposalTimeoutMs.
      this.requests.failReads(() => new RaftUnavailableError('leadership changed during a consistent read; retry', false));
    }
    if (leader !== NONE) this.leadership.wake();
  }

  private failPending(message: string): void {
    this.requests.failAll(
      () => new RaftUnavailableError(message, true),
      () => new RaftUnavailableError('leadership changed during a consistent read; retry', false),
    );
  }

  applyEntries(entries: Entry[]): void {
    for (const e of entries) {
      if (e.index <= this.appliedIndex) continue;
      if (e.type === 'normal' && e.data.length > 0) {
        // `bytes` is a view into the entry; decodeCommand copies the values the state keeps
        const [id, bytes] = decodeMsgpackView(e.data) as [string, Uint8Array];
        let result: CommandResult | undefined;
        let error: Error | undefined;
        try {
          result = this.state.apply(e.index, this.requests.command(id) ?? decodeCommand(bytes));
        } catch (err) {
          error = err instanceof Error ? err : new Error(String(err));
        }
        this.requests.settle(id, result, error);
      }
      // every entry counts, the new leader's empty one above all: it tells that the proposals
      // of earlier terms still pending were lost (docs/raft.md "Re-proposing lost proposals")
      for (const [id, data] of this.requests.appliedTerm(e.term)) this.submit(id, data);
      this.appliedIndex = e.index;
      this.logBytesSinceSnapshot += e.data.byteLength;
      this.metrics.entriesApplied += 1;
    }
  }

  /** a leader's snapshot replaces the state machine (watchers see the difference as one write) */
  installSnapshot(snap: Snapshot): void {
    if (snap.metadata.index <= this.appliedIndex) return;
    // pending proposals of its term or earlier may be inside: never proposed again
    this.requests.snapshotInstalled(snap.metadata.term);
    this.replaceState(MvccState.restore(snap.data));
    this.appliedIndex = snap.metadata.index;
    this.snapshotIndex = snap.metadata.index;
    this.lastSnapshotBytes = snap.data.byteLength;
    this.logBytesSinceSnapshot = 0;
    this.metrics.snapshotsInstalled += 1;
  }

  async afterReady(): Promise<void> {
    if (this.snapshotting || this.closed) return;
    if (this.appliedIndex - this.snapshotIndex < this.opts.snapshotEvery) return;
    // Tied to the bytes applied since the last snapshot, its cost per byte written stays bounded
    // (docs/raft.md "The replicated store").
    if (this.logBytesSinceSnapshot < this.lastSnapshotBytes * this.opts.snapshotLogRatio) return;
    if (!this.snapshotTurn()) return;
    // A consistent cut at `index`, by reference (milliseconds), encoded in slices across
    // event-loop turns while the Ready loop goes on: one synchronous encoding of the whole state
    // with its history stalled a member for 1–2 s at 5,000 nodes, longer than the election
    // timeout (snapshot-encoder.ts).
    const index = this.appliedIndex;
    const cut = this.state.snapshotCut();
    this.logBytesSinceSnapshot = 0;
    this.snapshotting = this.takeSnapshot(index, cut).finally(() => {
      this.snapshotting = undefined;
    });
  }

  private async takeSnapshot(index: number, cut: ReturnType<MvccState['snapshotCut']>): Promise<void> {
    let data: Uint8Array | undefined;
    try {
      data = await encodeSnapshotCut(cut, { ...this.options.snapshotEncoding, cancelled: () => this.closed });
    } catch (err) {
      this.log(`raft: ${this.options.name}: snapshot at ${index} failed: ${String(err)}`);
      return;
    }
    // closed meanwhile, or a leader's snapshot at or past `index` installed: nothing to compact
    if (!data || this.closed || this.driver.fatal || index <= this.node.raft.log.snapIndex) return;
    this.lastSnapshotBytes = data.byteLength;
    // RawNode.compact between or during Readies: `index` is applied, so no Ready hands out
    // entries at or below it, and the storage queues the snapshot's batch after earlier ones
    try {
      const snap = this.node.compact(index, data);
      await this.driver.storage.saveSnapshot(snap);
    } catch (err) {
      // the disk still holds the log the snapshot covers; the next Ready's write reports a dead disk
      this.log(`raft: ${this.options.name}: saving the snapshot at ${index} failed: ${String(err)}`);
      return;
    }
    this.snapshotIndex = Math.max(this.snapshotIndex, index);
    this.metrics.snapshotsTaken += 1;
  }

  /**
   * Members take turns: member k of n snapshots only while floor(applied / snapshotEvery) mod n
   * is k. They apply the same entries, so without turns they reached their thresholds at about the
   * same index and stalled together — two stalled followers leave the leader without a quorum
   * (it steps down), a stalled leader costs an election. A member waits at most (n-1) ×
   * snapshotEvery entries for its turn.
   */
  private snapshotTurn(): boolean {
    const { k, n } = this.snapshotSlot;
    return Math.floor(this.appliedIndex / this.opts.snapshotEvery) % n === k;
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
    // an encoding in progress sees `closed` at its next slice and stops; a save completes
    while (this.snapshotting) await this.snapshotting;
    this.requests.close();
    this.leadership.wake();
    this.feed.close(() => new StoreClosedError());
    await this.faultAdmin?.close();
    await this.transport.close();
    await this.driver.storage.close();
  }
}

