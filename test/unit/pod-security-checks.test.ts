// The Pod Security Standards' checks with kube's reasons, details and order.

import { describe, expect, it } from 'vitest';
import { violations } from '../../src/registry/pod-security/checks.js';

const pod = (spec: Record<string, unknown>) => ({ metadata: { name: 'p' }, spec });

describe('pod security checks', () => {
  it('restricted: a plain pod fails the four checks kube lists, in its order', () => {
    expect(violations('restricted', pod({ containers: [{ name: 'nginx', image: 'nginx' }] }))).toEqual([
      { reason: 'allowPrivilegeEscalation != false', detail: 'container "nginx" must set securityContext.allowPrivilegeEscalation=false' },
      { reason: 'unrestricted capabilities', detail: 'container "nginx" must set securityContext.capabilities.drop=["ALL"]' },
      { reason: 'runAsNonRoot != true', detail: 'pod or container "nginx" must set securityContext.runAsNonRoot=true' },
      { reason: 'seccompProfile', detail: 'pod or container "nginx" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"' },
    ]);
  });

  it('restricted: a compliant pod (pod-level seccomp and runAsNonRoot) passes; NET_BIND_SERVICE may be added', () => {
    const sc = { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'], add: ['NET_BIND_SERVICE'] } };
    expect(violations('restricted', pod({ securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } }, containers: [{ name: 'a', securityContext: sc }], volumes: [{ name: 'v', emptyDir: {} }] }))).toEqual([]);
  });

  it('baseline: host namespaces, privileged, capabilities, hostPath and hostPort; restricted adds the volume type', () => {
    const spec = {
      hostNetwork: true,
      hostPID: true,
      containers: [{ name: 'a', securityContext: { privileged: true, capabilities: { add: ['NET_ADMIN'] } }, ports: [{ containerPort: 80, hostPort: 8080 }] }],
      volumes: [{ name: 'root', hostPath: { path: '/' } }],
    };
    expect(violations('baseline', pod(spec))).toEqual([
      { reason: 'non-default capabilities', detail: 'container "a" must not include "NET_ADMIN" in securityContext.capabilities.add' },
      { reason: 'host namespaces', detail: 'hostNetwork=true, hostPID=true' },
      { reason: 'hostPath volumes', detail: 'volume "root"' },
      { reason: 'hostPort', detail: 'container "a" uses hostPort 8080' },
      { reason: 'privileged', detail: 'container "a" must not set securityContext.privileged=true' },
    ]);
    expect(violations('restricted', pod(spec)).map((v) => v.reason)).toContain('restricted volume types');
    expect(violations('privileged', pod(spec))).toEqual([]);
  });

  it('checks init and ephemeral containers too, naming several containers at once', () => {
    const spec = { containers: [{ name: 'a' }], ephemeralContainers: [{ name: 'dbg' }] };
    expect(violations('restricted', pod(spec))[0]).toEqual({ reason: 'allowPrivilegeEscalation != false', detail: 'containers "a", "dbg" must set securityContext.allowPrivilegeEscalation=false' });
  });
});
