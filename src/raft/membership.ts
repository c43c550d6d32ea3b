// Membership (thesis §4.1): single-server changes that take effect when
// the host applies them, the progress map kept in step with the voters, and
// the history of configurations by log index that snapshots record.

import { becomeFollower } from './election.js';
import { maybeCommit } from './leader.js';
import { bcastAppend, sendAppend } from './replication.js';
import type { RaftState } from './state.js';
import { NONE, type ConfChange, type ConfState, type NodeId } from './types.js';

export function setConf(r: RaftState, voters: Iterable<NodeId>, index: number): void {
  r.voters = new Set(voters);
  const confState: ConfState = { voters: [...r.voters].sort() };
  r.confHistory.push({ index, confState });
  // keep the progress map in step with the configuration
  for (const id of [...r.prs.keys()]) if (!r.voters.has(id)) r.prs.delete(id);
  for (const id of r.voters) {
    if (!r.prs.has(id)) {
      const pr = r.newProgress(id);
      // a new member gets an election timeout before check-quorum counts it
      pr.recentActive = true;
      r.prs.set(id, pr);
    }
  }
}

/** Called when the host has applied the conf-change entry at `index`. */
export function applyConfChange(r: RaftState, cc: ConfChange, index: number): void {
  const voters = new Set(r.voters);
  if (cc.type === 'addNode') voters.add(cc.nodeId);
  else {
    // removing the last voter would leave a cluster that can never elect
    if (voters.size === 1 && voters.has(cc.nodeId)) return;
    voters.delete(cc.nodeId);
  }
  setConf(r, voters, index);
  if (r.role !== 'leader') return;
  if (cc.type === 'removeNode' && cc.nodeId === r.id) {
    // A removed leader steps down; first tell the others the commit index
    // so they apply the change too.
    bcastAppend(r);
    becomeFollower(r, r.term, NONE);
    return;
  }
  if (cc.type === 'removeNode' && r.leadTransferee === cc.nodeId) r.leadTransferee = NONE;
  // the quorum may have shrunk
  if (maybeCommit(r)) bcastAppend(r);
  else if (cc.type === 'addNode') sendAppend(r, cc.nodeId);
}

/** the configuration in force at log index `index` (for snapshots) */
export function confStateAt(r: RaftState, index: number): ConfState {
  let cs: ConfState = { voters: [] };
  for (const h of r.confHistory) if (h.index <= index) cs = h.confState;
  return cs;
}

/** forget configurations older than the one in force at `index` */
export function pruneConfHistory(r: RaftState, index: number): void {
  let keepFrom = 0;
  for (const [i, c] of r.confHistory.entries()) if (c.index <= index) keepFrom = i;
  r.confHistory = r.confHistory.slice(keepFrom);
}
