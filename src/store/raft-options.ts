// Options, wiring and status documents of a RaftStore member
// (src/store/raft-store.ts): what the member is built from and what it
// reports, kept apart so the store itself holds only its behaviour.

import type { Clock } from '../core/clock.js';
import { type Random, systemRandom } from '../core/random.js';
import type { RaftMetrics } from '../raft/metrics.js';
import type { MemoryLogStorage, MemoryNetwork } from '../raft/memory.js';
import type { RaftDriver, Transport } from '../raft/node.js';
import type { Raft } from '../raft/raft.js';
import { startFaultAdmin, withFaults, type ClockSkewControl, type FaultAdmin, type FaultInjector } from '../raft/faults.js';
import { PeerTransport, type TransportStats, type TransportTls } from '../raft/transport.js';
import type { SnapshotEncoding } from './snapshot-encoder.js';
import { NONE, type NodeId, type RaftConfig, type Role, type Status } from '../raft/types.js';

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
  /**
   * ...and only once the entries applied since the last snapshot hold at least this fraction of
   * that snapshot's bytes (default 0.5), as LocalStore's `snapshotLogRatio`: a snapshot encodes the
   * whole state (history included), so a fixed entry count makes its CPU per write grow with the
   * state (docs/raft.md "The replicated store").
   */
  snapshotLogRatio?: number;
  /** how a snapshot is encoded in slices (snapshot-encoder.ts; tests drive its turns) */
  snapshotEncoding?: SnapshotEncoding;
  /** how long a proposal waits to be applied before failing with 504 (default 7000) */
  proposalTimeoutMs?: number;
  /**
   * how many times a proposal is proposed in all: one lost to a leader change is proposed again
   * in the new term (docs/raft.md "Re-proposing lost proposals"); after this many it fails with
   * 503 (default 4)
   */
  proposalAttempts?: number;
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
  /** lets the fault admin endpoint jump this process's wall clock (chaos tests) */
  faultAdminClock?: ClockSkewControl;
  /** wall clock and timers (the composition root's; tests pass a ManualClock) */
  clock?: Clock;
  /** election timeout and backoff jitter */
  random?: Random;
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

export function checkMember(name: NodeId, members: NodeId[]): void {
  if (!members.includes(name)) throw new Error(`member "${name}" is not in the initial cluster (${members.join(', ')})`);
}

/** the core's configuration for a member (random: election timeouts need no reproducibility outside simulations) */
export function raftConfig(options: RaftStoreOptions): RaftConfig {
  return {
    id: options.name,
    electionTick: options.electionTick ?? 10,
    heartbeatTick: options.heartbeatTick ?? 1,
    random: options.random ?? systemRandom,
    preVote: true,
    checkQuorum: true,
    maxSizePerMsg: 1024 * 1024,
    maxInflightMsgs: 256,
    maxCommittedSizePerReady: 4 * 1024 * 1024,
  };
}

/** the waits of a member, with their defaults */
export function waitOptions(options: RaftStoreOptions): {
  proposalTimeoutMs: number;
  proposalAttempts: number;
  readTimeoutMs: number;
  leaderWaitMs: number;
  snapshotEvery: number;
  snapshotLogRatio: number;
} {
  return {
    proposalTimeoutMs: options.proposalTimeoutMs ?? 7000,
    proposalAttempts: Math.max(1, options.proposalAttempts ?? 4),
    readTimeoutMs: options.readTimeoutMs ?? 5000,
    leaderWaitMs: options.leaderWaitMs ?? 3000,
    snapshotEvery: Math.max(1, options.snapshotEvery ?? 10_000),
    snapshotLogRatio: Math.max(0, options.snapshotLogRatio ?? 0.5),
  };
}

/** the gRPC transport to the other members behind the fault decorator (and the fault admin endpoint when asked for) */
export async function connectPeers(
  options: RaftStoreOptions,
  faults: FaultInjector,
  driver: RaftDriver,
  log: (msg: string) => void,
): Promise<{ transport: Transport; faultAdmin?: FaultAdmin }> {
  const listen = options.peerListen ?? options.initialCluster[options.name];
  // RaftStore.open's checkMember has rejected a name outside initialCluster already
  if (listen === undefined) throw new Error(`raft: member ${options.name} is not in the initial cluster`);
  const faulty = withFaults(faults, (m) => driver.step(m), options.clock);
  const transport = faulty.wrap(await PeerTransport.start({
    clock: options.clock,
    random: options.random,
    self: options.name,
    listen,
    peers: options.initialCluster,
    tls: options.tls,
    onMessage: faulty.receive,
    onUnreachable: (peer) => driver.node.reportUnreachable(peer),
    log,
  }));
  if (options.faultAdminPort === undefined) return { transport };
  return { transport, faultAdmin: await startFaultAdmin(faults, options.faultAdminPort, '127.0.0.1', options.faultAdminClock) };
}

type StoreSide = Pick<RaftStoreStatus, 'applied' | 'snapshotIndex' | 'revision' | 'compactRevision' | 'pendingProposals' | 'metrics' | 'faultAdminPort'>;

/** the /raftz document from the core's status, the transport's counters and the store's side */
export function memberStatus(options: RaftStoreOptions, s: Status, t: TransportStats, store: StoreSide): RaftStoreStatus {
  const members: RaftMemberStatus[] = Object.entries(options.initialCluster)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([name, peerAddress]) => ({
      name,
      peerAddress,
      ...(name === options.name ? {} : { connected: t.connected[name] ?? false }),
      ...(s.progress[name] ? { match: s.progress[name].match } : {}),
    }));
  return {
    name: options.name,
    members,
    leader: s.leader,
    role: s.role,
    term: s.term,
    commit: s.commit,
    firstIndex: s.firstIndex,
    lastIndex: s.lastIndex,
    transport: t,
    ...store,
  };
}

export interface LiveRaftMetrics {
  term: number;
  commit: number;
  applied: number;
  isLeader: boolean;
  hasLeader: boolean;
  pending: number;
}

/** live numbers for RaftMetrics.register */
export function liveRaftMetrics(r: Raft, applied: number, pending: number): LiveRaftMetrics {
  return { term: r.term, commit: r.log.committed, applied, isLeader: r.role === 'leader', hasLeader: r.lead !== NONE, pending };
}
