// The HPA's pure rules: kube 1.32's replica calculator (replica-calculator.ts: pod
// grouping with the cpu initialization period and initial readiness delay, requests,
// the rebalancing of missing and unready pods) and its normalization (hpa-normalize.ts:
// stabilization windows, behavior policies and their scale events, selectPolicy).

import { describe, expect, it } from 'vitest';
import { ScaleHistory, behaviorOf, policyLimit } from '../../src/controllers/autoscaling/hpa-normalize.js';
import {
  DEFAULT_CALCULATOR_SETTINGS as S, groupPods, milliValue, podRequests, rawResourceReplicas, resourceReplicas, type PodMetrics,
} from '../../src/controllers/autoscaling/replica-calculator.js';
import type { ApiObject } from '../../src/registry/types.js';

const NOW = Date.parse('2026-01-01T01:00:00Z');
const iso = (ms: number): string => new Date(ms).toISOString();

interface P {
  startedAgo?: number;
  readySinceAgo?: number;
  ready?: boolean;
  phase?: string;
  deleting?: boolean;
  cpu?: string;
}

function pod(name: string, p: P = {}): ApiObject {
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name, ...(p.deleting ? { deletionTimestamp: iso(NOW) } : {}) },
    spec: { containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: p.cpu ?? '100m' } } }] },
    status: {
      phase: p.phase ?? 'Running', startTime: iso(NOW - (p.startedAgo ?? 600_000)),
      conditions: [{ type: 'Ready', status: p.ready === false ? 'False' : 'True', lastTransitionTime: iso(NOW - (p.readySinceAgo ?? p.startedAgo ?? 600_000)) }],
    },
  } as ApiObject;
}

const metrics = (values: Record<string, number>, timestampMs = NOW): PodMetrics =>
  new Map(Object.entries(values).map(([k, value]) => [k, { timestampMs, windowMs: 15_000, value }]));

describe('replica calculator', () => {
  it('groups pods as kube does: ignored, unready (Pending, not Ready, initializing cpu), missing, ready', () => {
    const pods = [
      pod('ok'),
      pod('gone', { deleting: true }),
      pod('failed', { phase: 'Failed' }),
      pod('pending', { phase: 'Pending' }),
      pod('no-metric'),
      // started 1 min ago, Ready 5 s ago: no full 15 s metric window since, so unready for cpu
      pod('warming', { startedAgo: 60_000, readySinceAgo: 5_000 }),
      // started 1 min ago, Ready 20 s ago: a full window since
      pod('warm', { startedAgo: 60_000, readySinceAgo: 20_000 }),
      // past the 5 min period, not Ready and never was (its transition within 30 s of the start)
      pod('never-ready', { ready: false, startedAgo: 600_000, readySinceAgo: 590_000 }),
      // past the period, not Ready but was once: its sample counts
      pod('was-ready', { ready: false, startedAgo: 600_000, readySinceAgo: 60_000 }),
    ];
    const m = metrics({ ok: 1, gone: 1, failed: 1, pending: 1, warming: 1, warm: 1, 'never-ready': 1, 'was-ready': 1 });
    const g = groupPods(pods, m, 'cpu', S, NOW);
    expect([...g.ignored].sort()).toEqual(['failed', 'gone']);
    expect([...g.unready].sort()).toEqual(['never-ready', 'pending', 'warming']);
    expect([...g.missing]).toEqual(['no-metric']);
    expect(g.readyPodCount).toBe(3);
    // memory looks at no readiness
    expect(groupPods(pods, m, 'memory', S, NOW).readyPodCount).toBe(5);
  });

  it('sums the requests of containers and restartable init containers; a missing one is kube\'s error', () => {
    const p = pod('a');
    (p.spec as { initContainers?: unknown[] }).initContainers = [
      { name: 'side', image: 'x', restartPolicy: 'Always', resources: { requests: { cpu: '0.25' } } },
      { name: 'init', image: 'x' },
    ];
    expect(podRequests([p], '', 'cpu').get('a')).toBe(350);
    expect(podRequests([p], 'side', 'cpu').get('a')).toBe(250);
    expect(() => podRequests([p], '', 'memory')).toThrow('missing request for memory in container c of Pod a');
    expect(milliValue('128Mi')).toBe(134217728000);
    expect(milliValue('1.5')).toBe(1500);
  });

  it('utilization: tolerance, ceil over ready pods, missing pods at 100 % (or the target above it) on a scale-down', () => {
    const two = [pod('a'), pod('b')];
    expect(resourceReplicas(2, 50, 'cpu', '', two, metrics({ a: 54, b: 54 }), S, NOW)).toEqual({ replicas: 2, utilization: 54, rawUtilization: 54 });
    expect(resourceReplicas(2, 50, 'cpu', '', two, metrics({ a: 150, b: 150 }), S, NOW).replicas).toBe(6);
    const four = [pod('a'), pod('b'), pod('c'), pod('d')];
    // 10 % with two missing: (10 + 10 + 100 + 100) / 400 = 55 % → flips direction → keep 4
    expect(resourceReplicas(4, 50, 'cpu', '', four, metrics({ a: 10, b: 10 }), S, NOW).replicas).toBe(4);
    // a target of 200 %: missing pods count at 200 %, (10 + 10 + 200 + 200) / 400 = 105 % → 0.525 → ceil(2.1) = 3
    expect(resourceReplicas(4, 200, 'cpu', '', four, metrics({ a: 10, b: 10 }), S, NOW).replicas).toBe(3);
    expect(() => resourceReplicas(2, 50, 'cpu', '', [], metrics({}), S, NOW)).toThrow('no pods returned by selector while calculating replica count');
    expect(() => resourceReplicas(2, 50, 'cpu', '', [pod('a', { phase: 'Pending' })], metrics({ a: 5 }), S, NOW)).toThrow('did not receive metrics for targeted pods (pods might be unready)');
  });

  it('average value: missing pods at the target on a scale-down, at 0 on a scale-up', () => {
    const three = [pod('a'), pod('b'), pod('c')];
    // 100 each against 200: ratio 0.5; c at 200 → 400 / 3 = 133 → 0.66 → ceil(2) = 2
    expect(rawResourceReplicas(3, 200, 'memory', three, metrics({ a: 100, b: 100 }), S, NOW)).toEqual({ replicas: 2, usage: 100 });
    // 400 each against 200: ratio 2; c at 0 → 800 / 3 = 266 → 1.33 → ceil(4) = 4
    expect(rawResourceReplicas(3, 200, 'memory', three, metrics({ a: 400, b: 400 }), S, NOW).replicas).toBe(4);
  });
});

