// The resource metrics pipeline's pure parts (docs/metrics.md): the agent's
// Prometheus text as kubelet 1.32 writes it, metrics-server's decoding and
// rate computation, and the Quantity and Duration strings it answers with.

import { describe, expect, it } from 'vitest';
import { formatGoDuration } from '../../src/core/duration.js';
import { formatGoFloat, parsePromText, PromParseError, writePromText } from '../../src/core/prom-text.js';
import { formatBinarySI, formatDecimalSI } from '../../src/core/quantity.js';
import { decodeResourceMetrics } from '../../src/controllers/metrics/decode.js';
import { MetricsStorage, resourceUsage } from '../../src/controllers/metrics/storage.js';
import { ResourceMetricsError, storageResourceMetrics } from '../../src/controllers/metrics/resource-client.js';
import { MetricsScraper } from '../../src/controllers/metrics/scraper.js';
import { ManualClock } from '../../src/core/clock.js';
import { parseHostUsage, resourceMetricsText } from '../../src/nodeagent/resource-stats.js';

describe('Go float formatting (client_golang writeFloat)', () => {
  it.each([
    [0, '0'], [1, '1'], [-1, '-1'], [0.092224, '0.092224'], [123456, '123456'], [1234567, '1.234567e+06'],
    [66060288, '6.6060288e+07'], [1e8, '1e+08'], [0.0001, '0.0001'], [0.00001, '1e-05'], [1.795874245485e9, '1.795874245485e+09'],
    [1101.21, '1101.21'], [Infinity, '+Inf'], [NaN, 'NaN'], [-2.5e-7, '-2.5e-07'],
  ])('%s → %s', (f, text) => {
    expect(formatGoFloat(f)).toBe(text);
  });
});

describe('Quantity strings (resource.Quantity String(), as metrics-server answers)', () => {
  it.each([
    [0, '0'], [123, '123n'], [12345000, '12345u'], [8000000, '8m'], [1770216962, '1770216962n'], [1_000_000_000, '1'], [2_500_000_000, '2500m'],
    [10, '10n'], [100, '100n'], [1000, '1u'], [5_000_000_000_000, '5k'],
  ])('cpu %s nanocores → %s', (n, q) => {
    expect(formatDecimalSI(n, -9)).toBe(q);
  });
  it.each([
    [0, '0'], [512, '512'], [1000, '1k'], [1023, '1023'], [1024, '1Ki'], [66060288, '63Mi'], [1449440 * 1024, '1449440Ki'], [1234567, '1234567'],
    [3 * 1024 ** 3, '3Gi'], [1536, '1536'],
  ])('memory %s bytes → %s', (n, q) => {
    expect(formatBinarySI(n)).toBe(q);
  });
});

describe('Go durations (metav1.Duration)', () => {
  it.each([
    [0, '0s'], [15_004_000_000, '15.004s'], [2_028_000_000, '2.028s'], [15e9, '15s'], [60.5e9, '1m0.5s'], [3_661e9, '1h1m1s'],
    [500e6, '500ms'], [1_500, '1.5µs'], [999, '999ns'],
  ])('%s ns → %s', (ns, text) => {
    expect(formatGoDuration(ns)).toBe(text);
  });
});

describe('Prometheus text', () => {
  it('writes families by name, labels sorted and escaped, and reads them back', () => {
    const text = writePromText([
      { name: 'b_total', type: 'counter', help: 'B', samples: [{ labels: { pod: 'p"1', container: 'c\\' }, value: 1.5, timestampMs: 1700000000123 }] },
      { name: 'a', type: 'gauge', help: 'A\nmore', samples: [{ labels: {}, value: 1234567 }] },
      { name: 'empty', type: 'gauge', help: 'never written', samples: [] },
    ]);
    expect(text).toBe(
      '# HELP a A\\nmore\n# TYPE a gauge\na 1.234567e+06\n' +
        '# HELP b_total B\n# TYPE b_total counter\nb_total{container="c\\\\",pod="p\\"1"} 1.5 1700000000123\n',
    );
    expect(parsePromText(text)).toEqual([
      { name: 'a', labels: {}, value: 1234567 },
      { name: 'b_total', labels: { container: 'c\\', pod: 'p"1' }, value: 1.5, timestampMs: 1700000000123 },
    ]);
  });

  it('refuses malformed lines', () => {
    for (const bad of ['x{a="1"', 'x 1 2 3', 'x abc', '{a="1"} 1', 'x{a=1} 1', 'x 1 1.5']) expect(() => parsePromText(bad), bad).toThrow(PromParseError);
  });
});

