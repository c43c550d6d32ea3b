// metrics.<domain>/v1beta1 NodeMetrics (`nodes`) and PodMetrics (`pods`): the
// resource metrics API metrics-server serves, here built in (docs/metrics.md).
// Virtual and read-only: `get` and `list` (label selectors on the node's or
// pod's labels, field selectors on metadata.name and metadata.namespace) are
// capabilities that read the latest usage from a MetricsReader — the scraper's
// storage (src/controllers/metrics/), wired by the composition root — and the
// Nodes and Pods from their stores, as metrics-server reads them from its
// informers. Usage is formatted as metrics-server formats it: CPU
// `uint64Quantity(nanocores, DecimalSI, -9)`, memory `(bytes, BinarySI, 0)`.

import { formatGoDuration } from '../../core/duration.js';
import { notFound } from '../../core/errors.js';
import { formatBinarySI, formatDecimalSI, parseQuantity } from '../../core/quantity.js';
import type { SchemaNames } from '../../machinery/schema/naming.js';
import { atomicList, mapOf, obj, ref, str, time } from '../../machinery/schema/dsl.js';
import type { CapabilityContext, CapabilityResult, CapabilityStore } from '../capabilities.js';
import type { ApiObject, ResourceDefinition, TableColumn } from '../types.js';
import { column, getArray, getObject, getString } from './columns.js';
import { kindSchema } from './meta.js';

/** one usage reading: CPU in nanocores over `windowMs` ending at `timestampMs`, memory in bytes */
export interface MetricsUsage {
  cpuNanoCores: number;
  memoryBytes: number;
}
/** what the metrics kinds read: the latest usage of a node or pod, undefined when there is none yet */
export interface MetricsReader {
  node(name: string): (MetricsUsage & { timestampMs: number; windowMs: number }) | undefined;
  pod(namespace: string, name: string): { timestampMs: number; windowMs: number; containers: ({ name: string } & MetricsUsage)[] } | undefined;
}

/** `metrics.<domain>`: kubectl top and client libraries ask `metrics.k8s.io`, so only `--api-domain k8s.io` serves them */
export function metricsGroup(apiDomain: string): string {
  return `metrics.${apiDomain}`;
}

const rfc3339 = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const usageJson = (u: MetricsUsage) => ({ cpu: formatDecimalSI(u.cpuNanoCores, -9), memory: formatBinarySI(u.memoryBytes) });

/** a usage map's amounts (the canonical strings this file wrote) */
function usageOf(u: unknown): MetricsUsage {
  return {
    cpuNanoCores: Math.round((parseQuantity(getString(u, 'cpu')) ?? 0) * 1e9),
    memoryBytes: Math.round(parseQuantity(getString(u, 'memory')) ?? 0),
  };
}
const sumUsage = (us: MetricsUsage[]): MetricsUsage => ({
  cpuNanoCores: us.reduce((a, u) => a + u.cpuNanoCores, 0),
  memoryBytes: us.reduce((a, u) => a + u.memoryBytes, 0),
});

function metaOf(source: ApiObject, now: number): Record<string, unknown> {
  const labels = source.metadata?.labels;
  return {
    name: source.metadata?.name ?? '',
    ...(source.metadata?.namespace ? { namespace: source.metadata.namespace } : {}),
    // metrics-server dates every answer now
    creationTimestamp: rfc3339(now),
    ...(labels && Object.keys(labels).length > 0 ? { labels } : {}),
  };
}