describe('normalization', () => {
  const rules = (b: object) => behaviorOf({ behavior: b } as never, 300_000)!;

  it('fills kube\'s default behavior; none without spec.behavior', () => {
    expect(behaviorOf({}, 300_000)).toBeUndefined();
    expect(rules({})).toEqual({
      scaleUp: { stabilizationWindowSeconds: 0, selectPolicy: 'Max', policies: [{ type: 'Pods', value: 4, periodSeconds: 15 }, { type: 'Percent', value: 100, periodSeconds: 15 }] },
      scaleDown: { stabilizationWindowSeconds: 300, selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] },
    });
  });

  it('policies: Max and Min over the periods, counting the scale events inside each period', () => {
    const b = rules({ scaleUp: { policies: [{ type: 'Pods', value: 4, periodSeconds: 60 }, { type: 'Percent', value: 50, periodSeconds: 15 }] } });
    expect(policyLimit('up', 10, [], [], b.scaleUp, NOW)).toBe(15);
    expect(policyLimit('up', 10, [], [], { ...b.scaleUp, selectPolicy: 'Min' }, NOW)).toBe(14);
    // +3 20 s ago: outside the 15 s period, inside the 60 s one
    const ups = [{ change: 3, atMs: NOW - 20_000, outdated: false }];
    expect(policyLimit('up', 10, ups, [], { ...b.scaleUp, selectPolicy: 'Min' }, NOW)).toBe(11);
    expect(policyLimit('down', 10, [], [], { ...b.scaleDown, policies: [{ type: 'Percent', value: 30, periodSeconds: 15 }] }, NOW)).toBe(7);
    expect(policyLimit('down', 10, [], [], { ...b.scaleDown, selectPolicy: 'Disabled' }, NOW)).toBe(10);
  });

  it('records a scale event over one older than the longest period, and the period start follows the events', () => {
    const h = new ScaleHistory(300_000);
    const b = rules({ scaleUp: { stabilizationWindowSeconds: 0, policies: [{ type: 'Pods', value: 2, periodSeconds: 30 }] } });
    h.recordInitial('k', 2, NOW);
    expect(h.normalizeWithBehavior('k', b, 2, 10, 1, 20, NOW).desired).toBe(4);
    h.storeScaleEvent('k', b, 2, 4, NOW);
    expect(h.normalizeWithBehavior('k', b, 4, 10, 1, 20, NOW + 15_000)).toMatchObject({ desired: 4, limited: { status: 'True', reason: 'ScaleUpLimit' } });
    expect(h.normalizeWithBehavior('k', b, 4, 10, 1, 20, NOW + 31_000).desired).toBe(6);
  });

  it('without behavior: the highest recommendation of the last 5 minutes, the bounds, max(2×current, 4)', () => {
    const h = new ScaleHistory(300_000);
    h.recordInitial('k', 5, NOW);
    expect(h.normalize('k', 5, 2, 1, 10, NOW + 60_000)).toMatchObject({ desired: 5, ableToScale: { reason: 'ScaleDownStabilized' } });
    expect(h.normalize('k', 5, 2, 1, 10, NOW + 300_001)).toMatchObject({ desired: 2, ableToScale: { reason: 'ReadyForNewScale' }, limited: { status: 'False', reason: 'DesiredWithinRange' } });
    expect(h.normalize('k', 2, 0, 1, 10, NOW + 700_000)).toMatchObject({ desired: 1, limited: { status: 'True', reason: 'TooFewReplicas' } });
    expect(h.normalize('k', 1, 30, 1, 10, NOW + 1_100_000)).toMatchObject({ desired: 4, limited: { status: 'True', reason: 'ScaleUpLimit' } });
    expect(h.normalize('k', 8, 30, 1, 10, NOW + 1_500_000)).toMatchObject({ desired: 10, limited: { status: 'True', reason: 'TooManyReplicas' } });
  });
});
