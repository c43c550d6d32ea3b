// autoscaling/v1 and autoscaling/v2 HorizontalPodAutoscalers are one store,
// written as v2 (Kubernetes' storage version), converted as Kubernetes'
// pkg/apis/autoscaling/v1 conversion does:
//
// - v1 `spec.targetCPUUtilizationPercentage` ↔ the v2 Resource metric on cpu
//   with an Utilization target; every other v2 metric travels through v1 in
//   the annotation `autoscaling.alpha.kubernetes.io/metrics` (a JSON list of
//   v1 MetricSpecs, the v2beta1 shape: `resource.targetAverageUtilization`,
//   `pods.metricName`, …), `spec.behavior` in `…/behavior`;
// - status: `currentCPUUtilizationPercentage` from the cpu current metric;
//   every current metric in `…/current-metrics`, conditions in `…/conditions`.
//
// Reading v1 → v2 takes those annotations back out (and drops them), the CPU
// metric last, so an HPA read and written back through v1 keeps its v2 fields.

import type { StorageBinding, VersionConverter } from '../conversion.js';
import { clone } from '../../machinery/meta.js';
import type { ApiObject, JSONObject, JSONValue } from '../types.js';

const METRICS = 'autoscaling.alpha.kubernetes.io/metrics';
const CURRENT_METRICS = 'autoscaling.alpha.kubernetes.io/current-metrics';
const BEHAVIOR = 'autoscaling.alpha.kubernetes.io/behavior';
const CONDITIONS = 'autoscaling.alpha.kubernetes.io/conditions';
const ROUND_TRIP = [METRICS, CURRENT_METRICS, BEHAVIOR, CONDITIONS];
/** kube's autoscaling.DefaultCPUUtilization */
const DEFAULT_CPU_UTILIZATION = 80;

type O = JSONObject;
const isObj = (v: unknown): v is O => v !== null && typeof v === 'object' && !Array.isArray(v);
const objOf = (v: unknown): O | undefined => (isObj(v) ? v : undefined);

/** copies the defined values of `src` (undefined/null dropped) */
function compact(src: Record<string, JSONValue | undefined>): O {
  const out: O = {};
  for (const [k, v] of Object.entries(src)) if (v !== undefined && v !== null) out[k] = v;
  return out;
}

// ---- v2 MetricSpec/MetricStatus ↔ v1 (v2beta1-shaped) MetricSpec/MetricStatus

function specToV1(m: O): O {
  const t = m.type as string;
  const r = objOf(m.resource) ?? objOf(m.containerResource);
  const target = objOf((r ?? objOf(m.pods) ?? objOf(m.object) ?? objOf(m.external))?.target) ?? {};
  const metric = objOf((objOf(m.pods) ?? objOf(m.object) ?? objOf(m.external))?.metric) ?? {};
  switch (t) {
    case 'Resource':
    case 'ContainerResource': {
      const v1 = compact({ name: r?.name, container: t === 'ContainerResource' ? r?.container : undefined, targetAverageUtilization: target.averageUtilization, targetAverageValue: target.averageValue });
      return { type: t, [t === 'Resource' ? 'resource' : 'containerResource']: v1 };
    }
    case 'Pods':
      return { type: t, pods: compact({ metricName: metric.name, selector: metric.selector, targetAverageValue: target.averageValue }) };
    case 'Object':
      return { type: t, object: compact({ target: objOf(m.object)?.describedObject, metricName: metric.name, selector: metric.selector, targetValue: target.value, averageValue: target.averageValue }) };
    case 'External':
      return { type: t, external: compact({ metricName: metric.name, metricSelector: metric.selector, targetValue: target.value, targetAverageValue: target.averageValue }) };
    default:
      return clone(m);
  }
}

