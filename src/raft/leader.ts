// The leader's handling of what reaches it (Raft §5.3, thesis §10.2.1):
// proposals, acknowledgements of appends and heartbeats (progress states,
// fast backtracking, keeping the pipeline full), the commit index over a
// quorum of durable copies, leadership transfer (thesis §3.10), check-quorum
// on the heartbeat tick (thesis §6.2) and the transport's reports. What it
// sends is replication.ts.

import { becomeFollower } from './election.js';
import type { Progress } from './progress.js';
import { committedIndex, hasQuorum } from './quorum.js';
import { releasePendingReadIndex, respondReadIndex } from './read-index.js';
import { appendEntries, bcastAppend, bcastHeartbeat, sendAppend, sendTimeoutNow } from './replication.js';
import type { RaftState } from './state.js';
import { NONE, ProposalDroppedError, type AppendResponseMessage, type Entry, type HeartbeatResponseMessage, type NodeId } from './types.js';

export function tickHeartbeat(r: RaftState): void {
  r.heartbeatElapsed++;
  r.electionElapsed++;
  for (const pr of r.prs.values()) {
    // a snapshot neither acknowledged nor reported is presumed lost
    if (pr.state === 'snapshot' && ++pr.snapshotElapsed >= r.snapshotTimeoutTick) pr.becomeProbe();
  }
  if (r.electionElapsed >= r.electionTick) {
    r.electionElapsed = 0;
    if (r.checkQuorum) {
      // thesis §6.2: a leader that has not heard from a quorum within an
      // election timeout steps down.
      const active = hasQuorum(r.voters, (id) => r.prs.get(id)?.recentActive ?? false);
      for (const [id, pr] of r.prs) if (id !== r.id) pr.recentActive = false;
      if (!active) {
        becomeFollower(r, r.term, NONE);
        return;
      }
    }
    // a transfer that did not finish within an election timeout is abandoned
    if (r.leadTransferee !== NONE) r.leadTransferee = NONE;
  }
  if (r.role !== 'leader') return;
  if (r.heartbeatElapsed >= r.heartbeatTick) {
    r.heartbeatElapsed = 0;
    bcastHeartbeat(r, undefined);
  }
}

/**
 * The host persisted the log up to `log.unstableFrom - 1` (RawNode.advance).
 * The commit index is computed over durable copies only (thesis §10.2.1):
 * the leader's own copy counts from here, not from when it was appended,
 * so an entry the followers made durable on a quorum commits, and may be
 * applied, before the leader's own fsync ends (docs/raft.md "Committing on
 * a quorum of durable copies").
 */
export function persisted(r: RaftState): void {
  if (r.role !== 'leader') return;
  if (r.prs.get(r.id)?.maybeUpdate(r.log.unstableFrom - 1) && maybeCommit(r)) bcastAppend(r, true);
}

export function leaderPropose(r: RaftState, entries: Entry[]): void {
  if (!r.prs.has(r.id)) throw new ProposalDroppedError('leader is not a member');
  if (r.leadTransferee !== NONE) throw new ProposalDroppedError('leadership transfer in progress');
  const cc = entries.filter((e) => e.type === 'confChange');
  if (cc.length > 0) {
    // thesis §4.1: one membership change at a time
    if (cc.length > 1 || r.pendingConfIndex > r.log.applied) {
      throw new ProposalDroppedError('a configuration change is already pending');
    }
  }
  appendEntries(r, entries);
  if (cc.length > 0) r.pendingConfIndex = r.log.lastIndex();
  bcastAppend(r);
}

export function maybeCommit(r: RaftState): boolean {
  const idx = committedIndex(r.voters, (id) => r.prs.get(id)?.match ?? 0);
  if (!r.log.maybeCommit(idx, r.term)) return false;
  releasePendingReadIndex(r);
  return true;
}

export function handleAppendResponse(r: RaftState, m: AppendResponseMessage, pr: Progress): void {
  pr.recentActive = true;
  if (m.reject) {
    // fast backtracking: skip every entry of a term the follower cannot match
    const nextProbe = m.logTerm > 0 ? r.log.findConflictByTerm(m.rejectHint, m.logTerm) : m.rejectHint;
    if (pr.maybeDecrTo(m.index, nextProbe)) {
      if (pr.state === 'replicate') pr.becomeProbe();
      sendAppend(r, m.from);
    }
    return;
  }
  const wasPaused = pr.isPaused();
  if (!pr.maybeUpdate(m.index)) return;
  if (pr.state === 'probe') pr.becomeReplicate();
  else if (pr.state === 'snapshot' && pr.match >= pr.pendingSnapshot) {
    pr.becomeProbe();
    pr.becomeReplicate();
  } else if (pr.state === 'replicate') pr.inflights.freeLE(m.index);

  if (maybeCommit(r)) bcastAppend(r, true);
  else if (wasPaused) sendAppend(r, m.from);
  // keep the pipeline full
  while (sendAppend(r, m.from, false)) {
    /* send more batches */
  }
  if (m.from === r.leadTransferee && pr.match === r.log.lastIndex()) sendTimeoutNow(r, m.from);
}

export function handleHeartbeatResponse(r: RaftState, m: HeartbeatResponseMessage, pr: Progress): void {
  pr.recentActive = true;
  pr.probeSent = false;
  // a heartbeat round trip means the follower is reachable: let one more append through
  if (pr.state === 'replicate' && pr.inflights.full()) pr.inflights.freeFirstOne();
  if (pr.match < r.log.lastIndex()) sendAppend(r, m.from);
  if (m.context === undefined) return;
  const acks = r.readOnly.recvAck(m.from, m.context);
  if (!acks || !hasQuorum(r.voters, (id) => acks.has(id))) return;
  for (const rs of r.readOnly.advance(m.context)) respondReadIndex(r, rs.from, rs.index, rs.context);
}

export function leaderTransfer(r: RaftState, to: NodeId): void {
  if (!r.voters.has(to) || to === r.id) return;
  if (r.leadTransferee !== NONE) {
    if (r.leadTransferee === to) return;
    r.leadTransferee = NONE;
  }
  // the transfer must finish within an election timeout (thesis §3.10)
  r.electionElapsed = 0;
  r.leadTransferee = to;
  const pr = r.prs.get(to)!;
  if (pr.match === r.log.lastIndex()) sendTimeoutNow(r, to);
  else sendAppend(r, to);
}

/** the transport finished (ok) or failed to deliver a snapshot to `to` */
export function reportSnapshot(r: RaftState, to: NodeId, ok: boolean): void {
  if (r.role !== 'leader') return;
  const pr = r.prs.get(to);
  if (!pr || pr.state !== 'snapshot') return;
  // On success wait for the follower's response; either way leave the
  // snapshot state so that the next heartbeat response resumes probing.
  if (!ok) pr.pendingSnapshot = 0;
  pr.becomeProbe();
  pr.probeSent = true;
}

/** the transport could not reach `to`: stop pipelining to it */
export function reportUnreachable(r: RaftState, to: NodeId): void {
  if (r.role !== 'leader') return;
  const pr = r.prs.get(to);
  if (pr && pr.state === 'replicate') pr.becomeProbe();
}
