// Kubernetes' sig-node e2e tests of the kubelet-managed /etc/hosts
// (test/e2e/common/node/kubelet_etc_hosts.go, and kubelet.go's hostAliases
// tests), on orch with kube's API domain and a real node agent on the simulated
// runtime: the file is read through the exec sub-resource (kubectl 1.32), or
// from the log of a container printing it. The simulator has no mount
// namespace: `cat /etc/hosts` reads the pod's file because the agent mounts
// it there and the simulator rewrites mounted container paths in commands
// (docs/nodeagent.md "Volumes"). kube's agnhost `pause` is left to the
// simulator's rule 5 (runs until stopped); agnhost `etc-hosts` becomes
// `cat /etc/hosts`, which is what it does.

import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AGNHOST, condition, e2eEnv, namespace, type Obj } from '../helpers/e2e-apps.js';
import { BUSYBOX, PODS, podLog, uniqueName } from '../helpers/e2e-node-output.js';
import { runKubectl } from '../helpers/kubectl.js';

// a cluster domain other than the default, to see the agent's setting reach the pod's FQDN
const CLUSTER_DOMAIN = 'orch-e2e.local';
const env = e2eEnv('etc-hosts-node', { clusterDomain: CLUSTER_DOMAIN });
const ns = (base: string) => namespace(env, `${base}-${Math.random().toString(36).slice(2, 8)}`);

/** e2epod.NewAgnhostContainer with no args: agnhost pause */
const agnhost = (name: string, volumeMounts: Obj[]): Obj => ({ name, image: AGNHOST, args: ['pause'], volumeMounts, securityContext: {}, imagePullPolicy: 'IfNotPresent' });
const hostEtcHosts = { name: 'host-etc-hosts', hostPath: { path: '/etc/hosts', type: 'FileOrCreate' } };
const original = { name: 'host-etc-hosts', mountPath: '/etc/hosts-original' };

/** PodClient.CreateSync: create, then wait until Running and Ready */
async function createSync(n: string, pod: Obj): Promise<Obj> {
  await env.call('POST', PODS(n), { apiVersion: 'v1', kind: 'Pod', ...pod });
  return env.eventually(async () => {
    const p = await env.get(`${PODS(n)}/${pod.metadata.name}`);
    return p.status?.phase === 'Running' && condition(p, 'Ready')?.status === 'True' && p;
  }, `${pod.metadata.name} Running and Ready`, 60_000);
}

/** f.ExecCommandInContainer(pod, container, "cat", path): its stdout, space-trimmed as the framework's ExecWithOptions */
async function cat(n: string, pod: string, container: string, path: string): Promise<string> {
  const r = await runKubectl(join(env.ts().dataDir, 'admin.kubeconfig'), ['exec', '-n', n, pod, '-c', container, '--', 'cat', path]);
  expect(r.code, `exec cat ${path} in ${pod}/${container}: ${r.stderr}`).toBe(0);
  return r.stdout.trim();
}

/** assertManagedStatus: the file starts with the managed header and differs from the host's, or not (retried for 30 s) */
async function assertManagedStatus(n: string, pod: string, managed: boolean, container: string): Promise<void> {
  let last = '';
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const hosts = await cat(n, pod, container, '/etc/hosts');
    const orig = await cat(n, pod, container, '/etc/hosts-original');
    last = hosts;
    if (hosts.length > 0 && orig.length > 0 && (hosts.startsWith('# Kubernetes-managed hosts file.') && hosts !== orig) === managed) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  expect.fail(`/etc/hosts file should ${managed ? '' : 'not '}be kubelet managed (name: ${container}). /etc/hosts contains ${JSON.stringify(last)}`);
}

/** e2epod.WaitForPodNoLongerRunningInNamespace, then the container's log (podClient.GetLogs) */
async function logWhenDone(n: string, pod: Obj): Promise<string> {
  await env.call('POST', PODS(n), { apiVersion: 'v1', kind: 'Pod', ...pod });
  await env.eventually(async () => {
    const phase = (await env.get(`${PODS(n)}/${pod.metadata.name}`)).status?.phase;
    return phase === 'Succeeded' || phase === 'Failed';
  }, `${pod.metadata.name} no longer running`, 60_000);
  return podLog(env, n, pod.metadata.name, pod.spec.containers[0].name);
}

/** e2epod.NewAgnhostPod(ns, name, nil, nil, nil, "etc-hosts") with restartPolicy Never and kube's alias */
const hostAliasesPod = (hostNetwork: boolean): Obj => ({
  metadata: { name: uniqueName('agnhost-host-aliases') },
  spec: {
    containers: [{ name: 'agnhost-container', image: AGNHOST, command: ['cat', '/etc/hosts'] }],
    restartPolicy: 'Never',
    terminationGracePeriodSeconds: 0,
    securityContext: {},
    ...(hostNetwork ? { hostNetwork: true } : {}),
    hostAliases: [{ ip: '123.45.67.89', hostnames: ['foo', 'bar'] }],
  },
});

