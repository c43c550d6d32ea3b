// ResourceQuota's pieces without a server: exact quantity arithmetic and
// kube's canonical strings, what each kind costs (evaluators), and the
// admission check's decisions and messages (src/registry/quota/).

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { StatusError } from '../../src/core/errors.js';
import { addUsage, formatAmount, parseAmount, printUsage, usageOf } from '../../src/registry/quota/amount.js';
import { evaluatorFor } from '../../src/registry/quota/evaluators.js';
import { checkRequest } from '../../src/registry/quota/admission.js';
import { countedResource } from '../../src/controllers/resourcequota/controller.js';
import { validateResourceQuotaSpec } from '../../src/registry/kinds/quota-validation.js';
import type { ApiObject, ResourceDefinition } from '../../src/registry/types.js';

const fmt = (q: string) => formatAmount(parseAmount(q)!);

describe('quota amounts', () => {
  it('prints quantities as Quantity.String() does', () => {
    expect(fmt('1000m')).toBe('1');
    expect(fmt('1500m')).toBe('1500m');
    expect(fmt('0.5')).toBe('500m');
    expect(fmt('2000')).toBe('2k');
    expect(fmt('1e3')).toBe('1k');
    expect(fmt('1024Mi')).toBe('1Gi');
    expect(fmt('1.5Gi')).toBe('1536Mi');
    expect(fmt('512')).toBe('512');
    expect(fmt('64Gi')).toBe('64Gi');
    expect(fmt('0')).toBe('0');
    expect(parseAmount('12x')).toBeUndefined();
    expect(parseAmount('.')).toBeUndefined();
  });

  it('keeps the left operand\'s format in a sum, the right one\'s when the left is zero (kube\'s Quantity.Add)', () => {
    expect(printUsage(addUsage(usageOf({ m: '0' }), usageOf({ m: '256Mi' })))).toBe('m=256Mi');
    expect(printUsage(addUsage(usageOf({ m: '1' }), usageOf({ m: '1Ki' })))).toBe('m=1025');
    expect(printUsage(addUsage(usageOf({ m: '128Mi' }), usageOf({ m: '128Mi' })))).toBe('m=256Mi');
    expect(printUsage(addUsage(usageOf({ c: '100m', a: '1' }), usageOf({ c: '0.9' })))).toBe('a=1,c=1');
  });

  it('a printed amount parses back to the same value (property)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 24n), max: 10n ** 24n }), fc.boolean(), (nano, binary) => {
        const back = parseAmount(formatAmount({ nano, binary }));
        expect(back?.nano).toBe(nano);
      }),
    );
  });
});

const pod = (spec: Record<string, unknown>, status: Record<string, unknown> = {}): ApiObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'n' }, spec, status }) as ApiObject;
const c = (name: string, requests?: Record<string, string>, limits?: Record<string, string>, extra: Record<string, unknown> = {}) =>
  ({ name, image: 'x', resources: { ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) }, ...extra });

