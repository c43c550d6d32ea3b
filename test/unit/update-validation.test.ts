// What kube 1.32's Validate…Update functions refuse, kind by kind, with kube's
// paths, error types and messages: Service (clusterIPs, ipFamilies,
// loadBalancerClass, healthCheckNodePort), Node (podCIDRs, providerID,
// externalID), IngressClass, EndpointSlice, RoleBinding's roleRef and
// events.k8s.io/v1 Events.

import { describe, expect, it } from 'vitest';
import { invalid } from '../../src/core/errors.js';
import { builtinDefinitions } from '../../src/registry/kinds/index.js';
import { goTime } from '../../src/registry/kinds/event-update.js';
import type { ApiObject, FieldError, JSONValue, ResourceDefinition } from '../../src/registry/types.js';

const kinds = builtinDefinitions('k8s.io');
const kind = (k: string, group?: string): ResourceDefinition => kinds.find((d) => d.kind === k && (group === undefined || d.group === group))!;

/** the store's update pipeline without the schema: default, prepareForUpdate, validateUpdate */
function update(def: ResourceDefinition, next: ApiObject, old: ApiObject): FieldError[] {
  const obj = structuredClone(next);
  def.strategy.default?.(obj);
  def.strategy.prepareForUpdate?.(obj, old, 0);
  return def.strategy.validateUpdate!(obj, old);
}
const brief = (errs: FieldError[]): string[] => errs.map((e) => `${e.field}: ${e.message}`);

