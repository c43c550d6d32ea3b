// Kubernetes' sig-node e2e conformance tests of `subPathExpr`
// (test/e2e/common/node/expansion.go, the VolumeSubpathEnvExpansion ones), on
// orch with kube's API domain and a real node agent on the simulated runtime:
// a sub-path from an env var is made in the volume; `..` or an absolute path is
// CreateContainerConfigError; a sub-path that cannot be expanded yet (a missing
// annotation) keeps the container waiting until the pod is updated; a file
// written through the whole volume is seen through the sub-path mount.

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
