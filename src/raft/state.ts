// The state of one Raft node, shared by the modules of the protocol
// (election.ts, replication.ts, leader.ts, read-index.ts, follower.ts,
// membership.ts) and driven by Raft (raft.ts). It holds fields and the few
// accessors every module needs; the rules that change the fields live in
// those modules. Fields are public for them: only the core writes them
// (RawNode exposes the Raft read-only to its host).

import { RaftLog } from './log.js';
import { Progress } from './progress.js';
import { ReadOnly } from './read-only.js';
import {
  NONE,
  type ConfState,
  type HardState,
  type Message,
  type NodeId,
  type PersistentState,
  type RaftConfig,
  type ReadIndexMessage,
  type ReadState,
  type Role,
  type SoftState,
} from './types.js';

const DEFAULT_MAX_SIZE_PER_MSG = 1024 * 1024;
const DEFAULT_MAX_INFLIGHT = 256;

export class RaftState {
  readonly id: NodeId;
  term = 0;
  vote: NodeId = NONE;
  lead: NodeId = NONE;
  role: Role = 'follower';
  readonly log: RaftLog;

  /** current configuration (as of the last applied conf change) */
  voters = new Set<NodeId>();
  /** replication progress of every voter (maintained on the leader) */
  prs = new Map<NodeId, Progress>();
  votes = new Map<NodeId, boolean>();

  /** outgoing messages, drained by RawNode.ready() */
  msgs: Message[] = [];
  /** ReadIndex results for requests made on this node, drained by ready() */
  readStates: ReadState[] = [];

  electionElapsed = 0;
  heartbeatElapsed = 0;
  randomizedElectionTimeout = 0;

  leadTransferee: NodeId = NONE;
  /** the leader may not propose a conf change until it has applied this index (one at a time) */
  pendingConfIndex = 0;
  readonly readOnly = new ReadOnly();
  /** ReadIndex requests that arrived before the leader committed an entry of its term */
  pendingReadIndexMessages: ReadIndexMessage[] = [];
  /** configurations by the index at which they took effect (for snapshots at older indexes) */
  confHistory: { index: number; confState: ConfState }[] = [];

  readonly electionTick: number;
  readonly heartbeatTick: number;
  readonly preVote: boolean;
  readonly checkQuorum: boolean;
  readonly maxSizePerMsg: number;
  readonly maxInflight: number;
  readonly snapshotTimeoutTick: number;
  readonly random: () => number;

  constructor(cfg: RaftConfig, state: PersistentState) {
    if (cfg.id === NONE) throw new Error('raft: node id must not be empty');
    if (cfg.heartbeatTick <= 0 || cfg.electionTick <= cfg.heartbeatTick) {
      throw new Error('raft: need 0 < heartbeatTick < electionTick');
    }
    this.id = cfg.id;
    this.electionTick = cfg.electionTick;
    this.heartbeatTick = cfg.heartbeatTick;
    this.preVote = cfg.preVote ?? false;
    this.checkQuorum = cfg.checkQuorum ?? false;
    this.maxSizePerMsg = cfg.maxSizePerMsg ?? DEFAULT_MAX_SIZE_PER_MSG;
    this.maxInflight = cfg.maxInflightMsgs ?? DEFAULT_MAX_INFLIGHT;
    this.snapshotTimeoutTick = cfg.snapshotTimeoutTick ?? 5 * cfg.electionTick;
    this.random = cfg.random;

    this.log = new RaftLog(state.snapshot, state.entries, state.hardState.commit, cfg.applied);
  }

  hardState(): HardState {
    return { term: this.term, vote: this.vote, commit: this.log.committed };
  }

  softState(): SoftState {
    return { leader: this.lead, role: this.role };
  }

  /** a node campaigns only if it is a voter of its current configuration */
  promotable(): boolean {
    return this.voters.has(this.id);
  }

  send(m: Message): void {
    this.msgs.push(m);
  }

  newProgress(id: NodeId): Progress {
    const pr = new Progress(this.log.lastIndex() + 1, this.maxInflight);
    if (id === this.id) {
      // the leader's own copy counts towards commitment once durable (persisted())
      pr.match = this.log.unstableFrom - 1;
      pr.recentActive = true;
    }
    return pr;
  }
}
