// The EndpointSlice controller's planning (kube 1.32
// staging/src/k8s.io/endpointslice reconciler.go and utils.go): the desired
// endpoints of a Service grouped by address type and resolved port set, and
// the creates, updates and deletes that turn its existing slices into them —
// slices updated in place where possible, at most maxPerSlice endpoints each,
// a placeholder slice when a Service has no endpoints. Pure functions;
// endpointslice-controller.ts reads the caches and writes.

import type { ApiObject, JSONValue } from '../../registry/types.js';
import { deepEqual, newControllerRef } from '../../machinery/meta.js';
import type { TargetRef } from './endpoints-plan.js';
import { HEADLESS_LABEL, type IpFamily, LAST_CHANGE_TRIGGER_TIME, type ResolvedPort, familyOf, headless, hostnameFor, podInEndpoints, podIps, podReady, publishNotReady, resolvePort, serviceFamilies, servicePorts } from './pod-endpoints.js';

export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
export const MANAGED_BY_LABEL = 'endpointslice.kubernetes.io/managed-by';
export const ENDPOINTSLICE_CONTROLLER_NAME = 'endpointslice-controller.k8s.io';
/** kube-controller-manager's --max-endpoints-per-slice default */
export const MAX_ENDPOINTS_PER_SLICE = 100;

export type SliceEndpoint = {
  addresses: string[];
  conditions: { ready: boolean; serving: boolean; terminating: boolean };
  hostname?: string;
  targetRef: TargetRef;
  nodeName?: string;
  zone?: string;
};

export type EndpointSlice = ApiObject & {
  addressType: string;
  endpoints: SliceEndpoint[];
  ports: ResolvedPort[];
};

/** the endpoints of one address type and port set (kube's endpointMeta and its desired set) */
export interface DesiredGroup {
  family: IpFamily;
  ports: ResolvedPort[];
  /** by endpoint key, in pod order */
  endpoints: Map<string, SliceEndpoint>;
}

/** kube's podToEndpoint: serving = Ready; terminating = deleting; ready = serving and not terminating, or publishNotReadyAddresses */
export function podToEndpoint(svc: ApiObject, pod: ApiObject, ip: string, zoneOf: (node: string) => string | undefined): SliceEndpoint {
  const serving = podReady(pod);
  const terminating = Boolean(pod.metadata?.deletionTimestamp);
  const m = pod.metadata ?? {};
  const nodeName = (pod.spec as { nodeName?: string } | undefined)?.nodeName;
  const zone = nodeName ? zoneOf(nodeName) : undefined;
  const hostname = hostnameFor(pod, svc);
  return {
    addresses: [ip],
    conditions: { ready: publishNotReady(svc) || (serving && !terminating), serving, terminating },
    ...(hostname ? { hostname } : {}),
    targetRef: { kind: 'Pod', namespace: m.namespace ?? '', name: m.name ?? '', uid: m.uid ?? '' },
    ...(nodeName ? { nodeName } : {}),
    ...(zone ? { zone } : {}),
  };
}

/** an endpoint's identity in a set (kube's endpoint hash: addresses, hostname, target) */
export const endpointKey = (e: SliceEndpoint): string => JSON.stringify([[...e.addresses].sort(), e.hostname ?? '', e.targetRef?.namespace ?? '', e.targetRef?.name ?? '']);

const portSetKey = (ports: ResolvedPort[]): string => JSON.stringify(ports.map((p) => [p.name, p.port, p.protocol, p.appProtocol ?? null]).sort());
export const groupKey = (family: string, ports: ResolvedPort[]): string => `${family}\u0000${portSetKey(ports)}`;

/**
 * The desired endpoints of `svc` over the pods its selector picked: every
 * pod with an IP of a family the Service uses, not terminal, terminating
 * ones included (marked so), grouped by the ports it resolves.
 */
export function desiredGroups(svc: ApiObject, pods: ApiObject[], zoneOf: (node: string) => string | undefined): Map<string, DesiredGroup> {
  const out = new Map<string, DesiredGroup>();
  const families = serviceFamilies(svc);
  const sps = servicePorts(svc);
  for (const pod of pods) {
    if (!podInEndpoints(pod, true)) continue;
    const ports = sps.map((sp) => resolvePort(pod, sp)).filter((p): p is ResolvedPort => p !== undefined);
    for (const family of families) {
      const ip = podIps(pod).find((a) => familyOf(a) === family);
      if (!ip) continue;
      const k = groupKey(family, ports);
      let g = out.get(k);
      if (!g) out.set(k, (g = { family, ports, endpoints: new Map() }));
      const ep = podToEndpoint(svc, pod, ip, zoneOf);
      g.endpoints.set(endpointKey(ep), ep);
    }
  }
  return out;
}

