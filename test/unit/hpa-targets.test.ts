// `kubectl get hpa`'s TARGETS column (src/registry/kinds/hpa-targets.ts) as kube 1.32's
// printer writes it from spec.metrics and status.currentMetrics.

import { describe, expect, it } from 'vitest';
import { formatHpaTargets } from '../../src/registry/kinds/hpa-targets.js';

const cpu = { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } };
const mem = { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '100Mi' } } };
const app = { type: 'ContainerResource', containerResource: { name: 'cpu', container: 'app', target: { type: 'Utilization', averageUtilization: 60 } } };
const qps = { type: 'Pods', pods: { metric: { name: 'qps' }, target: { type: 'AverageValue', averageValue: '10' } } };

describe('HPA TARGETS column', () => {
  it('shows each metric against its current value, <unknown> until read', () => {
    expect(formatHpaTargets([cpu], [])).toBe('cpu: <unknown>/80%');
    expect(formatHpaTargets([cpu, mem], [
      { type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 150, averageValue: '150m' } } },
      { type: 'Resource', resource: { name: 'memory', current: { averageValue: '209715200' } } },
    ])).toBe('cpu: 150%/80%, memory: 209715200/100Mi');
    expect(formatHpaTargets([app, qps], [{ type: 'ContainerResource', containerResource: { name: 'cpu', container: 'app', current: { averageUtilization: 90 } } }, { type: '' }]))
      .toBe('cpu: 90%/60%, <unknown>/10');
    expect(formatHpaTargets([cpu, mem, qps], [])).toBe('cpu: <unknown>/80%, memory: <unknown>/100Mi + 1 more...');
    expect(formatHpaTargets([], [])).toBe('<none>');
  });
});