export function metricsDefinitions(n: SchemaNames, reader: MetricsReader): ResourceDefinition[] {
  const group = metricsGroup(n.apiDomain);
  const apiVersion = `${group}/v1beta1`;
  const usage = mapOf('The memory and CPU usage.', ref(n.quantity));
  const window = str('The window [Timestamp-Window, Timestamp] from which these metrics were calculated.');
  const timestamp = time('The following fields define time interval from which metrics were collected from the interval [Timestamp-Window, Timestamp].');
  const storeOf = (ctx: CapabilityContext, resource: string): CapabilityStore => {
    const s = ctx.storeOf('', 'v1', resource);
    if (!s) throw notFound(resource, '', ctx.name);
    return s;
  };

  const nodeMetrics = (node: ApiObject, now: number): Record<string, unknown> | undefined => {
    const u = reader.node(node.metadata?.name ?? '');
    if (!u) return undefined;
    return { kind: 'NodeMetrics', apiVersion, metadata: metaOf(node, now), timestamp: rfc3339(u.timestampMs), window: formatGoDuration(u.windowMs * 1e6), usage: usageJson(u) };
  };
  const podMetrics = (pod: ApiObject, now: number): Record<string, unknown> | undefined => {
    const u = reader.pod(pod.metadata?.namespace ?? '', pod.metadata?.name ?? '');
    if (!u) return undefined;
    return {
      kind: 'PodMetrics',
      apiVersion,
      metadata: metaOf(pod, now),
      timestamp: rfc3339(u.timestampMs),
      window: formatGoDuration(u.windowMs * 1e6),
      containers: u.containers.map((c) => ({ name: c.name, usage: usageJson(c) })),
    };
  };
  // metrics-server's table: Name, CPU, Memory, Window (a pod's containers summed)
  const columns = (usage: (o: ApiObject) => MetricsUsage): TableColumn[] => [
    column('CPU', 'string', (o) => formatDecimalSI(usage(o).cpuNanoCores, -9), { description: 'CPU consumption' }),
    column('Memory', 'string', (o) => formatBinarySI(usage(o).memoryBytes), { description: 'Memory consumption' }),
    column('Window', 'string', (o) => getString(o, 'window') ?? '', { description: 'Interval from which metrics were collected' }),
  ];

  return [
    {
      group, version: 'v1beta1', kind: 'NodeMetrics', resource: 'nodes', singular: '', scope: 'Cluster', verbs: ['get', 'list'],
      schema: kindSchema(n, 'NodeMetrics sets resource usage metrics of a node.', { timestamp, window, usage }),
      strategy: { exactColumns: true, columns: columns((o) => usageOf(getObject(o, 'usage'))) },
      capabilities: {
        '': {
          async get(ctx) {
            const node = await storeOf(ctx, 'nodes').get('', ctx.name);
            const m = nodeMetrics(node, ctx.now());
            if (!m) throw notFound('nodemetrics', group, ctx.name);
            return { status: 200, object: m };
          },
          async list(ctx) {
            const now = ctx.now();
            const nodes = await storeOf(ctx, 'nodes').list('');
            return { items: nodes.map((x) => nodeMetrics(x, now)).filter((x): x is ApiObject => !!x) };
          },
        },
      },
    },
    {
      group, version: 'v1beta1', kind: 'PodMetrics', resource: 'pods', singular: '', scope: 'Namespaced', verbs: ['get', 'list'],
      schema: kindSchema(n, 'PodMetrics sets resource usage metrics of a pod.', {
        timestamp,
        window,
        containers: atomicList('Metrics for all containers are collected within the same time window.', obj('ContainerMetrics sets resource usage metrics of a container.', {
          name: str('Container name corresponding to the one from pod.spec.containers.'),
          usage,
        }, ['name', 'usage'])),
      }),
      strategy: { exactColumns: true, columns: columns((o) => sumUsage(getArray(o, 'containers').map((c) => usageOf(getObject(c, 'usage'))))) },
      capabilities: {
        '': {
          async get(ctx) {
            const pod = await storeOf(ctx, 'pods').get(ctx.namespace, ctx.name);
            const m = podMetrics(pod, ctx.now());
            if (!m) throw notFound('podmetrics', group, `${ctx.namespace}/${ctx.name}`);
            return { status: 200, object: m };
          },
          async list(ctx) {
            const now = ctx.now();
            const pods = await storeOf(ctx, 'pods').list(ctx.namespace);
            return { items: pods.map((x) => podMetrics(x, now)).filter((x): x is ApiObject => !!x) };
          },
        },
      },
    },
  ];
}
