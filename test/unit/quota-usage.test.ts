// status.used of a ResourceQuota (src/controllers/quota/usage.ts): kube's
// evaluators as the resourcequota controller adds them up, in the format of
// the quantities summed (Quantity.Add keeps the first one's).
import { describe, expect, it } from 'vitest';
import { type NamespaceObjects, quotaUsage } from '../../src/controllers/quota/usage.js';
import type { ApiObject } from '../../src/registry/types.js';

const none: NamespaceObjects = { pods: [], services: [], configMaps: [], secrets: [], persistentVolumeClaims: [], replicationControllers: [], resourceQuotas: [] };
const pod = (requests: Record<string, string> | undefined, extra: Record<string, unknown> = {}, phase = 'Running'): ApiObject => ({
  metadata: { name: 'p' },
  spec: { containers: [{ name: 'c', image: 'i', ...(requests ? { resources: { requests, limits: requests } } : {}) }], ...extra },
  status: { phase },
});

describe('quotaUsage', () => {
  it('reports every name of hard it knows, 0 when nothing counts, and nothing for unknown names', () => {
    const hard = { pods: '10', 'count/configmaps': '5', services: '2', 'requests.cpu': '4', 'limits.memory': '1Gi', 'requests.storage': '10Gi', 'example.com/gpu': '1' };
    expect(quotaUsage(hard, [], none)).toEqual({ pods: '0', 'count/configmaps': '0', services: '0', 'requests.cpu': '0', 'limits.memory': '0', 'requests.storage': '0' });
  });

  it('counts pods that are not terminal and adds their requests and limits in canonical form', () => {
    const objects = { ...none, pods: [pod({ cpu: '100m', memory: '64Mi' }), pod({ cpu: '1', memory: '128Mi' }), pod(undefined), pod({ cpu: '5' }, {}, 'Succeeded')] };
    expect(quotaUsage({ pods: '9', 'requests.cpu': '9', cpu: '9', 'limits.cpu': '9', 'requests.memory': '9Gi', memory: '9Gi' }, [], objects)).toEqual({
      pods: '3',
      'requests.cpu': '1100m',
      cpu: '1100m',
      'limits.cpu': '1100m',
      'requests.memory': '192Mi',
      memory: '192Mi',
    });
  });

  it('takes the larger of the containers and each init container (with the sidecars before it), plus overhead', () => {
    const p: ApiObject = {
      metadata: { name: 'p' },
      spec: {
        initContainers: [
          { name: 'side', restartPolicy: 'Always', resources: { requests: { cpu: '200m' } } },
          { name: 'init', resources: { requests: { cpu: '2' } } },
        ],
        containers: [{ name: 'c', resources: { requests: { cpu: '500m' } } }],
        overhead: { cpu: '50m' },
      },
      status: { phase: 'Pending' },
    };
    // max(500m + 200m, 2 + 200m) + 50m
    expect(quotaUsage({ 'requests.cpu': '10' }, [], { ...none, pods: [p] })).toEqual({ 'requests.cpu': '2250m' });
  });

  it('counts objects, load balancers and node ports of services, and the storage claims request', () => {
    const svc = (type: string, ports: number): ApiObject => ({ metadata: { name: 's' }, spec: { type, ports: Array.from({ length: ports }, (_, i) => ({ port: 80 + i })) } });
    const pvc = (storage: string): ApiObject => ({ metadata: { name: 'c' }, spec: { resources: { requests: { storage } } } });
    const objects = { ...none, services: [svc('ClusterIP', 1), svc('NodePort', 2), svc('LoadBalancer', 1)], persistentVolumeClaims: [pvc('1Gi'), pvc('512Mi')], secrets: [{ metadata: { name: 's' } }] };
    expect(quotaUsage({ services: '9', 'services.loadbalancers': '9', 'services.nodeports': '9', 'requests.storage': '9', persistentvolumeclaims: '9', 'count/secrets': '9' }, [], objects)).toEqual({
      services: '3',
      'services.loadbalancers': '1',
      'services.nodeports': '3',
      'requests.storage': '1536Mi',
      persistentvolumeclaims: '2',
      'count/secrets': '1',
    });
  });

  it('applies pod scopes, and a scoped quota tracks pods only', () => {
    const objects = { ...none, pods: [pod(undefined), pod({ cpu: '1' }), pod(undefined, { activeDeadlineSeconds: 30 })], configMaps: [{ metadata: { name: 'c' } }] };
    expect(quotaUsage({ pods: '9', configmaps: '9' }, ['BestEffort'], objects)).toEqual({ pods: '2' });
    expect(quotaUsage({ pods: '9', 'requests.cpu': '9' }, ['NotBestEffort'], objects)).toEqual({ pods: '1', 'requests.cpu': '1' });
    expect(quotaUsage({ pods: '9' }, ['Terminating'], objects)).toEqual({ pods: '1' });
    expect(quotaUsage({ pods: '9' }, ['NotTerminating'], objects)).toEqual({ pods: '2' });
  });
});