describe('the agent text → metrics-server points → usage', () => {
  const summary = (cpuNs: number, timeNs: number) => ({
    node: { nodeName: 'n', startTimeNs: 0, timeNs, cpuCoreNs: cpuNs * 100, workingSetBytes: 2 * 1024 ** 3, availableBytes: 0, usageBytes: 0 },
    pods: [
      { name: 'web', namespace: 'default', uid: 'u', startTimeNs: 1e18, containers: [{ name: 'nginx', startTimeNs: 1e18, timeNs, cpuCoreNs: cpuNs, workingSetBytes: 63 * 1024 * 1024 }] },
      { name: 'idle', namespace: 'default', uid: 'v', startTimeNs: 1e18, containers: [{ name: 'sh', startTimeNs: 1e18, timeNs, cpuCoreNs: 0, workingSetBytes: 4096 }] },
    ],
  });

  it('writes kubelet 1.32 families, and resource_scrape_error 1 alone when the reading failed', () => {
    const text = resourceMetricsText(summary(92_224_000, 1_700_000_000_000e6));
    expect(text).toContain('# HELP container_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the container in core-seconds\n');
    expect(text).toContain('container_cpu_usage_seconds_total{container="nginx",namespace="default",pod="web"} 0.092224 1700000000000\n');
    expect(text).toContain('node_memory_working_set_bytes 2.147483648e+09 1700000000000\n');
    expect(text).toContain('pod_memory_working_set_bytes{namespace="default",pod="web"} 6.6060288e+07 1700000000000\n');
    expect(text.trimEnd().endsWith('resource_scrape_error 0')).toBe(true);
    expect(parsePromText(resourceMetricsText(undefined))).toEqual([{ name: 'resource_scrape_error', labels: {}, value: 1 }]);
  });

  it('decodes points, drops a pod with a zero reading, and rates CPU over the window', () => {
    const t0 = 1_700_000_000_000;
    const a = decodeResourceMetrics(resourceMetricsText(summary(1_000_000_000, t0 * 1e6)));
    const b = decodeResourceMetrics(resourceMetricsText(summary(1_150_000_000, (t0 + 15_000) * 1e6)));
    expect([...a.pods.keys()]).toEqual(['default/web']);
    expect(a.node).toEqual({ startTimeMs: 0, timestampMs: t0, cumulativeCpuNs: 100_000_000_000, memoryBytes: 2 * 1024 ** 3 });
    const s = new MetricsStorage(15_000);
    s.store({ nodes: new Map([['n', a.node!]]), pods: a.pods });
    expect(s.node('n')).toBeUndefined();
    expect(s.pod('default', 'web')).toBeUndefined();
    s.store({ nodes: new Map([['n', b.node!]]), pods: b.pods });
    // 15 000 000 000 core-ns more over 15 s = 1 core; the pod: 150 ms over 15 s = 10m
    expect(s.node('n')).toEqual({ cpuNanoCores: 1_000_000_000, memoryBytes: 2 * 1024 ** 3, timestampMs: t0 + 15_000, windowMs: 15_000 });
    expect(s.pod('default', 'web')).toEqual({ timestampMs: t0 + 15_000, windowMs: 15_000, containers: [{ name: 'nginx', cpuNanoCores: 10_000_000, memoryBytes: 63 * 1024 * 1024 }] });
    // a node that does not answer in a cycle has no metrics until it answered twice again
    s.store({ nodes: new Map(), pods: new Map() });
    expect(s.node('n')).toBeUndefined();
  });

  it('drops a decrease of the cumulative CPU and a container that restarted', () => {
    const p = (ts: number, cpu: number, start = 0) => ({ startTimeMs: start, timestampMs: ts, cumulativeCpuNs: cpu, memoryBytes: 1 });
    expect(resourceUsage(p(2000, 5), p(1000, 6))).toBeUndefined();
    expect(resourceUsage(p(2000, 1_000_000), p(1000, 0))).toMatchObject({ cpuNanoCores: 1_000_000, windowMs: 1000 });
    const s = new MetricsStorage(15_000);
    s.store({ nodes: new Map(), pods: new Map([['ns/p', new Map([['c', p(1000, 10, 500)]])]]) });
    // started after the stored point: a new container, no rate yet
    s.store({ nodes: new Map(), pods: new Map([['ns/p', new Map([['c', p(2000, 20, 1500)]])]]) });
    expect(s.pod('ns', 'p')).toBeUndefined();
    s.store({ nodes: new Map(), pods: new Map([['ns/p', new Map([['c', p(3000, 30, 1500)]])]]) });
    expect(s.pod('ns', 'p')?.containers).toEqual([{ name: 'c', cpuNanoCores: 10, memoryBytes: 1 }]);
  });

  it('gives a fresh container (10 s up to one resolution old) its start as a first point', () => {
    const s = new MetricsStorage(15_000);
    const fresh = { startTimeMs: 100_000, timestampMs: 112_000, cumulativeCpuNs: 1_200_000_000, memoryBytes: 5 };
    s.store({ nodes: new Map(), pods: new Map([['ns/f', new Map([['c', fresh]])]]) });
    // 1.2 s of CPU over its 12 s: 100m, from the first scrape on
    expect(s.pod('ns', 'f')).toEqual({ timestampMs: 112_000, windowMs: 12_000, containers: [{ name: 'c', cpuNanoCores: 100_000_000, memoryBytes: 5 }] });
    // younger than 10 s: no shortcut
    const young = { ...fresh, startTimeMs: 105_000 };
    s.store({ nodes: new Map(), pods: new Map([['ns/y', new Map([['c', young]])]]) });
    expect(s.pod('ns', 'y')).toBeUndefined();
  });
});

