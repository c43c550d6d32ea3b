// Types of the Raft consensus core (docs/raft.md).
//
// The core is a pure, deterministic state machine: it does no I/O, keeps no
// timers and draws no randomness of its own. The embedding application (the
// "host": later the gRPC transport + server integration) drives it:
//
//   inputs   tick(), step(message), propose(data), proposeConfChange(change),
//            transferLeadership(to), readIndex(context), campaign(),
//            compact(index, data), reportSnapshot(to, ok), reportUnreachable(to)
//   outputs  ready(): Ready | undefined, then advance(ready)
//
// The Ready/advance contract (the host MUST follow it, in this order):
//   1. persist `snapshot` (if any: it replaces the whole persisted log),
//      then `entries` (append; entries[0].index may be <= the last persisted
//      index, in which case every persisted entry from entries[0].index on is
//      overwritten), then `hardState` (if any). Durably (fsync) before step 2.
//      Exception: a Ready whose only change is hardState.commit need not be
//      synced, nor written before step 2 (commitIndex is volatile state,
//      Raft Figure 2), provided a commit index that is written is ordered
//      after the entries it covers (it never survives a crash that loses them).
//   2. send `messages` (only now: they may promise what step 1 persisted,
//      e.g. a vote or an append acknowledgement). Exception (thesis §10.2.1):
//      a leader's `append` messages may leave before step 1 completes when
//      the Ready changes neither term nor vote: they promise nothing about
//      this Ready's state (their commit index covers earlier Readies only),
//      and the commitment of this Ready's entries surfaces only in a later
//      Ready, i.e. after this persist.
//   3. apply `snapshot` to the state machine (if any), then `committedEntries`
//      in order; entries of type 'confChange' carry an encoded ConfChange
//      (decodeConfChange) the host may use to update its peer list. The core
//      itself applies the configuration change when advance() is called.
//   4. hand `readStates` to waiting readers: a read with `context` may be
//      served once the state machine has applied `index`.
//   5. call advance(ready). Only then may ready() be called again; tick/step/
//      propose calls may happen at any time in between.
//      While a Ready is being persisted the host may also send
//      takeMessagesNow() and apply takeCommittedNow() (entries committed and
//      durable here that no Ready handed out), after the committed entries
//      of the outstanding Ready that were already durable when it started.
// On restart the host rebuilds the node from what it persisted in step 1
// (PersistentState) and its state machine from the snapshot data; committed
// entries after the snapshot are handed out again.
//
// Messages are plain objects discriminated by `type`, with only numbers,
// strings, booleans, arrays, Uint8Array and nested plain objects, so they
// encode with msgpackr as they are. Node ids are non-empty strings.

export type NodeId = string;

/** "no node": no leader known / no vote cast */
export const NONE: NodeId = '';

export type EntryType = 'normal' | 'confChange';

export interface Entry {
  term: number;
  index: number;
  type: EntryType;
  /** opaque to the core (for the store: an encoded Command); for confChange: encodeConfChange(...) */
  data: Uint8Array;
}

/** Single-member membership change (Raft thesis §4.1; applied when committed and applied, as etcd does). */
export interface ConfChange {
  type: 'addNode' | 'removeNode';
  nodeId: NodeId;
}

/** The voting members of the cluster. */
export interface ConfState {
  voters: NodeId[];
}

export interface SnapshotMetadata {
  /** last log index the snapshot covers */
  index: number;
  /** term of the entry at `index` */
  term: number;
  /** membership as of `index` */
  confState: ConfState;
}

export interface Snapshot {
  metadata: SnapshotMetadata;
  /** state machine image, produced by the host (opaque to the core) */
  data: Uint8Array;
}

/** What must be durable before messages of the same Ready are sent. */
export interface HardState {
  term: number;
  /** candidate voted for in `term`, NONE if none */
  vote: NodeId;
  /** highest log index known committed */
  commit: number;
}

export type Role = 'follower' | 'preCandidate' | 'candidate' | 'leader';

