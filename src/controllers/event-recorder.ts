// The server's own Events (docs/events.md), as client-go's event recorder
// records them: a repeat of the same event (same involved object, type,
// reason, message and source) within the aggregation window updates the
// existing Event (count + 1, lastTimestamp, series) instead of creating a new
// one, and a token bucket per source + involved object (burst 25, one token
// per 5 minutes — client-go's defaults) drops events beyond that, so a hot
// loop cannot flood the store. The writer (EventSink) and the clock are
// injected: the composition root passes the core v1 Event store and its Clock
// (src/core/clock.ts), so timestamps, aggregation and the bucket follow a
// ManualClock in tests.

import { type Clock, systemClock } from '../core/clock.js';

export interface InvolvedObject {
  apiVersion?: string;
  kind: string;
  namespace?: string;
  name: string;
  uid?: string;
}

export interface EventSink {
  /** creates the Event in `namespace`; resolves with its name */
  create(namespace: string, event: Record<string, unknown>): Promise<string>;
  /** sets count/lastTimestamp/series of an existing Event; false when it is gone */
  update(namespace: string, name: string, patch: { count: number; lastTimestamp: string; series: { count: number; lastObservedTime: string } }): Promise<boolean>;
}

export interface RecorderOptions {
  component: string;
  host?: string;
  /** timestamps, the aggregation window and the token bucket (default the system clock) */
  clock?: Clock;
  /** overrides `clock.now` (tests that only move time) */
  now?: () => number;
  /** bucket size per source + object (client-go: 25) */
  burst?: number;
  /** ms per token refilled (client-go: 5 minutes) */
  refillMs?: number;
  /** how long a repeat updates the same Event (client-go's cache lives 10 minutes) */
  aggregateWindowMs?: number;
  log?: (msg: string) => void;
}

interface Seen {
  namespace: string;
  name: Promise<string | undefined>;
  count: number;
  last: number;
}

export class EventRecorder {
  private readonly seen = new Map<string, Seen>();
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private readonly now: () => number;
  private readonly burst: number;
  private readonly refillMs: number;
  private readonly windowMs: number;
  /** events dropped by the rate limit (tests and metrics read it) */
  dropped = 0;
  private seq = 0;

  constructor(
    private readonly sink: EventSink,
    private readonly o: RecorderOptions,
  ) {
    const clock = o.clock ?? systemClock;
    this.now = o.now ?? (() => clock.now());
    this.burst = o.burst ?? 25;
    this.refillMs = o.refillMs ?? 300_000;
    this.windowMs = o.aggregateWindowMs ?? 600_000;
  }

  /**
   * The same sink and settings as another source: each kube controller
   * records under its own component (`deployment-controller`,
   * `default-scheduler`, …), which `kubectl describe` shows as "From" and
   * the `source` field selector matches. Aggregation and the rate limit are
   * keyed by component already, so the recorders share nothing else.
   */
  forComponent(component: string): EventRecorder {
    return new EventRecorder(this.sink, { ...this.o, component });
  }

  /** records one occurrence; resolves once written (never rejects: events are best effort, as in kube) */
  async event(obj: InvolvedObject, type: 'Normal' | 'Warning', reason: string, message: string): Promise<void> {
    const objKey = `${obj.kind}/${obj.namespace ?? ''}/${obj.name}/${obj.uid ?? ''}`;
    if (!this.take(`${this.o.component}|${objKey}`)) {
      this.dropped++;
      return;
    }
    const t = this.now();
    const stamp = new Date(t).toISOString().replace(/\.\d+Z$/, 'Z');
    const micro = new Date(t).toISOString().replace(/Z$/, '000Z');
    const key = [objKey, type, reason, message, this.o.component].join('|');
    const namespace = obj.namespace || 'default';
    const prev = this.seen.get(key);
    try {
      if (prev && t - prev.last < this.windowMs) {
        prev.count++;
        prev.last = t;
        const name = await prev.name;
        if (name && (await this.sink.update(prev.namespace, name, { count: prev.count, lastTimestamp: stamp, series: { count: prev.count, lastObservedTime: micro } }))) return;
      }
      const entry: Seen = { namespace, name: Promise.resolve(undefined), count: 1, last: t };
      entry.name = this.sink
        .create(namespace, {
          apiVersion: 'v1',
          kind: 'Event',
          // named as client-go names them: <object>.<hex nanoseconds>
          metadata: { name: `${obj.name}.${(BigInt(t) * 1_000_000n + BigInt(this.seq++ % 1_000_000)).toString(16)}` },
          involvedObject: { ...obj },
          reason,
          message,
          type,
          source: { component: this.o.component, ...(this.o.host ? { host: this.o.host } : {}) },
          firstTimestamp: stamp,
          lastTimestamp: stamp,
          count: 1,
          eventTime: null,
          reportingComponent: this.o.component,
          reportingInstance: this.o.host ?? '',
        })
        .catch((e: Error) => {
          this.o.log?.(`event ${reason} for ${objKey}: ${e.message}`);
          return undefined;
        });
      this.seen.set(key, entry);
      await entry.name;
    } catch (e) {
      this.o.log?.(`event ${reason} for ${objKey}: ${(e as Error).message}`);
    }
  }

  private take(key: string): boolean {
    const t = this.now();
    const b = this.buckets.get(key) ?? { tokens: this.burst, at: t };
    const refill = Math.floor((t - b.at) / this.refillMs);
    if (refill > 0) {
      b.tokens = Math.min(this.burst, b.tokens + refill);
      b.at += refill * this.refillMs;
    }
    if (b.tokens >= this.burst) b.at = t;
    this.buckets.set(key, b);
    if (b.tokens <= 0) return false;
    b.tokens--;
    return true;
  }
}