describe('host readings', () => {
  it('counts every CPU state but idle and iowait, and the working set as MemTotal − MemAvailable', () => {
    const stat = 'cpu  100 5 50 1000 20 3 2 1 7 0\ncpu0 1 2 3 4\nbtime 1700000000\n';
    const meminfo = 'MemTotal:       1000 kB\nMemFree:         300 kB\nMemAvailable:    600 kB\n';
    expect(parseHostUsage(stat, meminfo)).toEqual({ cpuCoreNs: 161 * 10_000_000, bootNs: 1.7e18, total: 1024000, available: 614400, free: 307200 });
  });
});

describe('the HPA port (kube metricsclient.GetResourceMetric)', () => {
  const point = (ts: number, cpu: number, mem: number) => ({ startTimeMs: 0, timestampMs: ts, cumulativeCpuNs: cpu, memoryBytes: mem });
  const storage = new MetricsStorage(15_000);
  const batch = (ts: number, k: number) => ({
    nodes: new Map(),
    pods: new Map([
      ['ns/a', new Map([['app', point(ts, k * 1_500_000, 1024)], ['side', point(ts, k * 1, 2048)]])],
      ['ns/b', new Map([['app', point(ts, k * 250_000_000, 4096)]])],
    ]),
  });
  storage.store(batch(1000, 0));
  storage.store(batch(2000, 1));
  const pods = [
    { metadata: { name: 'a', namespace: 'ns', labels: { app: 'x' } } },
    { metadata: { name: 'b', namespace: 'ns', labels: { app: 'x' } } },
    { metadata: { name: 'c', namespace: 'ns', labels: { app: 'x' } } },
    { metadata: { name: 'd', namespace: 'ns', labels: { app: 'y' } } },
  ];
  const client = storageResourceMetrics(storage, async () => pods);
  const x = (p: { metadata?: { labels?: Record<string, string> } }) => p.metadata?.labels?.app === 'x';

  it('sums a pod\'s containers as MilliValue (CPU rounded up to millicores), pods without metrics left out', async () => {
    const cpu = await client.getResourceMetric('cpu', 'ns', x, '');
    // a: 1.5m + 1n → 2m + 1m (each container rounded up, as Quantity.MilliValue); b: 250m
    expect(Object.fromEntries([...cpu.metrics].map(([k, v]) => [k, v.value]))).toEqual({ a: 3, b: 250 });
    expect(cpu.timestampMs).toBe(2000);
    expect(cpu.metrics.get('a')).toMatchObject({ windowMs: 1000 });
    const mem = await client.getResourceMetric('memory', 'ns', x, 'app');
    expect(Object.fromEntries([...mem.metrics].map(([k, v]) => [k, v.value]))).toEqual({ a: 1024_000, b: 4096_000 });
  });

  it('fails as kube does with nothing to read or a missing container', async () => {
    await expect(client.getResourceMetric('cpu', 'ns', (p) => p.metadata?.labels?.app === 'y', '')).rejects.toThrow(new ResourceMetricsError('no metrics returned from resource metrics API'));
    await expect(client.getResourceMetric('cpu', 'ns', x, 'side')).rejects.toThrow('container side not present in metrics for pod ns/b');
  });
});

