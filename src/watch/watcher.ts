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

export class Watcher {
  readonly namespace: string;
  readonly allowBookmarks: boolean;
  /** every event with a revision <= this was covered by the starting state or replay */
  sentRevision = 0;
  /** when the next bookmark is due (ms) */
  nextBookmarkAt = 0;
  // the lifecycle's rules are src/lifecycles/watcher.ts; `state` mirrors the snapshot for the hot path
  private snapshot = initialWatcher();
  private state: WatcherState = 'starting';
  private allowance: number;
  eventsSent = 0;

  constructor(private readonly opts: WatcherOptions) {
    this.namespace = opts.namespace;
    this.allowBookmarks = opts.allowBookmarks;
    this.allowance = opts.maxBacklogBytes;
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
      this.write(b);
    }
    // the initial burst may sit in the socket buffer for a while; it is not "falling behind"
    this.allowance += bytes;
    // but it is memory held for this client: the server-wide budget counts it
    this.reportBacklog();
  }

  /** replayed or live event; returns false when the watcher ended */
  deliver(ev: CacheEvent, memo?: PassMemo): boolean {
    if (this.isEnded) return false;
    const type = this.eventTypeFor(ev);
    if (type === undefined) return true;
    const enc = this.opts.encoder;
    const key = `${type}|${enc.shareKey()}`;
    let store: Map<string, Buffer> | undefined;
    if (enc.durable) store = ev.encodings ??= new Map();
    else if (memo) {
      store = memo.get(ev);
      if (!store) {
        store = new Map();
        memo.set(ev, store);
      }
    }
    let b = store?.get(key);
    if (!b) {
      b = enc.objectEvent(type, this.served(type === 'DELETED' ? deletedObject(ev) : ev.object!));
      store?.set(key, b);
    }
    enc.sentObjectEvent();
    this.write(b);
    return this.checkBacklog();
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
    this.write(this.opts.encoder.bookmark(String(resourceVersion), annotations));
    this.checkBacklog();
  }

  /** the watch is live: events are dispatched to it from now on */
  goLive(): void {
    this.send({ type: 'GO_LIVE' });
  }

  /** a final ERROR event, then the end of the stream */
  fail(status: Status, why: EndReason = 'error'): void {
    if (this.isEnded) return;
    this.write(this.opts.encoder.error(status));
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

  private write(b: Buffer): void {
    this.eventsSent++;
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
