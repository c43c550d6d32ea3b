// The Pod Security Standards' checks of a pod spec (kube's pod-security-admission
// policy package, "latest" version), each with kube's reason and detail text.
// A level runs its checks in the order of their ids, as kube's evaluator does,
// so a refusal lists the violations as kube does.

type Obj = Record<string, unknown>;

export type Level = 'privileged' | 'baseline' | 'restricted';

export interface Violation {
  reason: string;
  detail: string;
}

interface Container {
  name: string;
  sc: Obj;
  ports: Obj[];
}

interface PodView {
  meta: Obj;
  spec: Obj;
  sc: Obj;
  containers: Container[];
}

const obj = (v: unknown): Obj => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.map(obj) : []);

function view(pod: Obj): PodView {
  const spec = obj(pod.spec);
  const containers = ['initContainers', 'containers', 'ephemeralContainers'].flatMap((k) =>
    list(spec[k]).map((c) => ({ name: String(c.name ?? ''), sc: obj(c.securityContext), ports: list(c.ports) })),
  );
  return { meta: obj(pod.metadata), spec, sc: obj(spec.securityContext), containers };
}

/** `container "a"` / `containers "a", "b"` */
function names(noun: string, ns: string[]): string {
  return `${noun}${ns.length === 1 ? '' : 's'} ${ns.map((n) => JSON.stringify(n)).join(', ')}`;
}

/** kube's pluralised "container(s) ... must" phrase */
function containersMust(ns: string[], what: string): string {
  return `${names('container', ns)} must ${what}`;
}

