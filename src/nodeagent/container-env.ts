// A container's environment as the kubelet (1.32, makeEnvironmentVariables)
// builds it, without I/O: the caller fetches the ConfigMaps, Secrets and
// Services first (refs()), then this module evaluates, in kubelet's order,
// envFrom (prefix), env (a literal value is `$(VAR)`-
// expanded against what came before and the service variables; else
// valueFrom), then adds the service variables not already set. command and
// args are expanded against the final environment. A missing non-optional
// reference is an EnvError whose message is kubelet's (the container's
// waiting reason becomes CreateContainerConfigError).

import { parseQuantity } from '../core/quantity.js';
import { expand, mappingFor } from './expansion.js';

export interface KeyRef {
  name?: string;
  key: string;
  optional?: boolean;
}
export interface EnvVarSpec {
  name: string;
  value?: string;
  valueFrom?: {
    fieldRef?: { apiVersion?: string; fieldPath: string };
    resourceFieldRef?: { containerName?: string; resource: string; divisor?: string | number };
    configMapKeyRef?: KeyRef;
    secretKeyRef?: KeyRef;
  };
}
export interface EnvFromSpec {
  prefix?: string;
  configMapRef?: { name?: string; optional?: boolean };
  secretRef?: { name?: string; optional?: boolean };
}
export interface EnvContainer {
  name: string;
  command?: string[];
  args?: string[];
  env?: EnvVarSpec[];
  envFrom?: EnvFromSpec[];
  resources?: { limits?: Record<string, string>; requests?: Record<string, string> };
}
export interface EnvPod {
  metadata: { name: string; namespace?: string; uid?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: { nodeName?: string; serviceAccountName?: string; enableServiceLinks?: boolean; containers?: EnvContainer[]; initContainers?: EnvContainer[] };
}
export interface ServiceLike {
  metadata: { name: string; namespace?: string };
  spec?: { clusterIP?: string; ports?: { name?: string; port: number; protocol?: string }[] };
}

/** a fetched ConfigMap/Secret: its data (Secret data still base64; a ConfigMap's binaryData for volumes), or why it could not be read */
export type Fetched = { data: Record<string, string>; binaryData?: Record<string, string> } | { notFound: true } | { error: string };

export interface EnvInputs {
  pod: EnvPod;
  container: EnvContainer;
  /** the sandbox's IPs (known before the pod status is posted) */
  podIPs: string[];
  hostIPs: string[];
  /** the node's allocatable: the limit of a container that sets none (kubelet's defaultPodLimitsForDownwardAPI) */
  allocatable: Record<string, string>;
  /** services of the pod's namespace and default/kubernetes; undefined: no API (standalone) */
  services?: ServiceLike[];
  configMaps: ReadonlyMap<string, Fetched>;
  secrets: ReadonlyMap<string, Fetched>;
}

export interface ContainerEnv {
  env: { key: string; value: string }[];
  command: string[];
  args: string[];
}

export class EnvError extends Error {}

/** the ConfigMap and Secret names the container's environment reads */
export function refs(c: EnvContainer): { configMaps: Set<string>; secrets: Set<string> } {
  const configMaps = new Set<string>();
  const secrets = new Set<string>();
  for (const f of c.envFrom ?? []) {
    if (f.configMapRef) configMaps.add(f.configMapRef.name ?? '');
    if (f.secretRef) secrets.add(f.secretRef.name ?? '');
  }
  for (const e of c.env ?? []) {
    if (e.value || !e.valueFrom) continue;
    if (e.valueFrom.configMapKeyRef) configMaps.add(e.valueFrom.configMapKeyRef.name ?? '');
    if (e.valueFrom.secretKeyRef) secrets.add(e.valueFrom.secretKeyRef.name ?? '');
  }
  return { configMaps, secrets };
}

const envName = (s: string) => s.toUpperCase().replace(/-/g, '_');
const joinHostPort = (ip: string, port: number) => (ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`);

/** kubelet envvars.FromServices: `<NAME>_SERVICE_HOST/_PORT[_<PORT>]` and the Docker link variables */
export function serviceVariables(services: ServiceLike[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const s of services) {
    const ip = s.spec?.clusterIP ?? '';
    const ports = s.spec?.ports ?? [];
    if (!ip || ip === 'None' || ports.length === 0) continue;
    const prefix = envName(s.metadata.name);
    out.set(`${prefix}_SERVICE_HOST`, ip);
    out.set(`${prefix}_SERVICE_PORT`, String(ports[0]!.port));
    for (const p of ports) if (p.name) out.set(`${prefix}_SERVICE_PORT_${envName(p.name)}`, String(p.port));
    ports.forEach((p, i) => {
      const proto = p.protocol || 'TCP';
      const url = `${proto.toLowerCase()}://${joinHostPort(ip, p.port)}`;
      if (i === 0) out.set(`${prefix}_PORT`, url);
      const pp = `${prefix}_PORT_${p.port}_${proto.toUpperCase()}`;
      out.set(pp, url);
      out.set(`${pp}_PROTO`, proto.toLowerCase());
      out.set(`${pp}_PORT`, String(p.port));
      out.set(`${pp}_ADDR`, ip);
    });
  }
  return out;
}

