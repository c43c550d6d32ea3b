// The leader's side of ReadIndex (thesis §6.4): a read is answered with the
// commit index once a quorum has acknowledged a heartbeat round that carries
// its context (the pending requests are kept in read-only.ts). A leader that
// has not yet committed an entry of its term holds reads back, and a single
// voter answers at once.

import { bcastHeartbeat } from './replication.js';
import type { RaftState } from './state.js';
import type { NodeId, ReadIndexMessage } from './types.js';

function committedEntryInCurrentTerm(r: RaftState): boolean {
  return r.log.term(r.log.committed) === r.term;
}

export function leaderReadIndex(r: RaftState, m: ReadIndexMessage): void {
  if (r.voters.size === 1 && r.voters.has(r.id)) {
    respondReadIndex(r, m.from, r.log.committed, m.context);
    return;
  }
  // Until the leader commits an entry of its term, its commit index may be
  // behind what earlier leaders committed.
  if (!committedEntryInCurrentTerm(r)) {
    r.pendingReadIndexMessages.push(m);
    return;
  }
  if (!r.readOnly.add(r.log.committed, m.context, m.from)) return;
  r.readOnly.recvAck(r.id, m.context);
  bcastHeartbeat(r, m.context);
}

export function releasePendingReadIndex(r: RaftState): void {
  if (r.pendingReadIndexMessages.length === 0 || !committedEntryInCurrentTerm(r)) return;
  const pending = r.pendingReadIndexMessages;
  r.pendingReadIndexMessages = [];
  for (const m of pending) leaderReadIndex(r, m);
}

export function respondReadIndex(r: RaftState, to: NodeId, index: number, context: string): void {
  if (to === r.id) r.readStates.push({ index, context });
  else r.send({ type: 'readIndexResponse', from: r.id, to, term: r.term, index, context });
}
