// The Pod Security Standards checks (src/registry/podsecurity/): each
// check's reason and detail as kube 1.32 words them, the order of a level's
// checks, the version rules and the namespace labels' parsing.

import { describe, expect, it } from 'vitest';
import { evaluatePod, forbiddenDetail } from '../../src/registry/podsecurity/evaluator.js';
import { existingPodWarnings } from '../../src/registry/podsecurity/namespace-check.js';
import type { PodMeta, PodSpec } from '../../src/registry/podsecurity/pod-view.js';
import { LATEST, type Level, policyFromLabels } from '../../src/registry/podsecurity/policy.js';
import type { ApiObject } from '../../src/registry/types.js';

const lv = (level: Level, minor?: number) => ({ level, version: minor === undefined ? LATEST : { latest: false as const, minor } });
const detail = (level: Level, spec: PodSpec, meta: PodMeta = {}, minor?: number) => forbiddenDetail(evaluatePod(lv(level, minor), meta, spec));

/** a pod that passes restricted */
const good = (): PodSpec => ({
  securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
  containers: [{ name: 'c', image: 'x', securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } }],
});

describe('Pod Security checks', () => {
  it('privileged allows everything; a bare pod passes baseline and fails restricted as kube words it', () => {
    const bare: PodSpec = { containers: [{ name: 'c', image: 'x' }] };
    expect(detail('privileged', { ...bare, hostNetwork: true })).toBe('');
    expect(detail('baseline', bare)).toBe('');
    expect(detail('restricted', bare)).toBe(
      'allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), '
      + 'unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), '
      + 'runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), '
      + 'seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")');
    expect(detail('restricted', good())).toBe('');
  });

  const baseline: [string, PodSpec, PodMeta, string][] = [
    ['host namespaces', { hostNetwork: true, hostPID: true, hostIPC: true }, {}, 'host namespaces (hostNetwork=true, hostPID=true, hostIPC=true)'],
    ['privileged', { initContainers: [{ name: 'i', securityContext: { privileged: true } }], containers: [{ name: 'a', securityContext: { privileged: true } }] }, {},
      'privileged (containers "i", "a" must not set securityContext.privileged=true)'],
    ['capabilities', { containers: [{ name: 'a', securityContext: { capabilities: { add: ['NET_RAW', 'CHOWN', 'SYS_ADMIN'] } } }] }, {},
      'non-default capabilities (container "a" must not include "NET_RAW", "SYS_ADMIN" in securityContext.capabilities.add)'],
    ['hostPath', { volumes: [{ name: 'h', hostPath: { path: '/' } }, { name: 'e', emptyDir: {} }, { name: 'h2', hostPath: { path: '/x' } }] }, {}, 'hostPath volumes (volumes "h", "h2")'],
    ['host ports (sorted as text)', { containers: [{ name: 'a', ports: [{ hostPort: 8080 }, { hostPort: 0 }] }, { name: 'b', ports: [{ hostPort: 10000 }] }] }, {},
      'hostPort (containers "a", "b" use hostPorts 10000, 8080)'],
    ['one host port', { containers: [{ name: 'a', ports: [{ hostPort: 80 }] }] }, {}, 'hostPort (container "a" uses hostPort 80)'],
    ['AppArmor', { securityContext: { appArmorProfile: { type: 'Unconfined' } } }, { annotations: { 'container.apparmor.security.beta.kubernetes.io/a': 'unconfined' } },
      // kube quotes the annotation without escaping its own quotes
      'forbidden AppArmor profiles (pod and annotation must not set AppArmor profile type to "Unconfined", "container.apparmor.security.beta.kubernetes.io/a="unconfined"")'],
    ['SELinux', { securityContext: { seLinuxOptions: { type: 'foo', user: 'u' } }, containers: [{ name: 'a', securityContext: { seLinuxOptions: { role: 'r' } } }] }, {},
      'seLinuxOptions (pod and container "a" set forbidden securityContext.seLinuxOptions: type "foo"; user may not be set; role may not be set)'],
    ['procMount', { containers: [{ name: 'a', securityContext: { procMount: 'Unmasked' } }, { name: 'b', securityContext: { procMount: 'Default' } }] }, {},
      'procMount (container "a" must not set securityContext.procMount to "Unmasked")'],
    ['seccomp', { securityContext: { seccompProfile: { type: 'Unconfined' } } }, {}, 'seccompProfile (pod must not set securityContext.seccompProfile.type to "Unconfined")'],
    ['sysctls', { securityContext: { sysctls: [{ name: 'kernel.msgmax' }, { name: 'net.ipv4.tcp_syncookies' }, { name: 'a.b' }] } }, {}, 'forbidden sysctls (kernel.msgmax, a.b)'],
    ['hostProcess', { securityContext: { windowsOptions: { hostProcess: true } }, containers: [{ name: 'a', securityContext: { windowsOptions: { hostProcess: true } } }] }, {},
      'hostProcess (pod and container "a" must not set securityContext.windowsOptions.hostProcess=true)'],
  ];
  it.each(baseline)('baseline: %s', (_n, spec, meta, want) => {
    expect(detail('baseline', spec, meta)).toBe(want);
  });

  it('reports baseline checks in kube\'s order (by check id)', () => {
    const spec: PodSpec = { hostPID: true, securityContext: { sysctls: [{ name: 'x' }] }, containers: [{ name: 'a', ports: [{ hostPort: 1 }], securityContext: { privileged: true, capabilities: { add: ['SYS_ADMIN'] } } }] };
    expect(evaluatePod(lv('baseline'), {}, spec).map((v) => v.reason)).toEqual(['non-default capabilities', 'host namespaces', 'hostPort', 'privileged', 'forbidden sysctls']);
  });

  const restricted: [string, PodSpec, string][] = [
    ['volume types (replaces hostPath)', { ...good(), volumes: [{ name: 'n', nfs: {} }, { name: 'h', hostPath: {} }, { name: 's', secret: {} }] }, 'restricted volume types (volumes ["h" "n"] have restricted types)'],
    ['capabilities added', { ...good(), containers: [{ name: 'c', securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'], add: ['NET_BIND_SERVICE', 'NET_RAW'] } } }] },
      'unrestricted capabilities (container "c" must not include "NET_RAW" in securityContext.capabilities.add)'],
    ['runAsNonRoot false', { ...good(), securityContext: { runAsNonRoot: false, seccompProfile: { type: 'Localhost' } } }, 'runAsNonRoot != true (pod must not set securityContext.runAsNonRoot=false)'],
    ['runAsUser 0', { ...good(), securityContext: { runAsNonRoot: true, runAsUser: 0, seccompProfile: { type: 'RuntimeDefault' } } }, 'runAsUser=0 (pod must not set runAsUser=0)'],
    ['seccomp explicit', { ...good(), containers: [{ name: 'c', securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, seccompProfile: { type: 'Unconfined' } } }] },
      'seccompProfile (container "c" must not set securityContext.seccompProfile.type to "Unconfined")'],
  ];
  it.each(restricted)('restricted: %s', (_n, spec, want) => {
    expect(detail('restricted', spec)).toBe(want);
  });

  it('exempts Windows pods from the Linux-only restricted checks (from v1.25)', () => {
    const win: PodSpec = { os: { name: 'windows' }, securityContext: { runAsNonRoot: true }, containers: [{ name: 'c' }] };
    expect(detail('restricted', win)).toBe('');
    expect(detail('restricted', win, {}, 24)).toContain('allowPrivilegeEscalation != false');
  });

  it('applies a check from its first policy version', () => {
    const root: PodSpec = { ...good(), securityContext: { runAsNonRoot: true, runAsUser: 0, seccompProfile: { type: 'RuntimeDefault' } } };
    expect(detail('restricted', root, {}, 22)).toBe('');
    expect(detail('restricted', root, {}, 23)).toContain('runAsUser=0');
    // before v1.19 seccomp is read from the annotations
    const annotated = { annotations: { 'seccomp.security.alpha.kubernetes.io/pod': 'unconfined' } };
    expect(detail('baseline', {}, annotated, 18)).toBe('seccompProfile (forbidden annotation seccomp.security.alpha.kubernetes.io/pod="unconfined")');
    expect(detail('baseline', {}, annotated, 19)).toBe('');
    const sysctl: PodSpec = { securityContext: { sysctls: [{ name: 'net.ipv4.tcp_keepalive_time' }] } };
    expect(detail('baseline', sysctl, {}, 28)).toBe('forbidden sysctls (net.ipv4.tcp_keepalive_time)');
    expect(detail('baseline', sysctl, {}, 29)).toBe('');
  });
});

describe('Pod Security labels', () => {
  it('reads levels and versions, defaulting to privileged:latest', () => {
    const { policy, errors } = policyFromLabels({ 'pod-security.kubernetes.io/enforce': 'baseline', 'pod-security.kubernetes.io/warn-version': 'v1.25' });
    expect(errors).toEqual([]);
    expect(policy.enforce).toEqual({ level: 'baseline', version: LATEST });
    expect(policy.warn).toEqual({ level: 'privileged', version: { latest: false, minor: 25 } });
  });

  it('names bad values as kube does; a bad enforce level enforces restricted, bad audit and warn levels fail open', () => {
    const { policy, errors } = policyFromLabels({ 'pod-security.kubernetes.io/enforce': 'foo', 'pod-security.kubernetes.io/enforce-version': '1.2', 'pod-security.kubernetes.io/warn': 'x' });
    expect(errors.map((e) => `${e.field}: ${e.message}`)).toEqual([
      'metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "foo": must be one of privileged, baseline, restricted',
      'metadata.labels[pod-security.kubernetes.io/enforce-version]: Invalid value: "1.2": must be "latest" or "v1.x"',
      'metadata.labels[pod-security.kubernetes.io/warn]: Invalid value: "x": must be one of privileged, baseline, restricted',
    ]);
    expect(policy.enforce.level).toBe('restricted');
    expect(policy.warn.level).toBe('privileged');
  });
});

describe('existing pods under a new enforce level', () => {
  const pod = (name: string, spec: PodSpec) => ({ metadata: { name }, spec }) as unknown as ApiObject;
  it('groups pods by their reasons and names the first', () => {
    const hostNet = { hostNetwork: true, containers: [{ name: 'c' }] };
    const priv = { containers: [{ name: 'c', securityContext: { privileged: true } }] };
    const w = existingPodWarnings('ns', lv('baseline'), [pod('b', hostNet), pod('a', hostNet), pod('c', hostNet), pod('p', priv), pod('ok', { containers: [{ name: 'c' }] })]);
    expect(w).toEqual([
      'existing pods in namespace "ns" violate the new PodSecurity enforce level "baseline:latest"',
      'a (and 2 other pods): host namespaces',
      'p: privileged',
    ]);
    expect(existingPodWarnings('ns', lv('baseline'), [pod('a', hostNet), pod('b', hostNet)])[1]).toBe('a (and 1 other pod): host namespaces');
  });

  it('checks at most 3000 pods, one per controller before the other replicas', () => {
    const replica = (i: number) => ({ metadata: { name: `r${String(i).padStart(4, '0')}`, ownerReferences: [{ uid: 'rs', controller: true }] }, spec: { hostPID: true } }) as unknown as ApiObject;
    const pods = [...Array.from({ length: 3001 }, (_, i) => replica(i)), pod('z', { containers: [{ name: 'c', securityContext: { privileged: true } }] })];
    expect(existingPodWarnings('ns', lv('baseline'), pods)).toEqual([
      'new PodSecurity enforce level only checked against the first 3000 of 3002 existing pods',
      'existing pods in namespace "ns" violate the new PodSecurity enforce level "baseline:latest"',
      'r0000 (and 2998 other pods): host namespaces',
      'z: privileged',
    ]);
  });
});
