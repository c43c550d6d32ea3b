// Role transitions and leader election (thesis §3.4, §9.6; Raft §5.2):
// follower, pre-candidate, candidate and leader, the randomized election
// timeout, campaigns with or without the pre-vote phase, and the vote rules
// on both sides of a request.

import { voteResult, type VoteResult } from './quorum.js';
import { appendEntries, bcastAppend } from './replication.js';
import type { RaftState } from './state.js';
import { NONE, type NodeId, type VoteMessage, type VoteResponseMessage } from './types.js';

export type CampaignKind = 'preElection' | 'election' | 'transfer';

function resetRandomizedElectionTimeout(r: RaftState): void {
  // thesis §3.4: randomized in [electionTick, 2*electionTick)
  r.randomizedElectionTimeout = r.electionTick + Math.floor(r.random() * r.electionTick);
}

function reset(r: RaftState, term: number): void {
  if (r.term !== term) {
    r.term = term;
    r.vote = NONE;
  }
  r.lead = NONE;
  r.electionElapsed = 0;
  r.heartbeatElapsed = 0;
  resetRandomizedElectionTimeout(r);
  r.leadTransferee = NONE;
  r.votes.clear();
  r.prs = new Map();
  for (const id of r.voters) r.prs.set(id, r.newProgress(id));
  r.pendingConfIndex = 0;
  r.readOnly.reset();
  r.pendingReadIndexMessages = [];
}

export function becomeFollower(r: RaftState, term: number, lead: NodeId): void {
  reset(r, term);
  r.lead = lead;
  r.role = 'follower';
}

function becomePreCandidate(r: RaftState): void {
  if (r.role === 'leader') throw new Error('raft: leader cannot become pre-candidate');
  // thesis §9.6: the pre-vote phase changes neither term nor vote
  r.votes.clear();
  r.lead = NONE;
  r.role = 'preCandidate';
  resetRandomizedElectionTimeout(r);
}

function becomeCandidate(r: RaftState): void {
  if (r.role === 'leader') throw new Error('raft: leader cannot become candidate');
  reset(r, r.term + 1);
  r.vote = r.id;
  r.role = 'candidate';
}

function becomeLeader(r: RaftState): void {
  if (r.role === 'follower') throw new Error('raft: follower cannot become leader');
  reset(r, r.term);
  r.lead = r.id;
  r.role = 'leader';
  r.prs.get(r.id)?.becomeReplicate();
  // thesis §6.4 / Raft §5.4.2: an empty entry of the new term lets the
  // leader learn and advance the commit index.
  appendEntries(r, [{ term: 0, index: 0, type: 'normal', data: new Uint8Array(0) }]);
  // No conf change until everything up to and including that entry is
  // applied: conf changes in the uncommitted tail may still be pending, and
  // a leader must commit an entry of its own term before it changes the
  // membership (the fix to single-server changes from the raft-dev list,
  // 2015; etcd only waits for the tail before the empty entry).
  r.pendingConfIndex = r.log.lastIndex();
}

export function tickElection(r: RaftState): void {
  r.electionElapsed++;
  if (r.promotable() && r.electionElapsed >= r.randomizedElectionTimeout) {
    r.electionElapsed = 0;
    hup(r, r.preVote ? 'preElection' : 'election');
  }
}

/** start an election (the local "hup" event) */
export function hup(r: RaftState, kind: CampaignKind): void {
  if (r.role === 'leader') return;
  if (!r.promotable()) return;
  // A conf change committed but not yet applied would change who votes:
  // wait until it is applied (etcd does the same).
  for (let i = Math.max(r.log.applied + 1, r.log.firstIndex()); i <= r.log.committed; i++) {
    if (r.log.entry(i)?.type === 'confChange') return;
  }
  campaign(r, kind);
}

function campaign(r: RaftState, kind: CampaignKind): void {
  let term: number;
  let voteType: 'vote' | 'preVote';
  if (kind === 'preElection') {
    becomePreCandidate(r);
    voteType = 'preVote';
    term = r.term + 1;
  } else {
    becomeCandidate(r);
    voteType = 'vote';
    term = r.term;
  }
  if (poll(r, r.id, true) === 'won') {
    // single-voter cluster
    if (kind === 'preElection') campaign(r, 'election');
    else becomeLeader(r);
    return;
  }
  for (const id of [...r.voters].sort()) {
    if (id === r.id) continue;
    r.send({
      type: voteType,
      from: r.id,
      to: id,
      term,
      index: r.log.lastIndex(),
      logTerm: r.log.lastTerm(),
      transfer: kind === 'transfer',
    });
  }
}

function poll(r: RaftState, id: NodeId, granted: boolean): VoteResult {
  if (!r.votes.has(id)) r.votes.set(id, granted);
  return voteResult(r.voters, r.votes);
}

export function handleVoteRequest(r: RaftState, m: VoteMessage): void {
  const respType = m.type === 'vote' ? 'voteResponse' : 'preVoteResponse';
  // Raft §5.2: one vote per term; a pre-vote for a future term is not a vote.
  const canVote =
    r.vote === m.from ||
    (r.vote === NONE && r.lead === NONE) ||
    (m.type === 'preVote' && m.term > r.term);
  if (canVote && r.log.isUpToDate(m.index, m.logTerm)) {
    // the granting response carries the request's term so that a
    // pre-candidate does not take it as a rejection from a newer term
    r.send({ type: respType, from: r.id, to: m.from, term: m.term, reject: false });
    if (m.type === 'vote') {
      r.electionElapsed = 0;
      r.vote = m.from;
    }
  } else {
    r.send({ type: respType, from: r.id, to: m.from, term: r.term, reject: true });
  }
}

export function handleVoteResponse(r: RaftState, m: VoteResponseMessage): void {
  const mine = r.role === 'preCandidate' ? 'preVoteResponse' : 'voteResponse';
  if (m.type !== mine) return;
  // a stale grant from an earlier pre-campaign must not count
  if (m.type === 'preVoteResponse' && !m.reject && m.term !== r.term + 1) return;
  const res = poll(r, m.from, !m.reject);
  if (res === 'won') {
    if (r.role === 'preCandidate') campaign(r, 'election');
    else {
      becomeLeader(r);
      bcastAppend(r);
    }
  } else if (res === 'lost') {
    becomeFollower(r, r.term, NONE);
  }
}