const BASELINE_CAPS = new Set(['AUDIT_WRITE', 'CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID', 'KILL', 'MKNOD', 'NET_BIND_SERVICE', 'SETFCAP', 'SETGID', 'SETPCAP', 'SETUID', 'SYS_CHROOT']);
const SAFE_SYSCTLS = new Set(['kernel.shm_rmid_forced', 'net.ipv4.ip_local_port_range', 'net.ipv4.ip_unprivileged_port_start', 'net.ipv4.tcp_syncookies', 'net.ipv4.ping_group_range', 'net.ipv4.ip_local_reserved_ports', 'net.ipv4.tcp_keepalive_time', 'net.ipv4.tcp_fin_timeout', 'net.ipv4.tcp_keepalive_intvl', 'net.ipv4.tcp_keepalive_probes']);
const RESTRICTED_VOLUMES = new Set(['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'persistentVolumeClaim', 'projected', 'secret']);

function added(c: Container): string[] {
  const a = obj(c.sc.capabilities).add;
  return Array.isArray(a) ? a.map(String) : [];
}

type Check = (p: PodView) => Violation | undefined;

const hostNamespaces: Check = (p) => {
  const on = (['hostNetwork', 'hostPID', 'hostIPC'] as const).filter((k) => p.spec[k] === true);
  return on.length === 0 ? undefined : { reason: 'host namespaces', detail: on.map((k) => `${k}=true`).join(', ') };
};

const privileged: Check = (p) => {
  const bad = p.containers.filter((c) => c.sc.privileged === true).map((c) => c.name);
  return bad.length === 0 ? undefined : { reason: 'privileged', detail: containersMust(bad, 'not set securityContext.privileged=true') };
};

const capabilitiesBaseline: Check = (p) => {
  const bad = new Set<string>();
  const who: string[] = [];
  for (const c of p.containers) {
    const extra = added(c).filter((x) => !BASELINE_CAPS.has(x));
    if (extra.length === 0) continue;
    who.push(c.name);
    for (const x of extra) bad.add(x);
  }
  if (who.length === 0) return undefined;
  return { reason: 'non-default capabilities', detail: containersMust(who, `not include ${[...bad].map((x) => JSON.stringify(x)).join(', ')} in securityContext.capabilities.add`) };
};

const hostPathVolumes: Check = (p) => {
  const bad = list(p.spec.volumes).filter((v) => v.hostPath !== undefined).map((v) => String(v.name ?? ''));
  return bad.length === 0 ? undefined : { reason: 'hostPath volumes', detail: names('volume', bad) };
};

const hostPorts: Check = (p) => {
  const users: string[] = [];
  const ports: string[] = [];
  for (const c of p.containers) {
    const hp = c.ports.map((x) => Number(x.hostPort ?? 0)).filter((n) => n !== 0);
    if (hp.length === 0) continue;
    users.push(c.name);
    ports.push(...hp.map(String));
  }
  return users.length === 0 ? undefined : { reason: 'hostPort', detail: `${names('container', users)} ${users.length === 1 ? 'uses' : 'use'} ${ports.length === 1 ? 'hostPort' : 'hostPorts'} ${ports.join(', ')}` };
};

const hostProcess: Check = (p) => {
  const podSet = obj(p.sc.windowsOptions).hostProcess === true;
  const bad = p.containers.filter((c) => obj(c.sc.windowsOptions).hostProcess === true).map((c) => c.name);
  if (!podSet && bad.length === 0) return undefined;
  const parts = [...(podSet ? ['pod must not set securityContext.windowsOptions.hostProcess=true'] : []), ...(bad.length ? [containersMust(bad, 'not set securityContext.windowsOptions.hostProcess=true')] : [])];
  return { reason: 'hostProcess', detail: parts.join(' and ') };
};

const procMount: Check = (p) => {
  const bad = p.containers.filter((c) => c.sc.procMount !== undefined && c.sc.procMount !== 'Default').map((c) => c.name);
  return bad.length === 0 ? undefined : { reason: 'procMount', detail: containersMust(bad, 'not set securityContext.procMount to "Unmasked"') };
};

const sysctls: Check = (p) => {
  const bad = list(p.sc.sysctls).map((s) => String(s.name ?? '')).filter((n) => !SAFE_SYSCTLS.has(n));
  return bad.length === 0 ? undefined : { reason: 'forbidden sysctls', detail: bad.join(', ') };
};

function seccompType(sc: Obj): string | undefined {
  const t = obj(sc.seccompProfile).type;
  return typeof t === 'string' ? t : undefined;
}

const seccompBaseline: Check = (p) => {
  const parts: string[] = [];
  if (seccompType(p.sc) === 'Unconfined') parts.push('pod must not set securityContext.seccompProfile.type to "Unconfined"');
  const bad = p.containers.filter((c) => seccompType(c.sc) === 'Unconfined').map((c) => c.name);
  if (bad.length > 0) parts.push(containersMust(bad, 'not set securityContext.seccompProfile.type to "Unconfined"'));
  return parts.length === 0 ? undefined : { reason: 'seccompProfile', detail: parts.join('; ') };
};

const allowPrivilegeEscalation: Check = (p) => {
  const bad = p.containers.filter((c) => c.sc.allowPrivilegeEscalation !== false).map((c) => c.name);
  return bad.length === 0 ? undefined : { reason: 'allowPrivilegeEscalation != false', detail: containersMust(bad, 'set securityContext.allowPrivilegeEscalation=false') };
};

const capabilitiesRestricted: Check = (p) => {
  const noDrop = p.containers.filter((c) => {
    const d = obj(c.sc.capabilities).drop;
    return !(Array.isArray(d) && d.map(String).includes('ALL'));
  }).map((c) => c.name);
  const extraNames: string[] = [];
  const extra = new Set<string>();
  for (const c of p.containers) {
    const x = added(c).filter((a) => a !== 'NET_BIND_SERVICE');
    if (x.length === 0) continue;
    extraNames.push(c.name);
    for (const a of x) extra.add(a);
  }
  const parts: string[] = [];
  if (noDrop.length > 0) parts.push(containersMust(noDrop, 'set securityContext.capabilities.drop=["ALL"]'));
  if (extraNames.length > 0) parts.push(containersMust(extraNames, `not include ${[...extra].map((x) => JSON.stringify(x)).join(', ')} in securityContext.capabilities.add`));
  return parts.length === 0 ? undefined : { reason: 'unrestricted capabilities', detail: parts.join('; ') };
};

const restrictedVolumes: Check = (p) => {
  const bad: string[] = [];
  const types = new Set<string>();
  for (const v of list(p.spec.volumes)) {
    const t = Object.keys(v).find((k) => k !== 'name');
    if (t === undefined || RESTRICTED_VOLUMES.has(t)) continue;
    bad.push(String(v.name ?? ''));
    types.add(t);
  }
  if (bad.length === 0) return undefined;
  return { reason: 'restricted volume types', detail: `${names('volume', bad)} ${bad.length === 1 ? 'uses' : 'use'} restricted volume ${types.size === 1 ? 'type' : 'types'} ${[...types].map((t) => JSON.stringify(t)).join(', ')}` };
};

const runAsNonRoot: Check = (p) => {
  const podValue = p.sc.runAsNonRoot;
  const parts: string[] = [];
  if (podValue === false) parts.push('pod must not set securityContext.runAsNonRoot=false');
  const explicitFalse = p.containers.filter((c) => c.sc.runAsNonRoot === false).map((c) => c.name);
  if (explicitFalse.length > 0) parts.push(containersMust(explicitFalse, 'not set securityContext.runAsNonRoot=false'));
  if (podValue !== true) {
    const unset = p.containers.filter((c) => c.sc.runAsNonRoot === undefined).map((c) => c.name);
    if (unset.length > 0) parts.push(`pod or ${containersMust(unset, 'set securityContext.runAsNonRoot=true')}`);
  }
  return parts.length === 0 ? undefined : { reason: 'runAsNonRoot != true', detail: parts.join('; ') };
};

const runAsUser: Check = (p) => {
  const parts: string[] = [];
  if (p.sc.runAsUser === 0) parts.push('pod must not set runAsUser=0');
  const bad = p.containers.filter((c) => c.sc.runAsUser === 0).map((c) => c.name);
  if (bad.length > 0) parts.push(containersMust(bad, 'not set runAsUser=0'));
  return parts.length === 0 ? undefined : { reason: 'runAsUser=0', detail: parts.join('; ') };
};

const seccompRestricted: Check = (p) => {
  const ok = (t: string | undefined) => t === 'RuntimeDefault' || t === 'Localhost';
  const podType = seccompType(p.sc);
  const parts: string[] = [];
  if (podType !== undefined && !ok(podType)) parts.push(`pod must not set securityContext.seccompProfile.type to ${JSON.stringify(podType)}`);
  const badSet = p.containers.filter((c) => seccompType(c.sc) !== undefined && !ok(seccompType(c.sc))).map((c) => c.name);
  if (badSet.length > 0) parts.push(containersMust(badSet, `not set securityContext.seccompProfile.type to ${JSON.stringify(seccompType(p.containers.find((c) => c.name === badSet[0])!.sc))}`));
  if (podType === undefined) {
    const unset = p.containers.filter((c) => seccompType(c.sc) === undefined).map((c) => c.name);
    if (unset.length > 0) parts.push(`pod or ${containersMust(unset, 'set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"')}`);
  }
  return parts.length === 0 ? undefined : { reason: 'seccompProfile', detail: parts.join('; ') };
};

// by check id, as kube orders them (baseline's capabilities and seccomp are replaced at restricted)
const BASELINE: [string, Check][] = [
  ['capabilities_baseline', capabilitiesBaseline],
  ['hostNamespaces', hostNamespaces],
  ['hostPathVolumes', hostPathVolumes],
  ['hostPorts', hostPorts],
  ['hostProcess', hostProcess],
  ['privileged', privileged],
  ['procMount', procMount],
  ['seLinuxOptions', () => undefined],
  ['seccompProfile_baseline', seccompBaseline],
  ['sysctls', sysctls],
];
const RESTRICTED_ONLY: [string, Check][] = [
  ['allowPrivilegeEscalation', allowPrivilegeEscalation],
  ['capabilities_restricted', capabilitiesRestricted],
  ['restrictedVolumes', restrictedVolumes],
  ['runAsNonRoot', runAsNonRoot],
  ['runAsUser', runAsUser],
  ['seccompProfile_restricted', seccompRestricted],
];
// code-unit order of the ids ("seLinuxOptions" before "seccompProfile_restricted")
const RESTRICTED: [string, Check][] = [...BASELINE.filter(([id]) => id !== 'capabilities_baseline' && id !== 'seccompProfile_baseline'), ...RESTRICTED_ONLY].sort((x, y) =>
  x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0,
);

/** the violations of `pod` at `level`, in kube's order (none at privileged) */
export function violations(level: Level, pod: Obj): Violation[] {
  if (level === 'privileged') return [];
  const p = view(pod);
  const out: Violation[] = [];
  for (const [, check] of level === 'baseline' ? BASELINE : RESTRICTED) {
    const v = check(p);
    if (v) out.push(v);
  }
  return out;
}
