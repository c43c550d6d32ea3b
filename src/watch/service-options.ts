// What the watch service takes (its options and their defaults), what an
// opened watch is, and the figures `stats()` reports.

import type { Clock } from '../core/clock.js';
import type { Random } from '../core/random.js';
import type { StreamSink } from '../core/stream.js';
import type { ResourceDefinition } from '../registry/types.js';
import type { WatchEncoder } from './encode.js';
import type { WatchParams } from './params.js';

export interface WatchServiceOptions {
  /** how long history is kept (spec 000 §8: default 5 minutes) */
  windowMs?: number;
  /** the most events one type's window keeps */
  windowMaxEvents?: number;
  /** mean interval between BOOKMARK events (jittered ±10%) */
  bookmarkIntervalMs?: number;
  /** a watcher whose socket backlog exceeds this is ended with 410 */
  maxBacklogBytes?: number;
  /**
   * The most bytes queued for all watchers together (src/watch/backlog-budget.ts);
   * beyond it the watchers holding the most are ended with 410 first. Default
   * 256 MiB; 0 = no budget.
   */
  backlogBudgetBytes?: number;
  /** the watch duration when the client gives no timeoutSeconds (Kubernetes: random in [30, 60) minutes) */
  defaultTimeoutMs?: () => number;
  /** `<domain>/initial-events-end` is set next to `k8s.io/initial-events-end` (spec: orch.io) */
  apiDomain?: string;
  /** time for windows, bookmarks, idle caches and timeouts (the composition root's; tests pass a ManualClock) */
  clock?: Clock;
  /** bookmark jitter and the default timeout's spread */
  random?: Random;
  /**
   * The most watchers one dispatch slice writes to (each gets all of the
   * pass's events that concern it in one write) before it yields to the
   * event loop (docs/watch.md "Fan-out in slices"): requests, responses and
   * TLS work run between slices. Default 256 (measured against 2048 there).
   */
  fanoutSlice?: number;
}

/** A watch the endpoint layer validated: what to watch, how to encode it, when the client is gone. */
export interface WatchOpenOptions {
  def: ResourceDefinition;
  /** the request's namespace ('' = all; ignored for cluster-scoped kinds) */
  namespace: string;
  params: WatchParams;
  encoder: WatchEncoder;
  signal: AbortSignal;
}

/** The stream of an opened watch; `start` begins producing, `stop` ends it (client gone, server closing). */
export interface WatchStream {
  status: number;
  contentType: string;
  start(sink: StreamSink): void;
  stop(): void;
}

export interface WatchServiceStats {
  /** open watch streams (live or still starting) */
  watchers: number;
  /** watch caches (one per watched resource type) */
  caches: number;
  /** events retained across all windows */
  windowEvents: number;
  /** objects held across all caches */
  cachedObjects: number;
  /** the last applied revision the service has seen */
  revision: number;
  /** watchers ended because they fell behind */
  slowWatchersEnded: number;
  /** watchers ended because the server-wide backlog budget was exceeded */
  budgetWatchersEnded: number;
  /** bytes queued for all watchers (an upper bound: see backlog-budget.ts) */
  backlogBytes: number;
  /** events written to watchers (including initial events and bookmarks) */
  eventsSent: number;
  /** dispatch passes that yielded to the event loop before they were done (fanoutSlice) */
  fanoutYields: number;
}

/**
 * Watchers per fan-out slice. With batches per watcher, small slices no
 * longer cost the batching (events pending meanwhile join the next pass),
 * and 256 beat 2048 at 1,000 watchers (docs/watch.md "Fan-out in slices").
 */
export const DEFAULT_FANOUT_SLICE = 256;
/** see WatchServiceOptions.backlogBudgetBytes */
export const DEFAULT_WATCH_BACKLOG_BUDGET_BYTES = 256 * 1024 * 1024;
