// Per-request Prometheus series without prom-client's per-call work (issue 14,
// docs/architecture.md "Third pass: the request path"): prom-client's
// `inc(labels)` / `observe(labels, v)` validate every label, build a hash
// string and look it up on every call (≈ 2.5 % of the main process under API
// creates). Here the caller names the series by a key it builds cheaply, and
// the labels object is built once, when the series is first seen. The
// exposition is prom-client's own: the counter is a real prom-client Counter
// that takes the counts when scraped; the histogram hands prom-client's
// registry the same values a prom-client Histogram would
// (test/unit/metric-series.test.ts compares the text).

import client from 'prom-client';

type Labels<L extends string> = Record<L, string>;

/** A labelled counter whose increments are added to prom-client's counter when it is read. */
export class KeyedCounter<L extends string> {
  private readonly series = new Map<string, { labels: Labels<L>; pending: number }>();
  readonly counter: client.Counter<L>;

  constructor(config: { name: string; help: string; labelNames: readonly L[]; registers: client.Registry[] }) {
    const series = this.series;
    this.counter = new client.Counter<L>({
      name: config.name,
      help: config.help,
      labelNames: [...config.labelNames],
      registers: config.registers,
      collect() {
        for (const s of series.values()) {
          if (s.pending === 0) continue;
          this.inc(s.labels, s.pending);
          s.pending = 0;
        }
      },
    });
  }

  /** +1 for the series `key` names; false when the key is new (then `add` it) */
  inc(key: string): boolean {
    const s = this.series.get(key);
    if (!s) return false;
    s.pending++;
    return true;
  }

  /** a new series, counted once */
  add(key: string, labels: Labels<L>): void {
    this.series.set(key, { labels, pending: 1 });
  }
}

interface HistogramSeries<L extends string> {
  labels: Labels<L>;
  /** observations per bucket (not cumulative), as prom-client keeps them */
  buckets: number[];
  sum: number;
  count: number;
}

interface ValuePair {
  labels: Record<string, string | number>;
  sharedLabels?: Record<string, string>;
  value: number;
  metricName: string;
  exemplar?: null | undefined;
}

/**
 * A labelled histogram registered with prom-client's registry as a metric of
 * its own: what `get`/`getForPromString` return is what prom-client's
 * Histogram returns for the same observations (same order of series, same
 * sums, added in the same order), so the registry renders the same text.
 */
export class KeyedHistogram<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly upperBounds: readonly number[];
  private series = new Map<string, HistogramSeries<L>>();

  constructor(config: { name: string; help: string; buckets: readonly number[]; registers: client.Registry[] }) {
    this.name = config.name;
    this.help = config.help;
    this.upperBounds = [...config.buckets];
    // the registry only reads name, get/getForPromString and reset of what it holds
    for (const r of config.registers) r.registerMetric(this as unknown as client.Metric);
  }

  /** observes `value` in the series `key` names; false when the key is new (then `add` it) */
  observe(key: string, value: number): boolean {
    const s = this.series.get(key);
    if (!s) return false;
    this.record(s, value);
    return true;
  }

  /** a new series, with its first value */
  add(key: string, labels: Labels<L>, value: number): void {
    const s = { labels, buckets: new Array<number>(this.upperBounds.length).fill(0), sum: 0, count: 0 };
    this.record(s, value);
    this.series.set(key, s);
  }

  private record(s: HistogramSeries<L>, value: number): void {
    if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`);
    const bounds = this.upperBounds;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= bounds[i]!) {
        s.buckets[i]!++;
        break;
      }
    }
    s.sum += value;
    s.count += 1;
  }

  reset(): void {
    this.series = new Map();
  }

  async getForPromString(): Promise<{ name: string; help: string; type: string; values: ValuePair[]; aggregator: string }> {
    const bucketName = `${this.name}_bucket`;
    const values: ValuePair[] = [];
    for (const s of this.series.values()) {
      let acc = 0;
      for (let i = 0; i < this.upperBounds.length; i++) {
        acc += s.buckets[i]!;
        values.push({ labels: { le: this.upperBounds[i]! }, sharedLabels: s.labels, value: acc, metricName: bucketName, exemplar: null });
      }
      values.push(
        { labels: { le: '+Inf' }, sharedLabels: s.labels, value: s.count, metricName: bucketName, exemplar: null },
        { labels: {}, sharedLabels: s.labels, value: s.sum, metricName: `${this.name}_sum`, exemplar: undefined },
        { labels: {}, sharedLabels: s.labels, value: s.count, metricName: `${this.name}_count`, exemplar: undefined },
      );
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** prom-client's JSON form: the series' labels merged into each value's */
  async get(): Promise<{ name: string; help: string; type: string; values: ValuePair[]; aggregator: string }> {
    const data = await this.getForPromString();
    data.values = data.values.map(({ sharedLabels, labels, ...rest }) => ({ ...rest, labels: { ...labels, ...sharedLabels } }));
    return data;
  }
}
