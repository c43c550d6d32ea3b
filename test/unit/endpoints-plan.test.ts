// The Endpoints and EndpointSlice controllers' planning
// (src/controllers/endpoints/): port resolution, which pods count, ready and
// not-ready addresses, RepackSubsets, truncation at 1000, the no-op check,
// the slice conditions, splitting at 100, in-place updates and placeholders.

import { describe, expect, it } from 'vitest';
import type { ApiObject } from '../../src/registry/types.js';
import { API, T, apply, pod, svc } from '../helpers/endpoints-fixtures.js';
import { computeSubsets, planEndpoints, truncate, type EndpointSubset, applyEndpointsWrite, OVER_CAPACITY } from '../../src/controllers/endpoints/endpoints-plan.js';
import { TriggerTimeTracker, findPort, LAST_CHANGE_TRIGGER_TIME } from '../../src/controllers/endpoints/pod-endpoints.js';
import { desiredGroups, planSlices, type EndpointSlice, MANAGED_BY_LABEL, SERVICE_NAME_LABEL } from '../../src/controllers/endpoints/slice-plan.js';

const ips = (subsets: EndpointSubset[], k: 'addresses' | 'notReadyAddresses'): string[] => subsets.flatMap((s) => (s[k] ?? []).map((a) => a.ip));

describe('findPort', () => {
  const p = pod('a', '10.1.0.1', { ports: [{ name: 'http', containerPort: 8080 }, { name: 'dns', containerPort: 53, protocol: 'UDP' }] });
  it('a number as is, a name from the container ports of the same protocol, else nothing', () => {
    expect(findPort(p, { port: 80, targetPort: 9090 })).toBe(9090);
    expect(findPort(p, { port: 80 })).toBe(80);
    expect(findPort(p, { port: 80, targetPort: 'http' })).toBe(8080);
    expect(findPort(p, { port: 53, targetPort: 'dns', protocol: 'UDP' })).toBe(53);
    expect(findPort(p, { port: 53, targetPort: 'dns', protocol: 'TCP' })).toBeUndefined();
    expect(findPort(p, { port: 80, targetPort: 'metrics' })).toBeUndefined();
  });
  it('a sidecar (restartable init container) port counts, a plain init container does not', () => {
    const q = pod('b', '10.1.0.2');
    (q.spec as Record<string, unknown>).initContainers = [
      { name: 's', image: 'x', restartPolicy: 'Always', ports: [{ name: 'side', containerPort: 7000 }] },
      { name: 'i', image: 'x', ports: [{ name: 'init', containerPort: 7001 }] },
    ];
    expect(findPort(q, { port: 1, targetPort: 'side' })).toBe(7000);
    expect(findPort(q, { port: 1, targetPort: 'init' })).toBeUndefined();
  });
});

