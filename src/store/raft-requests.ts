// What a RaftStore member waits for: its own proposals until they are
// applied here, and its ReadIndex requests until the leader confirmed them
// and this member applied up to the confirmed index (docs/raft.md "The
// replicated store"). Every wait ends: applied, failed, timed out or closed,
// and a failure is always a retryable error, never a false success.

import type { Clock, TimerHandle } from '../core/clock.js';
import type { RaftMetrics } from '../raft/metrics.js';
import { ProposalTerms } from '../raft/proposal-terms.js';
import type { ReadState } from '../raft/types.js';
import { StoreClosedError } from './local-store.js';
import { StoreUnavailableError, type Command, type CommandResult } from './types.js';

/** A retryable failure of the replicated store, answered as a Status with Retry-After. */
export class RaftUnavailableError extends StoreUnavailableError {
  override name = 'RaftUnavailableError';
}

/** appliedTerm's answer for every entry of a term the pending proposals are in (no allocation) */
const NOTHING_LOST: readonly (readonly [string, Uint8Array])[] = [];

interface Pending {
  resolve: (r: CommandResult) => void;
  reject: (e: Error) => void;
  timer: TimerHandle;
  /** performance.now() at propose (RaftMetrics.proposeToApplyMs) */
  start: number;
  /** the proposed command as its entry decodes (ownCopy, taken when it was encoded) */
  cmd: Command | undefined;
  /** the entry's data ([id, command]), proposed again as it is when a leader change lost it */
  data: Uint8Array;
}

interface PendingRead {
  resolve: (revision: number) => void;
  reject: (e: Error) => void;
  timer: TimerHandle;
  /** set once the leader confirmed: serve when applied >= index */
  index?: number;
}

export class RaftRequests {
  private readonly pending = new Map<string, Pending>();
  private readonly reads = new Map<string, PendingRead>();
  /** the term each pending proposal is in the core with (docs/raft.md "Re-proposing lost proposals") */
  private readonly terms: ProposalTerms<string>;

  constructor(
    private readonly metrics: RaftMetrics,
    private readonly clock: Clock,
    proposalAttempts = 1,
  ) {
    this.terms = new ProposalTerms(proposalAttempts);
  }

  get pendingProposals(): number {
    return this.pending.size;
  }

  /**
   * waits for proposal `id` (entry data `data`) to be applied here; 504 (outcome unknown) after
   * `timeoutMs` from now, however often it is proposed again
   */
  proposal(id: string, timeoutMs: number, data: Uint8Array, cmd?: Command): Promise<CommandResult> {
    return new Promise<CommandResult>((resolve, reject) => {
      this.pending.set(id, {
        resolve,
        reject,
        data,
        timer: this.clock.setTimeout(() => {
          if (this.pending.delete(id)) {
            this.terms.settled(id);
            this.metrics.proposalsFailed += 1;
            reject(new RaftUnavailableError('timed out waiting for the write to commit; it may or may not have been applied', true));
          }
        }, timeoutMs),
        start: performance.now(),
        cmd,
      });
    });
  }

  isPending(id: string): boolean {
    return this.pending.has(id);
  }

  /** the core took pending proposal `id` in `term` (RawNode.proposeBatch) */
  proposed(id: string, term: number): void {
    if (this.pending.has(id)) this.terms.proposed(id, term);
  }

  /**
   * An entry of `term` was applied (after settle() for its own id): the pending proposals of
   * earlier terms were lost. Returns those to propose again, as [id, data]; fails those proposed
   * too often (503: certainly not applied); leaves those a snapshot may hold to their timeout
   * (504, outcome unknown). Nothing to do (one comparison) unless the term moved on.
   */
  appliedTerm(term: number): readonly (readonly [string, Uint8Array])[] {
    const lost = this.terms.applied(term);
    if (!lost) return NOTHING_LOST;
    for (const id of lost.exhausted) {
      this.settle(id, undefined, new RaftUnavailableError(`the write was lost in ${this.terms.maxAttempts} leader changes and not applied; retry`, false));
    }
    const again: [string, Uint8Array][] = [];
    for (const id of lost.retry) {
      const p = this.pending.get(id);
      if (!p) continue;
      this.metrics.proposalsRetried += 1;
      again.push([id, p.data]);
    }
    return again;
  }

  /** a snapshot up to an entry of `term` was installed: pending proposals it may hold are never proposed again */
  snapshotInstalled(term: number): void {
    this.terms.snapshotInstalled(term);
  }

  /** the command of pending proposal `id`, equal to what its entry decodes to (undefined: decode it) */
  command(id: string): Command | undefined {
    return this.pending.get(id)?.cmd;
  }

  /** ends proposal `id` (if this member still waits for it) with its applied result or error */
  settle(id: string, result: CommandResult | undefined, error: Error | undefined): void {
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    this.terms.settled(id);
    p.timer.cancel();
    if (result) {
      this.metrics.proposalsCommitted += 1;
      this.metrics.proposeToApplyMs += performance.now() - p.start;
      p.resolve(result);
    } else {
      this.metrics.proposalsFailed += 1;
      p.reject(error ?? new Error('proposal failed'));
    }
  }

  /** waits for ReadIndex `ctx` to be confirmed and applied; 503 after `timeoutMs` */
  read(ctx: string, timeoutMs: number): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      this.reads.set(ctx, {
        resolve,
        reject,
        timer: this.clock.setTimeout(() => {
          this.reads.delete(ctx);
          this.metrics.readIndexFailed += 1;
          reject(new RaftUnavailableError('timed out waiting for a ReadIndex confirmation from the leader', false));
        }, timeoutMs),
      });
    });
  }

  /** the leader confirmed these reads at these indexes */
  confirm(states: ReadState[]): void {
    for (const rs of states) {
      const read = this.reads.get(rs.context);
      if (read) read.index = rs.index;
    }
  }

  /** answers every confirmed read whose index is applied, with the current revision */
  serve(appliedIndex: number, revision: number): void {
    for (const [ctx, r] of this.reads) {
      if (r.index !== undefined && r.index <= appliedIndex) {
        this.reads.delete(ctx);
        r.timer.cancel();
        r.resolve(revision);
      }
    }
  }

  /** fails every wait: proposals with `proposalError(message)`, reads with `readError()` */
  failAll(proposalError: () => Error, readError: () => Error, count = true): void {
    for (const [id, p] of this.pending) {
      p.timer.cancel();
      this.pending.delete(id);
      this.terms.settled(id);
      if (count) this.metrics.proposalsFailed += 1;
      p.reject(proposalError());
    }
    this.failReads(readError, count);
  }

  /** fails every ReadIndex wait with `readError()` (proposals keep waiting) */
  failReads(readError: () => Error, count = true): void {
    for (const [ctx, r] of this.reads) {
      r.timer.cancel();
      this.reads.delete(ctx);
      if (count) this.metrics.readIndexFailed += 1;
      r.reject(readError());
    }
  }

  /** the member closes: writes may or may not have been applied; reads fail as closed */
  close(): void {
    this.failAll(
      () => new RaftUnavailableError('the member is shutting down; the write may or may not have been applied', true),
      () => new StoreClosedError(),
      false,
    );
  }
}