describe('quota evaluators', () => {
  const pods = evaluatorFor('', 'pods')!;

  it('a pod costs its containers, sidecars, the larger init container and its overhead', () => {
    const u = pods.usage(pod({
      containers: [c('a', { cpu: '100m', memory: '64Mi' }, { cpu: '200m' }), c('b', { cpu: '100m' })],
      initContainers: [c('init', { cpu: '1' }), c('side', { cpu: '50m' }, undefined, { restartPolicy: 'Always' })],
      overhead: { cpu: '10m' },
    }), 0);
    // requests: max(100m+100m+50m, 1) + 10m; limits: 200m + 10m (overhead only where a limit is set)
    expect(printUsage(u)).toBe('count/pods=1,cpu=1010m,limits.cpu=210m,memory=64Mi,pods=1,requests.cpu=1010m,requests.memory=64Mi');
  });

  it('a terminal pod or one past its grace costs only its object count', () => {
    expect(printUsage(pods.usage(pod({ containers: [c('a', { cpu: '1' })] }, { phase: 'Succeeded' }), 0))).toBe('count/pods=1');
    const gone = { ...pod({ containers: [c('a', { cpu: '1' })] }), metadata: { name: 'p', deletionTimestamp: '2026-01-01T00:00:00Z', deletionGracePeriodSeconds: 30 } };
    expect(printUsage(pods.usage(gone, Date.parse('2026-01-01T00:01:00Z')))).toBe('count/pods=1');
    expect(pods.usage(gone, Date.parse('2026-01-01T00:00:10Z')).get('pods')).toBeDefined();
  });

  it('pod scopes: BestEffort, Terminating, PriorityClass', () => {
    const be = pod({ containers: [c('a')] });
    const burst = pod({ containers: [c('a', { cpu: '1' })], activeDeadlineSeconds: 10, priorityClassName: 'high' });
    expect(pods.matchesScope({ scopeName: 'BestEffort', operator: 'Exists' }, be)).toBe(true);
    expect(pods.matchesScope({ scopeName: 'NotBestEffort', operator: 'Exists' }, burst)).toBe(true);
    expect(pods.matchesScope({ scopeName: 'Terminating', operator: 'Exists' }, burst)).toBe(true);
    expect(pods.matchesScope({ scopeName: 'NotTerminating', operator: 'Exists' }, be)).toBe(true);
    expect(pods.matchesScope({ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }, burst)).toBe(true);
    expect(pods.matchesScope({ scopeName: 'PriorityClass', operator: 'NotIn', values: ['high'] }, burst)).toBe(false);
    expect(pods.matchesScope({ scopeName: 'PriorityClass', operator: 'DoesNotExist' }, be)).toBe(true);
  });

  it('services cost node ports by type; claims cost storage per class', () => {
    const svc = (spec: Record<string, unknown>): ApiObject => ({ apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: { ports: [{ port: 1 }, { port: 2 }], ...spec } });
    const services = evaluatorFor('', 'services')!;
    expect(printUsage(services.usage(svc({ type: 'LoadBalancer' }), 0))).toBe('count/services=1,services=1,services.loadbalancers=1,services.nodeports=2');
    expect(printUsage(services.usage(svc({ type: 'LoadBalancer', allocateLoadBalancerNodePorts: false }), 0))).toBe('count/services=1,services=1,services.loadbalancers=1,services.nodeports=0');
    const claims = evaluatorFor('', 'persistentvolumeclaims')!;
    const pvc: ApiObject = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'c' }, spec: { storageClassName: 'fast', resources: { requests: { storage: '1Gi' } } } };
    expect(printUsage(claims.usage(pvc, 0))).toBe(
      'count/persistentvolumeclaims=1,fast.storageclass.storage.k8s.io/persistentvolumeclaims=1,fast.storageclass.storage.k8s.io/requests.storage=1Gi,persistentvolumeclaims=1,requests.storage=1Gi');
  });

  it('every other kind is an object count on create; quota ignores events', () => {
    const ev = evaluatorFor('apps', 'deployments')!;
    expect(ev.handles('CREATE', undefined)).toBe(true);
    expect(ev.handles('UPDATE', undefined)).toBe(false);
    // a pod update is charged only when it moves the pod into or out of the Terminating scope
    const pods = evaluatorFor('', 'pods')!;
    const pod = (spec: Record<string, unknown>): ApiObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', resourceVersion: '1' }, spec: { containers: [], ...spec } });
    expect(pods.handles('CREATE', undefined)).toBe(true);
    expect(pods.handles('UPDATE', undefined, pod({ activeDeadlineSeconds: 30 }), pod({}))).toBe(true);
    expect(pods.handles('UPDATE', undefined, pod({}), pod({ activeDeadlineSeconds: 30 }))).toBe(true);
    expect(pods.handles('UPDATE', undefined, pod({ activeDeadlineSeconds: 20 }), pod({ activeDeadlineSeconds: 30 }))).toBe(false);
    expect(pods.handles('UPDATE', 'status', pod({ activeDeadlineSeconds: 30 }), pod({}))).toBe(false);
    expect(printUsage(ev.usage({ apiVersion: 'apps/v1', kind: 'Deployment' }, 0))).toBe('count/deployments.apps=1');
    expect(printUsage(evaluatorFor('', 'configmaps')!.usage({ apiVersion: 'v1', kind: 'ConfigMap' }, 0))).toBe('configmaps=1,count/configmaps=1');
    expect(evaluatorFor('', 'events')).toBeUndefined();
    expect(countedResource('count/deployments.apps')).toEqual({ group: 'apps', resource: 'deployments' });
    expect(countedResource('count/widgets.example.com')).toEqual({ group: 'example.com', resource: 'widgets' });
    expect(countedResource('secrets')).toEqual({ group: '', resource: 'secrets' });
    expect(countedResource('requests.cpu')).toBeUndefined();
  });
});

