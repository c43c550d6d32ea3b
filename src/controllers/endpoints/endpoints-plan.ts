// The Endpoints controller's planning (kube 1.32 pkg/controller/endpoint and
// pkg/api/v1/endpoints): the subsets a Service's pods make, repacked as
// RepackSubsets does, truncated at 1000 addresses, and the object a sync
// writes — or nothing when the stored one already says the same. Pure
// functions; endpoints-controller.ts reads the caches and writes.

import type { ApiObject, JSONValue } from '../../registry/types.js';
import { deepEqual } from '../../machinery/meta.js';
import { HEADLESS_LABEL, LAST_CHANGE_TRIGGER_TIME, type ResolvedPort, endpointsIp, headless, hostnameFor, podInEndpoints, podReady, publishNotReady, resolvePort, servicePorts } from './pod-endpoints.js';

export type TargetRef = {
  kind: 'Pod';
  namespace: string;
  name: string;
  uid: string;
};

export type EndpointAddress = {
  ip: string;
  hostname?: string;
  nodeName?: string;
  targetRef?: TargetRef;
};

export type EndpointSubset = {
  addresses?: EndpointAddress[];
  notReadyAddresses?: EndpointAddress[];
  ports?: ResolvedPort[];
};

/** kube's maxCapacity: addresses kept in one Endpoints object */
export const MAX_ENDPOINTS_ADDRESSES = 1000;
export const OVER_CAPACITY = 'endpoints.kubernetes.io/over-capacity';

/** one pod's address and the Service ports it serves, before repacking (kube's addEndpointSubset) */
interface PodEntry {
  address: EndpointAddress;
  ready: boolean;
  /** undefined: the headless no-port sentinel */
  ports: (ResolvedPort | undefined)[];
}

/** the address of a pod for the Service, undefined when it has no IP of the Service's family */
export function podAddress(svc: ApiObject, pod: ApiObject): EndpointAddress | undefined {
  const ip = endpointsIp(svc, pod);
  if (!ip) return undefined;
  const m = pod.metadata ?? {};
  const nodeName = (pod.spec as { nodeName?: string } | undefined)?.nodeName;
  const hostname = hostnameFor(pod, svc);
  return {
    ip,
    ...(hostname ? { hostname } : {}),
    ...(nodeName ? { nodeName } : {}),
    targetRef: { kind: 'Pod', namespace: m.namespace ?? '', name: m.name ?? '', uid: m.uid ?? '' },
  };
}

/**
 * The subsets of a Service over the pods its selector picked (kube's
 * syncService loop then RepackSubsets): terminal pods, pods without an IP
 * and — unless publishNotReadyAddresses — deleting pods are left out; a pod
 * is listed under each Service port it resolves (a named port it lacks
 * leaves it out of that port); a headless Service without ports lists the
 * addresses with no ports.
 */
export function computeSubsets(svc: ApiObject, pods: ApiObject[]): EndpointSubset[] {
  const tolerate = publishNotReady(svc);
  const ports = servicePorts(svc);
  const entries: PodEntry[] = [];
  for (const pod of pods) {
    if (!podInEndpoints(pod, tolerate)) continue;
    const address = podAddress(svc, pod);
    if (!address) continue;
    const ready = tolerate || podReady(pod);
    if (ports.length === 0) {
      if (headless(svc)) entries.push({ address, ready, ports: [undefined] });
      continue;
    }
    const resolved = ports.map((sp) => resolvePort(pod, sp)).filter((p): p is ResolvedPort => p !== undefined);
    if (resolved.length > 0) entries.push({ address, ready, ports: resolved });
  }
  return repack(entries);
}

const addrKey = (a: EndpointAddress): string => `${a.ip}\u0000${a.targetRef?.uid ?? ''}`;
const portKey = (p: ResolvedPort | undefined): string => (p ? `${p.name}\u0000${p.port}\u0000${p.protocol}\u0000${p.appProtocol ?? '\u0001'}` : '');

/** kube's LessEndpointAddress: by IP, then target uid */
export function lessAddress(a: EndpointAddress, b: EndpointAddress): number {
  if (a.ip !== b.ip) return a.ip < b.ip ? -1 : 1;
  const ua = a.targetRef?.uid ?? '';
  const ub = b.targetRef?.uid ?? '';
  return ua < ub ? -1 : ua > ub ? 1 : 0;
}

