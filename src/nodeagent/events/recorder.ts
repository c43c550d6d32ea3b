// The agent's Event recorder: kubelet's client-go EventRecorder and
// broadcaster, writing core/v1 Events through the public API with the node's
// own credentials (the Node authorizer lets a node create and patch Events,
// spec 001 §5.15). `event()` never blocks and never throws: it builds the
// Event at once (its timestamps are the time of the occurrence) and queues it;
// one writer correlates (correlator.ts) and writes the queue in order. As in
// client-go, the queue holds 1000 events (more are dropped), a write that
// fails for want of a connection is retried up to 12 times 10 s apart, and one
// the server refuses (a Status error) is dropped; a patch of an Event that was
// deleted meanwhile (404) becomes a create.

import { ApiError, type ApiClient } from '../api-client.js';
import { type Clock, rfc3339 } from '../clock.js';
import { type CoreEvent, type CorrelatorOptions, EventCorrelator, eventName, type ObjectRef } from './correlator.js';

export type EventType = 'Normal' | 'Warning';

/** what the agent's parts record through (a recorder, or nothing when standalone) */
export interface EventSink {
  event(ref: ObjectRef, type: EventType, reason: string, message: string): void;
}

export const noEvents: EventSink = { event: () => {} };

export interface RecorderOptions {
  /** the calls it makes (an ApiClient; tests pass a recording double) */
  api: Pick<ApiClient, 'call' | 'create'>;
  clock: Clock;
  /** `source.host` and `reportingInstance`: the node name, as kubelet */
  host: string;
  log?: (m: string) => void;
  /** client-go: 1000 */
  queueLimit?: number;
  /** client-go: 12 tries, 10 s apart */
  maxTries?: number;
  retryMs?: number;
  correlator?: CorrelatorOptions;
  /** kubelet's eventRecordQPS / eventBurst: Event writes per second and burst; 0 = no limit (kubelet: 50, 100) */
  qps?: number;
  burst?: number;
}

/** kubelet's source.component (and reportingComponent) */
export const COMPONENT = 'kubelet';

export class EventRecorder implements EventSink {
  private readonly correlator: EventCorrelator;
  private readonly queue: { event: CoreEvent; at: number }[] = [];
  private writing?: Promise<void>;
  private stopped = false;
  private seq = 0;
  private sleepTimer: unknown;
  private wake?: () => void;
  /** the write limiter's bucket (client-go's token bucket on the event client) */
  private tokens: number;
  private tokensAt: number;
  /** counters for tests and the log: queued past the limit, filtered as spam, refused or given up */
  readonly stats = { dropped: 0, filtered: 0, failed: 0, created: 0, patched: 0 };

  constructor(private readonly o: RecorderOptions) {
    this.correlator = new EventCorrelator(o.correlator);
    this.tokens = o.burst ?? 100;
    this.tokensAt = o.clock.now();
  }

  event(ref: ObjectRef, type: EventType, reason: string, message: string): void {
    if (this.stopped) return;
    if (this.queue.length >= (this.o.queueLimit ?? 1000)) {
      this.stats.dropped++;
      return;
    }
    const at = this.o.clock.now();
    const stamp = rfc3339(at);
    // nanoseconds from a millisecond clock: a sequence number keeps names of the same millisecond apart
    const nanos = BigInt(at) * 1_000_000n + BigInt(this.seq++ % 1_000_000);
    const { resourceVersion: _rv, ...involved } = ref;
    const event: CoreEvent = {
      apiVersion: 'v1',
      kind: 'Event',
      // an Event about a cluster-scoped object (the Node) goes to `default`, as client-go's makeEvent
      metadata: { name: eventName(ref.name, nanos), namespace: ref.namespace || 'default' },
      involvedObject: ref.resourceVersion ? { ...involved, resourceVersion: ref.resourceVersion } : involved,
      reason,
      message,
      source: { component: COMPONENT, host: this.o.host },
      firstTimestamp: stamp,
      lastTimestamp: stamp,
      count: 1,
      type,
      eventTime: null,
      reportingComponent: COMPONENT,
      reportingInstance: this.o.host,
    };
    this.queue.push({ event, at });
    this.writing ??= this.drain().finally(() => (this.writing = undefined));
  }

