// The HorizontalPodAutoscaler's replica calculator for resource metrics, as
// kube-controller-manager 1.32's pkg/controller/podautoscaler/replica_calculator.go
// computes it (docs/controllers.md "HorizontalPodAutoscaler"): pure functions of
// the target's pods (already selected by the scale's selector), their metrics
// (resource-client.ts, MilliValue) and the controller's clock.
//   - pods are grouped: ignored (being deleted, Failed), unready (Pending; for cpu
//     also not Ready, or within the cpu initialization period without a full
//     metric window since the Ready transition, or never Ready within the initial
//     readiness delay), missing (no metric) and ready;
//   - the usage ratio of the ready pods with metrics decides; within the tolerance
//     (0.1) nothing changes; with missing or unready pods the ratio is recomputed
//     with missing pods at 100 % of their request (or the target, when above 100 %)
//     on a scale-down and 0 on a scale-up, and unready pods at 0 on a scale-up;
//     if the recomputed ratio is within tolerance or flips direction, the count
//     stays, as it does when the new count would move against the ratio.

import { parseQuantity } from '../../core/quantity.js';
import type { ApiObject, JSONValue } from '../../registry/types.js';
import type { PodMetric } from '../metrics/resource-client.js';

type Obj = Record<string, JSONValue>;

export interface CalculatorSettings {
  /** `--horizontal-pod-autoscaler-tolerance` (0.1) */
  tolerance: number;
  /** `--horizontal-pod-autoscaler-cpu-initialization-period` (5 min) */
  cpuInitializationPeriodMs: number;
  /** `--horizontal-pod-autoscaler-initial-readiness-delay` (30 s) */
  initialReadinessDelayMs: number;
}

export const DEFAULT_CALCULATOR_SETTINGS: CalculatorSettings = { tolerance: 0.1, cpuInitializationPeriodMs: 300_000, initialReadinessDelayMs: 30_000 };

/** an error of the calculation; its message is kube's (wrapped by the caller as kube does) */
export class CalculationError extends Error {}

/** a pod's metric by pod name (kube's PodMetricsInfo) */
export type PodMetrics = Map<string, PodMetric>;

export interface PodGroups {
  readyPodCount: number;
  unready: Set<string>;
  missing: Set<string>;
  ignored: Set<string>;
}

/** Quantity.MilliValue: the quantity ×1000, rounded up (a float error of the parse does not round up) */
export function milliValue(q: unknown): number | undefined {
  const v = parseQuantity(q);
  if (v === undefined) return undefined;
  const x = v * 1000;
  const r = Math.round(x);
  return Math.abs(x - r) < 1e-6 * Math.max(1, Math.abs(x)) ? r : Math.ceil(x);
}

const name = (p: ApiObject): string => p.metadata?.name ?? '';
const status = (p: ApiObject): Obj => (p.status ?? {}) as Obj;
const time = (v: JSONValue | undefined): number | undefined => (typeof v === 'string' && !Number.isNaN(Date.parse(v)) ? Date.parse(v) : undefined);

/** kube's groupPods */
export function groupPods(pods: readonly ApiObject[], metrics: PodMetrics, resource: string, s: CalculatorSettings, nowMs: number): PodGroups {
  const g: PodGroups = { readyPodCount: 0, unready: new Set(), missing: new Set(), ignored: new Set() };
  for (const pod of pods) {
    const st = status(pod);
    if (pod.metadata?.deletionTimestamp || st.phase === 'Failed') {
      g.ignored.add(name(pod));
      continue;
    }
    if (st.phase === 'Pending') {
      g.unready.add(name(pod));
      continue;
    }
    const metric = metrics.get(name(pod));
    if (!metric) {
      g.missing.add(name(pod));
      continue;
    }
    if (resource === 'cpu') {
      const ready = ((st.conditions ?? []) as Obj[]).find((c) => c.type === 'Ready');
      const start = time(st.startTime);
      let unready: boolean;
      if (!ready || start === undefined) unready = true;
      else {
        const transition = time(ready.lastTransitionTime) ?? 0;
        if (start + s.cpuInitializationPeriodMs > nowMs) {
          // still initializing: not Ready, or no full metric window since it became so
          unready = ready.status === 'False' || metric.timestampMs < transition + metric.windowMs;
        } else {
          // past it: only a pod that has never been Ready (its last transition within the initial delay)
          unready = ready.status === 'False' && start + s.initialReadinessDelayMs > transition;
        }
      }
      if (unready) {
        g.unready.add(name(pod));
        continue;
      }
    }
    g.readyPodCount++;
  }
  return g;
}

/** kube's calculatePodRequests: the pods' requests (MilliValue) of the resource, summed over the containers (or the named one) */
export function podRequests(pods: readonly ApiObject[], container: string, resource: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const pod of pods) {
    const spec = (pod.spec ?? {}) as Obj;
    // regular containers and the restartable (sidecar) init containers
    const containers = [...((spec.containers ?? []) as Obj[]), ...((spec.initContainers ?? []) as Obj[]).filter((c) => c.restartPolicy === 'Always')];
    let sum = 0;
    for (const c of containers) {
      if (container !== '' && c.name !== container) continue;
      const requests = (((c.resources ?? {}) as Obj).requests ?? {}) as Obj;
      const v = requests[resource] === undefined ? undefined : milliValue(requests[resource]);
      if (v === undefined) throw new CalculationError(`missing request for ${resource} in container ${String(c.name ?? '')} of Pod ${name(pod)}`);
      sum += v;
    }
    out.set(name(pod), sum);
  }
  return out;
}

