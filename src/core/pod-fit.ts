// Whether a pod fits a node, the parts kube-scheduler's filters and kubelet's
// admission share (kube's AdmissionCheck in pkg/scheduler/schedule_one.go is
// used by both): a pod's effective requests, the host ports it binds, taint
// tolerations and required node affinity. Pure rules over plain objects, so the
// scheduler (src/controllers/scheduler/fit.ts) and the node agent
// (src/nodeagent/admission.ts) judge alike.

import { resourceAmount } from './quantity.js';

type Obj = Record<string, unknown>;

/** what these rules read of a pod or a node: any object with these fields */
export interface Shape {
  metadata?: unknown;
  spec?: unknown;
  status?: unknown;
}

export const obj = (v: unknown): Obj => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
export const arr = (v: unknown): Obj[] => (Array.isArray(v) ? (v as Obj[]) : []);
export const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** resource name → amount (CPU in millicores, everything else in units; quantity.ts `resourceAmount`) */
export type Amounts = Record<string, number>;

/** a container's `resources.requests`, every resource named there (a request of "0" included) */
export function containerRequestAmounts(c: unknown): Amounts {
  const out: Amounts = {};
  for (const [name, q] of Object.entries(obj(obj(obj(c).resources).requests))) out[name] = resourceAmount(name, q);
  return out;
}

const add = (into: Amounts, more: Amounts): void => {
  for (const [k, v] of Object.entries(more)) into[k] = (into[k] ?? 0) + v;
};
const atLeast = (into: Amounts, other: Amounts): void => {
  for (const [k, v] of Object.entries(other)) into[k] = Math.max(into[k] ?? 0, v);
};

/**
 * A pod's effective request of every resource (kube's resourcehelper.PodRequests,
 * what the scheduler's NodeResourcesFit and kubelet's admission count): the
 * containers plus the restartable (sidecar) init containers, at least the
 * largest ordinary init container plus the sidecars started before it, plus
 * `overhead`. `requestsOf` reads each container's requests, init containers and
 * sidecars included (the scheduler's scoring fills kube's defaults there, as
 * PodRequests' NonMissingContainerRequests does).
 */
export function podResourceRequests(pod: Shape, requestsOf: (c: unknown) => Amounts = containerRequestAmounts): Amounts {
  const spec = obj(pod.spec);
  const sum: Amounts = {};
  for (const c of arr(spec.containers)) add(sum, requestsOf(c));
  const sidecars: Amounts = {};
  const initMax: Amounts = {};
  for (const c of arr(spec.initContainers)) {
    const r = requestsOf(c);
    if (c.restartPolicy === 'Always') {
      add(sidecars, r);
      continue;
    }
    const withSidecars: Amounts = { ...sidecars };
    add(withSidecars, r);
    atLeast(initMax, withSidecars);
  }
  add(sum, sidecars);
  atLeast(sum, initMax);
  for (const [name, q] of Object.entries(obj(spec.overhead))) sum[name] = (sum[name] ?? 0) + resourceAmount(name, q);
  return sum;
}

/** a container port bound on the node, as the NodePorts filter keys it: an empty hostIP is 0.0.0.0, an empty protocol TCP */
export interface HostPort {
  ip: string;
  protocol: string;
  port: number;
}

export const hostPortKey = (p: HostPort): string => `${p.ip}/${p.protocol}/${p.port}`;

/** the host ports a pod's containers ask for (kube's getContainerPorts: the ports with a hostPort above 0) */
export function hostPorts(pod: Shape): HostPort[] {
  return arr(obj(pod.spec).containers)
    .flatMap((c) => arr(c.ports))
    .filter((p) => typeof p.hostPort === 'number' && p.hostPort > 0)
    .map((p) => ({ ip: str(p.hostIP) || '0.0.0.0', protocol: str(p.protocol) || 'TCP', port: p.hostPort as number }));
}

/** HostPortInfo.CheckConflict: 0.0.0.0 takes the protocol and port on every address, another address only on itself */
export function portTaken(want: HostPort, used: readonly HostPort[]): boolean {
  return used.some((u) => u.protocol === want.protocol && u.port === want.port && (want.ip === '0.0.0.0' || u.ip === '0.0.0.0' || u.ip === want.ip));
}

export interface Taint {
  key: string;
  value?: string;
  effect: string;
}

/** v1 toleration semantics (ToleratesTaint): effect, key (empty key with Exists = all), operator */
export function tolerates(tolerations: readonly Obj[], taint: Taint): boolean {
  return tolerations.some((t) => {
    const effect = str(t.effect);
    if (effect !== '' && effect !== taint.effect) return false;
    const key = str(t.key);
    const op = str(t.operator) || 'Equal';
    if (key === '') return op === 'Exists';
    if (key !== taint.key) return false;
    return op === 'Exists' || (op === 'Equal' && str(t.value) === (taint.value ?? ''));
  });
}

/** the node's labels as strings, derived once per Node version (informer objects are never modified) */
const labelsCache = new WeakMap<object, Record<string, string>>();
function nodeLabels(node: Shape): Record<string, string> {
  let l = labelsCache.get(node);
  if (!l) labelsCache.set(node, (l = Object.fromEntries(Object.entries(obj(obj(node.metadata).labels)).map(([k, v]) => [k, String(v)]))));
  return l;
}

/** a NodeSelectorRequirement against labels (or `metadata.name` for matchFields) */
function requirementHolds(req: Obj, labels: Record<string, string>): boolean {
  const key = str(req.key);
  const values = arr(req.values).map(String);
  const has = Object.prototype.hasOwnProperty.call(labels, key);
  const v = labels[key];
  switch (str(req.operator)) {
    case 'In': return has && values.includes(v!);
    case 'NotIn': return !has || !values.includes(v!);
    case 'Exists': return has;
    case 'DoesNotExist': return !has;
    case 'Gt': return has && values.length === 1 && Number(v) > Number(values[0]);
    case 'Lt': return has && values.length === 1 && Number(v) < Number(values[0]);
    default: return false;
  }
}

/** nodeSelector and requiredDuringSchedulingIgnoredDuringExecution (terms ORed, requirements ANDed; an empty term matches nothing) */
export function matchesNodeAffinity(pod: Shape, node: Shape): boolean {
  const spec = obj(pod.spec);
  const labels = nodeLabels(node);
  for (const [k, v] of Object.entries(obj(spec.nodeSelector))) if (labels[k] !== String(v)) return false;
  const required = obj(obj(obj(spec.affinity).nodeAffinity).requiredDuringSchedulingIgnoredDuringExecution);
  if (required.nodeSelectorTerms === undefined) return true;
  const fields = { 'metadata.name': str(obj(node.metadata).name) };
  return arr(required.nodeSelectorTerms).some((term) => {
    const exprs = arr(term.matchExpressions);
    const fieldExprs = arr(term.matchFields);
    if (exprs.length === 0 && fieldExprs.length === 0) return false;
    return exprs.every((r) => requirementHolds(r, labels)) && fieldExprs.every((r) => requirementHolds(r, fields));
  });
}
