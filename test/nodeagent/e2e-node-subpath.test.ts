// Kubernetes' sig-node e2e conformance tests of `subPathExpr`
// (test/e2e/common/node/expansion.go, the VolumeSubpathEnvExpansion ones), on
// orch with kube's API domain and a real node agent on the simulated runtime:
// a sub-path from an env var is made in the volume; `..` or an absolute path is
// CreateContainerConfigError; a sub-path that cannot be expanded yet (a missing
// annotation) keeps the container waiting until the pod is updated; a file
// written through the whole volume is seen through the sub-path mount.
// And sig-storage's Subpath "Atomic writer volumes" (test/e2e/storage/subpath.go):
// a file of a secret, configMap, downwardAPI or projected volume — written by
// the agent's atomic writer, reached through its `..data` links — mounted by
// `subPath`, read by agnhost mounttest (the simulator's, sim-agnhost.ts).
// kube's pod reads for --retry_time=20 s (its content is never mounttest's
// own, so the loop runs out); here --retry_time=2, one read.

import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Obj, e2eEnv, namespace } from '../helpers/e2e-apps.js';
import { BUSYBOX, PODS, testContainerOutput, uniqueName } from '../helpers/e2e-node-output.js';
import { runKubectl } from '../helpers/kubectl.js';

const env = e2eEnv('subpath-node');
const ns = () => namespace(env, `var-expansion-${Math.random().toString(36).slice(2, 8)}`);

/** kube's newPod: one busybox container `dapi-container`, an emptyDir `workdir1` */
function subpathPod(command: string[] | undefined, envVars: Obj[], mounts: Obj[], annotations?: Obj): Obj {
  const name = uniqueName('var-expansion-');
  return {
    apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { name }, ...(annotations ? { annotations } : {}) },
    spec: { restartPolicy: 'Never', volumes: [{ name: 'workdir1', emptyDir: {} }], containers: [{ name: 'dapi-container', image: BUSYBOX, ...(command ? { command } : {}), env: envVars, volumeMounts: mounts }] },
  };
}
const status = async (n: string, name: string): Promise<Obj> => (await env.get(`${PODS(n)}/${name}`)).status ?? {};
/** e2epod.WaitForPodContainerToFail: container 0 waits with `reason` */
const waitingReason = (n: string, name: string, reason: string): Promise<Obj> =>
  env.eventually(async () => {
    const w = (await status(n, name)).containerStatuses?.[0]?.state?.waiting;
    return w?.reason === reason ? w : undefined;
  }, `${name} waiting ${reason}`);
const running = (n: string, name: string) => env.eventually(async () => (await status(n, name)).phase === 'Running', `${name} Running`);
/** podClient.Update: get, change, put (again on a conflict) */
const update = (n: string, name: string, change: (p: Obj) => void) =>
  env.eventually(async () => {
    const cur = await env.get(`${PODS(n)}/${name}`);
    change(cur);
    return (await env.ts().request('PUT', `${PODS(n)}/${name}`, { body: cur })).status === 200;
  }, `update of ${name}`);
/** f.ExecShellInPodWithFullOutput: `/bin/sh -c <cmd>` through the exec sub-resource (kubectl 1.32) */
async function execInPod(n: string, name: string, cmd: string): Promise<{ code: number; out: string }> {
  const r = await runKubectl(join(env.ts().dataDir, 'admin.kubeconfig'), ['exec', '-n', n, name, '--', '/bin/sh', '-c', cmd]);
  return { code: r.code, out: r.stdout + r.stderr };
}
/** e2epod.DeletePodWithWait */
async function deleteWithWait(n: string, name: string): Promise<void> {
  await env.call('DELETE', `${PODS(n)}/${name}`);
  await env.eventually(async () => (await env.ts().request('GET', `${PODS(n)}/${name}`)).status === 404, `${name} deleted`);
}
const annotated = [
  { name: 'POD_NAME', value: 'foo' },
  { name: 'ANNOTATION', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: "metadata.annotations['mysubpath']" } } },
];
const annotatedMounts = [
  { name: 'workdir1', mountPath: '/subpath_mount', subPathExpr: '$(ANNOTATION)/$(POD_NAME)' },
  { name: 'workdir1', mountPath: '/volume_mount' },
];