/**
 * kubelet getServiceEnvVarMap: the `kubernetes` service of `default` always
 * (even with enableServiceLinks false), the services of the pod's namespace
 * when links are enabled (a same-named one there wins).
 */
export function serviceEnv(ns: string, enableServiceLinks: boolean, services: ServiceLike[]): Map<string, string> {
  const byName = new Map<string, ServiceLike>();
  for (const s of services) {
    const ip = s.spec?.clusterIP ?? '';
    if (!ip || ip === 'None') continue;
    const sns = s.metadata.namespace ?? 'default';
    if (sns === 'default' && s.metadata.name === 'kubernetes') {
      if (!byName.has(s.metadata.name)) byName.set(s.metadata.name, s);
    } else if (sns === ns && enableServiceLinks) byName.set(s.metadata.name, s);
  }
  return serviceVariables([...byName.values()]);
}

const SUBSCRIPT = /^(metadata\.(?:labels|annotations))\['(.*)'\]$/;

/** kubelet podFieldSelectorRuntimeValue + fieldpath.ExtractFieldPathAsString */
export function fieldValue(path: string, pod: EnvPod, podIPs: string[], hostIPs: string[]): string {
  switch (path) {
    case 'metadata.name':
      return pod.metadata.name;
    case 'metadata.namespace':
      return pod.metadata.namespace ?? 'default';
    case 'metadata.uid':
      return pod.metadata.uid ?? '';
    case 'spec.nodeName':
      return pod.spec?.nodeName ?? '';
    case 'spec.serviceAccountName':
      return pod.spec?.serviceAccountName ?? '';
    case 'status.hostIP':
      return hostIPs[0] ?? '';
    case 'status.hostIPs':
      return hostIPs.join(',');
    case 'status.podIP':
      return podIPs[0] ?? '';
    case 'status.podIPs':
      return podIPs.join(',');
  }
  const m = SUBSCRIPT.exec(path);
  // a missing label or annotation is the empty string (a map lookup in kube)
  if (m) return (m[1] === 'metadata.labels' ? pod.metadata.labels : pod.metadata.annotations)?.[m[2]!] ?? '';
  throw new EnvError(`unsupported fieldPath: ${path}`);
}

const RESOURCES = new Set(['cpu', 'memory', 'ephemeral-storage']);