function specFromV1(m: O): O {
  const t = m.type as string;
  switch (t) {
    case 'Resource':
    case 'ContainerResource': {
      const r = objOf(t === 'Resource' ? m.resource : m.containerResource) ?? {};
      const target = r.targetAverageUtilization !== undefined
        ? { type: 'Utilization', averageUtilization: r.targetAverageUtilization }
        : compact({ type: 'AverageValue', averageValue: r.targetAverageValue });
      return { type: t, [t === 'Resource' ? 'resource' : 'containerResource']: compact({ name: r.name, container: r.container, target }) };
    }
    case 'Pods': {
      const p = objOf(m.pods) ?? {};
      return { type: t, pods: { metric: compact({ name: p.metricName, selector: p.selector }), target: compact({ type: 'AverageValue', averageValue: p.targetAverageValue }) } };
    }
    case 'Object': {
      const p = objOf(m.object) ?? {};
      const target = p.averageValue !== undefined ? compact({ type: 'AverageValue', averageValue: p.averageValue }) : compact({ type: 'Value', value: p.targetValue });
      return { type: t, object: compact({ describedObject: p.target, metric: compact({ name: p.metricName, selector: p.selector }), target }) };
    }
    case 'External': {
      const p = objOf(m.external) ?? {};
      const target = p.targetAverageValue !== undefined ? compact({ type: 'AverageValue', averageValue: p.targetAverageValue }) : compact({ type: 'Value', value: p.targetValue });
      return { type: t, external: { metric: compact({ name: p.metricName, selector: p.metricSelector }), target } };
    }
    default:
      return clone(m);
  }
}

function statusToV1(m: O): O {
  const t = m.type as string;
  const src = objOf(m.resource) ?? objOf(m.containerResource) ?? objOf(m.pods) ?? objOf(m.object) ?? objOf(m.external) ?? {};
  const current = objOf(src.current) ?? {};
  const metric = objOf(src.metric) ?? {};
  switch (t) {
    case 'Resource':
    case 'ContainerResource':
      return { type: t, [t === 'Resource' ? 'resource' : 'containerResource']: compact({ name: src.name, container: src.container, currentAverageUtilization: current.averageUtilization, currentAverageValue: current.averageValue }) };
    case 'Pods':
      return { type: t, pods: compact({ metricName: metric.name, selector: metric.selector, currentAverageValue: current.averageValue }) };
    case 'Object':
      return { type: t, object: compact({ target: src.describedObject, metricName: metric.name, selector: metric.selector, currentValue: current.value, averageValue: current.averageValue }) };
    case 'External':
      return { type: t, external: compact({ metricName: metric.name, metricSelector: metric.selector, currentValue: current.value, currentAverageValue: current.averageValue }) };
    default:
      return clone(m);
  }
}

function statusFromV1(m: O): O {
  const t = m.type as string;
  const src = objOf(m.resource) ?? objOf(m.containerResource) ?? objOf(m.pods) ?? objOf(m.object) ?? objOf(m.external) ?? {};
  switch (t) {
    case 'Resource':
    case 'ContainerResource':
      return { type: t, [t === 'Resource' ? 'resource' : 'containerResource']: compact({ name: src.name, container: src.container, current: compact({ averageUtilization: src.currentAverageUtilization, averageValue: src.currentAverageValue }) }) };
    case 'Pods':
      return { type: t, pods: { metric: compact({ name: src.metricName, selector: src.selector }), current: compact({ averageValue: src.currentAverageValue }) } };
    case 'Object':
      return { type: t, object: compact({ describedObject: src.target, metric: compact({ name: src.metricName, selector: src.selector }), current: compact({ value: src.currentValue, averageValue: src.averageValue }) }) };
    case 'External':
      return { type: t, external: { metric: compact({ name: src.metricName, selector: src.metricSelector }), current: compact({ value: src.currentValue, averageValue: src.currentAverageValue }) } };
    default:
      return clone(m);
  }
}

const isCpuUtilization = (m: O): boolean => {
  const r = objOf(m.resource);
  return m.type === 'Resource' && r?.name === 'cpu' && objOf(r.target)?.averageUtilization !== undefined;
};

function readAnnotation(annotations: Record<string, string>, key: string): JSONValue | undefined {
  const raw = annotations[key];
  if (raw === undefined) return undefined;
  try {
    return JSON.parse(raw) as JSONValue;
  } catch {
    return undefined;
  }
}

