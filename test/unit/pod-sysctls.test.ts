// kube 1.32's validation of a pod's sysctls (validateSysctls, ValidateHostSysctl in
// pkg/apis/core/validation): the name format with kube's message, duplicates, the
// hostNetwork / hostIPC rules, the ratcheting of an update, and the same checks
// on a workload's pod template; and the shared name helpers (src/core/sysctl.ts).

import { describe, expect, it } from 'vitest';
import { isValidSysctlName, isValidSysctlPattern, normalizeSysctlName, sysctlNamespace } from '../../src/core/sysctl.js';
import { builtinDefinitions } from '../../src/registry/kinds/index.js';
import { validatePod } from '../../src/registry/kinds/pod-validation.js';
import type { ApiObject, ResourceDefinition } from '../../src/registry/types.js';

const REGEX = '^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$';
const FORMAT = `must have at most 253 characters and match regex ${REGEX}`;
const sysctls = (...names: string[]) => ({ securityContext: { sysctls: names.map((name) => ({ name, value: '1' })) } });
const pod = (spec: Record<string, unknown>) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'busybox' }], ...spec } }) as unknown as ApiObject;
const errors = (spec: Record<string, unknown>) => validatePod(pod(spec)).map((e) => `${e.field}: ${e.message}`);
const def = (group: string, kind: string): ResourceDefinition => builtinDefinitions().find((d) => d.group === group && d.kind === kind)!;

describe('sysctl names (src/core/sysctl.ts)', () => {
  it("accepts kube's names, dot- or slash-separated, up to 253 characters", () => {
    for (const ok of ['kernel.shm_rmid_forced', 'kernel/shm_rmid_forced', 'net.ipv4.conf.eno2/100.rp_filter', 'a', 'a-b_c.d9', 'x'.repeat(253)]) expect(isValidSysctlName(ok), ok).toBe(true);
    for (const bad of ['foo-', 'bar..', '-a', 'a.', '.a', 'A.b', 'a..b', 'a//b', 'a.*', 'x'.repeat(254), 'safe and unsafe']) expect(isValidSysctlName(bad), bad).toBe(false);
  });

  it('patterns may end in a segment with *', () => {
    for (const ok of ['net.*', 'kernel.shm*', 'kernel.msg*', 'fs.mqueue.*', 'kernel.shmmax', 'net/ipv4/*', '*']) expect(isValidSysctlPattern(ok), ok).toBe(true);
    for (const bad of ['net.*.a', 'net.**x', 'foo-', 'a..*']) expect(isValidSysctlPattern(bad), bad).toBe(false);
  });

  it("normalizes a slash-separated name to dots (sysctl.d(5): '.' and '/' swapped when '/' comes first)", () => {
    expect(normalizeSysctlName('kernel/shm_rmid_forced')).toBe('kernel.shm_rmid_forced');
    expect(normalizeSysctlName('net/ipv4/conf/eno2.100/rp_filter')).toBe('net.ipv4.conf.eno2/100.rp_filter');
    expect(normalizeSysctlName('net.ipv4.conf.eno2/100.rp_filter')).toBe('net.ipv4.conf.eno2/100.rp_filter');
    expect(normalizeSysctlName('kernel')).toBe('kernel');
  });

  it('knows the namespaced sysctls (IPC: kernel.sem, kernel.shm*, kernel.msg*, fs.mqueue.*; Net: net.*)', () => {
    expect(sysctlNamespace('kernel.shm_rmid_forced')).toEqual({ namespace: 'IPC', prefix: 'kernel.shm_rmid_forced', prefixed: false });
    expect(sysctlNamespace('kernel/sem').namespace).toBe('IPC');
    expect(sysctlNamespace('kernel.shm*')).toEqual({ namespace: 'IPC', prefix: 'kernel.shm', prefixed: true });
    expect(sysctlNamespace('fs.mqueue.msg_max').namespace).toBe('IPC');
    expect(sysctlNamespace('net/ipv4/*')).toEqual({ namespace: 'Net', prefix: 'net.ipv4.', prefixed: true });
    for (const none of ['kernel.hostname', 'vm.swappiness', 'kernel.sh*', 'net*', 'kernel.semx']) expect(sysctlNamespace(none).namespace, none).toBeUndefined();
  });
});