describe('quota admission check', () => {
  const claimsDef = { group: '', resource: 'persistentvolumeclaims' } as ResourceDefinition;
  const q = (hard: Record<string, string>, used?: Record<string, string>): ApiObject =>
    ({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'storage', namespace: 'n', resourceVersion: '5' }, spec: { hard }, status: { hard, ...(used ? { used } : {}) } });
  const claim = (size: string, rv?: string): ApiObject =>
    ({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'c', namespace: 'n', ...(rv ? { resourceVersion: rv } : {}) }, spec: { resources: { requests: { storage: size } } } });
  const call = (object: ApiObject, oldObject?: ApiObject) => ({ operation: (oldObject ? 'UPDATE' : 'CREATE') as 'CREATE' | 'UPDATE', def: claimsDef, namespace: 'n', name: 'c', object, oldObject, opts: { dryRun: false } });
  const ev = evaluatorFor('', 'persistentvolumeclaims')!;
  const refusal = (f: () => unknown): string => {
    try {
      f();
    } catch (e) {
      if (e instanceof StatusError) return `${e.code} ${e.message}`;
      throw e;
    }
    return 'admitted';
  };

  it('charges an expansion only what it adds, and refuses one past the limit', () => {
    const charged = checkRequest([q({ 'requests.storage': '10Gi' }, { 'requests.storage': '4Gi' })], call(claim('6Gi', '7'), claim('4Gi', '7')), ev, 0);
    expect(printUsage(charged[0]!.used)).toBe('requests.storage=6Gi');
    expect(refusal(() => checkRequest([q({ 'requests.storage': '5Gi' }, { 'requests.storage': '4Gi' })], call(claim('6Gi', '7'), claim('4Gi', '7')), ev, 0)))
      .toBe('403 persistentvolumeclaims "c" is forbidden: exceeded quota: storage, requested: requests.storage=2Gi, used: requests.storage=4Gi, limited: requests.storage=5Gi');
  });

  it('refuses while the quota\'s usage is not known, and ignores a quota not counted yet', () => {
    expect(refusal(() => checkRequest([q({ persistentvolumeclaims: '2' })], call(claim('1Gi')), ev, 0)))
      .toBe('403 persistentvolumeclaims "c" is forbidden: status unknown for quota: storage, resources: persistentvolumeclaims');
    const fresh: ApiObject = { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'new' }, spec: { hard: { persistentvolumeclaims: '0' } } };
    expect(checkRequest([fresh], call(claim('1Gi')), ev, 0)).toEqual([]);
  });
});

describe('ResourceQuota validation (kube\'s ValidateResourceQuotaSpec)', () => {
  const v = (spec: Record<string, unknown>) => validateResourceQuotaSpec({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'q' }, spec } as ApiObject).map((e) => `${e.field}: ${e.message}`);

  it('accepts standard, counted and extended names', () => {
    expect(v({ hard: { pods: '2', 'requests.cpu': '500m', 'count/deployments.apps': '1', 'requests.example.com/gpu': '2', 'hugepages-2Mi': '1Gi' } })).toEqual([]);
  });

  it('refuses unknown names, negative and fractional counts', () => {
    expect(v({ hard: { widgets: '1', pods: '1.5', services: '-1' } })).toEqual([
      'spec.hard[pods]: Invalid value: "1.5": must be an integer',
      'spec.hard[services]: Invalid value: "-1": must be greater than or equal to 0',
      'spec.hard[widgets]: Invalid value: "widgets": must be a standard resource type or fully qualified',
    ]);
    expect(v({ hard: { storage: '1Gi' } })).toEqual(['spec.hard[storage]: Invalid value: "storage": must be a standard resource for quota']);
  });

  it('refuses unknown, conflicting and misapplied scopes', () => {
    expect(v({ hard: { pods: '1' }, scopes: ['Sometimes'] })).toEqual(['spec.scopes: Invalid value: ["Sometimes"]: unsupported scope']);
    expect(v({ hard: { pods: '1' }, scopes: ['BestEffort', 'NotBestEffort'] })).toEqual(['spec.scopes: Invalid value: ["BestEffort","NotBestEffort"]: conflicting scopes']);
    expect(v({ hard: { 'requests.cpu': '1' }, scopes: ['BestEffort'] })).toEqual(['spec.scopes: Invalid value: ["BestEffort"]: unsupported scope applied to resource']);
    expect(v({ hard: { 'requests.storage': '1Gi' }, scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }] } }))
      .toEqual(['spec.scopeSelector.matchExpressions: Invalid value: {"matchExpressions":[{"scopeName":"PriorityClass","operator":"In","values":["high"]}]}: unsupported scope applied to resource']);
    expect(v({ hard: { pods: '1' }, scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In' }, { scopeName: 'Terminating', operator: 'In', values: ['x'] }] } })).toEqual([
      'spec.scopeSelector.matchExpressions.values: Required value: must be at least one value when `operator` is \'In\' or \'NotIn\' for scope selector',
      'spec.scopeSelector.matchExpressions.operator: Invalid value: "In": must be \'Exist\' only operator when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort and ResourceQuotaScopeNotBestEffort',
    ]);
  });
});
