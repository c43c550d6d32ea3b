// Properties of the HorizontalPodAutoscaler's computation (replica-calculator.ts then
// hpa-normalize.ts, as hpa.ts chains them): whatever the pods, their usage, requests,
// readiness, the target and the behavior, the normalized count stays within
// [minReplicas, maxReplicas]; and when every pod is ready with a metric and the
// utilization is within the tolerance of the target, nothing changes.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ScaleHistory, behaviorOf } from '../../src/controllers/autoscaling/hpa-normalize.js';
import { CalculationError, DEFAULT_CALCULATOR_SETTINGS as S, type PodMetrics, resourceReplicas } from '../../src/controllers/autoscaling/replica-calculator.js';
import type { ApiObject, JSONValue } from '../../src/registry/types.js';

const NOW = Date.parse('2026-01-01T01:00:00Z');
const iso = (ms: number): string => new Date(ms).toISOString();

const podArb = fc.record({
  requestMilli: fc.integer({ min: 1, max: 4000 }),
  usageMilli: fc.option(fc.integer({ min: 0, max: 8000 }), { nil: undefined }),
  phase: fc.constantFrom('Running', 'Running', 'Running', 'Pending', 'Failed'),
  ready: fc.boolean(),
  startedAgoMs: fc.integer({ min: 0, max: 900_000 }),
});

type PodSpec = { requestMilli: number; usageMilli: number | undefined; phase: string; ready: boolean; startedAgoMs: number };

function build(specs: PodSpec[]): { pods: ApiObject[]; metrics: PodMetrics } {
  const pods = specs.map((p, i) => ({
    apiVersion: 'v1', kind: 'Pod', metadata: { name: `p${i}` },
    spec: { containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: `${p.requestMilli}m` } } }] },
    status: { phase: p.phase, startTime: iso(NOW - p.startedAgoMs), conditions: [{ type: 'Ready', status: p.ready ? 'True' : 'False', lastTransitionTime: iso(NOW - p.startedAgoMs) }] },
  }) as ApiObject);
  const metrics: PodMetrics = new Map();
  specs.forEach((p, i) => {
    if (p.usageMilli !== undefined) metrics.set(`p${i}`, { timestampMs: NOW, windowMs: 15_000, value: p.usageMilli });
  });
  return { pods, metrics };
}

const policy = fc.record({ type: fc.constantFrom('Pods', 'Percent'), value: fc.integer({ min: 1, max: 200 }), periodSeconds: fc.integer({ min: 1, max: 120 }) });
const rules = fc.record({
  stabilizationWindowSeconds: fc.constantFrom(0, 0, 0, 15, 60, 300),
  selectPolicy: fc.constantFrom('Max', 'Min', 'Disabled'),
  policies: fc.array(policy, { minLength: 1, maxLength: 3 }),
}, { requiredKeys: [] });
const behaviorArb = fc.option(fc.record({ scaleUp: rules, scaleDown: rules }, { requiredKeys: [] }), { nil: undefined });

describe('HPA replica count', () => {
  it('the normalized count is always within [minReplicas, maxReplicas], sync after sync', () => {
    fc.assert(
      fc.property(
        fc.array(podArb, { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 1, max: 300 }),
        fc.integer({ min: 1, max: 10 }),
        fc.integer({ min: 0, max: 30 }),
        behaviorArb,
        fc.array(fc.integer({ min: 0, max: 8000 }), { minLength: 1, maxLength: 6 }),
        fc.constantFrom(15_000, 60_000, 301_000),
        (specs, target, min, extra, behavior, later, gapMs) => {
          const max = min + extra;
          const b = behaviorOf({ behavior: behavior as JSONValue | undefined } as Record<string, JSONValue>, 300_000);
          const h = new ScaleHistory(300_000);
          let current = min + Math.floor(extra / 2);
          h.recordInitial('k', current, NOW);
          // a few syncs apart (within and past the windows), the usage of the first pod changing between them
          for (const [i, usage] of later.entries()) {
            const now = NOW + i * gapMs;
            const { pods, metrics } = build(specs.map((p, j) => (j === 0 ? { ...p, usageMilli: usage } : p)));
            let desired: number;
            try {
              desired = resourceReplicas(current, target, 'cpu', '', pods, metrics, S, now).replicas;
            } catch (e) {
              if (e instanceof CalculationError) continue; // kube's failures: no count this sync
              throw e;
            }
            const n = b ? h.normalizeWithBehavior('k', b, current, desired, min, max, now) : h.normalize('k', current, desired, min, max, now);
            expect(n.desired).toBeGreaterThanOrEqual(min);
            expect(n.desired).toBeLessThanOrEqual(max);
            if (n.desired !== current) h.storeScaleEvent('k', b, current, n.desired, now);
            current = n.desired;
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('every pod ready with a metric and the utilization within tolerance: the count stays', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ requestMilli: fc.integer({ min: 1, max: 4000 }), usageMilli: fc.integer({ min: 0, max: 8000 }) }), { minLength: 1, maxLength: 8 }),
        fc.double({ min: 0.91, max: 1.1, noNaN: true }),
        fc.integer({ min: 1, max: 10 }),
        fc.integer({ min: 0, max: 30 }),
        behaviorArb,
        (rows, factor, min, extra, behavior) => {
          const specs = rows.map((r) => ({ ...r, phase: 'Running', ready: true, startedAgoMs: 600_000 }));
          const requests = rows.reduce((a, r) => a + r.requestMilli, 0);
          const usage = rows.reduce((a, r) => a + r.usageMilli, 0);
          const utilization = Math.trunc((usage * 100) / requests);
          // a target near the utilization (most draws are within the tolerance)
          const target = Math.max(1, Math.round(utilization * factor));
          fc.pre(Math.abs(utilization / target - 1) <= 0.1); // kube's default tolerance
          const max = min + extra;
          const current = min + Math.floor(extra / 2);
          const { pods, metrics } = build(specs);
          const desired = resourceReplicas(current, target, 'cpu', '', pods, metrics, S, NOW).replicas;
          expect(desired).toBe(current);
          const b = behaviorOf({ behavior: behavior as JSONValue | undefined } as Record<string, JSONValue>, 300_000);
          const h = new ScaleHistory(300_000);
          h.recordInitial('k', current, NOW);
          const n = b ? h.normalizeWithBehavior('k', b, current, desired, min, max, NOW) : h.normalize('k', current, desired, min, max, NOW);
          expect(n.desired).toBe(current);
        },
      ),
    );
  });
});
