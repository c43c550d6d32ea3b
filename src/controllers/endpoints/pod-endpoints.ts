// What the Endpoints and EndpointSlice controllers (endpoints-controller.ts,
// endpointslice-controller.ts) read the same way from a Service and its pods,
// as kube 1.32's pkg/controller/util/endpoint and staging/src/k8s.io/endpointslice/util
// do: which pods count (ShouldPodBeInEndpoints), which of a pod's IPs serves
// the Service's family, a Service port's target resolved on a pod (FindPort),
// the hostname rule, and the last-change trigger time (TriggerTimeTracker).

import type { ApiObject, JSONValue } from '../../registry/types.js';
import { podReady } from '../../registry/kinds/pod-eviction.js';
import { LOOPBACK_ENDPOINTS } from '../../registry/kinds/endpoints-validation.js';
import { isIPv6, nonSpecialIPErrors, parseIP } from '../../registry/kinds/ip-address.js';

export { podReady };

type Obj = Record<string, JSONValue>;

/** the annotation both controllers stamp (kube's v1.EndpointsLastChangeTriggerTime) */
export const LAST_CHANGE_TRIGGER_TIME = 'endpoints.kubernetes.io/last-change-trigger-time';
/** the label of a headless Service's Endpoints and slices (kube's v1.IsHeadlessService) */
export const HEADLESS_LABEL = 'service.kubernetes.io/headless';

export type IpFamily = 'IPv4' | 'IPv6';

export interface ServicePort {
  name?: string;
  protocol?: string;
  port?: number;
  targetPort?: number | string;
  appProtocol?: string;
}

/** one resolved port, the fields Endpoints and EndpointSlice ports share */
export type ResolvedPort = {
  name: string;
  port: number;
  protocol: string;
  appProtocol?: string;
};

const specOf = (o: ApiObject): Obj => (o.spec ?? {}) as Obj;
const statusOf = (o: ApiObject): Obj => (o.status ?? {}) as Obj;

/**
 * The Service's selector, or undefined when it has none. An empty map is
 * none too: kube stores the selector as protobuf, where `{}` and absent are
 * one value, and its controllers skip a nil selector.
 */
export function serviceSelector(svc: ApiObject): Record<string, string> | undefined {
  const sel = specOf(svc).selector;
  if (sel === null || typeof sel !== 'object' || Array.isArray(sel) || Object.keys(sel).length === 0) return undefined;
  return sel as Record<string, string>;
}

/** every selector label is on the pod (kube's labels.SelectorFromSet(...).Matches) */
export function selects(selector: Record<string, string>, pod: ApiObject): boolean {
  const labels = (pod.metadata?.labels ?? {}) as Record<string, string>;
  for (const [k, v] of Object.entries(selector)) if (labels[k] !== v) return false;
  return true;
}

export const servicePorts = (svc: ApiObject): ServicePort[] => (Array.isArray(specOf(svc).ports) ? (specOf(svc).ports as unknown as ServicePort[]) : []);

/** spec.clusterIP is None (kube's !IsServiceIPSet for a Service with a selector) */
export const headless = (svc: ApiObject): boolean => specOf(svc).clusterIP === 'None';

export const publishNotReady = (svc: ApiObject): boolean => specOf(svc).publishNotReadyAddresses === true;

const phaseOf = (pod: ApiObject): string | undefined => statusOf(pod).phase as string | undefined;

/**
 * kube's ShouldPodBeInEndpoints: a pod with an IP, not terminal, and — unless
 * terminating pods are wanted (the Endpoints controller with
 * publishNotReadyAddresses, the EndpointSlice controller always) — not being deleted
 */
export function podInEndpoints(pod: ApiObject, includeTerminating: boolean): boolean {
  const phase = phaseOf(pod);
  if (phase === 'Succeeded' || phase === 'Failed') return false;
  if (podIps(pod).length === 0) return false;
  return includeTerminating || !pod.metadata?.deletionTimestamp;
}

/**
 * an IP Endpoints and EndpointSlices may hold (kube's ValidateNonSpecialIP, loopback
 * allowed: endpoints-validation.ts LOOPBACK_ENDPOINTS): a pod with only an unspecified or
 * link-local address has none, and is left out as a pod without an IP (the write would be refused)
 */
export const isEndpointIP = (ip: string): boolean => parseIP(ip) !== undefined && nonSpecialIPErrors('', ip, LOOPBACK_ENDPOINTS).length === 0;

/** status.podIPs, or status.podIP alone (an agent that writes only the first); those isEndpointIP */
export function podIps(pod: ApiObject): string[] {
  const s = statusOf(pod);
  const list = Array.isArray(s.podIPs) ? (s.podIPs as Obj[]).map((p) => p?.ip).filter((ip): ip is string => typeof ip === 'string' && ip !== '') : [];
  if (list.length > 0) return list.filter(isEndpointIP);
  return typeof s.podIP === 'string' && isEndpointIP(s.podIP) ? [s.podIP] : [];
}

/** an IPv4-mapped IPv6 address is IPv4, as Go's To4 (and kube's address types) have it */
export const familyOf = (ip: string): IpFamily => (isIPv6(ip) ? 'IPv6' : 'IPv4');

/**
 * The address families the Service's endpoints are in: spec.ipFamilies, else
 * the cluster IPs' (kube's getAddressTypesForService); a headless Service
 * with neither takes both, so each pod is listed by the IPs it has
 */
