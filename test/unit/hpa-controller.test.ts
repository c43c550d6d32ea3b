// The HorizontalPodAutoscaler controller (src/controllers/autoscaling/hpa.ts) on a real
// LocalStore with a simulated clock: kube's clamp into [minReplicas, maxReplicas], the
// 15 s resync, ScalingDisabled at zero replicas, a missing target, and what kube says
// when no metrics API is registered. No sleeps: time moves only when the test says.

import { afterEach, describe, expect, it } from 'vitest';
import { HPA_SYNC_PERIOD_MS } from '../../src/controllers/autoscaling/hpa.js';
import type { ApiObject, JSONValue } from '../../src/registry/types.js';
import { type HpaEnv as Env, openHpaEnv } from '../helpers/hpa-env.js';
import { settleControllers } from '../helpers/local-registry.js';

type Obj = Record<string, JSONValue>;
const T0 = Date.parse('2026-01-01T00:00:00Z');
const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
const NO_METRICS = 'failed to get cpu utilization: unable to get metrics for resource cpu: unable to fetch metrics from resource metrics API: the server could not find the requested resource (get pods.metrics.k8s.io)';

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const f of cleanup.reverse()) await f();
  cleanup = [];
});

async function env(): Promise<Env> {
  const e = await openHpaEnv(T0, 'orch-hpa-');
  e.hpa.start();
  cleanup.push(() => e.close());
  return e;
}

const settle = (e: Env) => settleControllers([e.hpa]);

async function advance(e: Env, ms: number): Promise<void> {
  e.clock.advance(ms);
  await settle(e);
}

async function deployment(e: Env, name: string, replicas: number): Promise<void> {
  await e.r.gs('deployments', 'apps').create('default', {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name },
    spec: { replicas, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
  }, { dryRun: false });
}

async function autoscaler(e: Env, name: string, target: string, min: number, max: number, kind = 'Deployment'): Promise<void> {
  await e.r.gs('horizontalpodautoscalers', 'autoscaling', 'v2').create('default', {
    apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name },
    spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind, name: target }, minReplicas: min, maxReplicas: max },
  }, { dryRun: false });
  await settle(e);
}

const replicas = async (e: Env, name: string): Promise<number> => Number(((await e.r.gs('deployments', 'apps').get('default', name)).spec as Obj).replicas);
const hpaStatus = async (e: Env, name: string): Promise<Obj> => ((await e.r.gs('horizontalpodautoscalers', 'autoscaling', 'v2').get('default', name)) as ApiObject).status as Obj;
const condition = (s: Obj, type: string): Obj | undefined => ((s.conditions ?? []) as Obj[]).find((c) => c.type === type);

describe('HorizontalPodAutoscaler controller', () => {
  it('scales a target below minReplicas up to it, with kube\'s status, condition and event', async () => {
    const e = await env();
    await deployment(e, 'web', 1);
    await autoscaler(e, 'web', 'web', 2, 5);
    expect(await replicas(e, 'web')).toBe(2);
    const s = await hpaStatus(e, 'web');
    expect(s).toEqual({
      currentReplicas: 1,
      desiredReplicas: 2,
      lastScaleTime: iso(T0),
      conditions: [{ type: 'AbleToScale', status: 'True', lastTransitionTime: iso(T0), reason: 'SucceededRescale', message: 'the HPA controller was able to update the target scale to 2' }],
    });
    expect(e.events).toEqual([{ reason: 'SuccessfulRescale', type: 'Normal', message: 'New size: 2; reason: Current number of replicas below Spec.MinReplicas', name: 'web' }]);
  });

  it('within range, every resync reports that no resource metrics can be read', async () => {
    const e = await env();
    await deployment(e, 'web', 3);
    await autoscaler(e, 'web', 'web', 2, 5);
    const s = await hpaStatus(e, 'web');
    expect(s.currentReplicas).toBe(3);
    // kube keeps the last desired count (none yet) and one empty MetricStatus per unreadable metric
    expect(s.desiredReplicas).toBe(0);
    expect(s.currentMetrics).toEqual([{ type: '' }]);
    expect(s.lastScaleTime).toBeUndefined();
    expect(condition(s, 'AbleToScale')).toMatchObject({ status: 'True', reason: 'SucceededGetScale', message: "the HPA controller was able to get the target's current scale" });
    expect(condition(s, 'ScalingActive')).toEqual({ type: 'ScalingActive', status: 'False', lastTransitionTime: iso(T0), reason: 'FailedGetResourceMetric', message: `the HPA was unable to compute the replica count: ${NO_METRICS}` });
    expect(e.events.map((x) => [x.type, x.reason, x.message])).toEqual([
      ['Warning', 'FailedGetResourceMetric', NO_METRICS],
      ['Warning', 'FailedComputeMetricsReplicas', `invalid metrics (1 invalid out of 1), first error is: failed to get cpu resource metric value: ${NO_METRICS}`],
    ]);
    expect(await replicas(e, 'web')).toBe(3);
  });

  it('resyncs every 15 s: a target scaled below the minimum out of band comes back at the next period', async () => {
    const e = await env();
    await deployment(e, 'web', 1);
    await autoscaler(e, 'web', 'web', 2, 5);
    expect(await replicas(e, 'web')).toBe(2);
    await e.r.gs('deployments', 'apps').guaranteedUpdate('default', 'web', { dryRun: false }, (cur) => ({ ...cur!, spec: { ...(cur!.spec as Obj), replicas: 1 } }));
    await advance(e, HPA_SYNC_PERIOD_MS - 1000);
    expect(await replicas(e, 'web')).toBe(1);
    await advance(e, 1000);
    expect(await replicas(e, 'web')).toBe(2);
    expect((await hpaStatus(e, 'web')).lastScaleTime).toBe(iso(T0 + HPA_SYNC_PERIOD_MS));
  });

  it('scales a target above maxReplicas down to it', async () => {
    const e = await env();
    await deployment(e, 'big', 9);
    await autoscaler(e, 'big', 'big', 1, 4);
    expect(await replicas(e, 'big')).toBe(4);
    expect(e.events.map((x) => x.message)).toEqual(['New size: 4; reason: Current number of replicas above Spec.MaxReplicas']);
  });

  it('leaves a target at zero replicas alone: ScalingDisabled', async () => {
    const e = await env();
    await deployment(e, 'off', 0);
    await autoscaler(e, 'off', 'off', 2, 5);
    expect(await replicas(e, 'off')).toBe(0);
    const s = await hpaStatus(e, 'off');
    expect(s).toMatchObject({ currentReplicas: 0, desiredReplicas: 0 });
    expect(condition(s, 'ScalingActive')).toMatchObject({ status: 'False', reason: 'ScalingDisabled', message: 'scaling is disabled since the replica count of the target is zero' });
    expect(e.events).toEqual([]);
  });

  it('a missing target or an unknown kind: AbleToScale False FailedGetScale', async () => {
    const e = await env();
    await autoscaler(e, 'ghost', 'nope', 1, 3);
    expect(condition(await hpaStatus(e, 'ghost'), 'AbleToScale')).toMatchObject({
      status: 'False', reason: 'FailedGetScale', message: 'the HPA controller was unable to get the target\'s current scale: deployments.apps "nope" not found',
    });
    await autoscaler(e, 'odd', 'x', 1, 3, 'Widget');
    expect(condition(await hpaStatus(e, 'odd'), 'AbleToScale')?.message).toBe('the HPA controller was unable to get the target\'s current scale: no matches for kind "Widget" in group "apps"');
    expect(e.events.map((x) => x.reason)).toEqual(['FailedGetScale', 'FailedGetScale']);
  });
});
