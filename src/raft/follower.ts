// A follower's answers to its leader (Raft §5.3, §7): the consistency check
// on appends with a hint for fast backtracking, commit notices that need no
// answer, heartbeats (the commit index they carry) and installing a
// snapshot. Candidates that learn of a leader of their term land here too.

import { setConf } from './membership.js';
import type { RaftState } from './state.js';
import type { AppendMessage, HeartbeatMessage, HeartbeatResponseMessage, InstallSnapshotMessage, NodeId, Snapshot } from './types.js';

export function handleAppend(r: RaftState, m: AppendMessage): void {
  if (m.index < r.log.committed) {
    // already have (and committed) everything up to our commit index
    sendAppendResponse(r, m.from, r.log.committed);
    return;
  }
  const lastNew = r.log.maybeAppend(m.index, m.logTerm, m.commit, m.entries);
  if (lastNew !== undefined) {
    // an accepted commit notice the leader marked as needing no answer (AppendMessage.noAck)
    if (m.noAck === true && m.entries.length === 0) return;
    sendAppendResponse(r, m.from, lastNew);
    return;
  }
  // Consistency check failed (Raft §5.3): hint where our log could match.
  const hint = r.log.findConflictByTerm(Math.min(m.index, r.log.lastIndex()), m.logTerm);
  r.send({
    type: 'appendResponse',
    from: r.id,
    to: m.from,
    term: r.term,
    index: m.index,
    reject: true,
    rejectHint: hint,
    logTerm: r.log.term(hint) ?? 0,
  });
}

function sendAppendResponse(r: RaftState, to: NodeId, index: number): void {
  r.send({ type: 'appendResponse', from: r.id, to, term: r.term, index, reject: false, rejectHint: 0, logTerm: 0 });
}

export function handleHeartbeat(r: RaftState, m: HeartbeatMessage): void {
  r.log.commitTo(m.commit);
  const resp: HeartbeatResponseMessage = { type: 'heartbeatResponse', from: r.id, to: m.from, term: r.term };
  if (m.context !== undefined) resp.context = m.context;
  r.send(resp);
}

export function handleSnapshot(r: RaftState, m: InstallSnapshotMessage): void {
  if (restore(r, m.snapshot)) sendAppendResponse(r, m.from, r.log.lastIndex());
  else sendAppendResponse(r, m.from, r.log.committed);
}

/** Raft §7: install a leader's snapshot unless our log already covers it. */
function restore(r: RaftState, s: Snapshot): boolean {
  const { index, term } = s.metadata;
  if (index <= r.log.committed) return false;
  if (r.log.matchTerm(index, term)) {
    // our log has the snapshot's last entry: it is committed, keep the rest
    r.log.commitTo(index);
    return false;
  }
  r.log.restore(s);
  r.confHistory = [];
  setConf(r, s.metadata.confState.voters, index);
  return true;
}