describe('Endpoints subsets', () => {
  it('ready pods in addresses, unready in notReadyAddresses; terminal, IP-less and deleting pods out', () => {
    const subsets = computeSubsets(svc(), [
      pod('b', '10.1.0.2'),
      pod('a', '10.1.0.10', { ready: false }),
      pod('c', '10.1.0.1'),
      pod('done', '10.1.0.3', { phase: 'Succeeded' }),
      pod('failed', '10.1.0.4', { phase: 'Failed' }),
      pod('noip', undefined),
      pod('del', '10.1.0.5', { deleting: true }),
    ]);
    expect(subsets).toHaveLength(1);
    // sorted by IP as strings (kube's LessEndpointAddress)
    expect(ips(subsets, 'addresses')).toEqual(['10.1.0.1', '10.1.0.2']);
    expect(ips(subsets, 'notReadyAddresses')).toEqual(['10.1.0.10']);
    expect(subsets[0]!.ports).toEqual([{ name: 'http', port: 8080, protocol: 'TCP' }]);
    expect(subsets[0]!.addresses![0]).toEqual({ ip: '10.1.0.1', nodeName: 'n1', targetRef: { kind: 'Pod', namespace: 'default', name: 'c', uid: 'uid-c' } });
  });

  it('publishNotReadyAddresses: unready and deleting pods are ready addresses', () => {
    const subsets = computeSubsets(svc({ publishNotReadyAddresses: true }), [pod('a', '10.1.0.1', { ready: false }), pod('d', '10.1.0.2', { deleting: true })]);
    expect(ips(subsets, 'addresses')).toEqual(['10.1.0.1', '10.1.0.2']);
    expect(ips(subsets, 'notReadyAddresses')).toEqual([]);
  });

  it('addresses are grouped by the port sets they serve (RepackSubsets); a pod without the named port is out of that port only', () => {
    const s = svc({ ports: [{ name: 'http', port: 80, targetPort: 'web', protocol: 'TCP' }, { name: 'admin', port: 9000, targetPort: 9000, protocol: 'TCP', appProtocol: 'http' }] });
    const subsets = computeSubsets(s, [
      pod('a', '10.1.0.1', { ports: [{ name: 'web', containerPort: 8080 }] }),
      pod('b', '10.1.0.2', { ports: [{ name: 'web', containerPort: 8080 }] }),
      pod('c', '10.1.0.3'),
    ]);
    const byAddrs = Object.fromEntries(subsets.map((x) => [ips([x], 'addresses').join(','), (x.ports ?? []).map((p) => `${p.name}:${p.port}`).sort()]));
    // one subset per distinct address set: all three offer admin, two offer http too
    expect(byAddrs).toEqual({ '10.1.0.1,10.1.0.2': ['http:8080'], '10.1.0.1,10.1.0.2,10.1.0.3': ['admin:9000'] });
    // two ports over the same pods share a subset
    const same = computeSubsets(s, [pod('a', '10.1.0.1', { ports: [{ name: 'web', containerPort: 8080 }] })]);
    expect(same.map((x) => (x.ports ?? []).map((p) => p.name).sort())).toEqual([['admin', 'http']]);
    expect(subsets.flatMap((x) => x.ports ?? []).find((p) => p.name === 'admin')).toEqual({ name: 'admin', port: 9000, protocol: 'TCP', appProtocol: 'http' });
  });

  it('a pod resolving no port is left out; a headless Service without ports lists addresses without ports', () => {
    expect(computeSubsets(svc({ ports: [{ port: 80, targetPort: 'nope' }] }), [pod('a', '10.1.0.1')])).toEqual([]);
    const headless = computeSubsets(svc({ clusterIP: 'None', ports: [] }), [pod('a', '10.1.0.1'), pod('b', '10.1.0.2', { ready: false })]);
    expect(headless).toEqual([{ addresses: [expect.objectContaining({ ip: '10.1.0.1' })], notReadyAddresses: [expect.objectContaining({ ip: '10.1.0.2' })] }]);
  });

  it('hostname only when the pod names the Service as its subdomain', () => {
    const subsets = computeSubsets(svc(), [pod('a', '10.1.0.1', { hostname: 'h-a', subdomain: 'web' }), pod('b', '10.1.0.2', { hostname: 'h-b', subdomain: 'other' })]);
    expect(subsets[0]!.addresses!.map((a) => a.hostname)).toEqual(['h-a', undefined]);
  });

  it('over 1000 addresses: not-ready ones are cut first, each subset keeping its share', () => {
    const addr = (i: number) => ({ ip: `10.2.${i >> 8}.${i & 255}` });
    const subsets: EndpointSubset[] = [
      { addresses: Array.from({ length: 600 }, (_, i) => addr(i)), notReadyAddresses: Array.from({ length: 300 }, (_, i) => addr(1000 + i)), ports: [{ name: 'a', port: 1, protocol: 'TCP' }] },
      { addresses: Array.from({ length: 300 }, (_, i) => addr(2000 + i)), notReadyAddresses: Array.from({ length: 100 }, (_, i) => addr(3000 + i)), ports: [{ name: 'b', port: 2, protocol: 'TCP' }] },
    ];
    const cut = truncate(subsets);
    expect(cut.truncated).toBe(true);
    expect(cut.subsets.map((s) => [s.addresses?.length, s.notReadyAddresses?.length])).toEqual([[600, 75], [300, 25]]);
    const allReady = truncate([{ addresses: Array.from({ length: 1200 }, (_, i) => addr(i)), notReadyAddresses: [addr(5000)] }]);
    expect(allReady.subsets.map((s) => [s.addresses?.length, s.notReadyAddresses?.length])).toEqual([[1000, undefined]]);
    expect(truncate(subsets.slice(1)).truncated).toBe(false);
  });
});

