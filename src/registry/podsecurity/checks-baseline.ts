// The baseline level's checks of the Pod Security Standards (kube 1.32's
// pod-security-admission policy), each a pure function of the pod's metadata
// and spec giving kube's reason and detail. The restricted level replaces the
// capabilities, hostPath and seccomp ones with stricter checks
// (checks-restricted.ts).

import { type CheckFn, type Container, type PodSecurityContext, type PodSpec, type SELinuxOptions, type SecurityContext, allContainers, containerList, joinQuote, pluralize, sortedSet } from './pod-view.js';

/** "pod", `containers "a", "b"` joined with " and " (kube's bad-setter lists) */
function setters(pod: boolean, containers: string[]): string {
  const who: string[] = pod ? ['pod'] : [];
  if (containers.length > 0) who.push(containerList(containers));
  return who.join(' and ');
}

function badContainers(spec: PodSpec, bad: (c: Container) => boolean): string[] {
  return allContainers(spec).filter(bad).map((c) => c.name ?? '');
}

interface ExplicitBad {
  podBad: boolean;
  containers: string[];
  /** the bad types, sorted */
  values: string[];
}

/** a profile whose type the pod or its containers set to a value `ok` refuses (AppArmor, seccomp) */
function explicitBadTypes(spec: PodSpec, profile: (sc: SecurityContext | PodSecurityContext | null | undefined) => { type?: string } | null | undefined, ok: (t: string | undefined) => boolean): ExplicitBad {
  const values = new Set<string>();
  const p = profile(spec.securityContext);
  const podBad = p != null && !ok(p.type);
  if (podBad) values.add(p.type ?? '');
  const containers = badContainers(spec, (c) => {
    const cp = profile(c.securityContext);
    if (cp == null || ok(cp.type)) return false;
    values.add(cp.type ?? '');
    return true;
  });
  return { podBad, containers, values: sortedSet(values) };
}

const APPARMOR_ANNOTATION_PREFIX = 'container.apparmor.security.beta.kubernetes.io/';
const appArmorTypeOk = (t: string | undefined) => t === 'RuntimeDefault' || t === 'Localhost';
const appArmorAnnotationOk = (v: string) => v === '' || v === 'runtime/default' || v.startsWith('localhost/');

export const appArmorProfile: CheckFn = (meta, spec) => {
  const { podBad, containers, values } = explicitBadTypes(spec, (sc) => sc?.appArmorProfile, appArmorTypeOk);
  const annotations = Object.entries(meta.annotations ?? {})
    .filter(([k, v]) => k.startsWith(APPARMOR_ANNOTATION_PREFIX) && !appArmorAnnotationOk(v))
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
    .sort();
  let who = setters(podBad, containers);
  if (annotations.length > 0) who = [who, pluralize('annotation', 'annotations', annotations.length)].filter(Boolean).join(' and ');
  if (!who) return undefined;
  const bad = [...values, ...annotations];
  return {
    reason: pluralize('forbidden AppArmor profile', 'forbidden AppArmor profiles', bad.length),
    detail: `${who} must not set AppArmor profile type to ${joinQuote(bad)}`,
  };
};

const DEFAULT_CAPABILITIES = new Set(['AUDIT_WRITE', 'CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID', 'KILL', 'MKNOD', 'NET_BIND_SERVICE', 'SETFCAP', 'SETGID', 'SETPCAP', 'SETUID', 'SYS_CHROOT']);

export const capabilitiesBaseline: CheckFn = (_meta, spec) => {
  const caps = new Set<string>();
  const bad = badContainers(spec, (c) => {
    const added = (c.securityContext?.capabilities?.add ?? []).filter((cap) => !DEFAULT_CAPABILITIES.has(cap));
    for (const cap of added) caps.add(cap);
    return added.length > 0;
  });
  if (bad.length === 0) return undefined;
  return { reason: 'non-default capabilities', detail: `${containerList(bad)} must not include ${joinQuote(sortedSet(caps))} in securityContext.capabilities.add` };
};

export const hostNamespaces: CheckFn = (_meta, spec) => {
  const set = [spec.hostNetwork && 'hostNetwork=true', spec.hostPID && 'hostPID=true', spec.hostIPC && 'hostIPC=true'].filter((x): x is string => typeof x === 'string');
  return set.length > 0 ? { reason: 'host namespaces', detail: set.join(', ') } : undefined;
};

export const hostPathVolumes: CheckFn = (_meta, spec) => {
  const names = (spec.volumes ?? []).filter((v) => v.hostPath != null).map((v) => String(v.name ?? ''));
  return names.length > 0 ? { reason: 'hostPath volumes', detail: `${pluralize('volume', 'volumes', names.length)} ${joinQuote(names)}` } : undefined;
};

export const hostPorts: CheckFn = (_meta, spec) => {
  const ports = new Set<string>();
  const bad = badContainers(spec, (c) => {
    const used = (c.ports ?? []).filter((p) => (p.hostPort ?? 0) !== 0);
    for (const p of used) ports.add(String(p.hostPort));
    return used.length > 0;
  });
  if (bad.length === 0) return undefined;
  // the ports sort as strings, as kube's string set does
  const list = sortedSet(ports);
  return { reason: 'hostPort', detail: `${containerList(bad)} ${pluralize('uses', 'use', bad.length)} ${pluralize('hostPort', 'hostPorts', list.length)} ${list.join(', ')}` };
};