/** Volatile state the host may display or route by (not persisted). */
export interface SoftState {
  leader: NodeId;
  role: Role;
}

/** Result of a ReadIndex request: serve the read once `index` is applied. */
export interface ReadState {
  index: number;
  context: string;
}

export interface Ready {
  softState?: SoftState;
  hardState?: HardState;
  /** entries to persist (append, overwriting from entries[0].index on) */
  entries: Entry[];
  /** snapshot received from the leader, to persist and apply */
  snapshot?: Snapshot;
  /** entries to apply to the state machine, in order */
  committedEntries: Entry[];
  /** every message of this Ready; those not in sendBeforePersist go only after persisting */
  messages: Message[];
  /**
   * The subset of `messages` that may leave before this Ready is persisted:
   * a leader's appends when the Ready moves neither term nor vote (Raft
   * thesis §10.2.1; etcd's messages-before vs. after the append). Votes and
   * every response promise persisted state and always wait.
   */
  sendBeforePersist: Message[];
  readStates: ReadState[];
}

/** What the host persisted, given back to the core on restart. */
export interface PersistentState {
  hardState: HardState;
  snapshot?: Snapshot;
  /** entries after the snapshot, contiguous */
  entries: Entry[];
}

// ---------------------------------------------------------------------------
// Messages. `term` is the sender's term; 0 marks a message forwarded to the
// leader on behalf of a client (propose, readIndex, transferLeader), which is
// not subject to term checks.

interface MessageBase {
  from: NodeId;
  to: NodeId;
  term: number;
}

/** AppendEntries (Raft §5.3); an empty `entries` still carries the commit index. */
export interface AppendMessage extends MessageBase {
  type: 'append';
  /** index of the entry preceding `entries` */
  index: number;
  /** term of the entry at `index` */
  logTerm: number;
  entries: Entry[];
  commit: number;
  /**
   * A commit notice whose acknowledgement would carry no news: to a follower
   * known to have every entry up to `index` (index = its known match), or
   * sent because an entry committed to a follower in replicate state whose
   * appends up to `index` are in flight (their acknowledgements carry the
   * match). An accepted one is not answered; a rejection always is. Absent
   * on the wire from older members.
   */
  noAck?: boolean;
}

export interface AppendResponseMessage extends MessageBase {
  type: 'appendResponse';
  /** accepted: last index now matching the leader; rejected: the rejected prev index */
  index: number;
  reject: boolean;
  /** on reject: a probe hint, the follower's largest index whose term is <= the leader's logTerm */
  rejectHint: number;
  /** on reject: the follower's term at rejectHint */
  logTerm: number;
}

export interface VoteMessage extends MessageBase {
  type: 'vote' | 'preVote';
  /** candidate's last log index and term (Raft §5.4.1 up-to-date check) */
  index: number;
  logTerm: number;
  /** set by a leadership transfer: voters disregard their leader lease */
  transfer: boolean;
}

export interface VoteResponseMessage extends MessageBase {
  type: 'voteResponse' | 'preVoteResponse';
  reject: boolean;
}

export interface HeartbeatMessage extends MessageBase {
  type: 'heartbeat';
  /** min(follower's match, leader's commit): safe for the follower to commit */
  commit: number;
  /** ReadIndex round this heartbeat confirms leadership for */
  context?: string;
}

export interface HeartbeatResponseMessage extends MessageBase {
  type: 'heartbeatResponse';
  context?: string;
}

export interface InstallSnapshotMessage extends MessageBase {
  type: 'installSnapshot';
  snapshot: Snapshot;
}

/** Leadership transfer: the target campaigns at once (thesis §3.10). */
export interface TimeoutNowMessage extends MessageBase {
  type: 'timeoutNow';
}

