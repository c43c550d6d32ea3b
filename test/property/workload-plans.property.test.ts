// The Deployment and ReplicaSet controllers' arithmetic
// (src/controllers/workloads/deployment-plan.ts, replicaset-plan.ts) against
// simple models: percentages rounded as kube does, a rolling update that
// never leaves its surge/unavailability bounds and always finishes, the
// deletion order, the creation batches and the template hash.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type DeploymentView, type RsView, maxUnavailableOf, newRsReplicas, proportionalScale, resolveFenceposts, rollingScaleDown, templateHash, templatesEqual,
} from '../../src/controllers/workloads/deployment-plan.js';
import { BURST_REPLICAS, podsToDelete, slowStartBatches } from '../../src/controllers/workloads/replicaset-plan.js';
import type { ApiObject } from '../../src/registry/types.js';

const intOrPercent = fc.oneof(fc.integer({ min: 0, max: 10 }), fc.integer({ min: 0, max: 100 }).map((p) => `${p}%`));

describe('fenceposts', () => {
  it('rounds maxSurge up and maxUnavailable down; both 0 makes unavailable 1', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 100 }), fc.integer({ min: 0, max: 100 }), fc.integer({ min: 0, max: 1000 }), (s, u, n) => {
        const out = resolveFenceposts(`${s}%`, `${u}%`, n);
        const surge = Math.floor((s * n + 99) / 100);
        const unavailable = Math.floor((u * n) / 100);
        expect(out).toEqual({ surge, unavailable: surge === 0 && unavailable === 0 ? 1 : unavailable });
      }),
    );
    expect(resolveFenceposts(undefined, undefined, 10)).toEqual({ surge: 3, unavailable: 2 });
    expect(resolveFenceposts(2, 0, 10)).toEqual({ surge: 2, unavailable: 0 });
  });
});

describe('rolling update', () => {
  it('stays within replicas + maxSurge and replicas − maxUnavailable, and finishes', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 12 }),
        intOrPercent,
        intOrPercent,
        fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 200, maxLength: 200 }),
        (replicas, maxSurge, maxUnavailable, readiness) => {
          const d: DeploymentView = { replicas, recreate: false, maxSurge, maxUnavailable };
          const { surge } = resolveFenceposts(maxSurge, maxUnavailable, replicas);
          const minAvailable = replicas - maxUnavailableOf(d);
          const old: RsView = { name: 'old', replicas, statusReplicas: replicas, ready: replicas, available: replicas, created: 1 };
          const neu: RsView = { name: 'new', replicas: 0, statusReplicas: 0, ready: 0, available: 0, created: 2 };
          for (let i = 0; i < readiness.length; i++) {
            // one controller step, as deployment.ts takes it: grow the new set, else shrink the old one
            const target = newRsReplicas(d, [old, neu], neu);
            if (target !== neu.replicas) neu.replicas = target;
            else {
              const down = rollingScaleDown(d, [old], neu).get('old');
              // the ReplicaSet controller deletes not-ready pods first
              if (down !== undefined) old.replicas = old.available = down;
            }
            expect(old.replicas + neu.replicas).toBeLessThanOrEqual(replicas + surge);
            expect(old.available + neu.available).toBeGreaterThanOrEqual(minAvailable);
            if (neu.replicas === replicas && old.replicas === 0 && neu.available === replicas) return;
            // the node agents: some new pods become available (at least one every other step)
            neu.available = Math.min(neu.replicas, neu.available + Math.max(readiness[i]!, i % 2));
          }
          expect.fail(`no convergence: old ${old.replicas}, new ${neu.replicas}/${neu.available}`);
        },
      ),
    );
  });

  it('proportional scaling during a rollout ends at replicas + maxSurge when growing', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 20 }), { minLength: 2, maxLength: 4 }), fc.integer({ min: 1, max: 60 }), (sizes, replicas) => {
        const total = sizes.reduce((a, b) => a + b, 0);
        const d: DeploymentView = { replicas, recreate: false, maxSurge: 1, maxUnavailable: 0 };
        const sets: RsView[] = sizes.map((s, i) => ({ name: `rs${i}`, replicas: s, statusReplicas: s, ready: s, available: s, created: i, maxReplicas: total }));
        const out = proportionalScale(d, sets, total);
        const sum = [...out.values()].reduce((a, b) => a + b, 0);
        for (const v of out.values()) expect(v).toBeGreaterThanOrEqual(0);
        if (replicas + 1 >= total) expect(sum).toBe(replicas + 1);
        else expect(sum).toBeGreaterThanOrEqual(replicas + 1);
      }),
    );
  });
});

