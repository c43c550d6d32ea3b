// The small rules of the HorizontalPodAutoscaler controller (hpa.ts), as
// kube-controller-manager 1.32's pkg/controller/podautoscaler/horizontal.go
// states them: how a condition changes, v2's default metric, and what a metric
// source answers when no metrics API serves it (docs/controllers.md
// "HorizontalPodAutoscaler"): orch has no custom or external metrics API, so
// `Pods`, `Object` and `External` metrics always fail this way; `Resource` and
// `ContainerResource` do only when the controller was given no resource
// metrics port (hpa-metrics.ts reads them otherwise).

import type { JSONValue } from '../../registry/types.js';

type Obj = Record<string, JSONValue>;

export interface HpaCondition {
  type: 'AbleToScale' | 'ScalingActive' | 'ScalingLimited';
  status: 'True' | 'False' | 'Unknown';
  lastTransitionTime?: string;
  reason: string;
  message: string;
}

/** kube's setCondition: the transition time moves only when the status does */
export function setCondition(conditions: HpaCondition[], c: Omit<HpaCondition, 'lastTransitionTime'>, now: string): HpaCondition[] {
  const i = conditions.findIndex((x) => x.type === c.type);
  const old = i < 0 ? undefined : conditions[i];
  const next: HpaCondition = { type: c.type, status: c.status, lastTransitionTime: old && old.status === c.status && old.lastTransitionTime ? old.lastTransitionTime : now, reason: c.reason, message: c.message };
  return i < 0 ? [...conditions, next] : conditions.map((x, j) => (j === i ? next : x));
}

/** why a metric gave no replica count: the ScalingActive reason, the event, and the error computeReplicasForMetrics wraps */
export interface MetricFailure {
  reason: string;
  /** the event's (and the condition's) error text */
  error: string;
  /** computeReplicasForMetric's wrapped error (the FailedComputeMetricsReplicas event quotes the first) */
  wrapped: string;
}

const NO_RESOURCE_METRICS = 'the server could not find the requested resource (get pods.metrics.k8s.io)';
const NO_CUSTOM_METRICS = 'unable to fetch metrics from custom metrics API: no custom metrics API (custom.metrics.k8s.io) registered';
const NO_EXTERNAL_METRICS = 'unable to fetch metrics from external metrics API: no external metrics API (external.metrics.k8s.io) registered';

/** what kube's controller answers for one metric source when no metrics API is registered */
export function metricUnavailable(spec: Obj): MetricFailure {
  const o = (k: string): Obj => ((spec[k] ?? {}) as Obj);
  const metricName = (k: string): string => String(((o(k).metric ?? {}) as Obj).name ?? '');
  switch (spec.type) {
    case 'Resource':
    case 'ContainerResource': {
      const container = spec.type === 'ContainerResource';
      const r = o(container ? 'containerResource' : 'resource');
      const name = String(r.name ?? '');
      const target = (r.target ?? {}) as Obj;
      const fetch = `unable to get metrics for resource ${name}: unable to fetch metrics from resource metrics API: ${NO_RESOURCE_METRICS}`;
      const error = target.averageValue !== undefined
        ? `failed to get ${name} usage: ${fetch}`
        : target.averageUtilization === undefined
          ? 'invalid resource metric source: neither an average utilization target nor an average value (usage) target was set'
          : `failed to get ${name} utilization: ${fetch}`;
      // kube names the container (not the resource) in this wrap
      return container
        ? { reason: 'FailedGetContainerResourceMetric', error, wrapped: `failed to get ${String(r.container ?? '')} container metric value: ${error}` }
        : { reason: 'FailedGetResourceMetric', error, wrapped: `failed to get ${name} resource metric value: ${error}` };
    }
    case 'Pods': {
      const error = `unable to get metric ${metricName('pods')}: ${NO_CUSTOM_METRICS}`;
      return { reason: 'FailedGetPodsMetric', error, wrapped: `failed to get pods metric value: ${error}` };
    }
    case 'Object': {
      const ref = (o('object').describedObject ?? {}) as Obj;
      const error = `unable to get metric ${metricName('object')}: ${String(ref.kind ?? '')} on ${String(ref.name ?? '')}/${NO_CUSTOM_METRICS}`;
      return { reason: 'FailedGetObjectMetric', error, wrapped: `failed to get object metric value: ${error}` };
    }
    case 'External': {
      const error = `unable to get external metric ${metricName('external')}: ${NO_EXTERNAL_METRICS}`;
      return { reason: 'FailedGetExternalMetric', error, wrapped: `failed to get external metric value: ${error}` };
    }
    default: {
      const error = `unknown metric source type "${String(spec.type ?? '')}"`;
      return { reason: 'InvalidMetricSourceType', error, wrapped: error };
    }
  }
}

/** kube's v2 default when an HPA names no metric: cpu at 80% utilization */
export const DEFAULT_METRICS: Obj[] = [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }];
