// One watch stream: its filter, its encoder and its sink. Decides which event
// type this watcher sees (selector transitions, spec 000 §4.2/§6), writes
// shared encodings, and ends itself when the client falls too far behind.

import { type WatchEndReason, type WatcherEvent, type WatcherState, initialWatcher, stepWatcher } from '../lifecycles/watcher.js';
import type { Status } from '../core/errors.js';
import type { StreamSink } from '../core/stream.js';
import type { ApiObject } from '../registry/types.js';
import { type CacheEvent, type CachedObject, deletedObject } from './cache.js';
import type { WatchEncoder } from './encode.js';
import type { WatchBacklogBudget } from './backlog-budget.js';

export type ObjectFilter = (obj: ApiObject) => boolean;

/** encodings valid for one dispatch pass only (non-durable encoders, e.g. tables) */
export type PassMemo = Map<CacheEvent, Map<string, Buffer>>;

/**
 * What one dispatch pass shares between its watchers (docs/watch.md
 * "Fan-out and encoding once"): per-event encodings of non-durable encoders,
 * and the **batch bytes**: every event of the pass a watcher gets, concatenated
 * once per (share key, namespace, first event) and written to each such
 * watcher as the same Buffer.
 */
export class DispatchMemo {
  readonly events: PassMemo = new Map();
  /** share key -> watcher namespace -> index of the first event -> [bytes, events in them] */
  private readonly batches = new Map<string, Map<string, Map<number, Batch>>>();

  batch(shareKey: string, namespace: string, from: number): Batch | undefined {
    return this.batches.get(shareKey)?.get(namespace)?.get(from);
  }

  setBatch(shareKey: string, namespace: string, from: number, b: Batch): void {
    let byNs = this.batches.get(shareKey);
    if (!byNs) this.batches.set(shareKey, (byNs = new Map()));
    let byFrom = byNs.get(namespace);
    if (!byFrom) byNs.set(namespace, (byFrom = new Map()));
    byFrom.set(from, b);
  }
}

interface Batch {
  bytes: Buffer;
  count: number;
}

type ObjectEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface WatcherOptions {
  namespace: string;
  /** undefined = every object matches */
  filter?: ObjectFilter;
  encoder: WatchEncoder;
  /**
   * the served form of a cached (stored) object, for versions served over
   * another version's storage (src/registry/conversion.ts); memoised by the caller
   */
  view?: (stored: ApiObject) => ApiObject;
  sink: StreamSink;
  allowBookmarks: boolean;
  /** the sink backlog (bytes) beyond which this watcher is ended; the initial burst adds its own size to the allowance */
  maxBacklogBytes: number;
  /** called once when the watcher ends for any reason */
  onEnd: (w: Watcher, why: EndReason) => void;
  /** the server-wide budget on queued bytes (src/watch/backlog-budget.ts), told this watcher's backlog after each write */
  budget?: WatchBacklogBudget<Watcher>;
}

export type EndReason = WatchEndReason;

const EMPTY = Buffer.alloc(0);

export class Watcher {
  readonly namespace: string;
  readonly allowBookmarks: boolean;
  /** every event with a revision <= this was covered by the starting state or replay */
  sentRevision = 0;
  /** when the next bookmark is due (ms; Infinity: none) */
  nextBookmarkAt = 0;
  /** when the stream ends (`timeoutSeconds` or the server's default), ms on the service clock */
  deadline = Infinity;
  // the lifecycle's rules are src/lifecycles/watcher.ts; `state` mirrors the snapshot for the hot path
  private snapshot = initialWatcher();
  private state: WatcherState = 'starting';
  private allowance: number;
  eventsSent = 0;
  /** `<type>|<shareKey>` of a durable encoder, built once: no string is built per delivery */
  private readonly typeKeys: Record<ObjectEventType, string> | undefined;

  constructor(private readonly opts: WatcherOptions) {
    this.namespace = opts.namespace;
    this.allowBookmarks = opts.allowBookmarks;
    this.allowance = opts.maxBacklogBytes;
    const enc = opts.encoder;
    if (enc.durable) {
      const k = enc.shareKey();
      this.typeKeys = { ADDED: `ADDED|${k}`, MODIFIED: `MODIFIED|${k}`, DELETED: `DELETED|${k}` };
    }
  }

