// The bounded buffer between request serving and an audit backend (issue 16
// item 3: writing must never block or slow serving beyond a bounded buffer).
//
// `push` only appends to an array; a flush loop, one batch in flight at a
// time, serialises and hands batches to the backend. When the buffer holds
// `bufferSize` events or `maxBufferedBytes` (estimated) the new event is
// dropped and counted: audit gives way to serving, as kube's batch mode does
// (docs/audit.md "Back-pressure"). A backend failure drops that batch, counts
// it and is logged (rate-limited); it never reaches the request path.

import type { Clock, TimerHandle } from '../core/clock.js';
import type { AuditMetricsSink, DropReason } from './metrics.js';
import type { AuditEvent, AuditSink } from './types.js';

/** Receives serialised events (one JSON document each) and delivers them, or rejects. */
export interface BatchWriter {
  write(events: AuditEvent[], lines: string[]): Promise<void>;
  /** shutdown has begun: stop waiting to retry (the batch in hand is tried once more at most) */
  closing?(): void;
  close?(): Promise<void>;
}

export interface BufferOptions {
  /** backend name for metrics and logs: `log` or `webhook` */
  name: string;
  /** kube's --audit-<backend>-batch-buffer-size (default 10000) */
  bufferSize: number;
  /** kube's --audit-<backend>-batch-max-size */
  maxBatchSize: number;
  /** kube's --audit-<backend>-batch-max-wait: a batch smaller than the max waits at most this long (0: next tick) */
  maxBatchWaitMs: number;
  /** cap on the estimated bytes held (bodies at RequestResponse level can be MiBs); default 64 MiB */
  maxBufferedBytes?: number;
  /** error label used when the writer fails (kube's plugin name: log, webhook) */
  plugin: string;
  failureReason: DropReason;
  metrics: AuditMetricsSink;
  clock: Clock;
  log: (msg: string) => void;
}

const LOG_EVERY_MS = 10_000;

export class BufferedSink implements AuditSink {
  readonly name: string;
  private queue: { ev: AuditEvent; size: number }[] = [];
  private head = 0;
  private bytes = 0;
  private writing: Promise<void> | undefined;
  private timer: TimerHandle | undefined;
  private immediate = false;
  private closed = false;
  private lastLog = -Infinity;
  private suppressed = 0;
  private readonly maxBytes: number;

  constructor(
    private readonly writer: BatchWriter,
    private readonly o: BufferOptions,
  ) {
    this.name = o.name;
    this.maxBytes = o.maxBufferedBytes ?? 64 * 1024 * 1024;
    o.metrics.bufferDepth(o.name, () => this.depth);
  }

  /** events waiting (not counting a batch being written) */
  get depth(): number {
    return this.queue.length - this.head;
  }

  /** `bodyBytes`: the size of the request and response bodies the event carries, for the byte cap */
  push(ev: AuditEvent, bodyBytes = 0): void {
    if (this.closed) {
      this.o.metrics.dropped(this.o.name, 'buffered', 'shutdown', 1);
      return;
    }
    const size = 1024 + ev.requestURI.length + bodyBytes;
    if (this.depth >= this.o.bufferSize || this.bytes + size > this.maxBytes) {
      this.o.metrics.dropped(this.o.name, 'buffered', 'buffer_full', 1);
      this.report(`audit ${this.o.name}: buffer full (${this.depth} events), dropping events`);
      return;
    }
    this.queue.push({ ev, size });
    this.bytes += size;
    this.schedule();
  }

  private schedule(): void {
    if (this.writing) return;
    if (this.depth >= this.o.maxBatchSize || this.o.maxBatchWaitMs <= 0) {
      if (this.immediate) return;
      this.immediate = true;
      setImmediate(() => {
        this.immediate = false;
        this.kick();
      });
      return;
    }
    this.timer ??= this.o.clock.setTimeout(() => {
      this.timer = undefined;
      this.kick();
    }, this.o.maxBatchWaitMs);
  }

  private kick(): void {
    if (this.writing || this.depth === 0) return;
    this.timer?.cancel();
    this.timer = undefined;
    this.writing = this.drainOne().finally(() => {
      this.writing = undefined;
      if (this.depth > 0) this.schedule();
    });
  }

  private async drainOne(): Promise<void> {
    const end = Math.min(this.queue.length, this.head + this.o.maxBatchSize);
    const batch = this.queue.slice(this.head, end);
    this.head = end;
    // compact now and then so the array does not grow without bound
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    for (const b of batch) this.bytes -= b.size;
    const events = batch.map((b) => b.ev);
    try {
      const lines = events.map((e) => JSON.stringify(e));
      await this.writer.write(events, lines);
    } catch (e) {
      this.o.metrics.dropped(this.o.name, this.o.plugin, this.o.failureReason, events.length);
      this.report(`audit ${this.o.name}: ${events.length} events not written: ${(e as Error)?.message ?? String(e)}`);
    }
  }

  /** rate-limited: a dead disk or webhook must not flood the server log */
  private report(msg: string): void {
    const now = this.o.clock.now();
    if (now - this.lastLog < LOG_EVERY_MS) {
      this.suppressed++;
      return;
    }
    this.o.log(this.suppressed > 0 ? `${msg} (${this.suppressed} similar messages suppressed)` : msg);
    this.lastLog = now;
    this.suppressed = 0;
  }

  /** writes everything buffered now (shutdown, tests) */
  async flush(): Promise<void> {
    while (this.writing || this.depth > 0) {
      if (this.writing) await this.writing;
      else this.kick();
    }
  }

  async close(): Promise<void> {
    this.writer.closing?.();
    await this.flush();
    this.closed = true;
    this.timer?.cancel();
    await this.writer.close?.();
  }
}

