// The controllers' work queue (issue #9 item 5), shaped like client-go's
// rate-limiting workqueue: a key waits in the queue at most once however often
// it is added (de-duplication), a key being processed is never handed to a
// second worker (an add meanwhile marks it dirty and it comes back once the
// worker is done), a failed key comes back after a per-key exponential
// backoff, and every delayed add also waits for a token of one global bucket
// so a burst of failures cannot turn into a storm of writes. Time comes from
// the injected Clock (src/core/clock.ts), so tests drive it with ManualClock.
//
// Defaults follow client-go's DefaultControllerRateLimiter where it makes
// sense here: 5 ms doubling per failure, a global 10/s bucket of 100; the cap
// is 30 s instead of 1000 s because an in-process controller that fails for
// long is usually waiting for a write of another controller (docs/controllers.md).

import type { Clock, TimerHandle } from '../../core/clock.js';

export interface RateLimitOptions {
  /** first retry delay after a failure (client-go: 5 ms) */
  baseDelayMs?: number;
  /** the longest per-key backoff */
  maxDelayMs?: number;
  /** global refill rate of the bucket, tokens per second (client-go: 10) */
  qps?: number;
  /** bucket size (client-go: 100) */
  burst?: number;
}

export interface WorkQueueOptions extends RateLimitOptions {
  clock: Clock;
  /** for error lines of `run` */
  name?: string;
  log?: (msg: string) => void;
}

const DEFAULTS: Required<RateLimitOptions> = { baseDelayMs: 5, maxDelayMs: 30_000, qps: 10, burst: 100 };

/** client-go's BucketRateLimiter: a token bucket whose reservations may go into debt (each one waits its turn) */
export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    private readonly clock: Clock,
    private readonly qps: number,
    private readonly burst: number,
  ) {
    this.tokens = burst;
    this.last = clock.now();
  }

  /** takes a token and returns how long its holder must wait for it (0 = at once) */
  reserve(): number {
    const now = this.clock.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
    this.last = now;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : Math.ceil((-this.tokens / this.qps) * 1000);
  }
}

export class WorkQueue<K = string> {
  /** keys waiting, in order; each at most once (it is in `dirty` then) */
  private readonly queue: K[] = [];
  /** keys that need processing: queued, or added again while processed */
  private readonly dirty = new Set<K>();
  /** keys a worker holds */
  private readonly processing = new Set<K>();
  /** delayed adds: the earliest wins, later ones for the same key are dropped */
  private readonly waiting = new Map<K, { at: number; timer: TimerHandle }>();
  private readonly failures = new Map<K, number>();
  private readonly getters: ((key: K | undefined) => void)[] = [];
  private readonly bucket: TokenBucket;
  private readonly limits: Required<RateLimitOptions>;
  private shuttingDown = false;
  private idleWaiters: (() => void)[] = [];

  constructor(private readonly o: WorkQueueOptions) {
    this.limits = { ...DEFAULTS, ...stripUndefined(o) };
    this.bucket = new TokenBucket(o.clock, this.limits.qps, this.limits.burst);
  }

  /** keys waiting to be handed out (not those held by a worker or delayed) */
  get length(): number {
    return this.queue.length;
  }

