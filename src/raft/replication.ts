// What the leader sends its followers (Raft §5.3, §7): new entries stamped
// with its term, appends pipelined on a follower in replicate state and one
// probe at a time otherwise (progress.ts), a snapshot when the entries were
// compacted away, commit notices that need no answer, heartbeats and the
// transfer's timeoutNow. How the leader reacts to the answers is leader.ts.

import type { RaftState } from './state.js';
import type { AppendMessage, Entry, HeartbeatMessage, NodeId } from './types.js';

/** Assign term and index to new entries and append them to the leader's log. */
export function appendEntries(r: RaftState, ents: Entry[]): void {
  let li = r.log.lastIndex();
  const stamped = ents.map((e) => ({ term: r.term, index: ++li, type: e.type, data: e.data }));
  r.log.append(stamped);
  // not counted in the leader's own match until persisted (persisted())
}

/**
 * Send the entries a follower is missing, or a snapshot when they were
 * compacted away. Returns whether a message was sent.
 */
export function sendAppend(r: RaftState, to: NodeId, sendIfEmpty = true, commitNotice = false): boolean {
  const pr = r.prs.get(to);
  if (!pr || to === r.id || pr.isPaused()) return false;
  const prevIndex = pr.next - 1;
  const prevTerm = r.log.term(prevIndex);
  const ents = prevTerm === undefined ? undefined : r.log.slice(pr.next, Infinity, r.maxSizePerMsg);
  if (prevTerm === undefined || ents === undefined) {
    // the follower needs entries that are only in the snapshot (Raft §7)
    if (!pr.recentActive) return false;
    const snap = r.log.snapshot;
    if (!snap) throw new Error('raft: entries compacted but no snapshot kept');
    r.send({ type: 'installSnapshot', from: r.id, to, term: r.term, snapshot: snap });
    pr.becomeSnapshot(snap.metadata.index);
    return true;
  }
  if (ents.length === 0 && !sendIfEmpty) return false;
  const m: AppendMessage = { type: 'append', from: r.id, to, term: r.term, index: prevIndex, logTerm: prevTerm, entries: ents, commit: r.log.committed };
  // a pure commit notice to a follower that acknowledged everything sent to it: its
  // acknowledgement would only repeat its match (one message and frame less per
  // write each way at one write in flight; docs/raft.md "Commit notices"). Sent because
  // an entry committed, it needs no answer from a follower in replicate state with
  // entries still in flight either: the acknowledgement of those appends carries the same
  // match. If that one is lost, the heartbeat path's append (not a commit notice) is
  // answered, as before.
  if (ents.length === 0 && pr.state === 'replicate' && (prevIndex === pr.match || commitNotice)) m.noAck = true;
  r.send(m);
  if (pr.state === 'replicate') {
    const last = ents[ents.length - 1]?.index;
    if (last !== undefined) {
      // pipelining: assume success and move on
      pr.next = last + 1;
      pr.inflights.add(last);
    }
  } else if (pr.state === 'probe') {
    pr.probeSent = true;
  }
  return true;
}

/** `commitNotice`: sent because the commit index moved (sendAppend's noAck rule) */
export function bcastAppend(r: RaftState, commitNotice = false): void {
  for (const id of sortedPeers(r)) sendAppend(r, id, true, commitNotice);
}

export function bcastHeartbeat(r: RaftState, context: string | undefined): void {
  for (const id of sortedPeers(r)) {
    const pr = r.prs.get(id)!;
    // never tell a follower to commit beyond what it is known to have
    const m: HeartbeatMessage = { type: 'heartbeat', from: r.id, to: id, term: r.term, commit: Math.min(pr.match, r.log.committed) };
    if (context !== undefined) m.context = context;
    r.send(m);
  }
}

function sortedPeers(r: RaftState): NodeId[] {
  return [...r.prs.keys()].filter((id) => id !== r.id).sort();
}

export function sendTimeoutNow(r: RaftState, to: NodeId): void {
  r.send({ type: 'timeoutNow', from: r.id, to, term: r.term });
}
