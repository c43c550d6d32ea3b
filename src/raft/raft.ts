// The Raft protocol state machine of one node (Ongaro's dissertation
// "Consensus: Bridging Theory and Practice", cited as "thesis §x"; the
// original paper's rules as "Raft §x"). Pure and deterministic: it reacts to
// ticks, messages and local requests by changing state and queueing outgoing
// messages in `msgs`; RawNode (raw-node.ts) packages the results as Ready.
// The design follows etcd's raft library (progress states, pre-vote,
// check-quorum, fast backtracking, apply-time membership changes).
//
// This file is the node's entry points (what RawNode calls) and the routing
// of messages: the term rules every message passes, then the role's handler.
// The rules themselves are functions over the node's state (state.ts):
//   election.ts    role transitions, campaigns, votes
//   replication.ts what the leader sends (appends, snapshots, heartbeats)
//   leader.ts      what the leader does with answers and requests; commit
//   read-index.ts  the leader's side of ReadIndex
//   follower.ts    a follower's answers to appends, heartbeats, snapshots
//   membership.ts  conf changes and the configuration history

import { becomeFollower, handleVoteRequest, handleVoteResponse, hup, tickElection, type CampaignKind } from './election.js';
import { handleAppend, handleHeartbeat, handleSnapshot } from './follower.js';
import {
  handleAppendResponse,
  handleHeartbeatResponse,
  leaderPropose,
  leaderTransfer,
  persisted,
  reportSnapshot,
  reportUnreachable,
  tickHeartbeat,
} from './leader.js';
import { applyConfChange, confStateAt, pruneConfHistory, setConf } from './membership.js';
import { leaderReadIndex } from './read-index.js';
import { RaftState } from './state.js';
import {
  NONE,
  ProposalDroppedError,
  type ConfChange,
  type ConfState,
  type Message,
  type NodeId,
  type PersistentState,
  type RaftConfig,
  decodeConfChange,
} from './types.js';

export class Raft extends RaftState {
  constructor(cfg: RaftConfig, state: PersistentState) {
    super(cfg, state);
    const base = state.snapshot?.metadata.confState ?? { voters: [] };
    setConf(this, base.voters, state.snapshot?.metadata.index ?? 0);
    // Conf changes the host reports as already applied take effect now;
    // later ones when the host applies them again (advance).
    for (let i = this.log.firstIndex(); i <= this.log.applied; i++) {
      const e = this.log.entry(i);
      if (e && e.type === 'confChange') applyConfChange(this, decodeConfChange(e.data), i);
    }
    becomeFollower(this, state.hardState.term, NONE);
    this.vote = state.hardState.vote;
  }

  // ---------------------------------------------------------------- ticks and elections

  tick(): void {
    if (this.role === 'leader') tickHeartbeat(this);
    else tickElection(this);
  }

  /** start an election (the local "hup" event) */
  hup(kind: CampaignKind): void {
    hup(this, kind);
  }

  becomeFollower(term: number, lead: NodeId): void {
    becomeFollower(this, term, lead);
  }

  // ---------------------------------------------------------------- step

  step(m: Message): void {
    if (m.term === 0) {
      // forwarded client request: no term rules
    } else if (m.term > this.term) {
      if (m.type === 'vote' || m.type === 'preVote') {
        // thesis §9.6 / §4.2.3: while a follower hears from a live leader it
        // ignores vote requests (leader lease), unless a transfer forces it.
        const inLease = this.checkQuorum && this.lead !== NONE && this.electionElapsed < this.electionTick;
        if (inLease && !m.transfer) return;
      }
      if (m.type === 'preVote') {
        // never change term on a pre-vote request
      } else if (m.type === 'preVoteResponse' && !m.reject) {
        // a granted pre-vote carries the future term of our campaign
      } else if (m.type === 'append' || m.type === 'heartbeat' || m.type === 'installSnapshot') {
        becomeFollower(this, m.term, m.from);
      } else {
        becomeFollower(this, m.term, NONE);
      }
    } else if (m.term < this.term) {
      if ((this.checkQuorum || this.preVote) && (m.type === 'heartbeat' || m.type === 'append')) {
        // A leader of an older term (e.g. one cut off by a partition, whose
        // followers moved on) must learn the newer term or it would never
        // step down; with pre-vote it cannot learn it from vote requests.
        this.send({ type: 'appendResponse', from: this.id, to: m.from, term: this.term, index: 0, reject: false, rejectHint: 0, logTerm: 0 });
      } else if (m.type === 'preVote') {
        this.send({ type: 'preVoteResponse', from: this.id, to: m.from, term: this.term, reject: true });
      }
      return;
    }

    if (m.type === 'vote' || m.type === 'preVote') {
      handleVoteRequest(this, m);
      return;
    }
    switch (this.role) {
      case 'leader':
        this.stepLeader(m);
        break;
      case 'candidate':
      case 'preCandidate':
        this.stepCandidate(m);
        break;
      case 'follower':
        this.stepFollower(m);
        break;
    }
  }

