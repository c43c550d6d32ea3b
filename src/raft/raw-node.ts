// The host-facing wrapper of the Raft core: turns the protocol state machine
// (raft.ts) into the Ready/advance interface documented in types.ts.

import { entrySize } from './log.js';
import { Raft } from './raft.js';
import {
  NONE,
  ProposalDroppedError,
  type ConfChange,
  type Entry,
  type HardState,
  type Message,
  type MessageType,
  type NodeId,
  type PersistentState,
  type ProgressStatus,
  type RaftConfig,
  type Ready,
  type Snapshot,
  type SoftState,
  type Status,
  decodeConfChange,
  encodeConfChange,
} from './types.js';

/**
 * Messages that promise nothing about what this Ready persists, so they may
 * leave while it is being written (Ready.sendBeforePersist), when the Ready
 * moves neither term nor vote:
 *   - a leader's appends and heartbeats (thesis §10.2.1), as long as the
 *     commit index they carry covers only entries already durable on the
 *     leader (mayLeaveEarly);
 *   - a follower's forwarded proposals and ReadIndex requests (requests; the
 *     leader decides), and its heartbeat acknowledgements (they confirm the
 *     leader's term, which this Ready does not change; the commit index they
 *     follow is at most the follower's acknowledged match);
 *   - a leader's ReadIndex answers (an index already committed).
 * Waiting for the fsync of an unrelated batch would put every forwarded write
 * and every consistent read behind it (head-of-line blocking, docs/raft.md
 * "Messages before the fsync"). Votes, append acknowledgements and snapshots
 * promise persisted state and always wait.
 */
const EARLY_TYPES: ReadonlySet<MessageType> = new Set<MessageType>(['append', 'heartbeat', 'heartbeatResponse', 'propose', 'readIndex', 'readIndexResponse']);

/**
 * The subset of EARLY_TYPES that may leave even between Readies (while the
 * host persists one, RawNode.takeMessagesNow): requests and answers that
 * carry no log entries, so their content cannot depend on anything being
 * persisted, and a leader's heartbeats, whose commit index is then capped
 * at the leader's durable log (mayLeaveEarly). Heartbeats among them let a
 * ReadIndex round (a heartbeat carrying its context) run while the leader
 * fsyncs a batch of writes, instead of after it (docs/raft.md "Heartbeats
 * while the leader fsyncs"). Appends wait for the next Ready: sending them
 * here was measured to add gRPC frames without shortening a write (the
 * leader's own fsync of the next batch bounds it either way).
 */
const OUT_OF_BAND_TYPES: ReadonlySet<MessageType> = new Set<MessageType>(['heartbeat', 'heartbeatResponse', 'propose', 'readIndex', 'readIndexResponse']);

/**
 * Whether a message may leave before the leader's unpersisted entries are
 * durable: it must not tell anyone that such an entry is committed. Since the
 * commit index counts durable copies only (Raft.persisted) this is no longer
 * what keeps a follower from applying an entry durable on fewer than a
 * majority; it is kept as a second line (a commit index the leader's own disk
 * does not cover yet waits for the next Ready, as the notices do anyway).
 * `stable` is the last index the host has persisted.
 * (Within a Ready this holds by construction — acknowledgements of entries
 * come only after the Ready that sent them — and is checked anyway.)
 */
function mayLeaveEarly(m: Message, stable: number): boolean {
  if (m.type === 'append' || m.type === 'heartbeat') return m.commit <= stable;
  return true;
}

const EMPTY_STATE: PersistentState = { hardState: { term: 0, vote: NONE, commit: 0 }, entries: [] };

function sameHardState(a: HardState, b: HardState): boolean {
  return a.term === b.term && a.vote === b.vote && a.commit === b.commit;
}

export class RawNode {
  /** the protocol state machine; exposed read-only for diagnostics and tests */
  readonly raft: Raft;
  private prevSoft: SoftState;
  private prevHard: HardState;
  /** term and vote as last persisted (advance): messages leave out of band only in that term */
  private durableHard: HardState;
  private outstanding: Ready | undefined;
  private readonly maxCommittedSize: number;

