// Majority quorums over a single voter set (Raft §5.2, §5.3). Single-member
// membership changes keep any two consecutive configurations' majorities
// overlapping (thesis §4.1), so a plain majority is all the core needs.

import type { NodeId } from './types.js';

export type VoteResult = 'won' | 'lost' | 'pending';

export function majority(n: number): number {
  return Math.floor(n / 2) + 1;
}

/** The largest index replicated on a majority of `voters` (0 for an empty set). */
export function committedIndex(voters: Iterable<NodeId>, matchOf: (id: NodeId) => number): number {
  const matches = [...voters].map(matchOf).sort((a, b) => b - a);
  // majority(n) - 1 < n for n > 0; the empty set has no element and commits nothing
  return matches[majority(matches.length) - 1] ?? 0;
}

export function voteResult(voters: Iterable<NodeId>, votes: ReadonlyMap<NodeId, boolean>): VoteResult {
  const ids = [...voters];
  const q = majority(ids.length);
  let granted = 0;
  let missing = 0;
  for (const id of ids) {
    const v = votes.get(id);
    if (v === undefined) missing++;
    else if (v) granted++;
  }
  if (granted >= q) return 'won';
  if (granted + missing >= q) return 'pending';
  return 'lost';
}

export function hasQuorum(voters: Iterable<NodeId>, acks: (id: NodeId) => boolean): boolean {
  const ids = [...voters];
  return ids.filter(acks).length >= majority(ids.length);
}
