// Conversion between served versions over one storage (src/registry/conversion.ts):
// round trips through the hub lose nothing, objects are never modified in
// place, and objects stored without a converter only get their apiVersion.

import { describe, expect, it } from 'vitest';
import { type StorageBinding, convertObject } from '../../src/registry/conversion.js';
import { eventStorage } from '../../src/registry/kinds/event-conversion.js';
import { hpaStorage } from '../../src/registry/kinds/hpa-conversion.js';
import type { ApiObject } from '../../src/registry/types.js';

const meta = { name: 'x', namespace: 'ns', uid: 'u', resourceVersion: '7', labels: { a: 'b' } };

describe('HPA autoscaling/v2 ↔ v1', () => {
  const b = hpaStorage();
  const v2: ApiObject = {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: { ...meta, annotations: { mine: 'kept' } },
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
      minReplicas: 2,
      maxReplicas: 10,
      metrics: [
        { type: 'Resource', resource: { name: 'memory', target: { type: 'Utilization', averageUtilization: 75 } } },
        { type: 'ContainerResource', containerResource: { name: 'cpu', container: 'app', target: { type: 'AverageValue', averageValue: '250m' } } },
        { type: 'Pods', pods: { metric: { name: 'qps', selector: { matchLabels: { x: 'y' } } }, target: { type: 'AverageValue', averageValue: '10' } } },
        { type: 'Object', object: { describedObject: { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', name: 'main' }, metric: { name: 'rps' }, target: { type: 'Value', value: '2k' } } },
        { type: 'External', external: { metric: { name: 'queue', selector: { matchLabels: { q: 'jobs' } } }, target: { type: 'AverageValue', averageValue: '30' } } },
        { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } },
      ],
      behavior: { scaleUp: { stabilizationWindowSeconds: 0, selectPolicy: 'Max', policies: [{ type: 'Pods', value: 4, periodSeconds: 15 }] } },
    },
    status: {
      observedGeneration: 3,
      currentReplicas: 4,
      desiredReplicas: 5,
      currentMetrics: [
        { type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 61, averageValue: '305m' } } },
        { type: 'External', external: { metric: { name: 'queue' }, current: { averageValue: '12' } } },
      ],
      conditions: [{ type: 'ScalingActive', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z', reason: 'ValidMetricFound' }],
    },
  };

  it('v2 → v1 → v2 keeps every field (the cpu Utilization metric last, as kube orders it)', () => {
    const snapshot = JSON.stringify(v2);
    const v1 = convertObject(b, v2, 'autoscaling/v1');
    expect(JSON.stringify(v2), 'the input is not modified').toBe(snapshot);
    expect(v1.apiVersion).toBe('autoscaling/v1');
    expect((v1.spec as Record<string, unknown>).targetCPUUtilizationPercentage).toBe(50);
    expect((v1.status as Record<string, unknown>).currentCPUUtilizationPercentage).toBe(61);
    expect(v1.spec).not.toHaveProperty('metrics');
    const back = convertObject(b, v1, 'autoscaling/v2');
    expect(back).toEqual(v2);
  });

  it('v1 → v2 → v1 is the identity, and a v1 object without annotations gains none through v2', () => {
    const v1: ApiObject = {
      apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: { ...meta },
      spec: { scaleTargetRef: { kind: 'Deployment', name: 'web' }, minReplicas: 1, maxReplicas: 3, targetCPUUtilizationPercentage: 80 },
      status: { currentReplicas: 1, desiredReplicas: 1, currentCPUUtilizationPercentage: 12 },
    };
    const v2obj = convertObject(b, v1, 'autoscaling/v2');
    expect(v2obj.metadata?.annotations).toBeUndefined();
    expect((v2obj.status as Record<string, unknown>).currentMetrics).toEqual([{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 12 } } }]);
    const v1back = convertObject(b, v2obj, 'autoscaling/v1');
    expect(v1back.metadata?.annotations).toEqual({ 'autoscaling.alpha.kubernetes.io/current-metrics': JSON.stringify([{ type: 'Resource', resource: { name: 'cpu', currentAverageUtilization: 12 } }]) });
    const { annotations: _a, ...m } = v1back.metadata!;
    expect({ ...v1back, metadata: m }).toEqual(v1);
  });
});

describe('HPA defaults', () => {
  it('a v1 HPA without a CPU target gets v2\'s 80% CPU metric on its way to the hub, and reads back with it through v1', () => {
    const b = hpaStorage();
    const v1: ApiObject = { apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: { ...meta }, spec: { scaleTargetRef: { kind: 'Deployment', name: 'web' }, minReplicas: 1, maxReplicas: 3 } };
    const hub = convertObject(b, v1, 'autoscaling/v2');
    expect((hub.spec as Record<string, unknown>).metrics).toEqual([{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }]);
    expect((convertObject(b, hub, 'autoscaling/v1').spec as Record<string, unknown>).targetCPUUtilizationPercentage).toBe(80);
  });
});

describe('Events core v1 ↔ events/v1', () => {
  const b = eventStorage('events.orch.io');
  it('events/v1 → core → events/v1 keeps every field', () => {
    const ev: ApiObject = {
      apiVersion: 'events.orch.io/v1', kind: 'Event', metadata: { ...meta },
      eventTime: '2026-01-01T00:00:00.000000Z', series: { count: 2, lastObservedTime: '2026-01-01T00:01:00.000000Z' },
      reportingController: 'orch.io/x', reportingInstance: 'x-1', action: 'Do', reason: 'Did',
      regarding: { kind: 'Pod', name: 'p' }, related: { kind: 'Node', name: 'n' }, note: 'hello', type: 'Normal',
      deprecatedSource: { component: 'c', host: 'h' }, deprecatedFirstTimestamp: '2026-01-01T00:00:00Z', deprecatedLastTimestamp: '2026-01-01T00:01:00Z', deprecatedCount: 2,
    };
    const core = convertObject(b, ev, 'v1');
    expect(core).toMatchObject({ apiVersion: 'v1', message: 'hello', involvedObject: { name: 'p' }, source: { component: 'c' }, count: 2, reportingComponent: 'orch.io/x' });
    expect(convertObject(b, core, 'events.orch.io/v1')).toEqual(ev);
  });
});

describe('a binding without converters (custom resources with conversion None)', () => {
  it('rewrites only the apiVersion', () => {
    const b: StorageBinding = { group: 'example.com', resource: 'widgets', storageVersion: 'example.com/v1', versions: {} };
    const o: ApiObject = { apiVersion: 'example.com/v1beta1', kind: 'Widget', metadata: { ...meta }, spec: { size: 3 } };
    expect(convertObject(b, o, 'example.com/v1')).toEqual({ ...o, apiVersion: 'example.com/v1' });
    expect(convertObject(b, o, 'example.com/v1beta1')).toBe(o);
  });
});
