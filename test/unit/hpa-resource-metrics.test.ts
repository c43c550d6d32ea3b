// The HorizontalPodAutoscaler controller scaling on resource metrics (hpa.ts with
// hpa-metrics.ts, replica-calculator.ts, hpa-normalize.ts) on a real LocalStore and a
// simulated clock, with a fake ResourceMetricsClient (the in-process port kube's
// GetResourceMetric is; resource-client.ts answers it from the scraper in the server).
// Expected texts are kube-controller-manager 1.32's. No sleeps: time moves only when
// the test says.

import { afterEach, describe, expect, it } from 'vitest';
import { HPA_SYNC_PERIOD_MS } from '../../src/controllers/autoscaling/hpa.js';
import { type PodMetric, type ResourceMetricsClient, ResourceMetricsError } from '../../src/controllers/metrics/resource-client.js';
import { type ManualClock } from '../../src/core/clock.js';
import type { ApiObject, JSONValue } from '../../src/registry/types.js';
import { type HpaEnv, openHpaEnv } from '../helpers/hpa-env.js';
import { type LocalRegistry, settleControllers } from '../helpers/local-registry.js';

type Obj = Record<string, JSONValue>;
const T0 = Date.parse('2026-01-01T00:00:00Z');
const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
const W = { dryRun: false };

/** per pod: MilliValue usage by resource, and per container when a test reads one */
interface Usage {
  cpu?: number;
  memory?: number;
  containers?: Record<string, { cpu?: number; memory?: number }>;
}

/** kube's resource metrics client over a table of usage; what metrics-server would answer for the selected pods */
class FakeMetrics implements ResourceMetricsClient {
  readonly usage = new Map<string, Usage>();
  calls = 0;
  constructor(private readonly r: LocalRegistry, private readonly clock: ManualClock) {}

  async getResourceMetric(resource: string, namespace: string, selects: (pod: ApiObject) => boolean, container: string) {
    this.calls++;
    const pods = (await this.r.gs('pods').list(namespace)).filter(selects).filter((p) => this.usage.has(p.metadata?.name ?? ''));
    if (pods.length === 0) throw new ResourceMetricsError('no metrics returned from resource metrics API');
    const metrics = new Map<string, PodMetric>();
    for (const p of pods) {
      const name = p.metadata?.name ?? '';
      const u = this.usage.get(name)!;
      const key = resource as 'cpu' | 'memory';
      let value: number | undefined;
      if (container !== '') {
        const c = u.containers?.[container];
        if (!c) throw new ResourceMetricsError(`failed to get container metrics: container ${container} not present in metrics for pod ${namespace}/${name}`);
        value = c[key];
      } else value = u[key];
      if (value !== undefined) metrics.set(name, { timestampMs: this.clock.now(), windowMs: 15_000, value });
    }
    return { metrics, timestampMs: this.clock.now() };
  }
}

type Env = HpaEnv & { metrics: FakeMetrics };

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const f of cleanup.reverse()) await f();
  cleanup = [];
});

async function env(): Promise<Env> {
  let metrics: FakeMetrics | undefined;
  const e = await openHpaEnv(T0, 'orch-hpa-rm-', (r, clock) => {
    metrics = new FakeMetrics(r, clock);
    return { pods: () => r.gs('pods'), resourceMetrics: metrics };
  });
  cleanup.push(() => e.close());
  return { ...e, metrics: metrics! };
}

const settle = (e: Env) => settleControllers([e.hpa]);

/** one resync period at a time, so every sync on the way runs at its own time */
async function periods(e: Env, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    e.clock.advance(HPA_SYNC_PERIOD_MS);
    await settle(e);
  }
}

async function deployment(e: Env, replicas: number): Promise<void> {
  await e.r.gs('deployments', 'apps').create('default', {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' },
    spec: { replicas, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
  }, W);
}

interface PodOpts {
  requests?: Obj;
  containers?: Obj[];
  ready?: boolean;
  phase?: string;
}

/** a Running pod of `web`, started and Ready 10 minutes ago (past kube's cpu initialization period) */
async function pod(e: Env, name: string, usage: Usage, o: PodOpts = {}): Promise<void> {
  const containers = o.containers ?? [{ name: 'c', image: 'nginx', resources: { requests: o.requests ?? { cpu: '100m', memory: '100Mi' } } }];
  await e.r.gs('pods').create('default', { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { app: 'web' } }, spec: { containers } } as ApiObject, W);
  const since = iso(e.clock.now() - 600_000);
  await e.r.gs('pods').guaranteedUpdate('default', name, { ...W, subresource: 'status' }, (cur) => ({
    ...cur!,
    status: { phase: o.phase ?? 'Running', startTime: since, conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True', lastTransitionTime: since }] },
  }));
  e.metrics.usage.set(name, usage);
}

async function autoscaler(e: Env, min: number, max: number, metrics: Obj[], behavior?: Obj): Promise<void> {
  await e.r.gs('horizontalpodautoscalers', 'autoscaling', 'v2').create('default', {
    apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name: 'web' },
    spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, minReplicas: min, maxReplicas: max, metrics, ...(behavior ? { behavior } : {}) },
  }, W);
  e.hpa.start();
  await settle(e);
}

