// Raft counters of one member (docs/raft.md "Operability"), named after
// etcd's etcd_server_* metrics so existing dashboards read them.

export class RaftMetrics {
  /** times this member saw the leader change (including to "no leader") */
  leaderChanges = 0;
  /** proposals of this member that were applied (acknowledged) */
  proposalsCommitted = 0;
  /** proposals of this member that failed: dropped, timed out or cut by a leader change */
  proposalsFailed = 0;
  /** proposals of this member proposed again after a leader change lost them (docs/raft.md "Re-proposing lost proposals") */
  proposalsRetried = 0;
  /** entries applied to the state machine (any proposer) */
  entriesApplied = 0;
  /** ReadIndex requests that failed (no leader, timeout, leader change) */
  readIndexFailed = 0;
  /** snapshots this member took (RawNode.compact) */
  snapshotsTaken = 0;
  /** snapshots received from a leader and installed */
  snapshotsInstalled = 0;
  /** synced Raft storage writes (one per Ready with something to persist) */
  storageSyncs = 0;
  /** wall time spent in those synced writes, ms (storageSyncMs / storageSyncs = mean fsync batch) */
  storageSyncMs = 0;
  /** Ready batches handled (persist, send, apply, advance) */
  readies = 0;
  /** log entries persisted (entries / storageSyncs = group-commit batch size) */
  entriesPersisted = 0;
  /** Raft messages handed to the transport */
  messagesSent = 0;
  /** committed entries applied while a Ready was being persisted (RawNode.takeCommittedNow) */
  entriesAppliedEarly = 0;
  /** of those, entries a leader applied before its own write of them ended (a quorum of followers had them durable) */
  entriesAppliedBeforeOwnWrite = 0;
  /** sum over this member's applied proposals of the time from propose() to apply, ms */
  proposeToApplyMs = 0;

  /** callback type of ServerMetrics.gauge (src/server/metrics.ts) */
  static register(
    gauge: (name: string, help: string, read: () => number) => void,
    metrics: RaftMetrics,
    live: () => { term: number; commit: number; applied: number; isLeader: boolean; hasLeader: boolean; pending: number },
  ): void {
    gauge('etcd_server_has_leader', 'Whether a leader is known (1) or not (0).', () => (live().hasLeader ? 1 : 0));
    gauge('etcd_server_is_leader', 'Whether this member is the leader (1) or not (0).', () => (live().isLeader ? 1 : 0));
    gauge('etcd_server_leader_changes_seen_total', 'Leader changes seen by this member.', () => metrics.leaderChanges);
    gauge('etcd_server_proposals_committed_total', 'Proposals of this member that were applied.', () => metrics.proposalsCommitted);
    gauge('etcd_server_proposals_failed_total', 'Proposals of this member that failed.', () => metrics.proposalsFailed);
    gauge('orch_raft_proposals_retried_total', 'Proposals of this member proposed again after a leader change lost them.', () => metrics.proposalsRetried);
    gauge('etcd_server_proposals_pending', 'Proposals of this member waiting to be applied.', () => live().pending);
    gauge('etcd_server_proposals_applied_total', 'Entries applied to the state machine.', () => metrics.entriesApplied);
    gauge('orch_raft_term', 'Current Raft term.', () => live().term);
    gauge('orch_raft_commit_index', 'Highest log index known committed.', () => live().commit);
    gauge('orch_raft_applied_index', 'Highest log index applied.', () => live().applied);
    gauge('orch_raft_apply_lag', 'Committed but not yet applied entries (commit - applied).', () => {
      const l = live();
      return Math.max(0, l.commit - l.applied);
    });
    gauge('orch_raft_read_index_failed_total', 'ReadIndex requests that failed.', () => metrics.readIndexFailed);
    gauge('orch_raft_snapshots_taken_total', 'Snapshots taken by this member.', () => metrics.snapshotsTaken);
    gauge('orch_raft_snapshots_installed_total', 'Snapshots installed from a leader.', () => metrics.snapshotsInstalled);
    gauge('orch_raft_storage_syncs_total', 'Synced Raft storage writes.', () => metrics.storageSyncs);
  }
}
