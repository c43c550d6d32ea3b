// The HorizontalPodAutoscaler's metric step, kube-controller-manager 1.32's
// computeReplicasForMetrics (horizontal.go; docs/controllers.md
// "HorizontalPodAutoscaler"): the scale's selector is checked, every metric of
// the spec proposes a count, the largest proposal wins. `Resource` and
// `ContainerResource` metrics are read through the resource metrics port
// (src/controllers/metrics/resource-client.ts, kube's GetResourceMetric) and
// computed by replica-calculator.ts; `Pods`, `Object` and `External` fail as
// kube's do without a custom or external metrics API (hpa-rules.ts). A failed
// metric is a Warning event with its reason; when every metric failed, or some
// did and the others would scale down, ScalingActive is False with the first
// failure and no count is given (-1); otherwise ScalingActive True
// `ValidMetricFound`.

import { formatDecimalSI } from '../../core/quantity.js';
import { type LabelSelector, matchesLabels, parseLabelSelector } from '../../machinery/selectors/labels.js';
import type { ApiObject, JSONValue } from '../../registry/types.js';
import { type ResourceMetricsClient, ResourceMetricsError } from '../metrics/resource-client.js';
import { type MetricFailure, metricUnavailable } from './hpa-rules.js';
import { type CalculatorSettings, CalculationError, type PodMetrics, milliValue, rawResourceReplicas, resourceReplicas } from './replica-calculator.js';

type Obj = Record<string, JSONValue>;

export interface MetricsInput {
  /** the autoscaler's namespace */
  namespace: string;
  /** the scale's `status.selector` */
  selector: unknown;
  /** the scale's spec.replicas */
  specReplicas: number;
  metrics: Obj[];
  /** absent: no resource metrics API (kube without metrics-server) */
  client: ResourceMetricsClient | undefined;
  /** the namespace's pods */
  listPods: (namespace: string) => Promise<ApiObject[]>;
  settings: CalculatorSettings;
  nowMs: number;
  event: (type: 'Warning', reason: string, message: string) => void;
}

export interface MetricsOutcome {
  /** the proposed count; -1 when none may be used */
  replicas: number;
  /** the metric that proposed it (the rescale reason's subject) */
  metric: string;
  /** one per metric; `{type: ""}` for one that failed (undefined when the selector failed) */
  statuses: Obj[] | undefined;
  /** kube's "invalid metrics (n invalid out of m), first error is: …" when a metric failed */
  error?: string;
  /** ScalingActive as this step leaves it */
  scalingActive: { status: 'True' | 'False'; reason: string; message: string };
}

type Proposal = { ok: true; replicas: number; metric: string; status: Obj } | ({ ok: false } & MetricFailure);

const wrapClientError = (e: unknown): string => (e instanceof ResourceMetricsError ? e.message : `unable to fetch metrics from resource metrics API: ${(e as Error).message}`);