  /** whether an event of this cache concerns this watcher's namespace ('' = all, or a cluster-scoped type) */
  private inNamespace(ev: CacheEvent): boolean {
    return this.namespace === '' || ev.namespace === this.namespace;
  }

  get isEnded(): boolean {
    return this.state === 'ended';
  }

  get isLive(): boolean {
    return this.state === 'live';
  }

  matches(obj: ApiObject | undefined): boolean {
    if (!obj) return false;
    return this.opts.filter ? this.opts.filter(this.served(obj)) : true;
  }

  private served(obj: ApiObject): ApiObject {
    return this.opts.view ? this.opts.view(obj) : obj;
  }

  /** synthetic ADDED events for the starting state (spec 000 §4.6 watch table) */
  sendInitial(objects: CachedObject[]): void {
    const enc = this.opts.encoder;
    let bytes = 0;
    for (const o of objects) {
      if (this.isEnded) return;
      if (!this.matches(o.object)) continue;
      const key = `ADDED|${enc.shareKey()}`;
      let b: Buffer | undefined;
      if (enc.durable) {
        b = o.encodings?.get(key);
        if (!b) {
          b = enc.objectEvent('ADDED', this.served(o.object));
          (o.encodings ??= new Map()).set(key, b);
        }
      } else b = enc.objectEvent('ADDED', this.served(o.object));
      enc.sentObjectEvent();
      bytes += b.length;
      this.write(b, 1);
    }
    // the initial burst may sit in the socket buffer for a while; it is not "falling behind"
    this.allowance += bytes;
    // but it is memory held for this client: the server-wide budget counts it
    this.reportBacklog();
  }

  /** one replayed event; returns false when the watcher ended */
  deliver(ev: CacheEvent): boolean {
    if (this.isEnded) return false;
    const b = this.encodeFor(ev, undefined);
    if (!b) return true;
    this.write(b, 1);
    return this.checkBacklog();
  }

  /**
   * Every event of `events` (one cache, revision order) this watcher gets,
   * in ONE write: one uWS write, one read and one TLS record in the front,
   * one DATA frame on HTTP/2, however many events a pass carries. Events at
   * or below `sentRevision` (covered by the start) and of other namespaces
   * are skipped. Watchers without a filter and with a durable encoder get
   * the same sequence of bytes for the same (share key, namespace, first
   * event), so that concatenation is built once per pass and shared
   * (`memo`); the per-watcher path then allocates nothing. Returns the
   * number of events written.
   */
  deliverBatch(events: readonly CacheEvent[], memo: DispatchMemo): number {
    if (this.isEnded) return 0;
    // events are in revision order: skip the prefix the start already covered
    let from = 0;
    while (from < events.length && events[from]!.revision <= this.sentRevision) from++;
    if (from === events.length) return 0;
    const enc = this.opts.encoder;
    let bytes: Buffer | undefined;
    let count = 0;
    if (!this.opts.filter && this.typeKeys) {
      const shareKey = enc.shareKey();
      let batch = memo.batch(shareKey, this.namespace, from);
      if (!batch) {
        batch = this.concatFrom(events, from, undefined);
        memo.setBatch(shareKey, this.namespace, from, batch);
      }
      bytes = batch.bytes;
      count = batch.count;
    } else {
      const batch = this.concatFrom(events, from, memo);
      bytes = batch.bytes;
      count = batch.count;
    }
    if (count === 0) return 0;
    this.write(bytes, count);
    this.checkBacklog();
    return count;
  }

  /** this watcher's events of `events` from `from`, concatenated (one event: its shared Buffer itself) */
  private concatFrom(events: readonly CacheEvent[], from: number, memo: DispatchMemo | undefined): Batch {
    let first: Buffer | undefined;
    let parts: Buffer[] | undefined;
    let total = 0;
    for (let i = from; i < events.length; i++) {
      const ev = events[i]!;
      if (!this.inNamespace(ev)) continue;
      const b = this.encodeFor(ev, memo);
      if (!b) continue;
      total += b.length;
      if (!first) first = b;
      else (parts ??= [first]).push(b);
    }
    if (!first) return { bytes: EMPTY, count: 0 };
    if (!parts) return { bytes: first, count: 1 };
    return { bytes: Buffer.concat(parts, total), count: parts.length };
  }

