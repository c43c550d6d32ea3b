// What a RaftStore member waits for: its own proposals until they are
// applied here, and its ReadIndex requests until the leader confirmed them
// and this member applied up to the confirmed index (docs/raft.md "The
// replicated store"). Every wait ends: applied, failed, timed out or closed,
// and a failure is always a retryable error, never a false success.

import type { Clock, TimerHandle } from '../core/clock.js';
import type { RaftMetrics } from '../raft/metrics.js';
import type { ReadState } from '../raft/types.js';
import { StoreClosedError } from './local-store.js';
import { StoreUnavailableError, type Command, type CommandResult } from './types.js';

/** A retryable failure of the replicated store, answered as a Status with Retry-After. */
export class RaftUnavailableError extends StoreUnavailableError {
  override name = 'RaftUnavailableError';
}

interface Pending {
  resolve: (r: CommandResult) => void;
  reject: (e: Error) => void;
  timer: TimerHandle;
  /** performance.now() at propose (RaftMetrics.proposeToApplyMs) */
  start: number;
  /** the proposed command as its entry decodes (ownCopy, taken when it was encoded) */
  cmd: Command | undefined;
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

  constructor(
    private readonly metrics: RaftMetrics,
    private readonly clock: Clock,
  ) {}

  get pendingProposals(): number {
    return this.pending.size;
  }

  /** waits for proposal `id` to be applied here; 504 (outcome unknown) after `timeoutMs` */
  proposal(id: string, timeoutMs: number, cmd?: Command): Promise<CommandResult> {
    return new Promise<CommandResult>((resolve, reject) => {
      this.pending.set(id, {
        resolve,
        reject,
        timer: this.clock.setTimeout(() => {
          if (this.pending.delete(id)) {
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

  /** the command of pending proposal `id`, equal to what its entry decodes to (undefined: decode it) */
  command(id: string): Command | undefined {
    return this.pending.get(id)?.cmd;
  }

  /** ends proposal `id` (if this member still waits for it) with its applied result or error */
  settle(id: string, result: CommandResult | undefined, error: Error | undefined): void {
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
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