describe('[sig-node] Variable Expansion (subPathExpr)', () => {
  it('should allow substituting values in a volume subpath [Conformance]', async () => {
    const n = await ns();
    const p = subpathPod(undefined, [{ name: 'POD_NAME', value: '' }], [
      { name: 'workdir1', mountPath: '/logscontainer', subPathExpr: '$(POD_NAME)' },
      { name: 'workdir1', mountPath: '/testcontainer' },
    ]);
    p.spec.containers[0].env[0].value = p.metadata.name;
    p.spec.containers[0].command = ['sh', '-c', `test -d /testcontainer/${p.metadata.name};echo $?`];
    const log = await testContainerOutput(env, n, p, 0, ['0']);
    expect(log).toBe('0\n');
  });

  for (const [what, value, message] of [
    ['with backticks', '..', "unable to provision SubPath `..`: must not contain '..'"],
    ['with absolute path', '/tmp', 'error SubPath `/tmp` must not be an absolute path'],
  ]) {
    it(`should fail substituting values in a volume subpath ${what} [Slow] [Conformance]`, async () => {
      const n = await ns();
      const p = subpathPod(undefined, [{ name: 'POD_NAME', value }], [{ name: 'workdir1', mountPath: '/logscontainer', subPathExpr: '$(POD_NAME)' }]);
      await env.call('POST', PODS(n), p);
      const w = await waitingReason(n, p.metadata.name, 'CreateContainerConfigError');
      // beyond kube's check: kubelet's message
      expect(w.message).toBe(message);
      await deleteWithWait(n, p.metadata.name);
    });
  }

  it('should verify that a failing subpath expansion can be modified during the lifecycle of a container [Slow] [Conformance]', async () => {
    const n = await ns();
    const p = subpathPod(['sh', '-c', 'tail -f /dev/null'], annotated, annotatedMounts, { notmysubpath: 'mypath' });
    await env.call('POST', PODS(n), p);
    // kube: not Running within its start timeout; here: waiting with kubelet's reason and message
    expect((await waitingReason(n, p.metadata.name, 'CreateContainerConfigError')).message).toBe('missing value for ANNOTATION');
    expect((await status(n, p.metadata.name)).phase).toBe('Pending');
    await update(n, p.metadata.name, (cur) => void (cur.metadata.annotations = { ...(cur.metadata.annotations ?? {}), mysubpath: 'mypath' }));
    await running(n, p.metadata.name);
    await deleteWithWait(n, p.metadata.name);
  });

  it('should succeed in writing subpaths in container [Slow] [Conformance]', async () => {
    const n = await ns();
    const p = subpathPod(['sh', '-c', 'tail -f /dev/null'], annotated, annotatedMounts, { mysubpath: 'mypath' });
    await env.call('POST', PODS(n), p);
    await running(n, p.metadata.name);
    expect(await execInPod(n, p.metadata.name, 'touch /volume_mount/mypath/foo/test.log')).toEqual({ code: 0, out: '' });
    expect(await execInPod(n, p.metadata.name, 'test -f /subpath_mount/test.log')).toEqual({ code: 0, out: '' });
    await update(n, p.metadata.name, (cur) => void (cur.metadata.annotations.mysubpath = 'mynewpath'));
    await running(n, p.metadata.name);
    await deleteWithWait(n, p.metadata.name);
  });
});

