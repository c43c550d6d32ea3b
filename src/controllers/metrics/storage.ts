// The metrics store of the resource metrics pipeline (docs/metrics.md), as
// metrics-server 0.7's storage: the last and the previous point of every node
// and container, replaced as a whole by each scrape cycle's batch (a node that
// failed to answer has no metrics until it answers twice again); usage is the
// rate between the two points (CPU) and the last point (memory), with the
// window between them. Only what the last two scrapes saw is kept.

import type { MetricsPoint } from './decode.js';

/** what one scrape cycle gathered from every node that answered */
export interface MetricsBatch {
  nodes: Map<string, MetricsPoint>;
  /** `namespace/name` → container → point */
  pods: Map<string, Map<string, MetricsPoint>>;
}

export interface ResourceUsage {
  /** nanocores: the CPU rate over the window, truncated */
  cpuNanoCores: number;
  memoryBytes: number;
}

export interface NodeUsage extends ResourceUsage {
  timestampMs: number;
  windowMs: number;
}

export interface PodUsage {
  timestampMs: number;
  windowMs: number;
  containers: ({ name: string } & ResourceUsage)[];
}

/** metrics-server: a container younger than the resolution but this old gets a synthetic first point at its start */
const FRESH_CONTAINER_MIN_MS = 10_000;

/** the usage between two points; undefined when the cumulative CPU went down (metrics-server drops it) */
export function resourceUsage(last: MetricsPoint, prev: MetricsPoint): (ResourceUsage & { timestampMs: number; windowMs: number }) | undefined {
  if (last.cumulativeCpuNs < prev.cumulativeCpuNs) return undefined;
  const windowMs = last.timestampMs - prev.timestampMs;
  if (windowMs <= 0) return undefined;
  return {
    cpuNanoCores: Math.floor(((last.cumulativeCpuNs - prev.cumulativeCpuNs) * 1000) / windowMs),
    memoryBytes: last.memoryBytes,
    timestampMs: last.timestampMs,
    windowMs,
  };
}

export class MetricsStorage {
  private lastNodes = new Map<string, MetricsPoint>();
  private prevNodes = new Map<string, MetricsPoint>();
  private lastPods = new Map<string, Map<string, MetricsPoint>>();
  private prevPods = new Map<string, Map<string, MetricsPoint>>();
  private stored = false;

  /** `resolutionMs`: the scrape interval (`--metric-resolution`) */
  constructor(private readonly resolutionMs: number) {}

  /** at least one batch stored (metrics-server's readiness) */
  hasStored(): boolean {
    return this.stored;
  }

  store(batch: MetricsBatch): void {
    this.stored = true;
    const lastNodes = new Map<string, MetricsPoint>();
    const prevNodes = new Map<string, MetricsPoint>();
    for (const [name, point] of batch.nodes) {
      lastNodes.set(name, point);
      const last = this.lastNodes.get(name);
      if (!last) continue;
      if (point.timestampMs > last.timestampMs) prevNodes.set(name, last);
      else {
        const prev = this.prevNodes.get(name);
        if (prev && prev.timestampMs < point.timestampMs) prevNodes.set(name, prev);
      }
    }
    this.lastNodes = lastNodes;
    this.prevNodes = prevNodes;

    const lastPods = new Map<string, Map<string, MetricsPoint>>();
    const prevPods = new Map<string, Map<string, MetricsPoint>>();
    for (const [pod, containers] of batch.pods) {
      const last = new Map<string, MetricsPoint>();
      const prev = new Map<string, MetricsPoint>();
      const storedLast = this.lastPods.get(pod);
      const storedPrev = this.prevPods.get(pod);
      for (const [name, point] of containers) {
        last.set(name, point);
        const age = point.timestampMs - point.startTimeMs;
        if (point.startTimeMs < point.timestampMs && age < this.resolutionMs && age >= FRESH_CONTAINER_MIN_MS) {
          // a fresh container: its start is a first point with no CPU used
          prev.set(name, { ...point, timestampMs: point.startTimeMs, cumulativeCpuNs: 0 });
          continue;
        }
        const before = storedLast?.get(name);
        // a container that restarted since (started after the stored point) starts over
        if (!before || !(point.startTimeMs < before.timestampMs)) continue;
        if (point.timestampMs > before.timestampMs) prev.set(name, before);
        else {
          const p = storedPrev?.get(name);
          if (p && p.timestampMs < point.timestampMs) prev.set(name, p);
        }
      }
      if (prev.size > 0) prevPods.set(pod, prev);
      lastPods.set(pod, last);
    }
    this.lastPods = lastPods;
    this.prevPods = prevPods;
  }

  node(name: string): NodeUsage | undefined {
    const last = this.lastNodes.get(name);
    const prev = this.prevNodes.get(name);
    return last && prev ? resourceUsage(last, prev) : undefined;
  }

  /** a pod's usage only when every container it reported has two points (metrics-server's allContainersPresent) */
  pod(namespace: string, name: string): PodUsage | undefined {
    const last = this.lastPods.get(`${namespace}/${name}`);
    const prev = this.prevPods.get(`${namespace}/${name}`);
    if (!last || !prev) return undefined;
    const containers: PodUsage['containers'] = [];
    let earliest: { timestampMs: number; windowMs: number } | undefined;
    for (const [c, point] of last) {
      const p = prev.get(c);
      if (!p) return undefined;
      const u = resourceUsage(point, p);
      if (!u) continue;
      containers.push({ name: c, cpuNanoCores: u.cpuNanoCores, memoryBytes: u.memoryBytes });
      if (!earliest || earliest.timestampMs > u.timestampMs) earliest = { timestampMs: u.timestampMs, windowMs: u.windowMs };
    }
    if (!earliest) return undefined;
    containers.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return { ...earliest, containers };
  }
}
