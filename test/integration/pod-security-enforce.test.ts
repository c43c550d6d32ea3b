// kube's PodSecurity admission with the real kubectl 1.32: a namespace's
// enforce label refuses a pod that violates its level with kube's message, the
// warn label warns, and kubectl debug's restricted profile adds an ephemeral
// container a restricted namespace accepts while the legacy profile's is refused.

import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKubectl } from '../helpers/kubectl.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

let t: TestServer;
const k = (...args: string[]) => runKubectl(t.server.kubeconfigPath, args);

beforeAll(async () => {
  t = await startTestServer({ apiDomain: 'k8s.io' });
  for (const [ns, label] of [['strict', 'enforce=restricted'], ['warned', 'warn=baseline']]) {
    expect((await k('create', 'namespace', ns!)).code).toBe(0);
    expect((await k('label', 'namespace', ns!, `pod-security.kubernetes.io/${label}`)).code).toBe(0);
  }
});
afterAll(async () => {
  await t?.stop();
});

describe('PodSecurity', () => {
  it('enforce=restricted refuses a plain pod with kube\'s 403', async () => {
    const r = await k('run', 'plain', '--image=nginx', '-n', 'strict');
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(
      'pods "plain" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "plain" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "plain" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "plain" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "plain" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
    );
  });

  it('a compliant pod is created; kubectl debug adds a restricted ephemeral container but not a legacy one', async () => {
    const f = join(t.dataDir, 'ok-pod.json');
    await writeFile(f, JSON.stringify({
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'ok', namespace: 'strict' },
      spec: {
        securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
        containers: [{ name: 'c', image: 'busybox', securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } }],
      },
    }));
    expect((await k('create', '-f', f)).code).toBe(0);
    const legacy = await k('debug', 'ok', '-n', 'strict', '--image=busybox', '--attach=false', '-c', 'dbg1', '--profile=legacy');
    expect(legacy.code).not.toBe(0);
    expect(legacy.stderr).toContain('violates PodSecurity "restricted:latest"');
    const restricted = await k('debug', 'ok', '-n', 'strict', '--image=busybox', '--attach=false', '-c', 'dbg2', '--profile=restricted');
    expect(restricted.code, restricted.stderr).toBe(0);
    expect((await k('get', 'pod', 'ok', '-n', 'strict', '-o', 'jsonpath={.spec.ephemeralContainers[*].name}')).stdout).toBe('dbg2');
  });

  it('warn=baseline creates the pod and warns', async () => {
    const r = await k('run', 'hosty', '--image=nginx', '-n', 'warned', '--overrides={"spec":{"hostNetwork":true}}');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('Warning: would violate PodSecurity "baseline:latest": host namespaces (hostNetwork=true)');
  });
});
