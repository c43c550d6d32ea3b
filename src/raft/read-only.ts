// Pending ReadIndex requests on the leader (thesis §6.4): each is stamped
// with the commit index when it arrived and released once a quorum has
// answered a heartbeat carrying its context, which proves that no newer
// leader existed when the read arrived. Releasing one also releases every
// earlier request (the heartbeat round of a later request confirms them too).

import type { NodeId } from './types.js';

export interface ReadIndexRequest {
  index: number;
  context: string;
  /** who asked: the leader itself or a follower that forwarded the request */
  from: NodeId;
  acks: Set<NodeId>;
}

export class ReadOnly {
  private readonly pending = new Map<string, ReadIndexRequest>();
  private queue: string[] = [];

  /** false when a request with the same context is already pending */
  add(index: number, context: string, from: NodeId): boolean {
    if (this.pending.has(context)) return false;
    this.pending.set(context, { index, context, from, acks: new Set() });
    this.queue.push(context);
    return true;
  }

  recvAck(id: NodeId, context: string): ReadonlySet<NodeId> | undefined {
    const rs = this.pending.get(context);
    if (!rs) return undefined;
    rs.acks.add(id);
    return rs.acks;
  }

  /** release every request up to and including `context`, oldest first */
  advance(context: string): ReadIndexRequest[] {
    const at = this.queue.indexOf(context);
    if (at < 0) return [];
    const released = this.queue.slice(0, at + 1).map((c) => this.pending.get(c)!);
    for (const c of this.queue.slice(0, at + 1)) this.pending.delete(c);
    this.queue = this.queue.slice(at + 1);
    return released;
  }

  get size(): number {
    return this.queue.length;
  }

  reset(): void {
    this.pending.clear();
    this.queue = [];
  }
}