interface PodModel {
  scheduled: boolean;
  phase: 'Pending' | 'Running';
  ready: boolean;
  created: number;
}

function podOf(m: PodModel, i: number): ApiObject {
  return {
    metadata: { name: `p${i}`, creationTimestamp: new Date(m.created * 1000).toISOString() },
    spec: m.scheduled ? { nodeName: `n${i % 3}` } : {},
    status: { phase: m.phase, conditions: m.ready ? [{ type: 'Ready', status: 'True', lastTransitionTime: new Date(m.created * 1000).toISOString() }] : [] },
  } as unknown as ApiObject;
}

describe('ReplicaSet decisions', () => {
  it('deletes unscheduled before scheduled, pending before running, not-ready before ready', () => {
    const model = fc.record({ scheduled: fc.boolean(), phase: fc.constantFrom('Pending' as const, 'Running' as const), ready: fc.boolean(), created: fc.integer({ min: 0, max: 1000 }) });
    fc.assert(
      fc.property(fc.array(model, { maxLength: 15 }), fc.integer({ min: 0, max: 16 }), (models, count) => {
        const pods = models.map(podOf);
        const out = podsToDelete(pods, count);
        expect(out).toHaveLength(Math.min(count, pods.length));
        const chosen = new Set(out);
        const rank = (m: PodModel): number[] => [m.scheduled ? 1 : 0, m.phase === 'Running' ? 1 : 0, m.ready ? 1 : 0];
        const less = (a: number[], b: number[]): boolean => a[0]! < b[0]! || (a[0] === b[0] && (a[1]! < b[1]! || (a[1] === b[1] && a[2]! < b[2]!)));
        // no kept pod ranks strictly before a deleted one
        for (let i = 0; i < pods.length; i++) {
          if (chosen.has(pods[i]!)) continue;
          for (let j = 0; j < pods.length; j++) if (chosen.has(pods[j]!)) expect(less(rank(models[i]!), rank(models[j]!))).toBe(false);
        }
      }),
    );
  });

  it('creates in slow-start batches of 1, 2, 4, … up to the burst', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2000 }), (n) => {
        const b = slowStartBatches(n);
        expect(b.reduce((a, x) => a + x, 0)).toBe(Math.min(n, BURST_REPLICAS));
        b.forEach((x, i) => {
          if (i < b.length - 1) expect(x).toBe(2 ** i);
          else expect(x).toBeLessThanOrEqual(2 ** i);
        });
      }),
    );
  });
});

describe('template hash', () => {
  const template = { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } };
  it('is written in the safe alphabet and changes with the template and the collision count', () => {
    const h = templateHash(template, undefined);
    expect(h).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]{1,10}$/);
    expect(templateHash(template, 1)).not.toBe(h);
    expect(templateHash({ ...template, spec: { containers: [{ name: 'c', image: 'nginx:2' }] } }, undefined)).not.toBe(h);
  });

  it('equal templates (but for the hash label, key order and Go zero values) hash and compare equal', () => {
    const other = { spec: { containers: [{ image: 'nginx', name: 'c', stdin: false }], hostNetwork: false }, metadata: { labels: { 'pod-template-hash': 'x', app: 'web' } } };
    expect(templatesEqual(template, other)).toBe(true);
    expect(templateHash(template, undefined)).toBe(templateHash({ ...other, metadata: { labels: { app: 'web' } } }, undefined));
    expect(templatesEqual(template, { ...template, metadata: { labels: { app: 'api' } } })).toBe(false);
  });
});
