// Authorization metrics (issue #10 item 9), named as kube-apiserver names
// them so existing dashboards work: decisions per authorizer, webhook
// latency and outcome, fail-open count, match-condition exclusions and
// errors, config reloads. The webhook cache hit counter has no kube
// equivalent; it is documented in docs/authorization.md.

import client from 'prom-client';
import { KeyedCounter } from '../../core/metric-series.js';
import type { ChainEntry, DecisionObserver } from './chain.js';
import type { Decision } from './types.js';

/** what one webhook authorizer reports; results are kube's: success, timeout, error */
export interface WebhookMetricsSink {
  evaluated(name: string, result: 'success' | 'timeout' | 'error', seconds: number): void;
  failOpen(name: string, result: 'timeout' | 'error'): void;
  cacheHit(name: string): void;
  matchConditionExcluded(name: string): void;
  matchConditionError(name: string): void;
}

export class AuthorizationMetrics implements WebhookMetricsSink {
  private readonly decisions: KeyedCounter<'type' | 'name' | 'decision'>;
  private readonly evaluations: client.Counter<'name' | 'result'>;
  private readonly duration: client.Histogram<'name' | 'result'>;
  private readonly failOpens: client.Counter<'name' | 'result'>;
  private readonly cacheHits: client.Counter<'name'>;
  private readonly excluded: client.Counter<'type' | 'name'>;
  private readonly conditionErrors: client.Counter<'type' | 'name'>;
  private readonly reloads: client.Counter<'status'>;
  private readonly reloadTime: client.Gauge<'status'>;
  private readonly decisionKeys = new WeakMap<ChainEntry, { allowed: string; denied: string }>();

  constructor(registry: client.Registry) {
    const registers = [registry];
    const counter = <L extends string>(name: string, help: string, labelNames: readonly L[]) => new client.Counter<L>({ name, help, labelNames, registers });
    // one per request: keyed by the chain entry, not prom-client's label hashing (src/core/metric-series.ts)
    this.decisions = new KeyedCounter({
      name: 'apiserver_authorization_decisions_total',
      help: 'Total number of terminal decisions made by an authorizer split by authorizer type, name, and decision.',
      labelNames: ['type', 'name', 'decision'] as const,
      registers,
    });
    this.evaluations = counter('apiserver_authorization_webhook_evaluations_total', 'Round-trips to authorization webhooks.', ['name', 'result'] as const);
    this.duration = new client.Histogram({
      name: 'apiserver_authorization_webhook_duration_seconds',
      help: 'Request latency in seconds.',
      labelNames: ['name', 'result'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.failOpens = counter('apiserver_authorization_webhook_evaluations_fail_open_total', 'NoOpinion results due to webhook timeout or error.', ['name', 'result'] as const);
    this.cacheHits = counter('apiserver_authorization_webhook_cache_hits_total', 'Authorization webhook answers served from the cache instead of a round-trip.', ['name'] as const);
    this.excluded = counter('apiserver_authorization_match_condition_exclusions_total', 'Total number of exclusions when an authorization webhook is skipped by match conditions.', ['type', 'name'] as const);
    this.conditionErrors = counter('apiserver_authorization_match_condition_evaluation_errors_total', 'Total number of errors when an authorization webhook encounters a match condition error split by authorizer type and identifier name.', ['type', 'name'] as const);
    this.reloads = counter('apiserver_authorization_config_controller_automatic_reloads_total', 'Total number of automatic reloads of authorization configuration split by status.', ['status'] as const);
    this.reloadTime = new client.Gauge({
      name: 'apiserver_authorization_config_controller_automatic_reload_last_timestamp_seconds',
      help: 'Timestamp of the last automatic reload of authorization configuration split by status.',
      labelNames: ['status'],
      registers,
    });
  }

  /** the chain's DecisionObserver: terminal decisions only, as kube counts them */
  readonly observeDecision: DecisionObserver = (entry: ChainEntry | undefined, d: Decision) => {
    if (!entry || d.decision === 'noOpinion') return;
    const decision = d.decision === 'allow' ? 'allowed' : 'denied';
    let keys = this.decisionKeys.get(entry);
    if (!keys) {
      // any string naming the series once per entry and decision will do
      const base = JSON.stringify([entry.type, entry.name]);
      keys = { allowed: `${base}allowed`, denied: `${base}denied` };
      this.decisionKeys.set(entry, keys);
    }
    const key = keys[decision];
    if (!this.decisions.inc(key)) this.decisions.add(key, { type: entry.type, name: entry.name, decision });
  };

  evaluated(name: string, result: 'success' | 'timeout' | 'error', seconds: number): void {
    this.evaluations.inc({ name, result });
    this.duration.observe({ name, result }, seconds);
  }

  failOpen(name: string, result: 'timeout' | 'error'): void {
    this.failOpens.inc({ name, result });
  }

  cacheHit(name: string): void {
    this.cacheHits.inc({ name });
  }

  matchConditionExcluded(name: string): void {
    this.excluded.inc({ type: 'Webhook', name });
  }

  matchConditionError(name: string): void {
    this.conditionErrors.inc({ type: 'Webhook', name });
  }

  reloaded(status: 'success' | 'failure', nowMs: number): void {
    this.reloads.inc({ status });
    this.reloadTime.set({ status }, nowMs / 1000);
  }
}