/** A proposal forwarded by a follower to its leader. */
export interface ProposeMessage extends MessageBase {
  type: 'propose';
  entries: Entry[];
  /**
   * The proposer's term when it proposed (RawNode stamps it): a leader appends
   * the entries only in that term, a follower forwards only its own proposals
   * of its current term. So an entry holding this proposal can only ever have
   * this term, and a proposer that applied an entry of a later term knows the
   * proposal was lost (docs/raft.md "Re-proposing lost proposals"). Absent
   * from older members: appended in any term, as before.
   */
  proposalTerm?: number;
}

/** A ReadIndex request forwarded by a follower to its leader. */
export interface ReadIndexMessage extends MessageBase {
  type: 'readIndex';
  context: string;
}

export interface ReadIndexResponseMessage extends MessageBase {
  type: 'readIndexResponse';
  index: number;
  context: string;
}

/** A leadership-transfer request forwarded by a follower to its leader. */
export interface TransferLeaderMessage extends MessageBase {
  type: 'transferLeader';
  transferee: NodeId;
}

export type Message =
  | AppendMessage
  | AppendResponseMessage
  | VoteMessage
  | VoteResponseMessage
  | HeartbeatMessage
  | HeartbeatResponseMessage
  | InstallSnapshotMessage
  | TimeoutNowMessage
  | ProposeMessage
  | ReadIndexMessage
  | ReadIndexResponseMessage
  | TransferLeaderMessage;

export type MessageType = Message['type'];

export interface RaftConfig {
  id: NodeId;
  /** ticks without hearing from a leader before a follower campaigns; the actual timeout is randomized in [electionTick, 2*electionTick) */
  electionTick: number;
  /** leader sends heartbeats every heartbeatTick ticks (< electionTick) */
  heartbeatTick: number;
  /** uniform random number in [0, 1): injected so that runs are reproducible */
  random: () => number;
  /** run the pre-vote phase before a real election (thesis §9.6) */
  preVote?: boolean;
  /** leader steps down without recent contact with a quorum; followers keep a leader lease (thesis §6.2, §9.6) */
  checkQuorum?: boolean;
  /** max bytes of entries in one append message (at least one entry is always sent) */
  maxSizePerMsg?: number;
  /** max append messages in flight to one follower in the replicate state */
  maxInflightMsgs?: number;
  /** max bytes of committed entries handed out in one Ready (at least one) */
  maxCommittedSizePerReady?: number;
  /**
   * Leader ticks after which a snapshot that was neither acknowledged nor
   * reported (reportSnapshot) is presumed lost and the follower is probed
   * again (default 5 * electionTick). A safety net: the transport should report.
   */
  snapshotTimeoutTick?: number;
  /** index the host's state machine has durably applied (on restart); defaults to the snapshot index */
  applied?: number;
}

export interface ProgressStatus {
  match: number;
  next: number;
  state: 'probe' | 'replicate' | 'snapshot';
}

export interface Status {
  id: NodeId;
  term: number;
  vote: NodeId;
  commit: number;
  applied: number;
  leader: NodeId;
  role: Role;
  lastIndex: number;
  firstIndex: number;
  voters: NodeId[];
  leadTransferee: NodeId;
  /** leader only */
  progress: Record<NodeId, ProgressStatus>;
}

/** The proposal was not accepted (no leader known, a leadership transfer is under way, or a config change is pending). */
export class ProposalDroppedError extends Error {
  constructor(reason: string) {
    super(`raft proposal dropped: ${reason}`);
    this.name = 'ProposalDroppedError';
  }
}

const textEncoder = new TextEncoder();
const textDecoder = new TextDecoder();

export function encodeConfChange(cc: ConfChange): Uint8Array {
  return textEncoder.encode(JSON.stringify({ type: cc.type, nodeId: cc.nodeId }));
}

export function decodeConfChange(data: Uint8Array): ConfChange {
  const v = JSON.parse(textDecoder.decode(data)) as { type?: unknown; nodeId?: unknown };
  if ((v.type !== 'addNode' && v.type !== 'removeNode') || typeof v.nodeId !== 'string' || v.nodeId === NONE) {
    throw new Error('malformed conf change entry');
  }
  return { type: v.type, nodeId: v.nodeId };
}
