// A node agent's `/metrics/resource` text → one node's metrics points, as
// metrics-server 0.7's decoder reads kubelet's (docs/metrics.md): cumulative
// CPU in core-nanoseconds and working set with their timestamps, container
// start times; a node point with zero CPU or memory is dropped, and so is a
// pod with any such container (kube's "Failed getting complete … metric").

import { parsePromText } from '../../core/prom-text.js';

/** one reading; times in ms since the epoch */
export interface MetricsPoint {
  startTimeMs: number;
  timestampMs: number;
  /** cumulative, core-nanoseconds */
  cumulativeCpuNs: number;
  memoryBytes: number;
}

export interface NodeBatch {
  node?: MetricsPoint;
  /** `namespace/name` → container name → point */
  pods: Map<string, Map<string, MetricsPoint>>;
}

const empty = (): MetricsPoint => ({ startTimeMs: 0, timestampMs: 0, cumulativeCpuNs: 0, memoryBytes: 0 });
const complete = (p: MetricsPoint) => p.cumulativeCpuNs !== 0 && p.memoryBytes !== 0 && p.timestampMs !== 0;

/** throws PromParseError on a malformed exposition (the scrape fails as a whole) */
export function decodeResourceMetrics(text: string): NodeBatch {
  let node: MetricsPoint | undefined;
  const pods = new Map<string, Map<string, MetricsPoint>>();
  const container = (labels: Record<string, string>): MetricsPoint | undefined => {
    const { namespace, pod, container: name } = labels;
    if (!namespace || !pod || !name) return undefined;
    const key = `${namespace}/${pod}`;
    let m = pods.get(key);
    if (!m) pods.set(key, (m = new Map()));
    let p = m.get(name);
    if (!p) m.set(name, (p = empty()));
    return p;
  };
  for (const s of parsePromText(text)) {
    const ts = s.timestampMs ?? 0;
    switch (s.name) {
      case 'node_cpu_usage_seconds_total':
        node ??= empty();
        node.cumulativeCpuNs = Math.round(s.value * 1e9);
        node.timestampMs = ts;
        break;
      case 'node_memory_working_set_bytes':
        node ??= empty();
        node.memoryBytes = Math.round(s.value);
        node.timestampMs = ts;
        break;
      case 'container_cpu_usage_seconds_total': {
        const p = container(s.labels);
        if (p) (p.cumulativeCpuNs = Math.round(s.value * 1e9)), (p.timestampMs = ts);
        break;
      }
      case 'container_memory_working_set_bytes': {
        const p = container(s.labels);
        if (p) (p.memoryBytes = Math.round(s.value)), (p.timestampMs = ts);
        break;
      }
      case 'container_start_time_seconds': {
        const p = container(s.labels);
        if (p) p.startTimeMs = Math.round(s.value * 1000);
        break;
      }
      default:
    }
  }
  for (const [key, cs] of pods) if ([...cs.values()].some((p) => !complete(p))) pods.delete(key);
  return { ...(node && complete(node) ? { node } : {}), pods };
}
