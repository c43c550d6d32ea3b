// Kubernetes' sig-node e2e sysctl tests (test/e2e/common/node/sysctl.go, kube
// 1.32), on orch with a real node agent (simulated runtime): a pod's safe sysctl
// reaches its sandbox and `/bin/sysctl` in the container prints it (dot- and
// slash-separated), the API refuses invalid names, and the node refuses a
// sysctl it does not allow (SysctlForbidden). The agent runs with
// `allowedUnsafeSysctls: [kernel.shm*]`, so one more test (not in sysctl.go)
// checks an allowed unsafe sysctl, while kernel.msgmax stays forbidden.

import { describe, expect, it } from 'vitest';
import { type Obj, e2eEnv, namespace } from '../helpers/e2e-apps.js';
import { BUSYBOX, PODS, podEvents, podLog, uniqueName, waitForErrorEventOrSuccess } from '../helpers/e2e-node-output.js';

const env = e2eEnv('sysctl-node', { allowedUnsafeSysctls: ['kernel.shm*'] });
let seq = 0;
const ns = () => namespace(env, `sysctl-${++seq}-${Math.random().toString(36).slice(2, 7)}`);

/** sysctl.go's testPod: one busybox container, restartPolicy Never, with these sysctls */
function testPod(sysctls: Obj[], command?: string[]): Obj {
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name: uniqueName('sysctl-'), annotations: {} },
    spec: { containers: [{ name: 'test-container', image: BUSYBOX, ...(command ? { command } : {}) }], restartPolicy: 'Never', securityContext: { sysctls } },
  };
}

/** the two "should support sysctls" tests: the pod runs, Succeeds, and its log shows the value */
async function supportsSysctl(name: string): Promise<void> {
  const n = await ns();
  const pod = testPod([{ name, value: '1' }], ['/bin/sysctl', name]);
  await env.call('POST', PODS(n), pod);
  expect(await waitForErrorEventOrSuccess(env, n, pod.metadata.name)).toBeNull();
  // WaitForPodNoLongerRunningInNamespace, then the phase
  const done = await env.eventually(async () => {
    const p = await env.get(`${PODS(n)}/${pod.metadata.name}`);
    return ['Succeeded', 'Failed'].includes(p.status?.phase) && p;
  }, `${pod.metadata.name} no longer running`, 40_000);
  expect(done.status.phase).toBe('Succeeded');
  expect(await podLog(env, n, pod.metadata.name, 'test-container')).toContain('kernel.shm_rmid_forced = 1');
}

/** e2epod.WaitForPodFailedReason: phase Failed with that reason */
async function waitForPodFailedReason(n: string, name: string, reason: string): Promise<Obj> {
  return env.eventually(async () => {
    const p = await env.get(`${PODS(n)}/${name}`);
    return p.status?.phase === 'Failed' && p.status.reason === reason && p;
  }, `${name} Failed with ${reason}`, 40_000);
}

describe('[sig-node] Sysctls [LinuxOnly] [NodeConformance]', () => {
  it('should support sysctls [MinimumKubeletVersion:1.21] [Environment:NotInUserNS] [Conformance]', () => supportsSysctl('kernel.shm_rmid_forced'));

  it('should reject invalid sysctls [MinimumKubeletVersion:1.21] [Conformance]', async () => {
    const n = await ns();
    const pod = testPod([
      { name: 'foo-', value: 'bar' },
      { name: 'kernel.shmmax', value: '100000000' },
      { name: 'safe-and-unsafe', value: '100000000' },
      { name: 'bar..', value: '42' },
    ]);
    const r = await env.ts().request('POST', PODS(n), { body: pod });
    expect(r.status).toBe(422);
    const message = r.json<Obj>().message as string;
    expect(message).toContain('Invalid value: "foo-"');
    expect(message).toContain('Invalid value: "bar.."');
    expect(message).not.toContain('safe-and-unsafe');
    expect(message).not.toContain('kernel.shmmax');
  });

  it('should not launch unsafe, but not explicitly enabled sysctls on the node [MinimumKubeletVersion:1.21]', async () => {
    const n = await ns();
    const pod = testPod([{ name: 'kernel.msgmax', value: '10000000000' }]);
    await env.call('POST', PODS(n), pod);
    const p = await waitForPodFailedReason(n, pod.metadata.name, 'SysctlForbidden');
    // beyond sysctl.go: kubelet's message, its Warning, and no container ever started
    expect(p.status.message).toBe('Pod was rejected: forbidden sysctl: "kernel.msgmax" not allowlisted');
    const evs = await env.eventually(async () => {
      const all = await podEvents(env, n, pod.metadata.name);
      return all.some((e) => e.reason === 'SysctlForbidden') && all;
    }, 'the SysctlForbidden event');
    expect(evs.find((e) => e.reason === 'SysctlForbidden')).toMatchObject({ type: 'Warning', message: 'forbidden sysctl: "kernel.msgmax" not allowlisted' });
    expect(evs.map((e) => e.reason)).not.toContain('Started');
  });

  it('should support sysctls with slashes as separator [MinimumKubeletVersion:1.23]', () => supportsSysctl('kernel/shm_rmid_forced'));

  // not in sysctl.go: an unsafe sysctl the node allows (allowedUnsafeSysctls: [kernel.shm*]) runs with its value
  it('runs a pod with an unsafe sysctl the node allows, its value in the sandbox', async () => {
    const n = await ns();
    const pod = testPod([{ name: 'kernel.shmmax', value: '100000000' }], ['sysctl', 'kernel.shmmax']);
    await env.call('POST', PODS(n), pod);
    await env.eventually(async () => (await env.get(`${PODS(n)}/${pod.metadata.name}`)).status?.phase === 'Succeeded', `${pod.metadata.name} Succeeded`, 40_000);
    expect(await podLog(env, n, pod.metadata.name, 'test-container')).toBe('kernel.shmmax = 100000000\n');
  });
});