  /**
   * A node restarted from what its host persisted, or (with no state) a
   * brand-new node that joins an existing cluster: it knows no configuration
   * and waits to be contacted by a leader.
   */
  constructor(cfg: RaftConfig, state: PersistentState = EMPTY_STATE) {
    this.raft = new Raft(cfg, state);
    this.prevSoft = this.raft.softState();
    this.prevHard = state.hardState;
    this.durableHard = state.hardState;
    this.maxCommittedSize = cfg.maxCommittedSizePerReady ?? Infinity;
  }

  /**
   * A brand-new node of a brand-new cluster. The initial membership is
   * written as conf-change entries 1..n of term 1 (as etcd does) so that nodes
   * added later learn it from the log like any other change; the first Ready
   * persists them.
   */
  static bootstrap(cfg: RaftConfig, voters: NodeId[]): RawNode {
    if (voters.length === 0) throw new Error('raft: bootstrap needs at least one voter');
    const node = new RawNode(cfg);
    const r = node.raft;
    if (r.log.lastIndex() !== 0) throw new Error('raft: bootstrap of a non-empty node');
    const ents: Entry[] = voters.map((id, i) => ({
      term: 1,
      index: i + 1,
      type: 'confChange',
      data: encodeConfChange({ type: 'addNode', nodeId: id }),
    }));
    r.becomeFollower(1, NONE);
    r.log.append(ents);
    r.log.commitTo(ents.length);
    // The configuration takes effect now; the entries are still handed to
    // the host as committed entries (re-applying an addNode of a member is a
    // no-op).
    for (const e of ents) r.applyConfChange(decodeConfChange(e.data), e.index);
    return node;
  }

  // ---------------------------------------------------------------- inputs

  /** one logical clock tick (the host calls it every tick interval) */
  tick(): void {
    this.raft.tick();
  }

  /** start an election now (tests, or an operator forcing one) */
  campaign(): void {
    this.raft.hup('election');
  }

  /** a message from a peer */
  step(m: Message): void {
    if (m.to !== this.raft.id) return;
    try {
      this.raft.step(m);
    } catch (err) {
      // a forwarded proposal that cannot be accepted is dropped (the
      // proposer times out and retries, as with a lost message)
      if (err instanceof ProposalDroppedError) return;
      throw err;
    }
  }

  /**
   * Propose `data` for the log. Throws ProposalDroppedError when it cannot be
   * accepted; acceptance is not commitment. Returns the proposal's term: an
   * entry holding it can only have that term, so once the host applied an
   * entry of a later term without it, it was lost and may be proposed again
   * (docs/raft.md "Re-proposing lost proposals").
   */
  propose(data: Uint8Array): number {
    return this.proposeEntries([{ term: 0, index: 0, type: 'normal', data }]);
  }

  /**
   * Propose several entries at once (group commit: one append per follower
   * instead of one per entry). All or none are accepted: throws
   * ProposalDroppedError like propose(), and returns their term like it.
   */
  proposeBatch(data: Uint8Array[]): number {
    if (data.length === 0) return this.raft.term;
    return this.proposeEntries(data.map((d) => ({ term: 0, index: 0, type: 'normal', data: d })));
  }

  /** Propose a single-member membership change; at most one may be pending. */
  proposeConfChange(cc: ConfChange): void {
    this.proposeEntries([{ term: 0, index: 0, type: 'confChange', data: encodeConfChange(cc) }]);
  }

  private proposeEntries(entries: Entry[]): number {
    const r = this.raft;
    const term = r.term;
    r.step({ type: 'propose', from: r.id, to: r.id, term: 0, entries, proposalTerm: term });
    return term;
  }

  /** ask the leader (directly or via this follower) to hand leadership to `to` */
  transferLeadership(to: NodeId): void {
    const r = this.raft;
    r.step({ type: 'transferLeader', from: r.id, to: r.id, term: 0, transferee: to });
  }

  /** Linearizable read: a ReadState with this context appears in a later Ready (or never, if leadership is lost: retry). */
  readIndex(context: string): void {
    const r = this.raft;
    r.step({ type: 'readIndex', from: r.id, to: r.id, term: 0, context });
  }

