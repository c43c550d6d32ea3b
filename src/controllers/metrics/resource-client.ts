// The port a HorizontalPodAutoscaler controller reads resource metrics
// through (docs/metrics.md "For the HPA controller"): kube's
// `metricsclient.GetResourceMetric` (pkg/controller/podautoscaler/metrics),
// answered from the scraper's storage in process rather than over
// metrics.k8s.io, with the same semantics: the PodMetrics of a namespace's
// pods that match the selector, a pod's value the sum of its containers'
// (or one named container's) usage as Quantity.MilliValue (millicores for
// cpu, milli-bytes for memory), and kube's errors when there is nothing.

import type { ApiObject } from '../../core/object.js';
import type { MetricsStorage } from './storage.js';

/** kube's PodMetric: a pod's value over its window */
export interface PodMetric {
  timestampMs: number;
  windowMs: number;
  /** MilliValue: millicores (cpu) or milli-bytes (memory) */
  value: number;
}

export interface ResourceMetricsResult {
  /** by pod name */
  metrics: Map<string, PodMetric>;
  /** the first PodMetrics' timestamp, as kube returns it */
  timestampMs: number;
}

/** what a HorizontalPodAutoscaler controller calls (kube's ResourceMetricsClient) */
export interface ResourceMetricsClient {
  /**
   * `container` '' = the pod's containers summed; throws ResourceMetricsError with kube's message when the
   * metrics API has no PodMetrics for the selection or a named container is missing; a resource other than
   * cpu and memory has no usage, so no pod has a value for it (kube's getPodMetrics skips such pods)
   */
  getResourceMetric(resource: string, namespace: string, selects: (pod: ApiObject) => boolean, container: string): Promise<ResourceMetricsResult>;
}

export class ResourceMetricsError extends Error {}

/** Quantity.MilliValue of the usage metrics-server answers (cpu: nanocores rounded up to millicores) */
const milli = (resource: string, u: { cpuNanoCores: number; memoryBytes: number }): number | undefined =>
  resource === 'cpu' ? Math.ceil(u.cpuNanoCores / 1e6) : resource === 'memory' ? u.memoryBytes * 1000 : undefined;

export function storageResourceMetrics(storage: MetricsStorage, listPods: (namespace: string) => Promise<ApiObject[]>): ResourceMetricsClient {
  return {
    async getResourceMetric(resource, namespace, selects, container) {
      const items = (await listPods(namespace))
        .filter(selects)
        .map((p) => ({ name: p.metadata?.name ?? '', usage: storage.pod(namespace, p.metadata?.name ?? '') }))
        .filter((x): x is { name: string; usage: NonNullable<typeof x.usage> } => x.usage !== undefined);
      if (items.length === 0) throw new ResourceMetricsError('no metrics returned from resource metrics API');
      const metrics = new Map<string, PodMetric>();
      for (const { name, usage } of items) {
        let value: number | undefined = 0;
        if (container !== '') {
          const c = usage.containers.find((x) => x.name === container);
          if (!c) throw new ResourceMetricsError(`failed to get container metrics: container ${container} not present in metrics for pod ${namespace}/${name}`);
          value = milli(resource, c);
        } else {
          if (usage.containers.length === 0) continue;
          const values = usage.containers.map((c) => milli(resource, c));
          value = values.includes(undefined) ? undefined : values.reduce<number>((a, b) => a + (b ?? 0), 0);
        }
        if (value === undefined) continue;
        metrics.set(name, { timestampMs: usage.timestampMs, windowMs: usage.windowMs, value });
      }
      return { metrics, timestampMs: items[0]!.usage.timestampMs };
    },
  };
}