  /** resolves once every queued event is written or given up (tests, shutdown) */
  async flush(): Promise<void> {
    while (this.writing) await this.writing;
  }

  /** drops what is queued and ends a retry wait */
  stop(): void {
    this.stopped = true;
    this.queue.length = 0;
    this.o.clock.clearTimeout(this.sleepTimer);
    this.wake?.();
  }

  private async drain(): Promise<void> {
    for (let next = this.queue.shift(); next && !this.stopped; next = this.queue.shift()) {
      const r = this.correlator.correlate(next.event, next.at, next.event.lastTimestamp);
      if (r.skip) {
        this.stats.filtered++;
        continue;
      }
      const maxTries = this.o.maxTries ?? 12;
      for (let tries = 1; !this.stopped; tries++) {
        await this.throttle();
        if (this.stopped) break;
        const done = await this.write(r.event, r.patch);
        if (done) break;
        if (tries >= maxTries) {
          this.stats.failed++;
          this.o.log?.(`event ${r.event.reason} for ${r.event.involvedObject.kind.toLowerCase()}/${r.event.involvedObject.name}: retry limit exceeded`);
          break;
        }
        await this.sleep(this.o.retryMs ?? 10_000);
      }
    }
  }

  /** true when settled (written, or refused by the server); false when worth retrying */
  private async write(e: CoreEvent, patch: { count: number; lastTimestamp: string; message: string } | undefined): Promise<boolean> {
    const ns = encodeURIComponent(e.metadata.namespace);
    try {
      let out: CoreEvent | undefined;
      if (patch && e.count > 1) {
        try {
          // strategic merge patch, as client-go's EventSinkImpl.Patch
          out = await this.o.api.call<CoreEvent>('PATCH', `/api/v1/namespaces/${ns}/events/${encodeURIComponent(e.metadata.name)}`, patch, 'application/strategic-merge-patch+json');
          this.stats.patched++;
        } catch (err) {
          if (!(err instanceof ApiError && err.code === 404)) throw err;
        }
      }
      if (!out) {
        const { resourceVersion: _rv, ...meta } = e.metadata;
        out = await this.o.api.create<CoreEvent>(`/api/v1/namespaces/${ns}/events`, { ...e, metadata: meta });
        this.stats.created++;
      }
      this.correlator.written(out);
      return true;
    } catch (err) {
      if (err instanceof ApiError) {
        // client-go: a Status error is not retried (AlreadyExists, a terminating namespace, a 403 ...)
        this.stats.failed++;
        if (err.code !== 409) this.o.log?.(`event ${e.reason} for ${e.involvedObject.kind.toLowerCase()}/${e.involvedObject.name} refused: ${err.message}`);
        return true;
      }
      return false;
    }
  }

  /** waits for a token of the write limiter: writes are delayed, never dropped, by it */
  private async throttle(): Promise<void> {
    const qps = this.o.qps ?? 50;
    if (qps <= 0) return;
    const burst = Math.max(1, this.o.burst ?? 100);
    const now = this.o.clock.now();
    this.tokens = Math.min(burst, this.tokens + ((now - this.tokensAt) / 1000) * qps);
    this.tokensAt = now;
    if (this.tokens < 1) {
      await this.sleep(Math.ceil(((1 - this.tokens) * 1000) / qps));
      this.tokens = Math.min(burst, this.tokens + ((this.o.clock.now() - this.tokensAt) / 1000) * qps);
      this.tokensAt = this.o.clock.now();
    }
    this.tokens -= 1;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.wake = resolve;
      this.sleepTimer = this.o.clock.setTimeout(() => resolve(), ms);
    });
  }
}
