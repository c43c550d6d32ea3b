// The node agent's sysctl admission (kubelet 1.32's pkg/kubelet/sysctl:
// safe_sysctls.go, allowlist.go; sysctl-allowlist.ts, admission.ts): the safe set
// and the kernels it needs, allowedUnsafeSysctls patterns, the host-namespace
// conflicts, kubelet's messages, and where the check stands among the others.
// Pure: no server, no runtime.
import { describe, expect, it } from 'vitest';
import { type AdmissionNode, admitPod } from '../../src/nodeagent/admission.js';
import { safeSysctls, sysctlAllowlist, sysctlRefusal } from '../../src/nodeagent/sysctl-allowlist.js';

type Obj = Record<string, any>;
const spec = (names: string[], extra: Obj = {}): Obj => ({ securityContext: { sysctls: names.map((name) => ({ name, value: '1' })) }, ...extra });
const SAFE_6 = sysctlAllowlist(safeSysctls('linux', '6.1.0-18-amd64'));

describe('the safe set (SafeSysctlAllowlist)', () => {
  it("kube 1.32's twelve sysctls on a current kernel", () => {
    expect(safeSysctls('linux', '6.1.0-18-amd64')).toEqual([
      'kernel.shm_rmid_forced', 'net.ipv4.ip_local_port_range', 'net.ipv4.tcp_syncookies', 'net.ipv4.ping_group_range', 'net.ipv4.ip_unprivileged_port_start',
      'net.ipv4.ip_local_reserved_ports', 'net.ipv4.tcp_keepalive_time', 'net.ipv4.tcp_fin_timeout', 'net.ipv4.tcp_keepalive_intvl', 'net.ipv4.tcp_keepalive_probes',
      'net.ipv4.tcp_rmem', 'net.ipv4.tcp_wmem',
    ]);
  });

  it('drops those an older (or unreadable) kernel has not namespaced; none off Linux', () => {
    expect(safeSysctls('linux', '4.5.0')).toEqual([
      'kernel.shm_rmid_forced', 'net.ipv4.ip_local_port_range', 'net.ipv4.tcp_syncookies', 'net.ipv4.ping_group_range', 'net.ipv4.ip_unprivileged_port_start',
      'net.ipv4.ip_local_reserved_ports', 'net.ipv4.tcp_keepalive_time', 'net.ipv4.tcp_keepalive_intvl', 'net.ipv4.tcp_keepalive_probes',
    ]);
    expect(safeSysctls('linux', '3.10.0-1160.el7.x86_64')).toHaveLength(5);
    expect(safeSysctls('linux', 'unknown')).toHaveLength(5);
    expect(safeSysctls('linux', '4.15.0')).toContain('net.ipv4.tcp_wmem');
    expect(safeSysctls('darwin', '23.0.0')).toEqual([]);
  });
});