/** kube's GetResourceUtilizationRatio: metrics of pods without a request are extraneous */
export function utilizationRatio(metrics: PodMetrics, requests: Map<string, number>, target: number): { ratio: number; utilization: number; rawAverage: number } {
  let metricsTotal = 0;
  let requestsTotal = 0;
  let entries = 0;
  for (const [pod, m] of metrics) {
    const request = requests.get(pod);
    if (request === undefined) continue;
    metricsTotal += m.value;
    requestsTotal += request;
    entries++;
  }
  if (requestsTotal === 0) throw new CalculationError('no metrics returned matched known pods');
  const utilization = Math.trunc((metricsTotal * 100) / requestsTotal);
  return { ratio: utilization / target, utilization, rawAverage: Math.trunc(metricsTotal / entries) };
}

/** kube's GetMetricUsageRatio */
export function usageRatio(metrics: PodMetrics, target: number): { ratio: number; usage: number } {
  let total = 0;
  for (const m of metrics.values()) total += m.value;
  const usage = Math.trunc(total / metrics.size);
  return { ratio: usage / target, usage };
}

function withoutPods(metrics: PodMetrics, ...sets: Set<string>[]): PodMetrics {
  const out: PodMetrics = new Map(metrics);
  for (const s of sets) for (const p of s) out.delete(p);
  return out;
}

const zero = (windowMs = 0): PodMetric => ({ timestampMs: 0, windowMs, value: 0 });

/**
 * the rebalancing both calculations share once a first ratio is known: the count from the ready pods
 * when nothing is missing or unready (and the ratio is outside tolerance), otherwise the recomputed ratio
 * with missing pods at `missingValue` (scale-down) or 0 (scale-up) and unready pods at 0 (scale-up)
 */
function rebalance(
  current: number, ratio: number, groups: PodGroups, metrics: PodMetrics, tolerance: number,
  missingValue: (pod: string) => number, recompute: (m: PodMetrics) => number,
): number {
  const scaleUpWithUnready = groups.unready.size > 0 && ratio > 1;
  if (!scaleUpWithUnready && groups.missing.size === 0) {
    if (Math.abs(1 - ratio) <= tolerance) return current;
    return Math.ceil(ratio * groups.readyPodCount);
  }
  const m: PodMetrics = new Map(metrics);
  if (groups.missing.size > 0) {
    // at a ratio of exactly 1 missing pods stay out
    if (ratio < 1) for (const p of groups.missing) m.set(p, { ...zero(), value: missingValue(p) });
    else if (ratio > 1) for (const p of groups.missing) m.set(p, zero());
  }
  if (scaleUpWithUnready) for (const p of groups.unready) m.set(p, zero());
  const newRatio = recompute(m);
  if (Math.abs(1 - newRatio) <= tolerance || (ratio < 1 && newRatio > 1) || (ratio > 1 && newRatio < 1)) return current;
  const replicas = Math.ceil(newRatio * m.size);
  // a count moving against the ratio (more pods considered than there are replicas) keeps the current one
  if ((newRatio < 1 && replicas > current) || (newRatio > 1 && replicas < current)) return current;
  return replicas;
}

function readyMetrics(pods: readonly ApiObject[], metrics: PodMetrics, resource: string, s: CalculatorSettings, nowMs: number): { groups: PodGroups; ready: PodMetrics } {
  if (pods.length === 0) throw new CalculationError('no pods returned by selector while calculating replica count');
  const groups = groupPods(pods, metrics, resource, s, nowMs);
  const ready = withoutPods(metrics, groups.ignored, groups.unready);
  if (ready.size === 0) throw new CalculationError('did not receive metrics for targeted pods (pods might be unready)');
  return { groups, ready };
}

export interface UtilizationResult {
  replicas: number;
  /** the average utilization, percent of request */
  utilization: number;
  /** the average value (MilliValue) of the ready pods with metrics */
  rawUtilization: number;
}

/** kube's GetResourceReplicas (after the metrics were read): a target utilization in percent of the pods' requests */
export function resourceReplicas(
  current: number, targetUtilization: number, resource: string, container: string,
  pods: readonly ApiObject[], metrics: PodMetrics, s: CalculatorSettings, nowMs: number,
): UtilizationResult {
  const { groups, ready } = readyMetrics(pods, metrics, resource, s, nowMs);
  const requests = podRequests(pods, container, resource);
  const first = utilizationRatio(ready, requests, targetUtilization);
  // on a scale-down a missing pod counts at its request, or at the target when that is above 100 %
  const fallback = Math.max(100, targetUtilization);
  const replicas = rebalance(current, first.ratio, groups, ready, s.tolerance,
    (p) => Math.trunc(((requests.get(p) ?? 0) * fallback) / 100), (m) => utilizationRatio(m, requests, targetUtilization).ratio);
  return { replicas, utilization: first.utilization, rawUtilization: first.rawAverage };
}

/** kube's GetRawResourceReplicas (calcPlainMetricReplicas): a target average value (MilliValue) per pod */
export function rawResourceReplicas(
  current: number, targetValue: number, resource: string, pods: readonly ApiObject[], metrics: PodMetrics, s: CalculatorSettings, nowMs: number,
): { replicas: number; usage: number } {
  const { groups, ready } = readyMetrics(pods, metrics, resource, s, nowMs);
  const first = usageRatio(ready, targetValue);
  // on a scale-down a missing pod counts at exactly the target
  const replicas = rebalance(current, first.ratio, groups, ready, s.tolerance, () => targetValue, (m) => usageRatio(m, targetValue).ratio);
  return { replicas, usage: first.usage };
}