describe('the scraper (metrics-server cycle on the clock port)', () => {
  const flush = () => new Promise((r) => setTimeout(r, 0));
  const nodeText = (cpuSeconds: number, tsMs: number) => `node_cpu_usage_seconds_total ${cpuSeconds} ${tsMs}\nnode_memory_working_set_bytes 1048576 ${tsMs}\n`;

  it('scrapes every node each resolution; a node that fails or hangs loses its metrics, the others keep theirs', async () => {
    const clock = new ManualClock(1_000_000);
    const storage = new MetricsStorage(15_000);
    let bFails = false;
    let bHangs = false;
    const logs: string[] = [];
    const scraper = new MetricsScraper({
      listNodes: async () => [{ metadata: { name: 'a' } }, { metadata: { name: 'b' } }],
      scrapeNode: (node, signal) => {
        if (node.metadata?.name === 'b' && bHangs) return new Promise((_r, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error)));
        if (node.metadata?.name === 'b' && bFails) return Promise.reject(new Error('connection refused'));
        return Promise.resolve(nodeText(clock.now() / 1000, clock.now()));
      },
      storage,
      resolutionMs: 15_000,
      clock,
      log: (m) => logs.push(m),
    });
    scraper.start();
    await flush();
    expect(storage.node('a')).toBeUndefined();
    clock.advance(15_000);
    await flush();
    // one core-second per second
    expect(storage.node('a')).toEqual({ cpuNanoCores: 1_000_000_000, memoryBytes: 1048576, timestampMs: 1_015_000, windowMs: 15_000 });
    expect(storage.node('b')).toMatchObject({ cpuNanoCores: 1_000_000_000 });
    bFails = true;
    clock.advance(15_000);
    await flush();
    expect(storage.node('a')).toMatchObject({ timestampMs: 1_030_000 });
    expect(storage.node('b')).toBeUndefined();
    clock.advance(15_000);
    await flush();
    // logged once while the failure stays the same
    expect(logs.filter((l) => l.includes('failed to scrape node b'))).toEqual(['metrics scraper: failed to scrape node b: connection refused']);
    bFails = false;
    bHangs = true;
    clock.advance(15_000);
    await flush();
    // the hanging scrape is cut at 90 % of the resolution; the cycle then stores what it has
    clock.advance(13_500);
    await flush();
    expect(logs.at(-1)).toBe('metrics scraper: failed to scrape node b: no answer within 13500 ms');
    expect(storage.node('a')).toMatchObject({ timestampMs: 1_060_000 });
    scraper.stop();
    clock.advance(60_000);
    await flush();
    expect(storage.node('a')).toMatchObject({ timestampMs: 1_060_000 });
  });
});