  get isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  /** queues `key` unless it is queued already; a key being processed comes back when its worker is done */
  add(key: K): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.dirty.add(key);
    if (this.processing.has(key)) return;
    const getter = this.getters.shift();
    if (getter) {
      this.dirty.delete(key);
      this.processing.add(key);
      getter(key);
      return;
    }
    this.queue.push(key);
  }

  /** adds `key` after `ms`; a pending earlier add of the same key wins */
  addAfter(key: K, ms: number): void {
    if (this.shuttingDown) return;
    if (ms <= 0) {
      this.add(key);
      return;
    }
    const at = this.o.clock.now() + ms;
    const prior = this.waiting.get(key);
    if (prior && prior.at <= at) return;
    prior?.timer.cancel();
    const timer = this.o.clock.setTimeout(() => {
      this.waiting.delete(key);
      this.add(key);
    }, ms);
    this.waiting.set(key, { at, timer });
  }

  /** the delay `addRateLimited` would use now, counting this as one more failure of `key` */
  when(key: K): number {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    const backoff = Math.min(this.limits.maxDelayMs, this.limits.baseDelayMs * 2 ** n);
    // the slower of the two limiters decides (client-go's MaxOfRateLimiter)
    return Math.max(backoff, this.bucket.reserve());
  }

  /** re-adds `key` after its backoff (one more failure) and the global bucket allow */
  addRateLimited(key: K): void {
    if (this.shuttingDown) return;
    this.addAfter(key, this.when(key));
  }

  /** clears the failure count of `key` (it was processed successfully) */
  forget(key: K): void {
    this.failures.delete(key);
  }

  numRequeues(key: K): number {
    return this.failures.get(key) ?? 0;
  }

  /** the next key, held by the caller until `done`; undefined once the queue shuts down */
  get(): Promise<K | undefined> {
    const key = this.queue.shift();
    if (key !== undefined) {
      this.dirty.delete(key);
      this.processing.add(key);
      return Promise.resolve(key);
    }
    if (this.shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.getters.push(resolve));
  }

  /** releases `key`; if it was added meanwhile it is queued again */
  done(key: K): void {
    this.processing.delete(key);
    if (this.dirty.has(key)) {
      this.dirty.delete(key);
      this.add(key);
    }
    if (this.processing.size === 0 && (this.queue.length === 0 || this.shuttingDown)) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const w of waiters) w();
    }
  }

  /** stops handing out keys: waiting getters get undefined, delayed adds are dropped, held keys may finish */
  shutDown(): void {
    if (this.shuttingDown) return;
    this.shuttingDown = true;
    for (const w of this.waiting.values()) w.timer.cancel();
    this.waiting.clear();
    this.queue.length = 0;
    this.dirty.clear();
    for (const g of this.getters.splice(0)) g(undefined);
    if (this.processing.size === 0) for (const w of this.idleWaiters.splice(0)) w();
  }

  /** a key is queued or held (delayed adds not counted) */
  get busy(): boolean {
    return this.processing.size > 0 || (this.queue.length > 0 && !this.shuttingDown);
  }

  /** resolves when no key is queued or held (delayed adds not counted) */
  idle(): Promise<void> {
    if (this.processing.size === 0 && (this.queue.length === 0 || this.shuttingDown)) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Runs `workers` loops that take a key, call `sync(key)` and mark it done:
   * success forgets the key's failures; a throw re-adds it rate-limited.
   * The loops end at shutDown. A worker that wants a later look without a
   * failure calls addAfter itself.
   */
  run(sync: (key: K) => Promise<void>, workers = 1): Promise<void> {
    const loop = async (): Promise<void> => {
      for (;;) {
        const key = await this.get();
        if (key === undefined) return;
        try {
          await sync(key);
          this.forget(key);
        } catch (e) {
          this.o.log?.(`${this.o.name ?? 'controller'}: ${String(key)}: ${(e as Error)?.message ?? String(e)}; retrying`);
          this.addRateLimited(key);
        } finally {
          this.done(key);
        }
      }
    };
    return Promise.all(Array.from({ length: Math.max(1, workers) }, loop)).then(() => undefined);
  }
}

function stripUndefined(o: RateLimitOptions): RateLimitOptions {
  const out: RateLimitOptions = {};
  if (o.baseDelayMs !== undefined) out.baseDelayMs = o.baseDelayMs;
  if (o.maxDelayMs !== undefined) out.maxDelayMs = o.maxDelayMs;
  if (o.qps !== undefined) out.qps = o.qps;
  if (o.burst !== undefined) out.burst = o.burst;
  return out;
}