/** kubelet containerResourceRuntimeValue with limits defaulted to the node's allocatable */
export function resourceValue(
  ref: { containerName?: string; resource: string; divisor?: string | number },
  pod: EnvPod,
  self: EnvContainer,
  allocatable: Record<string, string>,
): string {
  let c = self;
  if (ref.containerName) {
    const found = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])].find((x) => x.name === ref.containerName);
    if (!found) throw new EnvError(`container ${ref.containerName} not found`);
    c = found;
  }
  const [kind, res] = ref.resource.split('.', 2) as [string, string | undefined];
  if ((kind !== 'limits' && kind !== 'requests') || !res || !RESOURCES.has(res)) throw new EnvError(`unsupported container resource : ${ref.resource}`);
  const limit = c.resources?.limits?.[res] ?? allocatable[res];
  // a request that is not set defaults to the limit the pod spec gives (API defaulting), else 0
  const raw = kind === 'limits' ? limit : (c.resources?.requests?.[res] ?? c.resources?.limits?.[res]);
  const amount = parseQuantity(raw ?? '0') ?? 0;
  const d = ref.divisor === undefined || ref.divisor === '' || parseQuantity(ref.divisor) === 0 ? 1 : parseQuantity(ref.divisor)!;
  if (res === 'cpu') {
    // cpu: millicores over the divisor's millicores, rounded up (Quantity.MilliValue rounds up too)
    const milli = (q: number) => Math.ceil(Math.round(q * 1e9) / 1e6);
    return String(Math.ceil(milli(amount) / milli(d)));
  }
  // memory and ephemeral-storage: whole units (Value rounds up) over the divisor's, rounded up
  return String(Math.ceil(Math.ceil(amount) / Math.ceil(d)));
}

function fetched(kind: 'configmap' | 'secret', map: ReadonlyMap<string, Fetched>, name: string, optional: boolean): Record<string, string> | undefined {
  const f = map.get(name) ?? { notFound: true as const };
  if ('data' in f) return f.data;
  if ('notFound' in f) {
    if (optional) return undefined;
    // the message of kubelet's watch-based manager (GroupResource "configmap"/"secret")
    throw new EnvError(`${kind} "${name}" not found`);
  }
  throw new EnvError(f.error);
}

const decode = (b64: string) => Buffer.from(b64, 'base64').toString('utf8');

export function containerEnv(i: EnvInputs): ContainerEnv {
  const ns = i.pod.metadata.namespace ?? 'default';
  const svc = i.services ? serviceEnv(ns, i.pod.spec?.enableServiceLinks ?? true, i.services) : new Map<string, string>();
  const tmp = new Map<string, string>();
  const mapping = mappingFor(tmp, svc);

  for (const f of i.container.envFrom ?? []) {
    const ref = f.configMapRef ?? f.secretRef;
    if (!ref) continue;
    const isCm = !!f.configMapRef;
    const name = ref.name ?? '';
    const data = fetched(isCm ? 'configmap' : 'secret', isCm ? i.configMaps : i.secrets, name, ref.optional === true);
    if (!data) continue;
    // every key is kept: since RelaxedEnvironmentVariableValidation (beta, on in 1.32) kubelet no longer
    // skips keys that are not C-like names nor records InvalidEnvironmentVariableNames (kubernetes#130099)
    for (const [k, v] of Object.entries(data)) tmp.set((f.prefix ?? '') + k, isCm ? v : decode(v));
  }

  for (const e of i.container.env ?? []) {
    let v = e.value ?? '';
    if (v) v = expand(v, mapping);
    else if (e.valueFrom) {
      const from = e.valueFrom;
      if (from.fieldRef) v = fieldValue(from.fieldRef.fieldPath, i.pod, i.podIPs, i.hostIPs);
      else if (from.resourceFieldRef) v = resourceValue(from.resourceFieldRef, i.pod, i.container, i.allocatable);
      else if (from.configMapKeyRef ?? from.secretKeyRef) {
        const ref = (from.configMapKeyRef ?? from.secretKeyRef)!;
        const isCm = !!from.configMapKeyRef;
        const name = ref.name ?? '';
        const data = fetched(isCm ? 'configmap' : 'secret', isCm ? i.configMaps : i.secrets, name, ref.optional === true);
        if (!data) continue;
        const got = data[ref.key];
        if (got === undefined) {
          if (ref.optional === true) continue;
          throw new EnvError(`couldn't find key ${ref.key} in ${isCm ? 'ConfigMap' : 'Secret'} ${ns}/${name}`);
        }
        v = isCm ? got : decode(got);
      }
    }
    tmp.set(e.name, v);
  }

  const env = [...tmp].map(([key, value]) => ({ key, value }));
  for (const [key, value] of svc) if (!tmp.has(key)) env.push({ key, value });
  const final = mappingFor(new Map(env.map((e) => [e.key, e.value])));
  return {
    env,
    command: (i.container.command ?? []).map((s) => expand(s, final)),
    args: (i.container.args ?? []).map((s) => expand(s, final)),
  };
}