export const privileged: CheckFn = (_meta, spec) => {
  const bad = badContainers(spec, (c) => c.securityContext?.privileged === true);
  return bad.length > 0 ? { reason: 'privileged', detail: `${containerList(bad)} must not set securityContext.privileged=true` } : undefined;
};

export const procMount: CheckFn = (_meta, spec) => {
  const types = new Set<string>();
  const bad = badContainers(spec, (c) => {
    const pm = c.securityContext?.procMount;
    if (pm == null || pm === 'Default') return false;
    types.add(pm);
    return true;
  });
  return bad.length > 0 ? { reason: 'procMount', detail: `${containerList(bad)} must not set securityContext.procMount to ${joinQuote(sortedSet(types))}` } : undefined;
};

const SELINUX_TYPES = new Set(['', 'container_t', 'container_init_t', 'container_kvm_t']);

export const seLinuxOptions: CheckFn = (_meta, spec) => {
  const types = new Set<string>();
  let user = false;
  let role = false;
  const ok = (o: SELinuxOptions): boolean => {
    let valid = true;
    if (!SELINUX_TYPES.has(o.type ?? '')) {
      types.add(o.type ?? '');
      valid = false;
    }
    if (o.user) {
      user = true;
      valid = false;
    }
    if (o.role) {
      role = true;
      valid = false;
    }
    return valid;
  };
  const podOpts = spec.securityContext?.seLinuxOptions;
  const podBad = podOpts != null && !ok(podOpts);
  const bad = badContainers(spec, (c) => c.securityContext?.seLinuxOptions != null && !ok(c.securityContext.seLinuxOptions));
  const who = setters(podBad, bad);
  if (!who) return undefined;
  const what: string[] = [];
  if (types.size > 0) what.push(`${pluralize('type', 'types', types.size)} ${joinQuote(sortedSet(types))}`);
  if (user) what.push('user may not be set');
  if (role) what.push('role may not be set');
  return { reason: 'seLinuxOptions', detail: `${who} set forbidden securityContext.seLinuxOptions: ${what.join('; ')}` };
};

const seccompTypeOk = (t: string | undefined) => t === 'RuntimeDefault' || t === 'Localhost';

/** the explicit bad seccomp types of the pod and its containers; shared with the restricted check */
export function seccompExplicit(spec: PodSpec): ExplicitBad {
  return explicitBadTypes(spec, (sc) => sc?.seccompProfile, seccompTypeOk);
}

export const seccompProfileBaseline: CheckFn = (_meta, spec) => {
  const e = seccompExplicit(spec);
  const who = setters(e.podBad, e.containers);
  return who ? { reason: 'seccompProfile', detail: `${who} must not set securityContext.seccompProfile.type to ${joinQuote(e.values)}` } : undefined;
};

const SECCOMP_POD_ANNOTATION = 'seccomp.security.alpha.kubernetes.io/pod';
const SECCOMP_CONTAINER_ANNOTATION_PREFIX = 'container.seccomp.security.alpha.kubernetes.io/';
const seccompAnnotationOk = (v: string) => v === 'runtime/default' || v === 'docker/default' || v.startsWith('localhost/');

/** policy versions before v1.19 read the seccomp annotations instead of the fields */
export const seccompProfileBaselineAnnotations: CheckFn = (meta, spec) => {
  const a = meta.annotations ?? {};
  const bad = new Set<string>();
  const keys = [SECCOMP_POD_ANNOTATION, ...allContainers(spec).map((c) => SECCOMP_CONTAINER_ANNOTATION_PREFIX + (c.name ?? ''))];
  for (const k of keys) {
    const v = a[k];
    if (v !== undefined && !seccompAnnotationOk(v)) bad.add(`${k}=${JSON.stringify(v)}`);
  }
  if (bad.size === 0) return undefined;
  return { reason: 'seccompProfile', detail: `forbidden ${pluralize('annotation', 'annotations', bad.size)} ${sortedSet(bad).join(', ')}` };
};

const SAFE_SYSCTLS: [string, number][] = [
  ['kernel.shm_rmid_forced', 0], ['net.ipv4.ip_local_port_range', 0], ['net.ipv4.tcp_syncookies', 0],
  ['net.ipv4.ping_group_range', 0], ['net.ipv4.ip_unprivileged_port_start', 0],
  ['net.ipv4.ip_local_reserved_ports', 27],
  ['net.ipv4.tcp_keepalive_time', 29], ['net.ipv4.tcp_fin_timeout', 29], ['net.ipv4.tcp_keepalive_intvl', 29], ['net.ipv4.tcp_keepalive_probes', 29],
  ['net.ipv4.tcp_rmem', 32], ['net.ipv4.tcp_wmem', 32],
];

/** the sysctls check of a policy version (the safe set grew in v1.27, v1.29 and v1.32) */
export function sysctlsFor(minor: number): CheckFn {
  const safe = new Set(SAFE_SYSCTLS.filter(([, since]) => since <= minor).map(([n]) => n));
  return (_meta, spec) => {
    const bad = (spec.securityContext?.sysctls ?? []).map((s) => s.name ?? '').filter((n) => !safe.has(n));
    return bad.length > 0 ? { reason: 'forbidden sysctls', detail: bad.join(', ') } : undefined;
  };
}

export const windowsHostProcess: CheckFn = (_meta, spec) => {
  const bad = badContainers(spec, (c) => c.securityContext?.windowsOptions?.hostProcess === true);
  const who = setters(spec.securityContext?.windowsOptions?.hostProcess === true, bad);
  return who ? { reason: 'hostProcess', detail: `${who} must not set securityContext.windowsOptions.hostProcess=true` } : undefined;
};