describe('the Endpoints write', () => {
  const pods = [pod('a', '10.1.0.1'), pod('b', '10.1.0.2', { ready: false })];

  it('is the subsets, the Service labels, the trigger time; nothing when the stored object says the same', () => {
    const s = svc({}, { team: 'x' });
    const w = planEndpoints(s, computeSubsets(s, pods), undefined, T)!;
    const obj = applyEndpointsWrite(s, undefined, w);
    expect(obj.metadata).toEqual({ name: 'web', namespace: 'default', labels: { team: 'x' }, annotations: { [LAST_CHANGE_TRIGGER_TIME]: T } });
    // stored (a resourceVersion and a target resourceVersion added): no write
    const stored = structuredClone(obj) as ApiObject & { subsets: EndpointSubset[] };
    stored.metadata!.resourceVersion = '7';
    (stored.subsets[0]!.addresses![0]!.targetRef as Record<string, unknown>).resourceVersion = '3';
    expect(planEndpoints(s, computeSubsets(s, pods), stored, undefined)).toBeUndefined();
    // a label change, a readiness change: written
    expect(planEndpoints(svc({}, { team: 'y' }), computeSubsets(s, pods), stored, undefined)?.labels).toEqual({ team: 'y' });
    expect(planEndpoints(s, computeSubsets(s, [pods[0]!, pod('b', '10.1.0.2')]), stored, undefined)?.subsets).toHaveLength(1);
  });

  it('a headless Service adds the headless label; no trigger time drops the annotation', () => {
    const s = svc({ clusterIP: 'None' });
    const w = planEndpoints(s, computeSubsets(s, pods), undefined, undefined)!;
    expect(w.labels).toEqual({ 'service.kubernetes.io/headless': '' });
    const cur = { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'web', namespace: 'default', annotations: { [LAST_CHANGE_TRIGGER_TIME]: T, keep: 'me' } } } as ApiObject;
    expect(applyEndpointsWrite(s, cur, w).metadata!.annotations).toEqual({ keep: 'me' });
  });

  it('marks truncation with the over-capacity annotation and does not rewrite a truncated object', () => {
    const many = Array.from({ length: 1005 }, (_, i) => pod(`p${i}`, `10.3.${i >> 8}.${i & 255}`));
    const s = svc();
    const w = planEndpoints(s, computeSubsets(s, many), undefined, undefined)!;
    expect(w.annotations[OVER_CAPACITY]).toBe('truncated');
    const stored = applyEndpointsWrite(s, undefined, w);
    expect(planEndpoints(s, computeSubsets(s, many), stored, undefined)).toBeUndefined();
    expect(planEndpoints(s, computeSubsets(s, many.slice(0, 10)), stored, undefined)?.annotations[OVER_CAPACITY]).toBeUndefined();
  });
});

describe('the trigger time', () => {
  it('is the earliest changed trigger (the Service creation on its first sync), then only pods whose Ready moved', () => {
    const t = new TriggerTimeTracker();
    const s = svc();
    expect(t.compute('k', s, [pod('a', '1.1.1.1', { readyAt: '2026-01-01T00:00:05Z' })])).toBe(T);
    expect(t.compute('k', s, [pod('a', '1.1.1.1', { readyAt: '2026-01-01T00:00:05Z' })])).toBeUndefined();
    expect(t.compute('k', s, [pod('a', '1.1.1.1', { readyAt: '2026-01-01T00:00:09Z' }), pod('b', '1.1.1.2', { readyAt: '2026-01-01T00:00:07Z' })])).toBe('2026-01-01T00:00:07Z');
  });
});

// ---- EndpointSlices ----

const noZone = (): undefined => undefined;
const plan = (s: ApiObject, pods: ApiObject[], existing: EndpointSlice[], max?: number) => planSlices(s, existing, desiredGroups(s, pods, noZone), undefined, { apiVersion: API, max });

describe('EndpointSlice endpoints', () => {
  it('conditions: serving is Ready, terminating is deleting, ready is serving and not terminating (or publishNotReadyAddresses)', () => {
    const pods = [pod('a', '10.1.0.1'), pod('b', '10.1.0.2', { ready: false }), pod('c', '10.1.0.3', { deleting: true }), pod('d', '10.1.0.4', { deleting: true, ready: false }), pod('e', '10.1.0.5', { phase: 'Failed' })];
    const conds = (s: ApiObject) => Object.fromEntries([...desiredGroups(s, pods, noZone).values()].flatMap((g) => [...g.endpoints.values()]).map((e) => [e.targetRef.name, e.conditions]));
    expect(conds(svc())).toEqual({
      a: { ready: true, serving: true, terminating: false },
      b: { ready: false, serving: false, terminating: false },
      c: { ready: false, serving: true, terminating: true },
      d: { ready: false, serving: false, terminating: true },
    });
    expect(Object.values(conds(svc({ publishNotReadyAddresses: true }))).every((c) => c.ready)).toBe(true);
  });

  it('zone from the node label, hostname by the subdomain rule, nodeName and targetRef', () => {
    const s = svc();
    const g = [...desiredGroups(s, [pod('a', '10.1.0.1', { node: 'n2', hostname: 'h', subdomain: 'web' })], (n) => (n === 'n2' ? 'z-b' : undefined)).values()][0]!;
    expect([...g.endpoints.values()][0]).toEqual({
      addresses: ['10.1.0.1'], conditions: { ready: true, serving: true, terminating: false }, hostname: 'h',
      targetRef: { kind: 'Pod', namespace: 'default', name: 'a', uid: 'uid-a' }, nodeName: 'n2', zone: 'z-b',
    });
  });
});

