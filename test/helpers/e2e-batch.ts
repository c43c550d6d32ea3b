// The Job fixture of Kubernetes' e2e batch tests (test/e2e/framework/job's
// NewTestJob), shared by the Job ports (e2e-apps-job, e2e-apps-batch), and
// the e2e framework's namespace teardown for the e2e-apps ports.

import { afterAll, expect } from 'vitest';
import { type E2eEnv, namespace } from './e2e-apps.js';

export type Obj = Record<string, any>;

/**
 * `namespace` as the e2e framework makes it for these tests (the
 * `NamespacePodSecurityLevel` they set, enforced), deleted when the file's
 * tests are done, all at once, each waited for: the framework's AfterEach
 * deletes a test's namespace and waits for it, so whatever a test leaves (a
 * finalizer no controller removes, a pod that never ends) fails the run there
 * too. After all rather than after each, so the tests may run concurrently
 * (an afterEach would delete the namespaces of tests still running).
 */
export function namespacesTornDown(env: E2eEnv, podSecurity: 'privileged' | 'baseline' | 'restricted' = 'baseline'): (base: string) => Promise<string> {
  const made: string[] = [];
  afterAll(async () => {
    await Promise.all(
      made.splice(0).map(async (ns) => {
        await env.call('DELETE', `/api/v1/namespaces/${ns}`);
        await env.eventually(async () => (await env.ts().request('GET', `/api/v1/namespaces/${ns}`)).status === 404, `namespace ${ns} deleted`, 60_000);
      }),
    );
  });
  return async (base) => {
    const ns = await namespace(env, base);
    made.push(ns);
    await env.call('PATCH', `/api/v1/namespaces/${ns}`, { metadata: { labels: { 'pod-security.kubernetes.io/enforce': podSecurity } } });
    return ns;
  };
}

export const BUSYBOX = 'registry.k8s.io/e2e-test-images/busybox:1.36.1-1';

/** how a test Job's pods behave (the NewTestJob behaviours ported) */
export type JobBehavior = 'notTerminate' | 'succeed' | 'failOnce' | 'notTerminateOncePerIndex';

function command(behavior: JobBehavior): string[] {
  if (behavior === 'succeed') return ['/bin/sh', '-c', 'exit 0'];
  // fails the first time (leaving a file on the pod's emptyDir), succeeds when restarted in the same pod.
  // kube writes `[[ -r /data/foo ]]`; the simulated runtime runs scripts with the host's /bin/sh, which may lack `[[`
  if (behavior === 'failOnce') return ['/bin/sh', '-c', 'if [ -r /data/foo ] ; then exit 0 ; else touch /data/foo ; exit 1 ; fi'];
  // runs until stopped the first time for its index (leaving a marker), succeeds in the index's next pod
  if (behavior === 'notTerminateOncePerIndex') return ['/bin/sh', '-c', 'if [ -r /data/foo-$JOB_COMPLETION_INDEX ] ; then exit 0 ; else touch /data/foo-$JOB_COMPLETION_INDEX ; sleep 1000000 ; fi'];
  return ['sleep', '1000000'];
}

/** e2ejob.NewTestJob: the pods labelled `e2e-job-label: <name>`, an emptyDir at /data */
export function newTestJob(behavior: JobBehavior, name: string, parallelism: number, completions: number, backoffLimit: number, restartPolicy: 'Never' | 'OnFailure' = 'Never'): Obj {
  return {
    apiVersion: 'batch/v1', kind: 'Job', metadata: { name },
    spec: {
      parallelism, completions, backoffLimit, manualSelector: false,
      template: {
        metadata: { labels: { 'e2e-job-label': name } },
        spec: {
          restartPolicy,
          volumes: [{ name: 'data', emptyDir: {} }],
          containers: [{ name: 'c', image: BUSYBOX, command: command(behavior), volumeMounts: [{ mountPath: '/data', name: 'data' }] }],
        },
      },
    },
  };
}

/**
 * e2ejob.NewTestJobOnNode: NewTestJob with its pods on `node` (a required node affinity on the node's name)
 * and a hostPath at /data (`hostDir`), so a marker outlives the pod that left it
 */
export function newTestJobOnNode(behavior: JobBehavior, name: string, parallelism: number, completions: number, backoffLimit: number, node: string, hostDir: string): Obj {
  const job = newTestJob(behavior, name, parallelism, completions, backoffLimit);
  const spec = job.spec.template.spec;
  spec.volumes = [{ name: 'data', hostPath: { path: hostDir } }];
  spec.affinity = { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [node] }] }] } } };
  return job;
}

/** e2epod.NewPodClient(f).Update: get, change, update, retried on conflict */
export async function updatePod(env: E2eEnv, ns: string, name: string, change: (p: Obj) => void): Promise<void> {
  const path = `/api/v1/namespaces/${ns}/pods/${name}`;
  await env.eventually(async () => {
    const p = await env.get(path);
    change(p);
    const r = await env.ts().request('PUT', path, { body: p });
    if (r.status === 409) return undefined;
    expect(r.status, r.text).toBe(200);
    return true;
  }, `update of ${name}`);
}
