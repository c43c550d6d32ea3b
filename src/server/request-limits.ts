// Overload protection and deadlines of `orch server` (issue #15): builds the
// flow control the router admits requests through, and exposes its state as
// the metrics kube-apiserver uses for API Priority and Fairness.

import type { Clock } from '../core/clock.js';
import { systemNamespacesOf } from '../core/product-names.js';
import { FlowControl } from '../gateway/flowcontrol/flow-control.js';
import type { ServerMetrics } from './metrics.js';

export interface RequestLimitOptions {
  /** `--max-requests-inflight` (default 400) */
  maxRequestsInflight?: number;
  /** `--max-mutating-requests-inflight` (default 200) */
  maxMutatingRequestsInflight?: number;
  /** `--enable-priority-and-fairness` (default true) */
  enablePriorityAndFairness?: boolean;
  /** `--request-timeout` (default 60 s; 0 = none) */
  requestTimeoutMs?: number;
  /** `--min-request-timeout` (default 1800 s): a watch without timeoutSeconds lasts [1, 2) times this */
  minRequestTimeoutMs?: number;
  /** `--tls-handshake-timeout` (default 32 s): a TLS handshake not finished by then is dropped (src/gateway/tls-front.ts) */
  tlsHandshakeTimeoutMs?: number;
  /** `--disable-http2-serving`: the TLS front offers only HTTP/1.1 (docs/tls.md "HTTP/2") */
  disableHttp2?: boolean;
  /** `--http1-over-mux` (default true): plain HTTP/1.1 requests cross to the main process over the multiplexed channel (docs/tls.md) */
  http1OverMux?: boolean;
  /** `--http2-max-streams-per-connection` (default 1000, as kube-apiserver sets it): SETTINGS_MAX_CONCURRENT_STREAMS */
  http2MaxStreamsPerConnection?: number;
  /** `--watch-backlog-budget` (default 256 MiB; 0 = none): bytes queued for all watchers together (src/watch/backlog-budget.ts) */
  watchBacklogBudgetBytes?: number;
  /**
   * `--max-connections-per-tls-worker` (default 0 = what the open-files limit
   * allows): client connections one TLS worker (or the in-process front) holds
   * at once; more are closed at accept (docs/reliability.md "Connections per TLS worker")
   */
  maxConnectionsPerTlsWorker?: number;
}

export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
export const DEFAULT_MIN_REQUEST_TIMEOUT_MS = 1_800_000;
/**
 * Go's net/http bounds a TLS handshake by the server's read-header timeout,
 * which kube-apiserver sets to 32 s. Shorter would refuse more handshakes on
 * a CPU-starved server, whose clients then retry with new ones (work thrown
 * away); see docs/reliability.md "Slow and broken clients".
 */
export const DEFAULT_TLS_HANDSHAKE_TIMEOUT_MS = 32_000;

/** undefined when both limits are 0 (no protection, as kube's 0 means "no limit") */
export function buildFlowControl(o: RequestLimitOptions, deps: { apiDomain: string; clock: Clock; metrics: ServerMetrics }): FlowControl | undefined {
  const maxRequestsInflight = o.maxRequestsInflight ?? 400;
  const maxMutatingRequestsInflight = o.maxMutatingRequestsInflight ?? 200;
  if (maxRequestsInflight <= 0 && maxMutatingRequestsInflight <= 0) return undefined;
  const fc = new FlowControl({
    maxRequestsInflight,
    maxMutatingRequestsInflight,
    enablePriorityAndFairness: o.enablePriorityAndFairness ?? true,
    requestTimeoutMs: o.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
    systemNamespace: systemNamespacesOf(deps.apiDomain).system,
    nodeLeaseNamespace: systemNamespacesOf(deps.apiDomain).nodeLease,
    clock: deps.clock,
  });
  const m = deps.metrics;
  m.labelledGauge('apiserver_flowcontrol_current_executing_requests', 'Number of requests executing, by priority level.', ['priority_level'], () =>
    fc.stats().map((l) => ({ labels: { priority_level: l.name }, value: l.inFlight })),
  );
  m.labelledGauge('apiserver_flowcontrol_current_inqueue_requests', 'Number of requests waiting in queues, by priority level.', ['priority_level'], () =>
    fc.stats().map((l) => ({ labels: { priority_level: l.name }, value: l.waiting })),
  );
  m.labelledGauge('apiserver_flowcontrol_nominal_limit_seats', 'Requests a priority level may execute at once.', ['priority_level'], () =>
    fc.stats().filter((l) => Number.isFinite(l.limit)).map((l) => ({ labels: { priority_level: l.name }, value: l.limit })),
  );
  m.labelledGauge('apiserver_flowcontrol_rejected_requests_total', 'Requests refused with 429, by priority level and reason.', ['priority_level', 'reason'], () =>
    fc.stats().flatMap((l) => Object.entries(l.rejected).map(([reason, value]) => ({ labels: { priority_level: l.name, reason }, value }))),
  );
  return fc;
}