describe('EndpointSlice planning', () => {
  const many = (n: number, from = 0) => Array.from({ length: n }, (_, i) => pod(`p${from + i}`, `10.4.${(from + i) >> 8}.${(from + i) & 255}`));

  it('a new Service: slices of at most 100, labelled and owned by the Service', () => {
    const s = svc({}, { team: 'x', [SERVICE_NAME_LABEL]: 'spoof' });
    const p = plan(s, many(250), []);
    expect([p.update.length, p.delete.length]).toEqual([0, 0]);
    expect(p.create.map((c) => c.endpoints.length)).toEqual([100, 100, 50]);
    const c = p.create[0]!;
    expect(c.metadata).toMatchObject({
      generateName: 'web-',
      labels: { team: 'x', [SERVICE_NAME_LABEL]: 'web', [MANAGED_BY_LABEL]: 'endpointslice-controller.k8s.io' },
      ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name: 'web', uid: 'svc-uid', controller: true, blockOwnerDeletion: true }],
    });
    expect([c.addressType, c.ports]).toEqual(['IPv4', [{ name: 'http', port: 8080, protocol: 'TCP' }]]);
  });

  it('nothing to do once applied; a change updates the slice holding the endpoint in place', () => {
    const s = svc();
    const pods = many(150);
    const slices = apply([], plan(s, pods, []));
    expect(plan(s, pods, slices)).toEqual({ create: [], update: [], delete: [] });
    pods[3] = pod('p3', '10.4.0.3', { ready: false });
    const p = plan(s, pods, slices);
    expect([p.create.length, p.delete.length, p.update.length]).toEqual([0, 0, 1]);
    expect(p.update[0]!.metadata!.name).toBe(slices.find((x) => x.endpoints.some((e) => e.targetRef.name === 'p3'))!.metadata!.name);
  });

  it('scaling up fills the slice being updated first, then an unchanged slice that fits, then new slices', () => {
    const s = svc();
    const slices = apply([], plan(s, many(130), []));
    // 30 more: the 30-endpoint slice takes them
    const up = plan(s, many(160), slices);
    expect([up.create.length, up.update.map((u) => u.endpoints.length)]).toEqual([0, [60]]);
    // 200 more on top of 130: full slices get created, none exceeds 100
    const big = apply(slices, plan(s, many(330), slices));
    expect(big.every((x) => x.endpoints.length <= 100)).toBe(true);
    expect(big.reduce((n, x) => n + x.endpoints.length, 0)).toBe(330);
  });

  it('scaling to zero keeps one placeholder slice (no ports, no endpoints) and does not churn it', () => {
    const s = svc();
    const slices = apply([], plan(s, many(120), []));
    const p = plan(s, [], slices);
    // one slice is reused for the placeholder (an update in place), the other deleted
    expect([p.create.length, p.update.length, p.delete.length]).toEqual([0, 1, 1]);
    expect([p.update[0]!.endpoints, p.update[0]!.ports]).toEqual([[], []]);
    const after = apply(slices, p);
    expect(plan(s, [], after)).toEqual({ create: [], update: [], delete: [] });
    // pods come back: the placeholder is filled in place
    const back = plan(s, many(5), after);
    expect([back.create.length, back.delete.length, back.update.length]).toEqual([0, 0, 1]);
  });

  it('a slice of another owner (a Service recreated under the name) or a port set no longer used is replaced', () => {
    const s = svc();
    const old = apply([], plan({ ...s, metadata: { ...s.metadata, uid: 'old-uid' } }, many(3), []));
    const p = plan(s, many(3), old);
    expect([p.create.length, p.update.length, p.delete.length]).toEqual([1, 0, 1]);
    const slices = apply([], plan(s, many(3), []));
    const moved = plan(svc({ ports: [{ name: 'http', port: 80, targetPort: 9090, protocol: 'TCP' }] }), many(3), slices);
    // the new port set's slice takes the old slice's name
    expect([moved.create.length, moved.update.length, moved.delete.length]).toEqual([0, 1, 0]);
    expect(moved.update[0]!.ports).toEqual([{ name: 'http', port: 9090, protocol: 'TCP' }]);
  });

  it('the trigger time is set on written slices', () => {
    const s = svc();
    const p = planSlices(s, [], desiredGroups(s, many(1), noZone), T, { apiVersion: API });
    expect(p.create[0]!.metadata!.annotations).toEqual({ [LAST_CHANGE_TRIGGER_TIME]: T });
  });
});