const autoscalingV1: VersionConverter = {
  /** v1 → v2 */
  toHub(o) {
    const src = clone(o) as O;
    const meta = (objOf(src.metadata) ?? {}) as O;
    const annotations = { ...((objOf(meta.annotations) ?? {}) as Record<string, string>) };
    const spec = objOf(src.spec) ?? {};
    const status = objOf(src.status);
    const metrics: O[] = [];
    const other = readAnnotation(annotations, METRICS);
    if (Array.isArray(other)) for (const m of other) if (isObj(m)) metrics.push(specFromV1(m));
    if (typeof spec.targetCPUUtilizationPercentage === 'number') {
      metrics.push({ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: spec.targetCPUUtilizationPercentage } } });
    }
    const { targetCPUUtilizationPercentage: _t, ...specRest } = spec;
    const v2spec: O = { ...specRest };
    // kube decodes stored v2 objects with v2's defaulting: no metrics means the 80% CPU target
    // (so a v1 HPA written without a target reads back with targetCPUUtilizationPercentage 80)
    v2spec.metrics = metrics.length > 0 ? metrics : [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: DEFAULT_CPU_UTILIZATION } } }];
    const behavior = readAnnotation(annotations, BEHAVIOR);
    if (isObj(behavior)) v2spec.behavior = behavior;
    const out: O = { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: meta, spec: v2spec };
    if (status) {
      const { currentCPUUtilizationPercentage: cpu, ...statusRest } = status;
      const v2status: O = { ...statusRest };
      const current = readAnnotation(annotations, CURRENT_METRICS);
      if (Array.isArray(current)) v2status.currentMetrics = current.filter(isObj).map(statusFromV1);
      else if (typeof cpu === 'number') v2status.currentMetrics = [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: cpu } } }];
      const conditions = readAnnotation(annotations, CONDITIONS);
      if (Array.isArray(conditions)) v2status.conditions = conditions;
      out.status = v2status;
    }
    for (const k of ROUND_TRIP) delete annotations[k];
    if (Object.keys(annotations).length > 0) meta.annotations = annotations;
    else delete meta.annotations;
    return out as ApiObject;
  },
  /** v2 → v1 */
  fromHub(o) {
    const src = clone(o) as O;
    const meta = (objOf(src.metadata) ?? {}) as O;
    // only the annotations this conversion produces carry round-trip data
    const annotations = { ...((objOf(meta.annotations) ?? {}) as Record<string, string>) };
    for (const k of ROUND_TRIP) delete annotations[k];
    const spec = objOf(src.spec) ?? {};
    const { metrics, behavior, ...specRest } = spec;
    const v1spec: O = { ...specRest };
    const other: O[] = [];
    for (const m of Array.isArray(metrics) ? metrics.filter(isObj) : []) {
      if (isCpuUtilization(m)) v1spec.targetCPUUtilizationPercentage = objOf(objOf(m.resource)?.target)!.averageUtilization!;
      else other.push(specToV1(m));
    }
    if (other.length > 0) annotations[METRICS] = JSON.stringify(other);
    if (isObj(behavior)) annotations[BEHAVIOR] = JSON.stringify(behavior);
    const out: O = { apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: meta, spec: v1spec };
    const status = objOf(src.status);
    if (status) {
      const { currentMetrics, conditions, ...statusRest } = status;
      const v1status: O = { ...statusRest };
      const current = Array.isArray(currentMetrics) ? currentMetrics.filter(isObj) : [];
      for (const m of current) {
        const r = objOf(m.resource);
        const u = objOf(r?.current)?.averageUtilization;
        if (m.type === 'Resource' && r?.name === 'cpu' && typeof u === 'number') v1status.currentCPUUtilizationPercentage = u;
      }
      if (current.length > 0) annotations[CURRENT_METRICS] = JSON.stringify(current.map(statusToV1));
      if (Array.isArray(conditions) && conditions.length > 0) annotations[CONDITIONS] = JSON.stringify(conditions);
      out.status = v1status;
    }
    if (Object.keys(annotations).length > 0) meta.annotations = annotations;
    else delete meta.annotations;
    return out as ApiObject;
  },
};

/** the binding both HPA definitions carry: stored as autoscaling/v2 */
export function hpaStorage(): StorageBinding {
  return { group: 'autoscaling', resource: 'horizontalpodautoscalers', storageVersion: 'autoscaling/v2', versions: { 'autoscaling/v1': autoscalingV1 } };
}
