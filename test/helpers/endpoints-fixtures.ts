// Services, pods and an in-memory apply of an EndpointSlice plan, for the
// Endpoints/EndpointSlice planning tests (test/unit/endpoints-plan.test.ts,
// test/property/endpoints-plan.property.test.ts).

import type { ApiObject } from '../../src/registry/types.js';
import type { EndpointSlice, SlicePlan } from '../../src/controllers/endpoints/slice-plan.js';

export const T = '2026-01-01T00:00:00Z';

export function svc(spec: Record<string, unknown> = {}, labels?: Record<string, string>): ApiObject {
  return {
    apiVersion: 'v1', kind: 'Service',
    metadata: { name: 'web', namespace: 'default', uid: 'svc-uid', creationTimestamp: T, ...(labels ? { labels } : {}) },
    spec: { selector: { app: 'web' }, clusterIP: '10.0.0.10', ipFamilies: ['IPv4'], ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }], ...spec },
  } as ApiObject;
}

export function pod(name: string, ip: string | undefined, o: { ready?: boolean; phase?: string; deleting?: boolean; ports?: { name: string; containerPort: number; protocol?: string }[]; node?: string; hostname?: string; subdomain?: string; readyAt?: string } = {}): ApiObject {
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name, namespace: 'default', uid: `uid-${name}`, labels: { app: 'web' }, ...(o.deleting ? { deletionTimestamp: T } : {}) },
    spec: { nodeName: o.node ?? 'n1', containers: [{ name: 'c', image: 'x', ...(o.ports ? { ports: o.ports } : {}) }], ...(o.hostname ? { hostname: o.hostname } : {}), ...(o.subdomain ? { subdomain: o.subdomain } : {}) },
    status: {
      phase: o.phase ?? 'Running',
      ...(ip ? { podIP: ip, podIPs: [{ ip }] } : {}),
      conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True', lastTransitionTime: o.readyAt ?? T }],
    },
  } as ApiObject;
}

export const API = 'discovery.k8s.io/v1';
let seq = 0;
/** the plan applied as the server would: creates named, updates and deletes by name */
export function apply(existing: EndpointSlice[], plan: SlicePlan): EndpointSlice[] {
  const byName = new Map(existing.map((s) => [s.metadata!.name!, s]));
  for (const d of plan.delete) byName.delete(d.metadata!.name!);
  for (const u of plan.update) byName.set(u.metadata!.name!, structuredClone(u));
  for (const c of plan.create) {
    const name = `${c.metadata!.generateName}${(seq++).toString(36)}`;
    byName.set(name, { ...structuredClone(c), metadata: { ...structuredClone(c.metadata!), name, uid: `slice-${name}` } });
  }
  return [...byName.values()];
}