describe('the allowlist (NewAllowlist, validateSysctl, Admit)', () => {
  it('admits the safe sysctls, dotted or slash-separated; refuses the others as not allowlisted', () => {
    expect(sysctlRefusal(SAFE_6, spec(['kernel.shm_rmid_forced', 'kernel/shm_rmid_forced', 'net/ipv4/tcp_rmem']))).toBeUndefined();
    expect(sysctlRefusal(SAFE_6, spec(['kernel.shm_rmid_forced', 'kernel.msgmax', 'vm.swappiness']))).toBe('forbidden sysctl: "kernel.msgmax" not allowlisted');
    expect(sysctlRefusal(SAFE_6, spec(['kernel/msgmax']))).toBe('forbidden sysctl: "kernel.msgmax" not allowlisted');
    expect(sysctlRefusal(SAFE_6, {})).toBeUndefined();
  });

  it('allowedUnsafeSysctls: names, and patterns ending in * matching by prefix', () => {
    const list = sysctlAllowlist([...safeSysctls('linux', '6.1'), 'kernel.msg*', 'net.core.somaxconn', 'fs.mqueue.*', 'kernel/sem']);
    expect(sysctlRefusal(list, spec(['kernel.msgmax', 'kernel.msgmnb', 'net.core.somaxconn', 'fs.mqueue.msg_max', 'kernel.sem']))).toBeUndefined();
    expect(sysctlRefusal(list, spec(['net.core.rmem_max']))).toBe('forbidden sysctl: "net.core.rmem_max" not allowlisted');
    expect(sysctlRefusal(list, spec(['kernel.shmmax']))).toBe('forbidden sysctl: "kernel.shmmax" not allowlisted');
  });

  it("a sysctl of a namespace shared with the host is refused: Net with hostNetwork, IPC with hostIPC", () => {
    const list = sysctlAllowlist([...safeSysctls('linux', '6.1'), 'kernel.msg*']);
    expect(sysctlRefusal(list, spec(['net.ipv4.tcp_syncookies'], { hostNetwork: true }))).toBe('forbidden sysctl: "net.ipv4.tcp_syncookies" not allowed with host Net enabled');
    expect(sysctlRefusal(list, spec(['kernel.shm_rmid_forced'], { hostIPC: true }))).toBe('forbidden sysctl: "kernel.shm_rmid_forced" not allowed with host IPC enabled');
    expect(sysctlRefusal(list, spec(['kernel.msgmax'], { hostIPC: true }))).toBe('forbidden sysctl: "kernel.msgmax" not allowed with host IPC enabled');
    expect(sysctlRefusal(list, spec(['kernel.shm_rmid_forced'], { hostNetwork: true }))).toBeUndefined();
    expect(sysctlRefusal(list, spec(['net.ipv4.tcp_syncookies'], { hostIPC: true }))).toBeUndefined();
  });

  it("refuses entries kubelet refuses at start, with its messages", () => {
    expect(() => sysctlAllowlist(['foo-'])).toThrow('sysctl "foo-" must have at most 253 characters and match regex');
    expect(() => sysctlAllowlist(['vm.swappiness'])).toThrow('the sysctls "vm.swappiness" are not known to be namespaced');
    expect(() => sysctlAllowlist(['net*'])).toThrow('the sysctls "net" are not known to be namespaced');
    expect(sysctlAllowlist(['net.*']).prefixes.get('net.')).toBe('Net');
  });
});

describe('admitPod: SysctlForbidden', () => {
  const node = (extra: Partial<AdmissionNode> = {}): AdmissionNode => ({
    node: { metadata: { name: 'n', labels: {} }, spec: {} }, allocatable: { cpu: '1', memory: '1Gi', pods: '10' }, pressure: [], os: 'linux', memoryPressureTaint: 'node.kubernetes.io/memory-pressure', ...extra,
  });
  const pod = (s: Obj) => ({ metadata: { name: 'p', namespace: 'd', uid: 'u' }, spec: { nodeName: 'n', containers: [{ name: 'c', image: 'busybox' }], ...s }, status: { phase: 'Pending' } });

  it("rejects with kubelet's reason and message; admits the safe set and what the node allows", () => {
    expect(admitPod(node(), [], pod(spec(['kernel.msgmax'])))).toEqual({ admit: false, reason: 'SysctlForbidden', message: 'forbidden sysctl: "kernel.msgmax" not allowlisted' });
    expect(admitPod(node(), [], pod(spec(['kernel.shm_rmid_forced', 'net.ipv4.tcp_keepalive_time'])))).toEqual({ admit: true });
    expect(admitPod(node({ sysctls: sysctlAllowlist(['kernel.msgmax']) }), [], pod(spec(['kernel.msgmax'])))).toEqual({ admit: true });
    // the node's own list replaces the default: without the safe set in it, a safe sysctl is refused
    expect(admitPod(node({ sysctls: sysctlAllowlist([]) }), [], pod(spec(['kernel.shm_rmid_forced'])))).toMatchObject({ reason: 'SysctlForbidden' });
  });

  it("comes after the eviction manager's check and before the predicates (kubelet's handler order)", () => {
    expect(admitPod(node({ pressure: ['DiskPressure'] }), [], pod(spec(['kernel.msgmax'])))).toMatchObject({ reason: 'Evicted' });
    expect(admitPod(node(), [], pod({ ...spec(['kernel.msgmax']), containers: [{ name: 'c', image: 'b', resources: { requests: { cpu: '5' } } }] }))).toMatchObject({ reason: 'SysctlForbidden' });
  });
});