const cpu = (averageUtilization: number): Obj => ({ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization } } });
const replicas = async (e: Env): Promise<number> => Number(((await e.r.gs('deployments', 'apps').get('default', 'web')).spec as Obj).replicas);
const setReplicas = (e: Env, n: number) => e.r.gs('deployments', 'apps').guaranteedUpdate('default', 'web', W, (cur) => ({ ...cur!, spec: { ...(cur!.spec as Obj), replicas: n } }));
const hpaStatus = async (e: Env): Promise<Obj> => ((await e.r.gs('horizontalpodautoscalers', 'autoscaling', 'v2').get('default', 'web')) as ApiObject).status as Obj;
const condition = (s: Obj, type: string): Obj | undefined => ((s.conditions ?? []) as Obj[]).find((c) => c.type === type);
const reasons = (s: Obj): string[] => ((s.conditions ?? []) as Obj[]).map((c) => `${String(c.type)}=${String(c.status)}/${String(c.reason)}`);

describe('HPA on resource metrics', () => {
  it('scales up on cpu above target, limited to max(2×current, 4) without behavior, with kube\'s status and event', async () => {
    const e = await env();
    await deployment(e, 2);
    await pod(e, 'web-1', { cpu: 150 });
    await pod(e, 'web-2', { cpu: 150 });
    await autoscaler(e, 1, 10, [cpu(50)]);
    // 150 % of request against 50 %: ratio 3, ceil(3 × 2) = 6, limited to 4
    expect(await replicas(e)).toBe(4);
    const s = await hpaStatus(e);
    expect(s).toMatchObject({ currentReplicas: 2, desiredReplicas: 4, lastScaleTime: iso(T0) });
    expect(s.currentMetrics).toEqual([{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 150, averageValue: '150m' } } }]);
    expect(reasons(s)).toEqual(['AbleToScale=True/SucceededRescale', 'ScalingActive=True/ValidMetricFound', 'ScalingLimited=True/ScaleUpLimit']);
    expect(condition(s, 'ScalingActive')?.message).toBe('the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)');
    expect(condition(s, 'ScalingLimited')?.message).toBe('the desired replica count is increasing faster than the maximum scale rate');
    expect(e.events).toEqual([{ type: 'Normal', reason: 'SuccessfulRescale', message: 'New size: 4; reason: cpu resource utilization (percentage of request) above target', name: 'web' }]);
  });

  it('within the tolerance (0.1) nothing changes; just past it, it scales', async () => {
    const e = await env();
    await deployment(e, 2);
    await pod(e, 'web-1', { cpu: 54 });
    await pod(e, 'web-2', { cpu: 54 });
    await autoscaler(e, 1, 10, [cpu(50)]);
    expect(await replicas(e)).toBe(2);
    const s = await hpaStatus(e);
    expect(s).toMatchObject({ currentReplicas: 2, desiredReplicas: 2 });
    expect(s.lastScaleTime).toBeUndefined();
    expect(reasons(s)).toEqual(['AbleToScale=True/ReadyForNewScale', 'ScalingActive=True/ValidMetricFound', 'ScalingLimited=False/DesiredWithinRange']);
    expect(e.events).toEqual([]);
    // 56 %: ratio 1.12, ceil(1.12 × 2) = 3
    e.metrics.usage.set('web-1', { cpu: 56 });
    e.metrics.usage.set('web-2', { cpu: 56 });
    await periods(e, 1);
    expect(await replicas(e)).toBe(3);
  });

  it('scales down only once the 300 s stabilization window no longer holds a higher recommendation', async () => {
    const e = await env();
    await deployment(e, 4);
    for (const n of [1, 2, 3, 4]) await pod(e, `web-${n}`, { cpu: 10 });
    await autoscaler(e, 1, 10, [cpu(50)]);
    // the first recommendation is the current count (kube's recordInitialRecommendation)
    expect(await replicas(e)).toBe(4);
    expect(condition(await hpaStatus(e), 'AbleToScale')).toMatchObject({ reason: 'ScaleDownStabilized', message: 'recent recommendations were higher than current one, applying the highest recent recommendation' });
    await periods(e, 20); // T0 + 300 s: the first recommendation is still inside the window
    expect(await replicas(e)).toBe(4);
    await periods(e, 1);
    expect(await replicas(e)).toBe(1);
    expect(e.events.map((x) => x.message)).toEqual(['New size: 1; reason: All metrics below target']);
    expect((await hpaStatus(e)).lastScaleTime).toBe(iso(T0 + 21 * HPA_SYNC_PERIOD_MS));
  });

  it('behavior: a Pods policy limits each period\'s scale-up, a Percent one the scale-down, Disabled stops a direction', async () => {
    const e = await env();
    await deployment(e, 2);
    await pod(e, 'web-1', { cpu: 150 });
    await pod(e, 'web-2', { cpu: 150 });
    await autoscaler(e, 1, 10, [cpu(50)], {
      scaleUp: { policies: [{ type: 'Pods', value: 1, periodSeconds: 60 }] },
      scaleDown: { stabilizationWindowSeconds: 0, policies: [{ type: 'Percent', value: 50, periodSeconds: 15 }] },
    });
    expect(await replicas(e)).toBe(3);
    expect(condition(await hpaStatus(e), 'ScalingLimited')).toMatchObject({ status: 'True', reason: 'ScaleUpLimit' });
    await periods(e, 3); // the +1 of T0 is still in the 60 s period
    expect(await replicas(e)).toBe(3);
    await periods(e, 1); // T0 + 60 s: it left it
    expect(await replicas(e)).toBe(4);
    // load gone: 10 % → 1 wanted; 50 % per 15 s from 4 → 2, and no stabilization window
    for (const n of [1, 2]) e.metrics.usage.set(`web-${n}`, { cpu: 10 });
    await periods(e, 1);
    expect(await replicas(e)).toBe(2);
    expect(condition(await hpaStatus(e), 'ScalingLimited')).toMatchObject({ status: 'True', reason: 'ScaleDownLimit', message: 'the desired replica count is decreasing faster than the maximum scale rate' });
    // selectPolicy Disabled: no scale-down at all
    await e.r.gs('horizontalpodautoscalers', 'autoscaling', 'v2').guaranteedUpdate('default', 'web', W, (cur) => ({
      ...cur!, spec: { ...(cur!.spec as Obj), behavior: { scaleDown: { stabilizationWindowSeconds: 0, selectPolicy: 'Disabled' } } },
    }));
    await periods(e, 2);
    expect(await replicas(e)).toBe(2);
  });

  it('a container without a request for the resource: kube\'s "missing request" failure, nothing scales', async () => {
    const e = await env();
    await deployment(e, 2);
    await pod(e, 'web-1', { cpu: 150 }, { requests: { memory: '10Mi' } });
    await pod(e, 'web-2', { cpu: 150 });
    await autoscaler(e, 1, 10, [cpu(50)]);
    expect(await replicas(e)).toBe(2);
    const error = 'failed to get cpu utilization: missing request for cpu in container c of Pod web-1';
    const s = await hpaStatus(e);
    expect(condition(s, 'ScalingActive')).toMatchObject({ status: 'False', reason: 'FailedGetResourceMetric', message: `the HPA was unable to compute the replica count: ${error}` });
    expect(s.currentMetrics).toEqual([{ type: '' }]);
    expect(e.events.map((x) => [x.reason, x.message])).toEqual([
      ['FailedGetResourceMetric', error],
      ['FailedComputeMetricsReplicas', `invalid metrics (1 invalid out of 1), first error is: failed to get cpu resource metric value: ${error}`],
    ]);
  });

  it('no metrics for the pods yet (the scraper has not run): FailedGetResourceMetric with the client\'s message', async () => {
    const e = await env();
    await deployment(e, 2);
    await pod(e, 'web-1', { cpu: 150 });
    e.metrics.usage.clear();
    await autoscaler(e, 1, 10, [cpu(50)]);
    expect(condition(await hpaStatus(e), 'ScalingActive')?.message).toBe(
      'the HPA was unable to compute the replica count: failed to get cpu utilization: unable to get metrics for resource cpu: no metrics returned from resource metrics API',
    );
  });

  it('AverageValue on memory: the average per pod against the target, the status as a DecimalSI quantity', async () => {
    const e = await env();
    await deployment(e, 2);
    const mi = 1024 * 1024 * 1000; // MilliValue of 1Mi
    await pod(e, 'web-1', { memory: 200 * mi });
    await pod(e, 'web-2', { memory: 200 * mi });
    await autoscaler(e, 1, 10, [{ type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '100Mi' } } }]);
    expect(await replicas(e)).toBe(4);
    expect((await hpaStatus(e)).currentMetrics).toEqual([{ type: 'Resource', resource: { name: 'memory', current: { averageValue: '209715200' } } }]);
    expect(e.events.map((x) => x.message)).toEqual(['New size: 4; reason: memory resource above target']);
  });

  it('ContainerResource: one container\'s usage against its own request', async () => {
    const e = await env();
    await deployment(e, 2);
    const containers = [
      { name: 'app', image: 'nginx', resources: { requests: { cpu: '100m' } } },
      { name: 'sidecar', image: 'envoy', resources: { requests: { cpu: '100m' } } },
    ];
    for (const n of ['web-1', 'web-2']) await pod(e, n, { cpu: 90, containers: { app: { cpu: 90 }, sidecar: { cpu: 0 } } }, { containers });
    // summed over the pod it is 45 %: within tolerance of 50 %
    await autoscaler(e, 1, 10, [{ type: 'ContainerResource', containerResource: { name: 'cpu', container: 'app', target: { type: 'Utilization', averageUtilization: 50 } } }]);
    expect(await replicas(e)).toBe(4);
    expect((await hpaStatus(e)).currentMetrics).toEqual([{ type: 'ContainerResource', containerResource: { name: 'cpu', container: 'app', current: { averageUtilization: 90, averageValue: '90m' } } }]);
    expect(e.events.map((x) => x.message)).toEqual(['New size: 4; reason: cpu container resource utilization (percentage of request) above target']);
  });

  it('several metrics: the largest proposal wins; an invalid one still lets a scale-up through, not a scale-down', async () => {
    const e = await env();
    await deployment(e, 2);
    const mi = 1024 * 1024 * 1000;
    await pod(e, 'web-1', { cpu: 80, memory: 150 * mi });
    await pod(e, 'web-2', { cpu: 80, memory: 150 * mi });
    const memory: Obj = { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '100Mi' } } };
    const pods: Obj = { type: 'Pods', pods: { metric: { name: 'qps' }, target: { type: 'AverageValue', averageValue: '10' } } };
    // cpu 80 % of 50: ceil(1.6 × 2) = 4; memory 150Mi of 100Mi: ceil(1.5 × 2) = 3; qps unreadable
    await autoscaler(e, 1, 10, [memory, cpu(50), pods]);
    expect(await replicas(e)).toBe(4);
    const s = await hpaStatus(e);
    expect((s.currentMetrics as Obj[]).map((m) => m.type)).toEqual(['Resource', 'Resource', '']);
    expect(condition(s, 'ScalingActive')).toMatchObject({ status: 'True', reason: 'ValidMetricFound' });
    expect(e.events.map((x) => x.reason)).toEqual(['FailedGetPodsMetric', 'SuccessfulRescale']);
    expect(e.events[1]!.message).toBe('New size: 4; reason: cpu resource utilization (percentage of request) above target');
    // now everything valid is low: with an invalid metric kube does not scale down
    await setReplicas(e, 4);
    for (const n of ['web-1', 'web-2']) e.metrics.usage.set(n, { cpu: 5, memory: 10 * mi });
    e.events.length = 0;
    await periods(e, 21);
    expect(await replicas(e)).toBe(4);
    expect(condition(await hpaStatus(e), 'ScalingActive')).toMatchObject({ status: 'False', reason: 'FailedGetPodsMetric' });
    expect(e.events.some((x) => x.reason === 'FailedComputeMetricsReplicas' && x.message.startsWith('invalid metrics (1 invalid out of 3), first error is: failed to get pods metric value'))).toBe(true);
  });

  it('unready pods keep a scale-up ratio from becoming a scale-down; missing ones count at their request on a scale-down', async () => {
    const e = await env();
    await deployment(e, 3);
    await pod(e, 'web-1', { cpu: 60 });
    await pod(e, 'web-2', { cpu: 0 }, { ready: false });
    await pod(e, 'web-3', { cpu: 0 }, { phase: 'Pending' });
    // no stabilization window: a wrong scale-down would show at once
    await autoscaler(e, 1, 10, [cpu(50)], { scaleDown: { stabilizationWindowSeconds: 0 } });
    // ratio 1.2 from the ready pod alone would give ceil(1.2 × 1) = 2; with the unready pods at 0
    // it is 20 % of 300m, the direction flips: keep 3
    expect(await replicas(e)).toBe(3);
    expect((await hpaStatus(e)).desiredReplicas).toBe(3);
    // a scale-down with three pods missing metrics: they count at 100 % of request, 77 % → keep 4
    await setReplicas(e, 4);
    e.metrics.usage.clear();
    for (const n of ['web-2', 'web-3']) {
      await e.r.gs('pods').guaranteedUpdate('default', n, { ...W, subresource: 'status' }, (cur) => ({
        ...cur!, status: { ...(cur!.status as Obj), phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: iso(T0 - 600_000) }] },
      }));
    }
    await pod(e, 'web-4', { cpu: 10 });
    await periods(e, 1);
    expect(await replicas(e)).toBe(4);
    expect(e.events).toEqual([]);
  });
});