  /**
   * The host's state machine has a snapshot at `index` (<= applied) whose
   * image is `data`: drop the log up to it. Returns the snapshot, which the
   * host must persist before it drops its own copy of those entries.
   */
  compact(index: number, data: Uint8Array): Snapshot {
    const r = this.raft;
    const term = r.log.term(index);
    // not beyond this node's disk: a leader may have applied entries it has not persisted yet (takeCommittedNow)
    if (term === undefined || index <= r.log.snapIndex || index >= r.log.unstableFrom) throw new Error(`raft: cannot compact at ${index}`);
    const snap: Snapshot = { metadata: { index, term, confState: r.confStateAt(index) }, data };
    r.log.compact(snap);
    r.pruneConfHistory(index);
    return snap;
  }

  reportSnapshot(to: NodeId, ok: boolean): void {
    this.raft.reportSnapshot(to, ok);
  }

  reportUnreachable(to: NodeId): void {
    this.raft.reportUnreachable(to);
  }

  // ---------------------------------------------------------------- outputs

  hasReady(): boolean {
    const r = this.raft;
    if (this.outstanding) return false;
    const soft = r.softState();
    return (
      soft.leader !== this.prevSoft.leader ||
      soft.role !== this.prevSoft.role ||
      !sameHardState(r.hardState(), this.prevHard) ||
      r.log.hasUnstable() ||
      r.log.pendingSnapshot !== undefined ||
      r.msgs.length > 0 ||
      r.readStates.length > 0 ||
      r.log.hasNextCommitted()
    );
  }

  /** What to persist, send and apply now (types.ts: the Ready/advance contract). */
  ready(): Ready | undefined {
    if (this.outstanding) throw new Error('raft: ready() called again before advance()');
    if (!this.hasReady()) return undefined;
    const r = this.raft;
    const rd: Ready = {
      entries: r.log.unstableEntries(),
      committedEntries: r.log.nextCommitted(this.maxCommittedSize),
      messages: r.msgs,
      sendBeforePersist: [],
      readStates: r.readStates,
    };
    // A leader's appends promise nothing about this Ready's state (see
    // sendBeforePersist), unless the Ready also changes term or vote: those
    // must be on disk before any message of the new term leaves.
    const hardBefore = this.prevHard;
    r.msgs = [];
    r.readStates = [];
    const soft = r.softState();
    if (soft.leader !== this.prevSoft.leader || soft.role !== this.prevSoft.role) {
      rd.softState = soft;
      this.prevSoft = soft;
    }
    const hard = r.hardState();
    if (!sameHardState(hard, this.prevHard)) {
      rd.hardState = hard;
      this.prevHard = hard;
    }
    if (hard.term === hardBefore.term && hard.vote === hardBefore.vote) {
      // this Ready's entries are not durable yet: unstableFrom - 1 is the last persisted index
      const stable = r.log.unstableFrom - 1;
      rd.sendBeforePersist = rd.messages.filter((m) => EARLY_TYPES.has(m.type) && mayLeaveEarly(m, stable));
    }
    if (r.log.pendingSnapshot) rd.snapshot = r.log.pendingSnapshot;
    this.outstanding = rd;
    return rd;
  }

  /**
   * Takes the pending messages that may be sent at once, outside the Ready
   * cycle (OUT_OF_BAND_TYPES): forwarded proposals and ReadIndex requests,
   * ReadIndex answers, heartbeats and their acknowledgements, while the host
   * is persisting a Ready — so a consistent read or a forwarded write does
   * not wait for an unrelated fsync. Only while the term and vote are the
   * persisted ones (a message of a new term waits for that term's Ready); a
   * heartbeat's commit index is capped at the durable log (mayLeaveEarly).
   */
  takeMessagesNow(): Message[] {
    const r = this.raft;
    if (r.msgs.length === 0) return [];
    const hard = r.hardState();
    if (hard.term !== this.durableHard.term || hard.vote !== this.durableHard.vote) return [];
    if (hard.term !== this.prevHard.term || hard.vote !== this.prevHard.vote) return [];
    // entries of the Ready being persisted are still unstable until advance()
    const stable = r.log.unstableFrom - 1;
    const now: Message[] = [];
    const keep: Message[] = [];
    for (const m of r.msgs) {
      if (!OUT_OF_BAND_TYPES.has(m.type)) keep.push(m);
      // a heartbeat's commit index is a hint: cap it rather than hold a ReadIndex round back
      else if (m.type === 'heartbeat' && !mayLeaveEarly(m, stable)) now.push({ ...m, commit: stable });
      else now.push(m);
    }
    if (now.length > 0) r.msgs = keep;
    return now;
  }

