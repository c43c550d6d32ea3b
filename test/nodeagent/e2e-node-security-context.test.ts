// Kubernetes' e2e tests of a container's user (kube 1.32), on orch with a real
// node agent (simulated runtime, running as root here: processes take the
// container's uid and gid): test/e2e/common/node/security_context.go — "When
// creating a container with runAsUser" (uid 65534 and 0) and "When creating a
// container with runAsNonRoot" (kubelet's verifyRunAsNonRoot, the image's user
// from the runtime's ImageStatus: kube's nonroot image runs as 1234, busybox as
// root) — and test/e2e/node/security_context.go's runAsUser / runAsGroup tests
// at pod and container level (`id` prints uid= and gid=).

import { describe, expect, it } from 'vitest';
import { type Obj, e2eEnv, namespace } from '../helpers/e2e-apps.js';
import { BUSYBOX, PODS, podLog, testContainerOutput, uniqueName, waitForErrorEventOrSuccess, waitSucceeded } from '../helpers/e2e-node-output.js';

const NONROOT = 'registry.k8s.io/e2e-test-images/nonroot:1.4';
const root = process.getuid?.() === 0;
const env = e2eEnv('secctx-node');
let seq = 0;
const ns = () => namespace(env, `security-context-test-${++seq}-${Math.random().toString(36).slice(2, 7)}`);

/** a pod of one container named as the pod, restartPolicy Never */
const onePod = (name: string, image: string, command: string[], securityContext: Obj): Obj => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name },
  spec: { restartPolicy: 'Never', containers: [{ image, name, command, securityContext }] },
});

/** PodClient.MatchContainerOutput: the container's log matches the regexp */
async function matchContainerOutput(n: string, name: string, re: string): Promise<void> {
  expect(await podLog(env, n, name, name)).toMatch(new RegExp(re));
}

describe.skipIf(!root)('[sig-node] Security Context When creating a container with runAsUser', () => {
  /** createAndWaitUserPod: busybox checks `id -u` itself and must Succeed */
  async function createAndWaitUserPod(userid: number): Promise<void> {
    const n = await ns();
    const name = `busybox-user-${userid}-${crypto.randomUUID()}`;
    await env.call('POST', PODS(n), onePod(name, BUSYBOX, ['sh', '-c', `test $(id -u) -eq ${userid}`], { runAsUser: userid }));
    await waitSucceeded(env, n, name);
  }

  it('should run the container with uid 65534 [LinuxOnly] [NodeConformance] [Conformance]', () => createAndWaitUserPod(65534));
  it('should run the container with uid 0 [LinuxOnly] [NodeConformance]', () => createAndWaitUserPod(0));
});

describe.skipIf(!root)('[sig-node] Security Context When creating a container with runAsNonRoot', () => {
  /** makeNonRootPod: prints its uid, runAsNonRoot, runAsUser when given */
  const makeNonRootPod = (name: string, image: string, userid?: number) => onePod(name, image, ['id', '-u'], { runAsNonRoot: true, ...(userid === undefined ? {} : { runAsUser: userid }) });

  async function runs(name: string, image: string, userid: number | undefined, output: string): Promise<void> {
    const n = await ns();
    await env.call('POST', PODS(n), makeNonRootPod(name, image, userid));
    await waitSucceeded(env, n, name);
    await matchContainerOutput(n, name, output);
  }
  /** the error event is kubelet's Failed; beyond kube's checks, its message and the container's waiting state */
  async function refused(name: string, image: string, userid: number | undefined, why: string): Promise<void> {
    const n = await ns();
    const pod = await env.call('POST', PODS(n), makeNonRootPod(name, image, userid));
    const ev = await waitForErrorEventOrSuccess(env, n, name);
    expect(ev).not.toBeNull();
    expect(ev!.reason).toBe('Failed');
    const message = `${why} (pod: "${name}_${n}(${pod.metadata.uid})", container: ${name})`;
    expect(ev!.message).toBe(`Error: ${message}`);
    const waiting = await env.eventually(async () => (await env.get(`${PODS(n)}/${name}`)).status?.containerStatuses?.[0]?.state?.waiting, `${name} waiting`);
    expect(waiting).toEqual({ reason: 'CreateContainerConfigError', message });
  }

  it('should run with an explicit non-root user ID [LinuxOnly]', () => runs('explicit-nonroot-uid', BUSYBOX, 1000, '1000'));
  it('should not run with an explicit root user ID [LinuxOnly]', () => refused('explicit-root-uid', NONROOT, 0, "container's runAsUser breaks non-root policy"));
  it('should run with an image specified user ID', () => runs('implicit-nonroot-uid', NONROOT, undefined, '1234'));
  it('should not run without a specified user ID', () => refused('implicit-root-uid', BUSYBOX, undefined, 'container has runAsNonRoot and image will run as root'));
});

describe.skipIf(!root)('[sig-node] Security Context (test/e2e/node/security_context.go)', () => {
  /** scTestPod: one busybox container `test-container` running `sh -c id`, a pod securityContext */
  function scTestPod(podSc: Obj, containerSc?: Obj): Obj {
    return {
      apiVersion: 'v1', kind: 'Pod',
      metadata: { name: uniqueName('security-context-'), annotations: {} },
      spec: { securityContext: podSc, restartPolicy: 'Never', containers: [{ name: 'test-container', image: BUSYBOX, command: ['sh', '-c', 'id'], ...(containerSc ? { securityContext: containerSc } : {}) }] },
    };
  }
  const output = async (pod: Obj, expected: string[]) => testContainerOutput(env, await ns(), pod, 0, expected);

  it('should support pod.Spec.SecurityContext.RunAsUser [LinuxOnly]', () => output(scTestPod({ runAsUser: 1001 }), ['uid=1001', 'gid=0']));
  it('should support pod.Spec.SecurityContext.RunAsUser And pod.Spec.SecurityContext.RunAsGroup [LinuxOnly] [Conformance]', () =>
    output(scTestPod({ runAsUser: 1001, runAsGroup: 2002 }), ['uid=1001', 'gid=2002']));
  it('should support container.SecurityContext.RunAsUser [LinuxOnly]', () => output(scTestPod({ runAsUser: 1001 }, { runAsUser: 1002 }), ['uid=1002', 'gid=0']));
  it('should support container.SecurityContext.RunAsUser And container.SecurityContext.RunAsGroup [LinuxOnly] [Conformance]', () =>
    output(scTestPod({ runAsUser: 1001, runAsGroup: 2001 }, { runAsUser: 1002, runAsGroup: 2002 }), ['uid=1002', 'gid=2002']));
});