describe('Service', () => {
  const svc = kind('Service');
  const make = (spec: Record<string, JSONValue>): ApiObject => ({
    apiVersion: 'v1', kind: 'Service', metadata: { name: 's', namespace: 'default' },
    spec: { ports: [{ port: 80 }], clusterIP: '10.96.0.5', clusterIPs: ['10.96.0.5'], ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack', ...spec },
  });
  const old = make({});

  it('a changed clusterIP is a changed clusterIPs[0], as kube normalizes them', () => {
    expect(brief(update(svc, make({ clusterIP: '10.96.0.9', clusterIPs: undefined as unknown as JSONValue }), old))).toEqual([
      'spec.clusterIPs[0]: Invalid value: []string{"10.96.0.9"}: may not change once set',
    ]);
    expect(brief(update(svc, make({ clusterIP: '10.96.0.9', clusterIPs: ['10.96.0.9'] }), old))).toEqual([
      'spec.clusterIPs[0]: Invalid value: []string{"10.96.0.9"}: may not change once set',
    ]);
  });
  it('an update that leaves clusterIP and clusterIPs out keeps them', () => {
    const next = make({});
    delete (next.spec as Record<string, JSONValue>).clusterIP;
    delete (next.spec as Record<string, JSONValue>).clusterIPs;
    expect(update(svc, next, old)).toEqual([]);
  });
  it('releasing the secondary cluster IP needs SingleStack; the primary one may not go', () => {
    const dual = make({ clusterIPs: ['10.96.0.5', 'fd00::5'], ipFamilies: ['IPv4', 'IPv6'], ipFamilyPolicy: 'PreferDualStack' });
    expect(brief(update(svc, make({ ipFamilyPolicy: 'PreferDualStack' }), dual))).toEqual([
      'spec.ipFamilyPolicy: Invalid value: "PreferDualStack": must be set to \'SingleStack\' when releasing the secondary clusterIP',
      'spec.ipFamilyPolicy: Invalid value: "PreferDualStack": must be set to \'SingleStack\' when releasing the secondary ipFamily',
    ]);
    expect(update(svc, make({}), dual)).toEqual([]);
  });
  it('the IP families may not change', () => {
    // ValidateServiceUpdate runs ValidateService's ValidateServiceClusterIPsRelatedFields too
    expect(brief(update(svc, make({ ipFamilies: ['IPv6'] }), old))).toEqual([
      'spec.ipFamilies[0]: Invalid value: []core.IPFamily{"IPv6"}: may not change once set',
      'spec.clusterIPs[0]: Invalid value: "10.96.0.5": expected an IPv6 value as indicated by `ipFamilies[0]`',
    ]);
  });
  it('headless and ExternalName transitions are not held to the cluster IPs', () => {
    const headless = make({ clusterIP: 'None', clusterIPs: ['None'] });
    expect(update(svc, make({ clusterIP: 'None', clusterIPs: ['None'], ipFamilies: ['IPv6'] }), headless)).toEqual([]);
    expect(update(svc, { ...old, spec: { type: 'ExternalName', externalName: 'example.com' } }, old)).toEqual([]);
  });
  it('loadBalancerClass: fixed while LoadBalancer, only on LoadBalancer Services', () => {
    const lb = make({ type: 'LoadBalancer', loadBalancerClass: 'example.com/a', allocateLoadBalancerNodePorts: true });
    expect(brief(update(svc, make({ type: 'LoadBalancer', loadBalancerClass: 'example.com/b', allocateLoadBalancerNodePorts: true }), lb))).toEqual([
      'spec.loadBalancerClass: Invalid value: "example.com/b": may not change once set',
    ]);
    const gone = make({ type: 'LoadBalancer', allocateLoadBalancerNodePorts: true });
    expect(brief(update(svc, gone, lb))).toEqual(['spec.loadBalancerClass: Invalid value: "null": may not change once set']);
    expect(brief(update(svc, make({ loadBalancerClass: 'example.com/a' }), old))).toEqual([
      "spec.loadBalancerClass: Forbidden: may only be used when `type` is 'LoadBalancer'",
      "spec.loadBalancerClass: Forbidden: may only be used when `type` is 'LoadBalancer'",
    ]);
    // a ClusterIP Service may turn into a LoadBalancer with a class
    expect(update(svc, lb, old)).toEqual([]);
  });
  it('healthCheckNodePort is fixed while the Service needs it, and kept when left out', () => {
    const local = make({ type: 'LoadBalancer', externalTrafficPolicy: 'Local', healthCheckNodePort: 30100, allocateLoadBalancerNodePorts: true });
    expect(brief(update(svc, { ...local, spec: { ...(local.spec as object), healthCheckNodePort: 30200 } }, local))).toEqual([
      'spec.healthCheckNodePort: Forbidden: field is immutable',
    ]);
    const without = structuredClone(local);
    delete (without.spec as Record<string, JSONValue>).healthCheckNodePort;
    expect(update(svc, without, local)).toEqual([]);
  });
  it('a LoadBalancer leaving Local drops the health check node port it left as it was (dropTypeDependentFields)', () => {
    const local = make({ type: 'LoadBalancer', externalTrafficPolicy: 'Local', healthCheckNodePort: 30100, allocateLoadBalancerNodePorts: true, ports: [{ port: 80, nodePort: 30200 }] });
    const next = structuredClone(local);
    (next.spec as Record<string, JSONValue>).externalTrafficPolicy = 'Cluster';
    const obj = structuredClone(next);
    svc.strategy.default?.(obj);
    svc.strategy.prepareForUpdate?.(obj, local, 0);
    expect(obj.spec).not.toHaveProperty('healthCheckNodePort');
    expect(svc.strategy.validateUpdate!(obj, local)).toEqual([]);
    // one it changed stays, and is refused
    (next.spec as Record<string, JSONValue>).healthCheckNodePort = 30101;
    expect(brief(update(svc, next, local))).toEqual([
      "spec.healthCheckNodePort: Invalid value: 30101: may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'",
    ]);
  });
  it('to ExternalName: the cluster IPs and IP families left as they were go; changed or added ones are refused', () => {
    const toName = (spec: Record<string, JSONValue>): ApiObject => make({ type: 'ExternalName', externalName: 'db.example.com', ...spec });
    const prepared = (next: ApiObject, prev: ApiObject): Record<string, JSONValue> => {
      const obj = structuredClone(next);
      svc.strategy.default?.(obj);
      svc.strategy.prepareForUpdate?.(obj, prev, 0);
      return obj.spec as Record<string, JSONValue>;
    };
    const spec = prepared(toName({}), old);
    for (const f of ['clusterIP', 'clusterIPs', 'ipFamilies', 'ipFamilyPolicy', 'internalTrafficPolicy']) expect(spec).not.toHaveProperty(f);
    expect(update(svc, toName({}), old)).toEqual([]);
    const notHere = 'Forbidden: may not be set for ExternalName services';
    expect(brief(update(svc, toName({ clusterIP: '10.96.0.9', clusterIPs: ['10.96.0.9'] }), old))).toEqual([`spec.clusterIPs: ${notHere}`]);
    // ExternalName to ExternalName: nothing is dropped on the client's behalf
    const named = toName({ clusterIP: undefined as unknown as JSONValue, clusterIPs: undefined as unknown as JSONValue, ipFamilies: undefined as unknown as JSONValue, ipFamilyPolicy: undefined as unknown as JSONValue });
    expect(brief(update(svc, { ...named, spec: { ...(named.spec as object), ipFamilyPolicy: 'SingleStack' } }, named))).toEqual([`spec.ipFamilyPolicy: ${notHere}`]);
    expect(brief(update(svc, { ...named, spec: { ...(named.spec as object), clusterIP: '10.96.0.9' } }, named))).toEqual([`spec.clusterIPs: ${notHere}`]);
  });
});

describe('Node', () => {
  const node = kind('Node');
  const make = (spec: Record<string, JSONValue>): ApiObject => ({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n' }, spec });
  it('pod CIDRs and the provider ID may only be set from empty', () => {
    expect(update(node, make({ podCIDR: '10.244.1.0/24', podCIDRs: ['10.244.1.0/24'], providerID: 'aws:///i-1' }), make({}))).toEqual([]);
    const set = make({ podCIDR: '10.244.1.0/24', podCIDRs: ['10.244.1.0/24'], providerID: 'aws:///i-1' });
    expect(brief(update(node, make({ podCIDR: '10.244.2.0/24', podCIDRs: ['10.244.2.0/24'], providerID: 'aws:///i-2' }), set))).toEqual([
      'spec.podCIDRs: Forbidden: node updates may not change podCIDR except from "" to valid',
      'spec.providerID: Forbidden: node updates may not change providerID except from "" to valid',
    ]);
    // the v1 podCIDR alone stands for podCIDRs; dropping it or adding a second range is a change
    expect(brief(update(node, make({ podCIDR: '10.244.9.0/24' }), make({ podCIDR: '10.244.1.0/24' })))).toHaveLength(1);
    expect(brief(update(node, make({ podCIDRs: ['10.244.1.0/24', 'fd00::/64'] }), set)).filter((e) => e.startsWith('spec.podCIDRs'))).toHaveLength(1);
    expect(update(node, make({ ...(set.spec as object), unschedulable: true, taints: [{ key: 'k', effect: 'NoSchedule' }] }), set)).toEqual([]);
  });
  it('externalID may not change', () => {
    expect(brief(update(node, make({ externalID: 'b' }), make({ externalID: 'a' })))).toEqual(['spec.externalID: Forbidden: may not be updated']);
  });
});

describe('IngressClass, EndpointSlice', () => {
  it('an IngressClass keeps its controller', () => {
    const ic = (controller: string): ApiObject => ({ apiVersion: 'networking.k8s.io/v1', kind: 'IngressClass', metadata: { name: 'c' }, spec: { controller } });
    expect(brief(update(kind('IngressClass'), ic('example.com/b'), ic('example.com/a')))).toEqual(['spec.controller: Invalid value: "example.com/b": field is immutable']);
    expect(update(kind('IngressClass'), { ...ic('example.com/a'), spec: { controller: 'example.com/a', parameters: { kind: 'X', name: 'y' } } }, ic('example.com/a'))).toEqual([]);
  });
  it('an EndpointSlice keeps its addressType', () => {
    const es = (addressType: string): ApiObject => ({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: 'e', namespace: 'd' }, addressType, endpoints: [] });
    expect(brief(update(kind('EndpointSlice'), es('IPv6'), es('IPv4')))).toEqual(['addressType: Invalid value: "IPv6": field is immutable']);
    expect(update(kind('EndpointSlice'), { ...es('IPv4'), endpoints: [{ addresses: ['10.0.0.1'] }] }, es('IPv4'))).toEqual([]);
  });
});

describe('RoleBinding', () => {
  it('gives the new roleRef back as Go prints an rbac.RoleRef', () => {
    const rb = (name: string): ApiObject => ({ metadata: { name: 'x', namespace: 'd' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name } });
    expect(brief(update(kind('RoleBinding'), rb('b'), rb('a')))).toEqual([
      'roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"Role", Name:"b"}: cannot change roleRef',
    ]);
  });
});

describe('events.k8s.io/v1 Event', () => {
  const ev = kind('Event', 'events.k8s.io');
  const old: ApiObject = {
    apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name: 'e', namespace: 'default' },
    eventTime: '2024-05-01T10:00:00.500000Z', reportingController: 'example.com/c', reportingInstance: 'c-1', action: 'Pull', reason: 'Pulled', type: 'Normal',
    regarding: { kind: 'Pod', namespace: 'default', name: 'p', apiVersion: 'v1' }, note: 'pulled',
  };
  it('refuses changes to everything but the series, with kube\'s internal paths and Go values', () => {
    const next = { ...old, note: 'other', reason: 'Again', regarding: { kind: 'Pod', namespace: 'default', name: 'q' }, eventTime: '2024-05-01T11:00:00Z' };
    expect(brief(update(ev, next, old))).toEqual([
      'involvedObject: Invalid value: core.ObjectReference{Kind:"Pod", Namespace:"default", Name:"q", UID:"", APIVersion:"", ResourceVersion:"", FieldPath:""}: field is immutable',
      'reason: Invalid value: "Again": field is immutable',
      'message: Invalid value: "other": field is immutable',
      'reason: Invalid value: "Again": field is immutable',
      'eventTime: Invalid value: 2024-05-01 11:00:00 +0000 UTC: field is immutable',
    ]);
    expect(brief(update(ev, { ...old, related: { kind: 'Node', name: 'n' }, deprecatedCount: 2 }, old))).toEqual([
      'count: Invalid value: 2: field is immutable',
      'related: Invalid value: core.ObjectReference{Kind:"Node", Namespace:"", Name:"n", UID:"", APIVersion:"", ResourceVersion:"", FieldPath:""}: field is immutable',
    ]);
  });
  it('a series may be added or grow; a changed one needs lastObservedTime', () => {
    expect(update(ev, { ...old, series: { count: 2, lastObservedTime: '2024-05-01T10:05:00.000000Z' } }, old)).toEqual([]);
    expect(brief(update(ev, { ...old, series: { count: 3 } }, old))).toEqual(['series.lastObservedTime: Required value']);
  });
  it('prints times as Go does', () => {
    expect(goTime('2024-05-01T10:00:00.500000Z')).toBe('2024-05-01 10:00:00.5 +0000 UTC');
    expect(goTime('2024-05-01T10:00:00+02:00')).toBe('2024-05-01 10:00:00 +0200 +0200');
    expect(goTime(undefined)).toBe('0001-01-01 00:00:00 +0000 UTC');
  });
  it('core v1 Event updates keep only the legacy checks', () => {
    const core = kind('Event', '');
    const e: ApiObject = { apiVersion: 'v1', kind: 'Event', metadata: { name: 'e', namespace: 'default' }, involvedObject: { kind: 'Pod', namespace: 'default', name: 'p' }, reason: 'A', message: 'm' };
    const out = core.strategy.validateUpdate?.({ ...e, reason: 'B', message: 'n' }, e) ?? core.strategy.validate?.({ ...e, reason: 'B', message: 'n' }) ?? [];
    expect(out).toEqual([]);
  });
});

describe('Invalid status', () => {
  it('names a repeated error once in its message and keeps every cause', () => {
    const e = { field: 'reason', type: 'FieldValueInvalid', message: 'Invalid value: "x": field is immutable' };
    const err = invalid('Event', 'events.k8s.io', 'e', [e, e]);
    expect(err.message).toBe('Event.events.k8s.io "e" is invalid: reason: Invalid value: "x": field is immutable');
    expect(err.details?.causes).toHaveLength(2);
  });
});