const lessPort = (a: ResolvedPort, b: ResolvedPort): number => (portKey(a) < portKey(b) ? -1 : portKey(a) > portKey(b) ? 1 : 0);

/**
 * kube's RepackSubsets: every (address, port) pair, grouped so each subset
 * holds the addresses offering exactly the same ports; an address ready for
 * a port in any entry is ready. Addresses sorted by IP and uid as kube's
 * SortSubsets; kube orders ports and subsets by a hash, here by their
 * contents (an order, not a meaning).
 */
export function repack(entries: PodEntry[]): EndpointSubset[] {
  const addrs = new Map<string, EndpointAddress>();
  const byPort = new Map<string, { port: ResolvedPort | undefined; ready: Map<string, boolean> }>();
  for (const e of entries) {
    const k = addrKey(e.address);
    if (!addrs.has(k)) addrs.set(k, e.address);
    for (const p of e.ports) {
      const pk = portKey(p);
      let slot = byPort.get(pk);
      if (!slot) byPort.set(pk, (slot = { port: p, ready: new Map() }));
      if (slot.ready.get(k) !== true) slot.ready.set(k, e.ready);
    }
  }
  // address sets (with readiness) → the ports offered by exactly that set
  const groups = new Map<string, { ready: Map<string, boolean>; ports: ResolvedPort[] }>();
  for (const { port, ready } of byPort.values()) {
    const key = [...ready.entries()].map(([k, r]) => `${k}\u0000${r ? 1 : 0}`).sort().join('\u0002');
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { ready, ports: [] }));
    if (port) g.ports.push(port);
  }
  const out: EndpointSubset[] = [];
  for (const g of groups.values()) {
    const ready: EndpointAddress[] = [];
    const notReady: EndpointAddress[] = [];
    for (const [k, r] of g.ready) (r ? ready : notReady).push(addrs.get(k)!);
    out.push(subset(ready.sort(lessAddress), notReady.sort(lessAddress), g.ports.sort(lessPort)));
  }
  return out.sort((a, b) => (subsetOrderKey(a) < subsetOrderKey(b) ? -1 : subsetOrderKey(a) > subsetOrderKey(b) ? 1 : 0));
}

/** a subset without its empty lists (the API omits them) */
function subset(addresses: EndpointAddress[], notReadyAddresses: EndpointAddress[], ports: ResolvedPort[]): EndpointSubset {
  return {
    ...(addresses.length > 0 ? { addresses } : {}),
    ...(notReadyAddresses.length > 0 ? { notReadyAddresses } : {}),
    ...(ports.length > 0 ? { ports } : {}),
  };
}

const subsetOrderKey = (s: EndpointSubset): string => `${(s.ports ?? []).map(portKey).join('\u0002')}\u0003${addrKey((s.addresses ?? s.notReadyAddresses ?? [])[0] ?? { ip: '' })}`;

const countAddresses = (subsets: EndpointSubset[]): number => subsets.reduce((n, s) => n + (s.addresses?.length ?? 0) + (s.notReadyAddresses?.length ?? 0), 0);

/**
 * kube's truncateEndpoints: past MAX_ENDPOINTS_ADDRESSES, not-ready
 * addresses go first (each subset keeping its share, rounded up), and if the
 * ready ones alone are too many, all not-ready go and the ready are cut the
 * same way. Returns the subsets and whether anything was cut.
 */
export function truncate(subsets: EndpointSubset[], max = MAX_ENDPOINTS_ADDRESSES): { subsets: EndpointSubset[]; truncated: boolean } {
  const totalReady = subsets.reduce((n, s) => n + (s.addresses?.length ?? 0), 0);
  const total = countAddresses(subsets);
  if (total <= max) return { subsets, truncated: false };
  const cutReady = totalReady > max;
  const room = cutReady ? max : max - totalReady;
  const numTotal = cutReady ? totalReady : total - totalReady;
  let left = room;
  const out = subsets.map((s) => {
    const list = (cutReady ? s.addresses : s.notReadyAddresses) ?? [];
    const share = Math.min(Math.ceil((list.length / numTotal) * room), left);
    const kept = list.slice(0, share);
    left -= kept.length;
    return cutReady ? subset(kept, [], s.ports ?? []) : subset(s.addresses ?? [], kept, s.ports ?? []);
  });
  // a subset left without addresses says nothing (kube keeps it, empty)
  return { subsets: out.filter((s) => s.addresses || s.notReadyAddresses), truncated: true };
}

