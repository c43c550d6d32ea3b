// The keyed series (src/core/metric-series.ts) render what prom-client's own
// Counter and Histogram render for the same observations, and the request
// metrics of ServerMetrics keep one series per label tuple.
import client from 'prom-client';
import { describe, expect, it } from 'vitest';
import { KeyedCounter, KeyedHistogram } from '../../src/core/metric-series.js';
import { ServerMetrics } from '../../src/server/metrics.js';
import type { RequestInfo } from '../../src/endpoints/request.js';

const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

// deterministic values spread over every bucket, +Inf included, with sums that round
function values(n: number): number[] {
  const out: number[] = [];
  let x = 0.000123;
  for (let i = 0; i < n; i++) {
    x = (x * 7.31 + 0.0173) % 97;
    out.push(i % 5 === 0 ? x / 1000 : x);
  }
  return out;
}

describe('KeyedHistogram and KeyedCounter', () => {
  it('render the same text as prom-client for the same observations', async () => {
    const ref = new client.Registry();
    const mine = new client.Registry();
    const refHist = new client.Histogram({ name: 'h_seconds', help: 'latency "quoted" \\ help', labelNames: ['verb', 'resource'], buckets: BUCKETS, registers: [ref] });
    const refCount = new client.Counter({ name: 'c_total', help: 'count', labelNames: ['verb', 'resource', 'code'], registers: [ref] });
    const hist = new KeyedHistogram<'verb' | 'resource'>({ name: 'h_seconds', help: 'latency "quoted" \\ help', buckets: BUCKETS, registers: [mine] });
    const count = new KeyedCounter<'verb' | 'resource' | 'code'>({ name: 'c_total', help: 'count', labelNames: ['verb', 'resource', 'code'], registers: [mine] });
    const tuples = [
      ['POST', 'configmaps'],
      ['GET', 'pods'],
      ['LIST', 'a "quoted"\nvalue\\'],
      ['POST', ''],
    ] as const;
    const vs = values(500);
    vs.forEach((v, i) => {
      const [verb, resource] = tuples[i % tuples.length]!;
      const code = i % 3 === 0 ? '201' : '409';
      refHist.observe({ verb, resource }, v);
      refCount.inc({ verb, resource, code });
      const key = `${verb}|${resource}`;
      if (!hist.observe(key, v)) hist.add(key, { verb, resource }, v);
      if (!count.inc(`${key}|${code}`)) count.add(`${key}|${code}`, { verb, resource, code });
    });
    const refText = await ref.metrics();
    expect(refText).toContain('h_seconds_bucket{le="+Inf",verb="POST",resource="configmaps"} 125');
    expect(await mine.metrics()).toBe(refText);
    expect(await mine.getMetricsAsJSON()).toEqual(await ref.getMetricsAsJSON());
    // counts keep adding up after a scrape (the counter took the pending ones)
    refCount.inc({ verb: 'GET', resource: 'pods', code: '201' });
    expect(count.inc('GET|pods|201')).toBe(true);
    expect(await mine.metrics()).toBe(await ref.metrics());
    refHist.reset();
    hist.reset();
    expect(await mine.metrics()).toBe(await ref.metrics());
  });

  it('refuses a value that is not a number, as prom-client does', () => {
    const hist = new KeyedHistogram<'a'>({ name: 'x_seconds', help: 'x', buckets: [1], registers: [new client.Registry()] });
    expect(() => hist.add('k', { a: '1' }, Number.NaN)).toThrow(TypeError);
    hist.add('k', { a: '1' }, 0.5);
    expect(() => hist.observe('k', Number.POSITIVE_INFINITY)).toThrow(TypeError);
  });
});

describe('ServerMetrics request series', () => {
  const info = (o: Partial<RequestInfo>): RequestInfo => ({ isResourceRequest: true, path: '/', verb: 'create', group: '', version: 'v1', namespace: 'ns', resource: 'configmaps', subresource: '', name: '', ...o });
  const sample = (text: string, line: string) => text.split('\n').find((l) => l.startsWith(line))?.slice(line.length + 1);

  it('counts per verb, group, version, resource, subresource and code', async () => {
    const m = new ServerMetrics();
    for (let i = 0; i < 3; i++) m.observe(info({}), 201, 0.002);
    m.observe(info({}), 409, 0.004);
    m.observe(info({ verb: 'watch' }), 200, 30);
    m.observe(info({ isResourceRequest: false, verb: 'get', path: '/healthz', version: '', resource: '' }), 200, 0.0001);
    const text = await m.render();
    expect(sample(text, 'apiserver_request_total{verb="CREATE",group="",version="v1",resource="configmaps",subresource="",code="201"}')).toBe('3');
    expect(sample(text, 'apiserver_request_total{verb="CREATE",group="",version="v1",resource="configmaps",subresource="",code="409"}')).toBe('1');
    expect(sample(text, 'apiserver_request_total{verb="WATCH",group="",version="v1",resource="configmaps",subresource="",code="200"}')).toBe('1');
    expect(sample(text, 'apiserver_request_total{verb="GET",group="",version="",resource="",subresource="",code="200"}')).toBe('1');
    expect(sample(text, 'apiserver_request_duration_seconds_count{verb="CREATE",group="",version="v1",resource="configmaps"}')).toBe('4');
    expect(sample(text, 'apiserver_request_duration_seconds_bucket{le="0.0025",verb="CREATE",group="",version="v1",resource="configmaps"}')).toBe('3');
    expect(sample(text, 'apiserver_request_duration_seconds_sum{verb="CREATE",group="",version="v1",resource="configmaps"}')).toBe(String(0.002 + 0.002 + 0.002 + 0.004));
    // watches are long-running: no latency
    expect(text).not.toContain('apiserver_request_duration_seconds_count{verb="WATCH"');
  });

  it('keeps label tuples apart even when a value holds the key separator', async () => {
    const m = new ServerMetrics();
    m.observe(info({ group: 'a\u0000b', version: 'c' }), 200, 0.001);
    m.observe(info({ group: 'a', version: 'b\u0000c' }), 200, 0.001);
    m.observe(info({ subresource: 'x\u0000201' }), 200, 0.001);
    m.observe(info({ subresource: 'x' }), 201, 0.001);
    const json = await m.registry.getMetricsAsJSON();
    const total = json.find((x) => x.name === 'apiserver_request_total')!;
    expect(total.values.map((v) => [v.labels.group, v.labels.version, v.labels.subresource, v.labels.code, v.value])).toEqual([
      ['a\u0000b', 'c', '', '200', 1],
      ['a', 'b\u0000c', '', '200', 1],
      ['', 'v1', 'x\u0000201', '200', 1],
      ['', 'v1', 'x', '201', 1],
    ]);
  });
});
