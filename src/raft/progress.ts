// The leader's view of one follower's replication (etcd's Progress design;
// docs/raft.md "Replication"): `match` is the highest index known to be
// replicated, `next` the next index to send. Three states:
//   probe      we do not know where the follower's log diverges: at most one
//              append per heartbeat interval until a response arrives;
//   replicate  the follower is in sync: appends are pipelined optimistically
//              (next advances on send), bounded by `inflights`;
//   snapshot   an InstallSnapshot is on its way: nothing else is sent until
//              it is acknowledged or reported failed.

export type ProgressState = 'probe' | 'replicate' | 'snapshot';

/** A bounded FIFO of the last index carried by each in-flight append. */
export class Inflights {
  private readonly buf: number[] = [];
  constructor(readonly capacity: number) {}

  get count(): number {
    return this.buf.length;
  }

  full(): boolean {
    return this.buf.length >= this.capacity;
  }

  add(lastIndex: number): void {
    if (this.full()) throw new Error('raft: inflights overflow');
    this.buf.push(lastIndex);
  }

  /** an acknowledgement up to `index` frees every append ending at or before it */
  freeLE(index: number): void {
    let n = 0;
    while (n < this.buf.length && this.buf[n]! <= index) n++; // n < buf.length
    if (n > 0) this.buf.splice(0, n);
  }

  freeFirstOne(): void {
    this.buf.shift();
  }

  reset(): void {
    this.buf.length = 0;
  }
}

export class Progress {
  match = 0;
  next: number;
  state: ProgressState = 'probe';
  /** probe state: an append was sent and not answered yet (paused until then or the next heartbeat response) */
  probeSent = false;
  /** snapshot state: index of the snapshot being sent */
  pendingSnapshot = 0;
  /** snapshot state: leader ticks since the snapshot was sent */
  snapshotElapsed = 0;
  /** any message received from the follower since the last check-quorum round */
  recentActive = false;
  readonly inflights: Inflights;

  constructor(next: number, maxInflight: number) {
    this.next = next;
    this.inflights = new Inflights(maxInflight);
  }

  becomeProbe(): void {
    // After a snapshot, the follower has at least the snapshot's entries.
    if (this.state === 'snapshot') {
      this.next = Math.max(this.match + 1, this.pendingSnapshot + 1);
    } else {
      this.next = this.match + 1;
    }
    this.state = 'probe';
    this.probeSent = false;
    this.pendingSnapshot = 0;
    this.inflights.reset();
  }

  becomeReplicate(): void {
    this.state = 'replicate';
    this.next = this.match + 1;
    this.probeSent = false;
    this.pendingSnapshot = 0;
    this.inflights.reset();
  }

  becomeSnapshot(index: number): void {
    this.state = 'snapshot';
    this.pendingSnapshot = index;
    this.snapshotElapsed = 0;
    this.probeSent = false;
    this.inflights.reset();
  }

  /** an acknowledgement of `n`; returns whether match advanced */
  maybeUpdate(n: number): boolean {
    let updated = false;
    if (this.match < n) {
      this.match = n;
      updated = true;
      this.probeSent = false;
    }
    if (this.next < n + 1) this.next = n + 1;
    return updated;
  }

  /**
   * A rejection of the append whose previous index was `rejected`;
   * `matchHint` is the leader-side translation of the follower's hint.
   * Returns false when the rejection is stale (ignored).
   */
  maybeDecrTo(rejected: number, matchHint: number): boolean {
    if (this.state === 'replicate') {
      if (rejected <= this.match) return false;
      this.next = this.match + 1;
      return true;
    }
    if (this.next - 1 !== rejected) return false;
    this.next = Math.max(Math.min(rejected, matchHint + 1), this.match + 1);
    this.probeSent = false;
    return true;
  }

  isPaused(): boolean {
    switch (this.state) {
      case 'probe':
        return this.probeSent;
      case 'replicate':
        return this.inflights.full();
      case 'snapshot':
        return true;
    }
  }
}