type Obj = Record<string, JSONValue>;

/** the labels the Endpoints carry: the Service's, plus the headless label when clusterIP is None */
export function endpointsLabels(svc: ApiObject): Record<string, string> {
  const labels: Record<string, string> = { ...((svc.metadata?.labels ?? {}) as Record<string, string>) };
  if (headless(svc)) labels[HEADLESS_LABEL] = '';
  else delete labels[HEADLESS_LABEL];
  return labels;
}

const list = <T>(v: T[] | undefined): T[] => (Array.isArray(v) ? v : []);
const sameList = <T>(a: T[] | undefined, b: T[] | undefined, same: (x: T, y: T) => boolean): boolean => {
  const x = list(a);
  const y = list(b);
  return x.length === y.length && x.every((e, i) => same(e, y[i]!));
};
const sameAddress = (a: EndpointAddress, b: EndpointAddress): boolean =>
  a.ip === b.ip && a.hostname === b.hostname && a.nodeName === b.nodeName &&
  a.targetRef?.kind === b.targetRef?.kind && a.targetRef?.namespace === b.targetRef?.namespace && a.targetRef?.name === b.targetRef?.name && a.targetRef?.uid === b.targetRef?.uid;
const samePort = (a: ResolvedPort, b: ResolvedPort): boolean => a.name === b.name && a.port === b.port && a.protocol === b.protocol && a.appProtocol === b.appProtocol;

/**
 * the same subsets, a target's resourceVersion ignored (kube's
 * endpointSubsetsEqualIgnoreResourceVersion); an absent list is an empty one
 */
export function sameSubsets(a: EndpointSubset[] | undefined, b: EndpointSubset[] | undefined): boolean {
  return sameList(a, b, (x, y) => sameList(x.addresses, y.addresses, sameAddress) && sameList(x.notReadyAddresses, y.notReadyAddresses, sameAddress) && sameList(x.ports, y.ports, samePort));
}

export interface EndpointsWrite {
  subsets: EndpointSubset[];
  labels: Record<string, string>;
  /** the annotations to set (value) or drop (undefined) */
  annotations: Record<string, string | undefined>;
}

/**
 * What a sync writes on the Endpoints of `svc`, or undefined when `current`
 * already has these subsets, labels and capacity annotation (kube's no-op
 * check; compared after truncation, so a truncated object is not rewritten
 * by every sync). The trigger time is set when one is known, else dropped.
 */
export function planEndpoints(svc: ApiObject, subsets: EndpointSubset[], current: ApiObject | undefined, triggerTime: string | undefined): EndpointsWrite | undefined {
  const cut = truncate(subsets);
  const labels = endpointsLabels(svc);
  if (current) {
    const ann = (current.metadata?.annotations ?? {}) as Record<string, string>;
    const capacityOk = cut.truncated ? ann[OVER_CAPACITY] === 'truncated' : ann[OVER_CAPACITY] === undefined;
    const curLabels = (current.metadata?.labels ?? {}) as Obj;
    if (capacityOk && deepEqual(curLabels, labels) && sameSubsets((current as { subsets?: EndpointSubset[] }).subsets, cut.subsets)) return undefined;
  }
  return {
    subsets: cut.subsets,
    labels,
    annotations: { [LAST_CHANGE_TRIGGER_TIME]: triggerTime, [OVER_CAPACITY]: cut.truncated ? 'truncated' : undefined },
  };
}

/** `w` applied to an Endpoints object (the current one, or a new one for `svc`) */
export function applyEndpointsWrite(svc: ApiObject, cur: ApiObject | undefined, w: EndpointsWrite): ApiObject {
  const out: ApiObject = cur ?? { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: svc.metadata?.name ?? '', namespace: svc.metadata?.namespace ?? '' } };
  const meta = out.metadata!;
  const annotations = { ...((meta.annotations ?? {}) as Record<string, string>) };
  for (const [k, v] of Object.entries(w.annotations)) {
    if (v === undefined) delete annotations[k];
    else annotations[k] = v;
  }
  meta.annotations = annotations;
  meta.labels = w.labels;
  if (w.subsets.length > 0) (out as Obj).subsets = w.subsets as unknown as JSONValue;
  else delete (out as Obj).subsets;
  return out;
}