describe('[sig-node] KubeletManagedEtcHosts', () => {
  it('should test kubelet managed /etc/hosts file [LinuxOnly] [NodeConformance] [Conformance]', async () => {
    const n = await ns('e2e-kubelet-etc-hosts');
    const pod = await createSync(n, {
      metadata: { name: 'test-pod' },
      spec: {
        containers: [agnhost('busybox-1', [original]), agnhost('busybox-2', [original]), agnhost('busybox-3', [original, { name: 'host-etc-hosts', mountPath: '/etc/hosts' }])],
        volumes: [hostEtcHosts],
      },
    });
    await createSync(n, {
      metadata: { name: 'test-host-network-pod' },
      spec: { hostNetwork: true, securityContext: {}, containers: [agnhost('busybox-1', [original]), agnhost('busybox-2', [original])], volumes: [hostEtcHosts] },
    });

    // Verifying /etc/hosts of container is kubelet-managed for pod with hostNetwork=false
    await assertManagedStatus(n, 'test-pod', true, 'busybox-1');
    await assertManagedStatus(n, 'test-pod', true, 'busybox-2');
    // Verifying /etc/hosts of container is not kubelet-managed since container specifies /etc/hosts mount
    await assertManagedStatus(n, 'test-pod', false, 'busybox-3');
    // Verifying /etc/hosts content of container is not kubelet-managed for pod with hostNetwork=true
    await assertManagedStatus(n, 'test-host-network-pod', false, 'busybox-1');
    await assertManagedStatus(n, 'test-host-network-pod', false, 'busybox-2');

    // beyond kube's checks: kubelet's exact content, the pod's IP and name; the host-network pod's is the node's under its header
    expect(await cat(n, 'test-pod', 'busybox-1', '/etc/hosts')).toBe(
      ['# Kubernetes-managed hosts file.', '127.0.0.1\tlocalhost', '::1\tlocalhost ip6-localhost ip6-loopback', 'fe00::0\tip6-localnet',
        'fe00::0\tip6-mcastprefix', 'fe00::1\tip6-allnodes', 'fe00::2\tip6-allrouters', `${pod.status.podIP}\ttest-pod`].join('\n'),
    );
    const nodeHosts = await cat(n, 'test-host-network-pod', 'busybox-1', '/etc/hosts-original');
    expect(await cat(n, 'test-host-network-pod', 'busybox-1', '/etc/hosts')).toBe(`# Kubernetes-managed hosts file (host network).\n${nodeHosts}`);
  });
});

describe('[sig-node] Kubelet', () => {
  it('when scheduling an agnhost Pod with hostAliases should write entries to /etc/hosts [NodeConformance] [Conformance]', async () => {
    const n = await ns('kubelet-test');
    const log = await logWhenDone(n, hostAliasesPod(false));
    expect(log, `expected hosts file to contain entries from HostAliases. Got:\n${log}`).toContain('123.45.67.89\tfoo\tbar');
  });

  // kubelet.go "Kubelet with pods in a privileged namespace" (NodeConformance, not Conformance)
  it('with pods in a privileged namespace when scheduling an agnhost Pod with hostAliases and hostNetwork should write entries to /etc/hosts when hostNetwork is enabled [NodeConformance]', async () => {
    const n = await ns('kubelet-test');
    const log = await logWhenDone(n, hostAliasesPod(true));
    expect(log, `expected hosts file to contain entries from HostAliases. Got:\n${log}`).toContain('123.45.67.89\tfoo\tbar');
    expect(log).toMatch(/^# Kubernetes-managed hosts file \(host network\)\.\n/);
  });

  // not in kube's e2e: a pod with a subdomain has its FQDN under the agent's clusterDomain (kubelet's managedHostsFileContent)
  it('a pod with hostname and subdomain has its FQDN in /etc/hosts', async () => {
    const n = await ns('kubelet-test');
    const name = uniqueName('fqdn-');
    const log = await logWhenDone(n, { metadata: { name }, spec: { hostname: 'web-0', subdomain: 'web', restartPolicy: 'Never', containers: [{ name: 'c', image: BUSYBOX, command: ['sh', '-c', 'cat /etc/hosts'] }] } });
    const ip = (await env.get(`${PODS(n)}/${name}`)).status.podIP;
    expect(log.split('\n')).toContain(`${ip}\tweb-0.web.${n}.svc.${CLUSTER_DOMAIN}\tweb-0`);
  });
});