/** kube's setEndpointSliceLabels: the Service's labels (bar the two reserved), the headless label, service name, managed-by */
export function sliceLabels(svc: ApiObject): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const [k, v] of Object.entries((svc.metadata?.labels ?? {}) as Record<string, string>)) {
    if (k !== SERVICE_NAME_LABEL && k !== MANAGED_BY_LABEL) labels[k] = v;
  }
  if (headless(svc)) labels[HEADLESS_LABEL] = '';
  else delete labels[HEADLESS_LABEL];
  labels[SERVICE_NAME_LABEL] = svc.metadata?.name ?? '';
  labels[MANAGED_BY_LABEL] = ENDPOINTSLICE_CONTROLLER_NAME;
  return labels;
}

/** the slice's controller reference names this Service (same uid) */
export function ownedBy(slice: ApiObject, svc: ApiObject): boolean {
  const refs = (slice.metadata?.ownerReferences ?? []) as unknown as { kind?: string; uid?: string; controller?: boolean }[];
  return refs.some((r) => r.kind === 'Service' && r.uid === svc.metadata?.uid && r.controller === true);
}

/** a new slice of the Service (kube's newEndpointSlice), named by the server from `<service>-` */
export function newSlice(svc: ApiObject, family: IpFamily, ports: ResolvedPort[], apiVersion: string): EndpointSlice {
  const m = svc.metadata ?? {};
  return {
    apiVersion,
    kind: 'EndpointSlice',
    metadata: {
      generateName: `${m.name ?? ''}-`,
      namespace: m.namespace ?? '',
      labels: sliceLabels(svc),
      ownerReferences: [newControllerRef({ apiVersion: 'v1', kind: 'Service', name: m.name ?? '', uid: m.uid ?? '' }) as unknown as Record<string, JSONValue>],
    },
    addressType: family,
    endpoints: [],
    ports,
  };
}

export interface SlicePlan {
  create: EndpointSlice[];
  update: EndpointSlice[];
  delete: EndpointSlice[];
}

const epsOf = (s: ApiObject): SliceEndpoint[] => (Array.isArray((s as EndpointSlice).endpoints) ? (s as EndpointSlice).endpoints : []);
const portsOf = (s: ApiObject): ResolvedPort[] => (Array.isArray((s as EndpointSlice).ports) ? (s as EndpointSlice).ports : []);

/**
 * an existing slice for an update: labels and endpoints replaced, its metadata
 * copied one level (the cached object is shared and never modified; the
 * endpoints themselves are not changed once planned)
 */
function revised(s: ApiObject, labels: Record<string, string>, endpoints: SliceEndpoint[]): EndpointSlice {
  return { ...(s as EndpointSlice), metadata: { ...s.metadata, labels }, endpoints };
}

/**
 * kube's reconcileByPortMapping for one address type and port set: existing
 * slices keep the endpoints still desired (updated when one changed, deleted
 * when none is left), the rest fill the slices being updated (fullest first),
 * then the unchanged slice that fits them most tightly, then new slices.
 */
function reconcileGroup(svc: ApiObject, existing: ApiObject[], group: DesiredGroup, max: number, apiVersion: string, plan: SlicePlan): void {
  const labels = sliceLabels(svc);
  const desired = new Map(group.endpoints);
  const updates: EndpointSlice[] = [];
  let unchanged: ApiObject[] = [];
  for (const s of existing) {
    let changed = !deepEqual(s.metadata?.labels ?? {}, labels);
    const kept: SliceEndpoint[] = [];
    for (const ep of epsOf(s)) {
      const k = endpointKey(ep);
      const want = desired.get(k);
      if (!want) {
        changed = true;
        continue;
      }
      if (!deepEqual(want, ep)) changed = true;
      kept.push(want);
      desired.delete(k);
    }
    if (!changed) unchanged.push(s);
    else if (kept.length === 0) plan.delete.push(s as EndpointSlice);
    else updates.push(revised(s, labels, kept));
  }
  const rest = [...desired.values()];
  if (rest.length > 0) {
    updates.sort((a, b) => b.endpoints.length - a.endpoints.length);
    for (const u of updates) while (u.endpoints.length < max && rest.length > 0) u.endpoints.push(rest.shift()!);
  }
  while (rest.length > 0) {
    let fill: EndpointSlice | undefined;
    if (rest.length < max && unchanged.length > 0) {
      // the slice left with the least room once these are in (kube's getSliceToFill)
      let best: ApiObject | undefined;
      for (const s of unchanged) {
        const diff = max - (rest.length + epsOf(s).length);
        if (diff >= 0 && (!best || diff < max - (rest.length + epsOf(best).length))) best = s;
      }
      if (best) {
        unchanged = unchanged.filter((s) => s !== best);
        fill = revised(best, labels, [...epsOf(best)]);
      }
    }
    fill ??= newSlice(svc, group.family, group.ports, apiVersion);
    while (fill.endpoints.length < max && rest.length > 0) fill.endpoints.push(rest.shift()!);
    (fill.metadata?.name ? updates : plan.create).push(fill);
  }
  plan.update.push(...updates);
}

