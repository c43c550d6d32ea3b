// Kubelet 1.32's sysctl admission (pkg/kubelet/sysctl: safe_sysctls.go,
// allowlist.go): a pod may set only the sysctls of the node's allowlist — the
// safe set, plus the configuration's `allowedUnsafeSysctls` (names, or
// patterns ending in `*`), every entry known to be namespaced — and not a
// sysctl of a namespace the pod shares with the host (a net one with
// hostNetwork, an IPC one with hostIPC). A refused pod is rejected with reason
// `SysctlForbidden` (admission.ts). Pure but for the kernel version read at
// start (agent.ts).

import { isValidSysctlPattern, normalizeSysctlName, SYSCTL_MAX_LENGTH, SYSCTL_PATTERN_FMT, type SysctlNamespace, sysctlNamespace } from '../core/sysctl.js';

export const SYSCTL_FORBIDDEN = 'SysctlForbidden';

/**
 * the safe sysctls (namespaced, and with no effect on other pods), with the
 * kernel that namespaced them where that is newer than any kube supports
 */
const SAFE_SYSCTLS: { name: string; kernel?: [number, number] }[] = [
  { name: 'kernel.shm_rmid_forced' },
  { name: 'net.ipv4.ip_local_port_range' },
  { name: 'net.ipv4.tcp_syncookies' },
  { name: 'net.ipv4.ping_group_range' },
  { name: 'net.ipv4.ip_unprivileged_port_start' },
  { name: 'net.ipv4.ip_local_reserved_ports', kernel: [3, 16] },
  { name: 'net.ipv4.tcp_keepalive_time', kernel: [4, 5] },
  { name: 'net.ipv4.tcp_fin_timeout', kernel: [4, 6] },
  { name: 'net.ipv4.tcp_keepalive_intvl', kernel: [4, 5] },
  { name: 'net.ipv4.tcp_keepalive_probes', kernel: [4, 5] },
  { name: 'net.ipv4.tcp_rmem', kernel: [4, 15] },
  { name: 'net.ipv4.tcp_wmem', kernel: [4, 15] },
];

/** `major.minor` of a kernel release (`os.release()`: `6.1.0-18-amd64`), undefined when it is not one */
function kernelVersion(release: string): [number, number] | undefined {
  const m = /^(\d+)\.(\d+)/.exec(release);
  return m ? [Number(m[1]), Number(m[2])] : undefined;
}

/**
 * SafeSysctlAllowlist: none off Linux; the sysctls that need a newer kernel
 * than `release` (or an unreadable one) are left out, as kubelet logs and drops them
 */
export function safeSysctls(goos: string, release: string): string[] {
  if (goos !== 'linux') return [];
  const k = kernelVersion(release);
  return SAFE_SYSCTLS.filter(({ kernel }) => !kernel || (k !== undefined && (k[0] > kernel[0] || (k[0] === kernel[0] && k[1] >= kernel[1])))).map((s) => s.name);
}

/** the node's allowlist: names, and prefixes (patterns cut at their `*`), each with its namespace */
export interface SysctlAllowlist {
  names: ReadonlyMap<string, SysctlNamespace>;
  prefixes: ReadonlyMap<string, SysctlNamespace>;
}

/**
 * NewAllowlist: every entry a valid name or pattern known to be namespaced,
 * else kubelet's start-up error (thrown)
 */
export function sysctlAllowlist(patterns: readonly string[]): SysctlAllowlist {
  const names = new Map<string, SysctlNamespace>();
  const prefixes = new Map<string, SysctlNamespace>();
  for (const p of patterns) {
    if (!isValidSysctlPattern(p)) throw new Error(`sysctl ${JSON.stringify(p)} must have at most ${SYSCTL_MAX_LENGTH} characters and match regex ${SYSCTL_PATTERN_FMT}`);
    const { namespace, prefix, prefixed } = sysctlNamespace(p);
    if (!namespace) throw new Error(`the sysctls ${JSON.stringify(prefix)} are not known to be namespaced`);
    (prefixed ? prefixes : names).set(prefix, namespace);
  }
  return { names, prefixes };
}

/** validateSysctl: why `name` may not be set by a pod with these host namespaces, undefined when it may */
function refusal(list: SysctlAllowlist, raw: string, hostNetwork: boolean, hostIPC: boolean): string | undefined {
  const name = normalizeSysctlName(raw);
  let ns = list.names.get(name);
  if (ns === undefined) for (const [p, n] of list.prefixes) if (name.startsWith(p)) { ns = n; break; }
  if (ns === undefined) return `${JSON.stringify(name)} not allowlisted`;
  if ((ns === 'IPC' && hostIPC) || (ns === 'Net' && hostNetwork)) return `${JSON.stringify(name)} not allowed with host ${ns} enabled`;
  return undefined;
}

/** the allowlist's Admit: the first sysctl refused, as kubelet's message (`forbidden sysctl: "kernel.msgmax" not allowlisted`) */
export function sysctlRefusal(list: SysctlAllowlist, spec: { hostNetwork?: unknown; hostIPC?: unknown; securityContext?: { sysctls?: { name?: string }[] } }): string | undefined {
  for (const s of spec.securityContext?.sysctls ?? []) {
    const why = refusal(list, s.name ?? '', spec.hostNetwork === true, spec.hostIPC === true);
    if (why) return `forbidden sysctl: ${why}`;
  }
  return undefined;
}
