// client-go's event correlator (tools/record/events_cache.go), as kubelet
// runs it before every Event write: pure logic on a time passed in, so tests
// drive it on a simulated clock.
//
// 1. aggregation: more than 9 *similar* events (same source, object, type,
//    reason; different messages) within 10 minutes become one Event whose
//    message is "(combined from similar events): <last message>";
// 2. counting: a repeat of the *same* event (its message too) is a patch of
//    the Event already written: count + 1, lastTimestamp, message;
// 3. spam filter: per source + object (not per reason) a token bucket of 25,
//    refilled one token per 5 minutes; a filtered event is not written, but
//    step 2 has counted it, so the next write carries the true count.
// The caches are LRUs of 4096 entries, as client-go's.

export interface ObjectRef {
  kind: string;
  apiVersion?: string;
  namespace?: string;
  name: string;
  uid?: string;
  resourceVersion?: string;
  fieldPath?: string;
}

/** a core/v1 Event as kubelet writes it */
export interface CoreEvent {
  apiVersion: 'v1';
  kind: 'Event';
  metadata: { name: string; namespace: string; resourceVersion?: string };
  involvedObject: ObjectRef;
  reason: string;
  message: string;
  source: { component: string; host?: string };
  firstTimestamp: string;
  lastTimestamp: string;
  count: number;
  type: 'Normal' | 'Warning';
  eventTime: null;
  reportingComponent: string;
  reportingInstance: string;
}

/** what to write: a new Event, or a patch of the one named in `event.metadata` */
export type Correlated = { skip: true } | { skip: false; event: CoreEvent; patch?: { count: number; lastTimestamp: string; message: string } };

export interface CorrelatorOptions {
  /** similar events (differing by message) before aggregation (client-go: 10) */
  maxSimilar?: number;
  /** how long a group of similar events stays together (client-go: 600 s) */
  similarWindowMs?: number;
  /** spam filter bucket size per source + object (client-go: 25) */
  burst?: number;
  /** spam filter refill rate in events per second (client-go: 1/300) */
  qps?: number;
  /** entries per cache (client-go: 4096) */
  cacheSize?: number;
}

/** a Map used as a least-recently-used cache */
class Lru<V> {
  private readonly m = new Map<string, V>();
  constructor(private readonly max: number) {}
  get(k: string): V | undefined {
    const v = this.m.get(k);
    if (v !== undefined) {
      this.m.delete(k);
      this.m.set(k, v);
    }
    return v;
  }
  set(k: string, v: V): void {
    this.m.delete(k);
    this.m.set(k, v);
    if (this.m.size > this.max) this.m.delete(this.m.keys().next().value!);
  }
  get size(): number {
    return this.m.size;
  }
}

const SEP = '\u0000';
const objectKey = (e: CoreEvent) => {
  const o = e.involvedObject;
  return [e.source.component, e.source.host ?? '', o.kind, o.namespace ?? '', o.name, o.uid ?? '', o.apiVersion ?? ''].join(SEP);
};
/** the same event: everything but the times and the count */
const eventKey = (e: CoreEvent) => [objectKey(e), e.involvedObject.fieldPath ?? '', e.type, e.reason, e.message].join(SEP);
/** similar events: the message aside */
const similarKey = (e: CoreEvent) => [objectKey(e), e.type, e.reason, e.reportingComponent, e.reportingInstance].join(SEP);

/** the name client-go gives an Event: `<object>.<hex nanoseconds>` */
export const eventName = (objectName: string, nanos: bigint) => `${objectName}.${nanos.toString(16)}`;

interface Seen {
  count: number;
  firstTimestamp: string;
  name: string;
  resourceVersion?: string;
}

export class EventCorrelator {
  private readonly similar: Lru<{ messages: Set<string>; last: number }>;
  private readonly seen: Lru<Seen>;
  private readonly buckets: Lru<{ tokens: number; at: number }>;
  private readonly maxSimilar: number;
  private readonly windowMs: number;
  private readonly burst: number;
  private readonly qps: number;
  private seq = 0;

  constructor(o: CorrelatorOptions = {}) {
    const size = o.cacheSize ?? 4096;
    this.similar = new Lru(size);
    this.seen = new Lru(size);
    this.buckets = new Lru(size);
    this.maxSimilar = o.maxSimilar ?? 10;
    this.windowMs = o.similarWindowMs ?? 600_000;
    this.burst = o.burst ?? 25;
    this.qps = o.qps ?? 1 / 300;
  }

  /** decides what `e`, recorded at `now` (ms), becomes */
  correlate(e: CoreEvent, now: number, stamp: string): Correlated {
    const [aggregated, key] = this.aggregate(e, now, stamp);
    const observed = this.observe(aggregated, key);
    if (!this.take(objectKey(observed.event), now)) return { skip: true };
    return { skip: false, ...observed };
  }

  /** the server's copy after a write: its name and resourceVersion are what later patches address */
  written(e: CoreEvent): void {
    this.seen.set(eventKey(e), { count: e.count, firstTimestamp: e.firstTimestamp, name: e.metadata.name, resourceVersion: e.metadata.resourceVersion });
  }

  private aggregate(e: CoreEvent, now: number, stamp: string): [CoreEvent, string] {
    const group = similarKey(e);
    let rec = this.similar.get(group);
    if (!rec || now - rec.last > this.windowMs) rec = { messages: new Set(), last: now };
    rec.messages.add(e.message);
    rec.last = now;
    this.similar.set(group, rec);
    if (rec.messages.size < this.maxSimilar) return [e, eventKey(e)];
    // keep the set from growing past the threshold (client-go drops any one member)
    rec.messages.delete(rec.messages.values().next().value!);
    const nanos = BigInt(now) * 1_000_000n + BigInt(this.seq++ % 1_000_000);
    const combined: CoreEvent = {
      ...e,
      metadata: { name: eventName(e.involvedObject.name, nanos), namespace: e.metadata.namespace },
      message: `(combined from similar events): ${e.message}`,
      count: 1,
      firstTimestamp: stamp,
      lastTimestamp: stamp,
    };
    // the group's key, so that every later combined event counts up the same Event
    return [combined, group];
  }

  private observe(e: CoreEvent, key: string): { event: CoreEvent; patch?: { count: number; lastTimestamp: string; message: string } } {
    const last = this.seen.get(key);
    let event = e;
    let patch: { count: number; lastTimestamp: string; message: string } | undefined;
    if (last && last.count > 0) {
      event = { ...e, metadata: { ...e.metadata, name: last.name, resourceVersion: last.resourceVersion }, firstTimestamp: last.firstTimestamp, count: last.count + 1 };
      patch = { count: event.count, lastTimestamp: event.lastTimestamp, message: event.message };
    }
    this.seen.set(key, { count: event.count, firstTimestamp: event.firstTimestamp, name: event.metadata.name, resourceVersion: event.metadata.resourceVersion });
    return { event, patch };
  }

  /** golang.org/x/time/rate semantics: starts full, refills continuously, one token per event */
  private take(key: string, now: number): boolean {
    const b = this.buckets.get(key) ?? { tokens: this.burst, at: now };
    b.tokens = Math.min(this.burst, b.tokens + ((now - b.at) / 1000) * this.qps);
    b.at = now;
    const ok = b.tokens >= 1;
    if (ok) b.tokens -= 1;
    this.buckets.set(key, b);
    return ok;
  }
}