/**
 * The writes that bring `existing` (the slices this controller manages for
 * `svc`) to the desired groups (kube's reconcile): slices of another owner
 * or an unused address type or port set are deleted; per address type with
 * nothing to create and every slice going, a placeholder (no ports, no
 * endpoints) is created — or the one there kept; a slice to create takes the
 * name of one to delete of the same type, so it is an update in place.
 * Created and updated slices carry the trigger time (or drop it).
 */
export function planSlices(svc: ApiObject, existing: ApiObject[], groups: Map<string, DesiredGroup>, triggerTime: string | undefined, o: { apiVersion: string; max?: number }): SlicePlan {
  const max = o.max ?? MAX_ENDPOINTS_PER_SLICE;
  const plan: SlicePlan = { create: [], update: [], delete: [] };
  const families = serviceFamilies(svc);
  const byGroup = new Map<string, ApiObject[]>();
  for (const s of existing) {
    const family = (s as EndpointSlice).addressType as IpFamily;
    if (!ownedBy(s, svc) || !families.includes(family)) {
      plan.delete.push(s as EndpointSlice);
      continue;
    }
    const k = groupKey(family, portsOf(s));
    byGroup.set(k, [...(byGroup.get(k) ?? []), s]);
  }
  for (const family of families) {
    const before = { create: plan.create.length, delete: plan.delete.length };
    for (const [k, g] of groups) if (g.family === family) reconcileGroup(svc, byGroup.get(k) ?? [], g, max, o.apiVersion, plan);
    for (const [k, slices] of byGroup) if (k.startsWith(`${family}\u0000`) && !groups.has(k)) plan.delete.push(...(slices as EndpointSlice[]));
    const ofFamily = existing.filter((s) => (s as EndpointSlice).addressType === family && ownedBy(s, svc));
    const deleting = plan.delete.slice(before.delete).filter((s) => s.addressType === family);
    if (plan.create.length === before.create && ofFamily.length === deleting.length) {
      const placeholder = newSlice(svc, family, [], o.apiVersion);
      const only = deleting.length === 1 ? deleting[0]! : undefined;
      if (only && epsOf(only).length === 0 && portsOf(only).length === 0 && deepEqual(only.metadata?.labels ?? {}, placeholder.metadata?.labels)) plan.delete.splice(plan.delete.indexOf(only), 1);
      else plan.create.push(placeholder);
    }
  }
  // reuse a slice being deleted for one being created (same owner and address type)
  for (let i = 0; i < plan.delete.length && plan.create.length > 0; ) {
    const gone = plan.delete[i]!;
    const j = plan.create.findLastIndex((c) => c.addressType === gone.addressType);
    if (j >= 0 && ownedBy(gone, svc)) {
      const made = plan.create.splice(j, 1)[0]!;
      plan.update.push({ ...revised(gone, made.metadata!.labels!, made.endpoints), ports: made.ports });
      plan.delete.splice(i, 1);
    } else i++;
  }
  for (const s of [...plan.create, ...plan.update]) {
    const ann = { ...((s.metadata!.annotations ?? {}) as Record<string, string>) };
    if (triggerTime) ann[LAST_CHANGE_TRIGGER_TIME] = triggerTime;
    else delete ann[LAST_CHANGE_TRIGGER_TIME];
    if (Object.keys(ann).length > 0) s.metadata!.annotations = ann;
    else delete s.metadata!.annotations;
  }
  return plan;
}