describe('pod sysctls (validateSysctls)', () => {
  it("kube's e2e \"should reject invalid sysctls\": the two bad names, nothing of the good ones", () => {
    const e = errors(sysctls('foo-', 'kernel.shmmax', 'safe-and-unsafe', 'bar..'));
    expect(e).toEqual([
      `spec.securityContext.sysctls[0].name: Invalid value: "foo-": ${FORMAT}`,
      `spec.securityContext.sysctls[3].name: Invalid value: "bar..": ${FORMAT}`,
    ]);
  });

  it('valid names pass, slashes too; a missing name is required; a repeated one a duplicate', () => {
    expect(errors(sysctls('kernel.shm_rmid_forced', 'kernel/msgmax', 'net.ipv4.ip_local_port_range', 'vm.swappiness'))).toEqual([]);
    expect(errors(sysctls('', 'kernel.msgmax', 'kernel.msgmax'))).toEqual([
      'spec.securityContext.sysctls[0].name: Required value',
      'spec.securityContext.sysctls[2].name: Duplicate value: "kernel.msgmax"',
    ]);
    expect(errors(sysctls('x'.repeat(254)))[0]).toContain(FORMAT);
  });

  it('hostNetwork forbids net.* sysctls and hostIPC the IPC ones, slash-separated names too', () => {
    expect(errors({ hostNetwork: true, ...sysctls('net.ipv4.ip_local_port_range', 'kernel.shm_rmid_forced', 'net/core/somaxconn') })).toEqual([
      `spec.securityContext.sysctls[0].name: Invalid value: "net.ipv4.ip_local_port_range": may not be specified when 'hostNetwork' is true`,
      `spec.securityContext.sysctls[2].name: Invalid value: "net/core/somaxconn": may not be specified when 'hostNetwork' is true`,
    ]);
    expect(errors({ hostIPC: true, ...sysctls('kernel.shm_rmid_forced', 'kernel.sem', 'fs.mqueue.msg_max', 'kernel.msgmax', 'net.ipv4.tcp_syncookies', 'kernel.hostname') })).toEqual(
      ['kernel.shm_rmid_forced', 'kernel.sem', 'fs.mqueue.msg_max', 'kernel.msgmax'].map((n, i) => `spec.securityContext.sysctls[${i}].name: Invalid value: "${n}": may not be specified when 'hostIPC' is true`),
    );
    // a bad name that is also a duplicate gives one error each way; with host namespaces both are reported
    expect(errors({ hostNetwork: true, ...sysctls('net.a', 'net.a') })).toHaveLength(3);
  });

  it("an update keeps an old spec's host-namespace sysctls (AllowNamespacedSysctlsForHostNetAndHostIPC); the format still counts", () => {
    const d = def('', 'Pod');
    const bad = pod({ hostNetwork: true, ...sysctls('net.core.somaxconn') });
    const fields = (o: ApiObject, old: ApiObject) => d.strategy.validateUpdate!(o, old).map((e) => e.field);
    expect(fields(bad, bad)).toEqual([]);
    // (the spec itself may not change on a pod update: kube's `spec` error comes too)
    expect(fields(bad, pod(sysctls('net.core.somaxconn')))).toContain('spec.securityContext.sysctls[0].name');
    expect(d.strategy.validate!(bad).map((e) => e.field)).toEqual(['spec.securityContext.sysctls[0].name']);
  });

  it("a workload's template is checked under its own path, and ratchets on update as a pod does", () => {
    const template = (spec: Record<string, unknown>) => ({ metadata: { labels: { app: 'a' } }, spec: { containers: [{ name: 'c', image: 'busybox' }], ...spec } });
    const dep = (spec: Record<string, unknown>) => ({ spec: { selector: { matchLabels: { app: 'a' } }, template: template(spec) } }) as unknown as ApiObject;
    const d = def('apps', 'Deployment');
    const messages = (e: { field: string; message: string }[]) => e.map((x) => `${x.field}: ${x.message}`);
    expect(messages(d.strategy.validate!(dep({ hostNetwork: true, ...sysctls('foo-', 'net.ipv4.tcp_syncookies') })))).toEqual([
      `spec.template.spec.securityContext.sysctls[0].name: Invalid value: "foo-": ${FORMAT}`,
      `spec.template.spec.securityContext.sysctls[1].name: Invalid value: "net.ipv4.tcp_syncookies": may not be specified when 'hostNetwork' is true`,
    ]);
    const hostNet = dep({ hostNetwork: true, ...sysctls('net.ipv4.tcp_syncookies') });
    expect(d.strategy.validateUpdate!(hostNet, hostNet)).toEqual([]);
    expect(d.strategy.validateUpdate!(hostNet, dep({}))).toHaveLength(1);
    const job = def('batch', 'Job');
    expect(messages(job.strategy.validate!({ spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'b' }], ...sysctls('bar..') } } } } as unknown as ApiObject))).toEqual([
      `spec.template.spec.securityContext.sysctls[0].name: Invalid value: "bar..": ${FORMAT}`,
    ]);
    const pt = def('', 'PodTemplate');
    expect(pt.strategy.validate!({ template: template(sysctls('foo-')) } as unknown as ApiObject).map((e) => e.field)).toEqual(['template.spec.securityContext.sysctls[0].name']);
  });
});