  private stepLeader(m: Message): void {
    switch (m.type) {
      case 'propose':
        // only in the term it was proposed in: an entry holding it then has that term
        // (docs/raft.md "Re-proposing lost proposals")
        if (m.proposalTerm !== undefined && m.proposalTerm !== this.term) throw new ProposalDroppedError(`proposed in term ${m.proposalTerm}, leader of term ${this.term}`);
        leaderPropose(this, m.entries);
        return;
      case 'readIndex':
        leaderReadIndex(this, m);
        return;
      case 'transferLeader':
        leaderTransfer(this, m.transferee);
        return;
      case 'appendResponse': {
        const pr = this.prs.get(m.from);
        if (pr) handleAppendResponse(this, m, pr);
        return;
      }
      case 'heartbeatResponse': {
        const pr = this.prs.get(m.from);
        if (pr) handleHeartbeatResponse(this, m, pr);
        return;
      }
      default:
        return;
    }
  }

  private stepCandidate(m: Message): void {
    switch (m.type) {
      case 'propose':
        throw new ProposalDroppedError('no leader');
      case 'append':
        // a leader of our term exists (Raft §5.2)
        becomeFollower(this, m.term, m.from);
        handleAppend(this, m);
        return;
      case 'heartbeat':
        becomeFollower(this, m.term, m.from);
        handleHeartbeat(this, m);
        return;
      case 'installSnapshot':
        becomeFollower(this, m.term, m.from);
        handleSnapshot(this, m);
        return;
      case 'voteResponse':
      case 'preVoteResponse':
        handleVoteResponse(this, m);
        return;
      default:
        return;
    }
  }

  private stepFollower(m: Message): void {
    switch (m.type) {
      case 'propose':
        if (this.lead === NONE) throw new ProposalDroppedError('no leader');
        // Never forward another member's proposal (it was sent to us as leader of a term we no
        // longer lead) nor one of an earlier term: its proposer decides, by the terms it
        // applies, whether to propose it again (docs/raft.md "Re-proposing lost proposals").
        if (m.from !== this.id) throw new ProposalDroppedError('not the leader');
        if (m.proposalTerm !== undefined && m.proposalTerm !== this.term) throw new ProposalDroppedError(`proposed in term ${m.proposalTerm}, now ${this.term}`);
        this.send({ ...m, from: this.id, to: this.lead, term: 0 });
        return;
      case 'append':
        this.electionElapsed = 0;
        this.lead = m.from;
        handleAppend(this, m);
        return;
      case 'heartbeat':
        this.electionElapsed = 0;
        this.lead = m.from;
        handleHeartbeat(this, m);
        return;
      case 'installSnapshot':
        this.electionElapsed = 0;
        this.lead = m.from;
        handleSnapshot(this, m);
        return;
      case 'transferLeader':
        if (this.lead === NONE) return;
        this.send({ ...m, from: this.id, to: this.lead, term: 0 });
        return;
      case 'timeoutNow':
        // thesis §3.10: the transfer target campaigns at once, skipping pre-vote
        hup(this, 'transfer');
        return;
      case 'readIndex':
        if (this.lead === NONE) return;
        this.send({ ...m, to: this.lead, term: 0 });
        return;
      case 'readIndexResponse':
        this.readStates.push({ index: m.index, context: m.context });
        return;
      default:
        return;
    }
  }

  // ---------------------------------------------------------------- host reports

  /** the host persisted the log up to `log.unstableFrom - 1` (RawNode.advance; the commit rule is leader.ts persisted) */
  persisted(): void {
    persisted(this);
  }

  /** the transport finished (ok) or failed to deliver a snapshot to `to` */
  reportSnapshot(to: NodeId, ok: boolean): void {
    reportSnapshot(this, to, ok);
  }

  /** the transport could not reach `to`: stop pipelining to it */
  reportUnreachable(to: NodeId): void {
    reportUnreachable(this, to);
  }

  // ---------------------------------------------------------------- membership (thesis §4.1)

  /** Called when the host has applied the conf-change entry at `index`. */
  applyConfChange(cc: ConfChange, index: number): void {
    applyConfChange(this, cc, index);
  }

  /** the configuration in force at log index `index` (for snapshots) */
  confStateAt(index: number): ConfState {
    return confStateAt(this, index);
  }

  /** forget configurations older than the one in force at `index` */
  pruneConfHistory(index: number): void {
    pruneConfHistory(this, index);
  }
}