/** kube's computeStatusForResourceMetricGeneric and its Resource / ContainerResource callers */
async function resourceProposal(spec: Obj, input: MetricsInput, selector: LabelSelector, client: ResourceMetricsClient): Promise<Proposal> {
  const isContainer = spec.type === 'ContainerResource';
  const source = ((isContainer ? spec.containerResource : spec.resource) ?? {}) as Obj;
  const resource = String(source.name ?? '');
  const container = isContainer ? String(source.container ?? '') : '';
  const target = (source.target ?? {}) as Obj;
  const fail = (error: string): Proposal => isContainer
    ? { ok: false, reason: 'FailedGetContainerResourceMetric', error, wrapped: `failed to get ${container} container metric value: ${error}` }
    : { ok: false, reason: 'FailedGetResourceMetric', error, wrapped: `failed to get ${resource} resource metric value: ${error}` };
  const byValue = target.averageValue !== undefined;
  if (!byValue && target.averageUtilization === undefined) return fail('invalid resource metric source: neither an average utilization target nor an average value (usage) target was set');
  const what = byValue ? 'usage' : 'utilization';
  const selects = (p: ApiObject): boolean => matchesLabels(selector, p.metadata?.labels);
  let metrics: PodMetrics;
  try {
    metrics = (await client.getResourceMetric(resource, input.namespace, selects, container)).metrics;
  } catch (e) {
    return fail(`failed to get ${resource} ${what}: unable to get metrics for resource ${resource}: ${wrapClientError(e)}`);
  }
  try {
    let pods: ApiObject[];
    try {
      pods = (await input.listPods(input.namespace)).filter(selects);
    } catch (e) {
      throw new CalculationError(`unable to get pods while calculating replica count: ${(e as Error).message}`);
    }
    const statusKey = isContainer ? 'containerResource' : 'resource';
    const named: Obj = isContainer ? { name: resource, container } : { name: resource };
    if (byValue) {
      const r = rawResourceReplicas(input.specReplicas, milliValue(target.averageValue) ?? 0, resource, pods, metrics, input.settings, input.nowMs);
      return { ok: true, replicas: r.replicas, metric: `${resource} resource`, status: { type: spec.type as string, [statusKey]: { ...named, current: { averageValue: formatDecimalSI(r.usage, -3) } } } };
    }
    const r = resourceReplicas(input.specReplicas, Number(target.averageUtilization), resource, container, pods, metrics, input.settings, input.nowMs);
    return {
      ok: true,
      replicas: r.replicas,
      metric: `${resource} ${isContainer ? 'container ' : ''}resource utilization (percentage of request)`,
      status: { type: spec.type as string, [statusKey]: { ...named, current: { averageUtilization: r.utilization, averageValue: formatDecimalSI(r.rawUtilization, -3) } } },
    };
  } catch (e) {
    if (!(e instanceof CalculationError)) throw e;
    return fail(`failed to get ${resource} ${what}: ${e.message}`);
  }
}

/** kube's validateAndParseSelector: undefined and the failure (its event sent) when the scale has no usable selector */
function selectorOf(input: MetricsInput): { selector?: LabelSelector; failure?: MetricsOutcome } {
  const failed = (event: string, error: string, message: string): { failure: MetricsOutcome } => {
    input.event('Warning', event, error);
    return { failure: { replicas: -1, metric: '', statuses: undefined, error, scalingActive: { status: 'False', reason: 'InvalidSelector', message } } };
  };
  if (typeof input.selector !== 'string' || input.selector === '') return failed('SelectorRequired', 'selector is required', "the HPA target's scale is missing a selector");
  try {
    return { selector: parseLabelSelector(input.selector) };
  } catch (e) {
    const error = `couldn't convert selector into a corresponding internal selector object: ${(e as Error).message}`;
    return failed('InvalidSelector', error, error);
  }
}

export async function computeReplicasForMetrics(input: MetricsInput): Promise<MetricsOutcome> {
  const { selector, failure } = selectorOf(input);
  if (!selector) return failure!;
  let replicas = 0;
  let metric = '';
  let firstFailure: MetricFailure | undefined;
  let invalid = 0;
  const statuses: Obj[] = [];
  for (const spec of input.metrics) {
    const resourceType = spec.type === 'Resource' || spec.type === 'ContainerResource';
    const p: Proposal = resourceType && input.client ? await resourceProposal(spec, input, selector, input.client) : { ok: false, ...metricUnavailable(spec) };
    if (!p.ok) {
      input.event('Warning', p.reason, p.error);
      firstFailure ??= p;
      invalid++;
      statuses.push({ type: '' });
      continue;
    }
    statuses.push(p.status);
    if (replicas === 0 || p.replicas > replicas) {
      replicas = p.replicas;
      metric = p.metric;
    }
  }
  const error = firstFailure ? `invalid metrics (${invalid} invalid out of ${input.metrics.length}), first error is: ${firstFailure.wrapped}` : undefined;
  // every metric failed, or some did and the valid ones would scale down: no count
  if (firstFailure && (invalid >= input.metrics.length || replicas < input.specReplicas)) {
    return { replicas: -1, metric: '', statuses, error, scalingActive: { status: 'False', reason: firstFailure.reason, message: `the HPA was unable to compute the replica count: ${firstFailure.error}` } };
  }
  return { replicas, metric, statuses, error, scalingActive: { status: 'True', reason: 'ValidMetricFound', message: `the HPA was able to successfully calculate a replica count from ${metric}` } };
}