  /** the (shared) encoding of what this watcher sees of `ev`, or undefined when it sees nothing */
  private encodeFor(ev: CacheEvent, memo: DispatchMemo | undefined): Buffer | undefined {
    if (!this.inNamespace(ev)) return undefined;
    const type = this.eventTypeFor(ev);
    if (type === undefined) return undefined;
    const enc = this.opts.encoder;
    let store: Map<string, Buffer> | undefined;
    let key: string;
    if (this.typeKeys) {
      key = this.typeKeys[type];
      store = ev.encodings ??= new Map();
    } else {
      key = `${type}|${enc.shareKey()}`;
      if (memo) {
        store = memo.events.get(ev);
        if (!store) {
          store = new Map();
          memo.events.set(ev, store);
        }
      }
    }
    let b = store?.get(key);
    if (!b) {
      b = enc.objectEvent(type, this.served(type === 'DELETED' ? deletedObject(ev) : ev.object!));
      store?.set(key, b);
    }
    enc.sentObjectEvent();
    return b;
  }

  /**
   * What this watcher sees of an event: a MODIFIED that moves an object into
   * the selection is ADDED, out of it is DELETED (with the old object at the
   * new revision), as a Kubernetes watch with a selector does.
   */
  eventTypeFor(ev: CacheEvent): 'ADDED' | 'MODIFIED' | 'DELETED' | undefined {
    if (!this.opts.filter) return ev.type;
    switch (ev.type) {
      case 'ADDED':
        return this.matches(ev.object) ? 'ADDED' : undefined;
      case 'DELETED':
        return this.matches(ev.prev) ? 'DELETED' : undefined;
      case 'MODIFIED': {
        const now = this.matches(ev.object);
        const before = this.matches(ev.prev);
        if (now && before) return 'MODIFIED';
        if (now) return 'ADDED';
        if (before) return 'DELETED';
        return undefined;
      }
    }
  }

  bookmark(resourceVersion: number, annotations?: Record<string, string>): void {
    if (this.isEnded) return;
    this.write(this.opts.encoder.bookmark(String(resourceVersion), annotations), 1);
    this.checkBacklog();
  }

  /** the watch is live: events are dispatched to it from now on */
  goLive(): void {
    this.send({ type: 'GO_LIVE' });
  }

  /** a final ERROR event, then the end of the stream */
  fail(status: Status, why: EndReason = 'error'): void {
    if (this.isEnded) return;
    this.write(this.opts.encoder.error(status), 1);
    this.finish(why);
  }

  /** ends the stream cleanly (timeout, server shutdown) */
  end(why: EndReason): void {
    this.finish(why);
  }

  /** the client went away: free everything, leave the sink alone (the gateway owns the socket) */
  stop(): void {
    this.finish('stopped');
  }

  /** ended by the server-wide backlog budget (src/watch/backlog-budget.ts): 410 Expired, the client re-lists */
  expire(message: string): void {
    this.fail({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason: 'Expired', code: 410 }, 'budget');
  }

  private finish(why: EndReason): void {
    this.send({ type: 'END', why });
  }

  private send(event: WatcherEvent): void {
    const step = stepWatcher(this.snapshot, event);
    this.snapshot = step.snapshot;
    this.state = step.state;
    for (const action of step.actions) {
      if (action === 'endSink') {
        try {
          this.opts.sink.end();
        } catch {
          // the socket may be gone already
        }
      } else if (event.type === 'END') {
        this.opts.budget?.remove(this);
        this.opts.onEnd(this, event.why);
      }
    }
  }

  /** `events`: how many watch events `b` holds */
  private write(b: Buffer, events: number): void {
    this.eventsSent += events;
    try {
      // `false` means the socket is backed up; the backlog check below decides what to do about it
      this.opts.sink.write(b);
    } catch {
      this.finish('stopped');
    }
  }

  private reportBacklog(): void {
    if (!this.isEnded) this.opts.budget?.update(this, this.opts.sink.backlog());
  }

  /** a watcher whose unsent bytes grow past the allowance is ended with 410 so the client re-lists (docs/watch.md) */
  private checkBacklog(): boolean {
    if (this.isEnded) return false;
    const backlog = this.opts.sink.backlog();
    if (backlog <= this.allowance) {
      this.opts.budget?.update(this, backlog);
      return !this.isEnded;
    }
    this.fail(
      {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: `watcher fell behind (${backlog} bytes not yet sent, limit ${this.allowance}); re-list and watch again`,
        reason: 'Expired',
        code: 410,
      },
      'slow',
    );
    return false;
  }
}