describe('[sig-storage] Subpath Atomic writer volumes', () => {
  const AGNHOST = 'registry.k8s.io/e2e-test-images/agnhost:2.53';
  /** the namespace with kube's BeforeEach data: Secret my-secret, ConfigMap my-configmap */
  async function setUp(): Promise<string> {
    const n = await namespace(env, `subpath-${Math.random().toString(36).slice(2, 8)}`);
    await env.call('POST', `/api/v1/namespaces/${n}/secrets`, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'my-secret' }, data: { 'secret-key': Buffer.from('secret-value').toString('base64') } });
    await env.call('POST', `/api/v1/namespaces/${n}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'my-configmap' }, data: { 'configmap-key': 'configmap-value' } });
    return n;
  }
  /**
   * SubpathTestPod after removeUnusedContainers, with setReadCommand: one agnhost container
   * reading `file` in a loop, the volume mounted at /test-volume by `subPath`, and the probe emptyDir
   */
  function subpathTestPod(subPath: string, volumeType: string, source: Obj, file = '/test-volume'): Obj {
    const suffix = `${volumeType.replace(/[^A-Za-z0-9]/g, '-')}-${Math.random().toString(36).slice(2, 6)}`.toLowerCase();
    return {
      apiVersion: 'v1', kind: 'Pod', metadata: { name: `pod-subpath-test-${suffix}` },
      spec: {
        containers: [{
          name: `test-container-subpath-${suffix}`, image: AGNHOST,
          args: ['mounttest', `--file_content_in_loop=${file}`, '--retry_time=2'],
          volumeMounts: [{ name: 'test-volume', mountPath: file, subPath }, { name: 'liveness-probe-volume', mountPath: '/probe-volume' }],
        }],
        restartPolicy: 'Never', terminationGracePeriodSeconds: 1,
        volumes: [{ name: 'test-volume', ...source }, { name: 'liveness-probe-volume', emptyDir: {} }],
        securityContext: { seLinuxOptions: { level: 's0:c0,c1' } },
      },
    };
  }
  /** TestBasicSubpathFile: the pod succeeds with the contents in its log, then DeletePodWithWait */
  async function testBasicSubpath(n: string, contents: string, pod: Obj, file = '/test-volume'): Promise<void> {
    const log = await testContainerOutput(env, n, pod, 0, [contents]);
    expect(log).toContain(`content of file "${file}": ${contents}\n`);
    await deleteWithWait(n, pod.metadata.name);
  }

  it.concurrent('should support subpaths with secret pod [Conformance]', async () => {
    const n = await setUp();
    await testBasicSubpath(n, 'secret-value', subpathTestPod('secret-key', 'secret', { secret: { secretName: 'my-secret' } }));
  });

  it.concurrent('should support subpaths with configmap pod [Conformance]', async () => {
    const n = await setUp();
    await testBasicSubpath(n, 'configmap-value', subpathTestPod('configmap-key', 'configmap', { configMap: { name: 'my-configmap' } }));
  });

  it.concurrent('should support subpaths with configmap pod with mountPath of existing file [Conformance]', async () => {
    const n = await setUp();
    const file = '/etc/resolv.conf';
    await testBasicSubpath(n, 'configmap-value', subpathTestPod('configmap-key', 'configmap', { configMap: { name: 'my-configmap' } }, file), file);
  });

  it.concurrent('should support subpaths with downward pod [Conformance]', async () => {
    const n = await setUp();
    const pod = subpathTestPod('downward/podname', 'downwardAPI', { downwardAPI: { items: [{ path: 'downward/podname', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } }] } });
    await testBasicSubpath(n, pod.metadata.name, pod);
  });

  it.concurrent('should support subpaths with projected pod [Conformance]', async () => {
    const n = await setUp();
    const source = { projected: { sources: [{ configMap: { name: 'my-configmap', items: [{ path: 'projected/configmap-key', key: 'configmap-key' }] } }] } };
    await testBasicSubpath(n, 'configmap-value', subpathTestPod('projected/configmap-key', 'projected', source));
  });
});
