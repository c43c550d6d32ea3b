// The /metrics endpoint (Prometheus text format, prom-client). Request
// metrics use the Kubernetes names so existing dashboards and the
// deprecation rules of spec 000 §9.2 (Rule 11) apply to them.

import client from 'prom-client';
import { KeyedCounter, KeyedHistogram } from '../core/metric-series.js';
import type { RequestInfo } from '../endpoints/request.js';

/** the upper-case verb labels (kube's) of the API verbs, made once */
const VERB_LABELS = new Map(['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection', 'proxy', 'head', 'options'].map((v) => [v, v.toUpperCase()]));

/**
 * one string per label tuple, equal only for equal tuples: the values joined
 * by NUL; when one holds a NUL itself (a percent-decoded path segment may),
 * their JSON, which holds no NUL
 */
function tupleKey(a: string, b: string, c: string, d: string): string {
  if (a.includes('\0') || b.includes('\0') || c.includes('\0') || d.includes('\0')) return JSON.stringify([a, b, c, d]);
  return `${a}\0${b}\0${c}\0${d}`;
}

export class ServerMetrics {
  readonly registry = new client.Registry();
  private readonly requests: KeyedCounter<'verb' | 'group' | 'version' | 'resource' | 'subresource' | 'code'>;
  private readonly latency: KeyedHistogram<'verb' | 'group' | 'version' | 'resource'>;
  private readonly deprecated: client.Gauge<'group' | 'version' | 'resource' | 'subresource' | 'removed_release'>;

  constructor() {
    // per request: series named by a key instead of prom-client's label validation and hashing (src/core/metric-series.ts)
    this.requests = new KeyedCounter({
      name: 'apiserver_request_total',
      help: 'Counter of apiserver requests broken out for each verb, API resource and HTTP response code.',
      labelNames: ['verb', 'group', 'version', 'resource', 'subresource', 'code'],
      registers: [this.registry],
    });
    this.latency = new KeyedHistogram({
      name: 'apiserver_request_duration_seconds',
      help: 'Response latency distribution in seconds for each verb, group, version and resource.',
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [this.registry],
    });
    // spec 000 §6: set to 1 for every deprecated API requested; joins apiserver_request_total
    this.deprecated = new client.Gauge({
      name: 'apiserver_requested_deprecated_apis',
      help: 'Gauge of deprecated APIs that have been requested, broken out by API group, version, resource, subresource, and removed_release.',
      labelNames: ['group', 'version', 'resource', 'subresource', 'removed_release'],
      registers: [this.registry],
    });
    client.collectDefaultMetrics({ register: this.registry });
  }

  /** a gauge computed when scraped (store revision, watchers, Raft state, …) */
  gauge(name: string, help: string, read: () => number): void {
    new client.Gauge({
      name,
      help,
      registers: [this.registry],
      collect() {
        this.set(read());
      },
    });
  }

  /** a labelled gauge computed when scraped: one sample per row `read` returns */
  labelledGauge<L extends string>(name: string, help: string, labelNames: readonly L[], read: () => { labels: Record<L, string>; value: number }[]): void {
    new client.Gauge<L>({
      name,
      help,
      labelNames: [...labelNames],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const row of read()) this.set(row.labels as Partial<Record<L, string | number>>, row.value);
      },
    });
  }

  observe(info: RequestInfo, code: number, seconds: number): void {
    // watches are long-running: their duration is not a latency
    const verb = VERB_LABELS.get(info.verb) ?? info.verb.toUpperCase();
    const { group, version, resource, subresource } = info;
    const series = tupleKey(verb, group, version, resource);
    // still one key per tuple: a series key holds 3 NULs or none, a code none
    const key = subresource.includes('\0') ? JSON.stringify([series, subresource, code]) : `${series}\0${subresource}\0${code}`;
    if (!this.requests.inc(key)) this.requests.add(key, { verb, group, version, resource, subresource, code: String(code) });
    if (info.verb !== 'watch' && !this.latency.observe(series, seconds)) this.latency.add(series, { verb, group, version, resource }, seconds);
  }

  deprecatedRequested(info: RequestInfo, removedRelease: string | undefined): void {
    this.deprecated.set(
      { group: info.group, version: info.version, resource: info.resource, subresource: info.subresource, removed_release: removedRelease ?? '' },
      1,
    );
  }

  async render(): Promise<string> {
    return this.registry.metrics();
  }
}