export function serviceFamilies(svc: ApiObject): IpFamily[] {
  const s = specOf(svc);
  const fams = Array.isArray(s.ipFamilies) ? (s.ipFamilies as string[]).filter((f): f is IpFamily => f === 'IPv4' || f === 'IPv6') : [];
  if (fams.length > 0) return fams;
  const ips = (Array.isArray(s.clusterIPs) ? (s.clusterIPs as string[]) : [s.clusterIP as string]).filter((ip) => typeof ip === 'string' && ip !== '' && ip !== 'None');
  if (ips.length > 0) return [...new Set(ips.map(familyOf))];
  return ['IPv4', 'IPv6'];
}

/**
 * The pod's IP the Endpoints object lists (kube's podToEndpointAddressForService):
 * of the Service's primary family, or — a headless Service without families —
 * of the pod's first IP's family
 */
export function endpointsIp(svc: ApiObject, pod: ApiObject): string | undefined {
  const ips = podIps(pod);
  const s = specOf(svc);
  const fams = Array.isArray(s.ipFamilies) ? (s.ipFamilies as string[]) : [];
  const clusterIp = typeof s.clusterIP === 'string' && s.clusterIP !== 'None' && s.clusterIP !== '' ? s.clusterIP : undefined;
  const want = fams[0] ?? (clusterIp ? familyOf(clusterIp) : ips[0] && familyOf(ips[0]));
  return ips.find((ip) => familyOf(ip) === want);
}

/** the pod's hostname when the Service is its subdomain (kube's ShouldSetHostname) */
export function hostnameFor(pod: ApiObject, svc: ApiObject): string | undefined {
  const spec = specOf(pod);
  const h = spec.hostname;
  return typeof h === 'string' && h !== '' && spec.subdomain === svc.metadata?.name && pod.metadata?.namespace === svc.metadata?.namespace ? h : undefined;
}

interface ContainerPort {
  name?: string;
  containerPort?: number;
  protocol?: string;
}

/**
 * The port a Service port reaches on this pod (kube's podutil.FindPort): a
 * number as is; a name looked up among the containers' ports (and sidecar
 * init containers', restartPolicy Always) of the same protocol; undefined
 * when the pod has no such port, so it is left out for that port.
 */
export function findPort(pod: ApiObject, sp: ServicePort): number | undefined {
  const target = sp.targetPort ?? sp.port;
  if (typeof target === 'number') return target;
  if (typeof target !== 'string' || target === '') return undefined;
  const protocol = sp.protocol ?? 'TCP';
  const spec = specOf(pod);
  const containers = [
    ...(Array.isArray(spec.containers) ? (spec.containers as Obj[]) : []),
    ...(Array.isArray(spec.initContainers) ? (spec.initContainers as Obj[]).filter((c) => c?.restartPolicy === 'Always') : []),
  ];
  for (const c of containers) {
    for (const p of (Array.isArray(c?.ports) ? c.ports : []) as ContainerPort[]) {
      if (p.name === target && (p.protocol ?? 'TCP') === protocol && typeof p.containerPort === 'number') return p.containerPort;
    }
  }
  return undefined;
}

/** a Service port resolved on a pod: name, number, protocol, appProtocol (kube's endpointPortFromServicePort) */
export function resolvePort(pod: ApiObject, sp: ServicePort): ResolvedPort | undefined {
  const port = findPort(pod, sp);
  if (port === undefined) return undefined;
  return { name: sp.name ?? '', port, protocol: sp.protocol ?? 'TCP', ...(sp.appProtocol !== undefined ? { appProtocol: sp.appProtocol } : {}) };
}

/** Go's RFC3339Nano of a UTC time: the fraction without trailing zeros */
export const rfc3339Nano = (ms: number): string => new Date(ms).toISOString().replace(/(\.\d*?)0*Z$/, '$1Z').replace('.Z', 'Z');

/** the pod's Ready condition's lastTransitionTime in ms, 0 when none (kube's getPodTriggerTime) */
function podTriggerTime(pod: ApiObject): number {
  const conds = statusOf(pod).conditions;
  const ready = Array.isArray(conds) ? (conds as Obj[]).find((c) => c?.type === 'Ready') : undefined;
  const t = typeof ready?.lastTransitionTime === 'string' ? Date.parse(ready.lastTransitionTime) : NaN;
  return Number.isFinite(t) ? t : 0;
}

interface ServiceTriggerState {
  pods: Map<string, number>;
  service: number;
}

/**
 * kube's TriggerTimeTracker: a sync's trigger time is the earliest of the
 * trigger times that changed since the Service's last sync — each pod's Ready
 * transition time, and the Service's creation time on its first sync.
 * Undefined when none changed (the annotation is then dropped on a write).
 */
export class TriggerTimeTracker {
  private readonly states = new Map<string, ServiceTriggerState>();

  compute(key: string, svc: ApiObject, pods: ApiObject[]): string | undefined {
    const prev = this.states.get(key);
    const next: ServiceTriggerState = { pods: new Map(), service: Date.parse(svc.metadata?.creationTimestamp ?? '') || 0 };
    let min = 0;
    const consider = (t: number): void => {
      if (t > 0 && (min === 0 || t < min)) min = t;
    };
    for (const pod of pods) {
      const t = podTriggerTime(pod);
      const name = pod.metadata?.name ?? '';
      next.pods.set(name, t);
      if (prev?.pods.get(name) !== t) consider(t);
    }
    if (prev?.service !== next.service) consider(next.service);
    this.states.set(key, next);
    return min > 0 ? rfc3339Nano(min) : undefined;
  }

  forget(key: string): void {
    this.states.delete(key);
  }
}