  /**
   * Committed entries this node already has on disk and no Ready handed out,
   * while the host persists a Ready: typically a leader's earlier batch whose
   * acknowledgements arrived during the fsync of the next one. Without this
   * they wait for that fsync and the next Ready (one more disk write per
   * write at many in flight; docs/raft.md "Applying while the next batch is
   * written"). The host applies them at once, after the outstanding Ready's
   * own already-durable committed entries, which it applies when the write
   * starts. On a leader every committed entry (its commit index counts
   * durable copies only, so a batch both followers acknowledged applies
   * before the leader's own fsync ends: thesis §10.2.1, docs/raft.md
   * "Committing on a quorum of durable copies"); elsewhere only entries up to
   * this node's durable log (unstableFrom - 1), as a Ready would; nothing while the outstanding Ready installs a snapshot or
   * applies a conf change, and nothing from a conf change on (the core takes
   * it into effect in advance()). Counted as applied now: a later Ready does
   * not hand them out again.
   */
  takeCommittedNow(): Entry[] {
    const rd = this.outstanding;
    if (!rd || rd.snapshot || rd.committedEntries.some((e) => e.type === 'confChange')) return [];
    const log = this.raft.log;
    const handedOut = rd.committedEntries[rd.committedEntries.length - 1]?.index ?? 0;
    const lo = Math.max(log.applied + 1, handedOut + 1, log.firstIndex());
    // a leader's commit index counts durable copies only (Raft.persisted), so what it committed is
    // on a quorum's disks even before its own write ends; elsewhere only what is on this disk
    const hi = this.raft.role === 'leader' ? log.committed : Math.min(log.committed, log.unstableFrom - 1);
    if (hi < lo) return [];
    const ents = log.slice(lo, hi + 1, this.maxCommittedSize) ?? [];
    let n = 0;
    while (n < ents.length && ents[n]!.type === 'normal') n++;
    const out = n < ents.length ? ents.slice(0, n) : ents;
    if (n > 0) log.appliedTo(out[n - 1]!.index);
    return out;
  }

  /** The host has persisted, sent and applied everything in `rd`. */
  advance(rd: Ready): void {
    if (rd !== this.outstanding) throw new Error('raft: advance() with a Ready that is not the outstanding one');
    this.outstanding = undefined;
    if (rd.hardState) this.durableHard = rd.hardState;
    const r = this.raft;
    const log = r.log;
    if (rd.snapshot) {
      if (log.pendingSnapshot === rd.snapshot) log.pendingSnapshot = undefined;
      if (rd.snapshot.metadata.index > log.applied) log.applied = rd.snapshot.metadata.index;
    }
    const last = rd.entries[rd.entries.length - 1];
    if (last) log.stableTo(last.index, last.term);
    r.persisted();
    for (const e of rd.committedEntries) {
      log.appliedTo(e.index);
      if (e.type === 'confChange') r.applyConfChange(decodeConfChange(e.data), e.index);
    }
  }

  status(): Status {
    const r = this.raft;
    const progress: Record<NodeId, ProgressStatus> = {};
    if (r.role === 'leader') {
      for (const [id, pr] of r.prs) progress[id] = { match: pr.match, next: pr.next, state: pr.state };
    }
    return {
      id: r.id,
      term: r.term,
      vote: r.vote,
      commit: r.log.committed,
      applied: r.log.applied,
      leader: r.lead,
      role: r.role,
      lastIndex: r.log.lastIndex(),
      firstIndex: r.log.firstIndex(),
      voters: [...r.voters].sort(),
      leadTransferee: r.leadTransferee,
      progress,
    };
  }
}

export { entrySize };
