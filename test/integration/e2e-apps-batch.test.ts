// What Kubernetes' sig-apps e2e tests of ReplicationControllers, Jobs and
// CronJobs (test/e2e/apps/rc.go, job.go, cronjob.go) check, on orch with its
// controllers and a real node agent (simulated runtime): an RC adopts a
// matching orphan and releases a pod that no longer matches, surfaces
// ReplicaFailure while a quota refuses its pods, and scales through /scale;
// a Job completes with pods restarted in place, is deleted with its pods,
// adopts and releases pods, and gives an Indexed Job's pods their indexes and
// hostnames; a podFailurePolicy fails a Job early on an exit code (FailJob) and
// ignores evicted pods' failures (DisruptionTarget); the CronJob API with its
// /status sub-resource.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Obj, WEBSERVER, condition, e2eEnv } from '../helpers/e2e-apps.js';
import { namespacesTornDown, newTestJob, newTestJobOnNode, updatePod } from '../helpers/e2e-batch.js';
import { eventually } from '../helpers/eventually.js';
import { JumpClock } from '../helpers/jump-clock.js';
import { call, listItems, newNamespace } from '../helpers/kube-e2e.js';
import { type AgentProcess, startAgentProcess, stopAgentAndServer, waitNodeReady } from '../helpers/nodeagent.js';
import { NO_NODE_LIFECYCLE, type TestServer, startTestServer } from '../helpers/server.js';

const env = e2eEnv('batch-node');
const namespace = namespacesTornDown(env);
/** job.go's own level (NamespacePodSecurityLevel privileged): NewTestJobOnNode's hostPath needs it */
const privilegedNamespace = namespacesTornDown(env, 'privileged');
const RCS = (ns: string) => `/api/v1/namespaces/${ns}/replicationcontrollers`;
const PODS = (ns: string) => `/api/v1/namespaces/${ns}/pods`;
const JOBS = (ns: string) => `/apis/batch/v1/namespaces/${ns}/jobs`;
const CRONJOBS = (ns: string) => `/apis/batch/v1/namespaces/${ns}/cronjobs`;

/** rc.go's newRC: one container, terminationGracePeriodSeconds 0, the selector defaulted from the labels */
function newRC(name: string, replicas: number, labels: Record<string, string>, container: string, image: string): Obj {
  return {
    apiVersion: 'v1', kind: 'ReplicationController', metadata: { name },
    spec: { replicas, template: { metadata: { labels: { ...labels } }, spec: { terminationGracePeriodSeconds: 0, containers: [{ name: container, image }] } } },
  };
}

const withSelector = (rc: Obj, selector: Record<string, string>): Obj => ({ ...rc, spec: { ...rc.spec, selector } });
const controllerOf = (p: Obj): Obj | undefined => ((p.metadata.ownerReferences ?? []) as Obj[]).find((r) => r.controller === true);

/** e2epod.WaitForPodCondition on the pod's controller reference */
function waitForController(ns: string, pod: string, owner: Obj | undefined, what: string): Promise<Obj> {
  return env.eventually(async () => {
    const p = await env.get(`${PODS(ns)}/${pod}`);
    const ref = controllerOf(p);
    if (owner === undefined) return ref === undefined ? p : undefined;
    if (ref === undefined) return undefined;
    expect({ kind: ref.kind, name: ref.name, uid: ref.uid }, 'the pod has the wrong controllerRef').toEqual({ kind: owner.kind, name: owner.metadata.name, uid: owner.metadata.uid });
    return p;
  }, `${pod} ${what}`);
}

/** e2ejob.WaitForAllJobPodsRunning */
const jobPodsRunning = (ns: string, job: string, n: number): Promise<Obj[]> => env.runningPods(ns, `batch.kubernetes.io/job-name=${job}`, n);

/** e2ejob.WaitForJobComplete: status.succeeded reaches the completions */
const jobComplete = (ns: string, name: string, completions: number, ms?: number): Promise<Obj> =>
  env.eventually(async () => {
    const j = await env.get(`${JOBS(ns)}/${name}`);
    return j.status?.succeeded === completions ? j : undefined;
  }, `${name} complete`, ms);

describe.concurrent('[sig-apps] ReplicationController', () => {
  it('should surface a failure condition on a common issue like exceeded quota [Conformance]', async () => {
    const ns = await namespace('rc-quota');
    const name = 'condition-test';
    await env.call('POST', `/api/v1/namespaces/${ns}/resourcequotas`, { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name }, spec: { hard: { pods: '2' } } });
    await env.eventually(async () => (await env.get(`/api/v1/namespaces/${ns}/resourcequotas/${name}`)).status?.hard?.pods === '2', 'the quota synced');

    const rc = await env.call('POST', RCS(ns), newRC(name, 3, { name }, 'httpd', WEBSERVER));
    const failure = await env.eventually(async () => {
      const cur = await env.get(`${RCS(ns)}/${name}`);
      return (cur.status?.observedGeneration ?? 0) >= rc.metadata.generation && condition(cur, 'ReplicaFailure');
    }, 'the ReplicaFailure condition');
    expect(failure).toMatchObject({ status: 'True', reason: 'FailedCreate' });

    const scaled = await env.eventually(async () => {
      const cur = await env.get(`${RCS(ns)}/${name}`);
      cur.spec.replicas = 2;
      const r = await env.ts().request('PUT', `${RCS(ns)}/${name}`, { body: cur });
      return r.status === 409 ? undefined : (expect(r.status, r.text).toBe(200), r.json<Obj>());
    }, 'the scale down');
    await env.eventually(async () => {
      const cur = await env.get(`${RCS(ns)}/${name}`);
      return (cur.status?.observedGeneration ?? 0) >= scaled.metadata.generation && condition(cur, 'ReplicaFailure') === undefined;
    }, 'the ReplicaFailure condition gone');
  });

  it('should adopt matching pods on creation [Conformance]', async () => {
    const ns = await namespace('rc-adopt');
    const name = 'pod-adoption';
    await env.call('POST', PODS(ns), { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { name } }, spec: { containers: [{ name, image: WEBSERVER }] } });
    await env.runningPods(ns, `name=${name}`, 1);
    const rc = await env.call('POST', RCS(ns), withSelector(newRC(name, 1, { name }, name, WEBSERVER), { name }));
    // adopted (or deleted and replaced, which kube also accepts)
    await env.eventually(async () => {
      const r = await env.ts().request('GET', `${PODS(ns)}/${name}`);
      if (r.status === 404) return true;
      return controllerOf(r.json<Obj>())?.uid === rc.metadata.uid;
    }, 'the orphan adopted');
  });

  it('should release no longer matching pods [Conformance]', async () => {
    const ns = await namespace('rc-release');
    const name = 'pod-release';
    const rc = await env.call('POST', RCS(ns), withSelector(newRC(name, 1, { name }, name, WEBSERVER), { name }));
    const [pod] = await env.eventually(async () => {
      const pods = (await env.list(PODS(ns), `name=${name}`)).items as Obj[];
      return pods.length === 1 ? pods : undefined;
    }, 'the RC pod');
    await updatePod(env, ns, pod!.metadata.name, (p) => (p.metadata.labels = { name: 'not-matching-name' }));
    await env.eventually(async () => controllerOf(await env.get(`${PODS(ns)}/${pod!.metadata.name}`))?.uid !== rc.metadata.uid, 'the pod released');
  });

  it('should get and update a ReplicationController scale [Conformance]', async () => {
    const ns = await namespace('rc-scale');
    const name = 'e2e-rc-scale';
    await env.call('POST', RCS(ns), newRC(name, 1, { name }, 'httpd', WEBSERVER));
    const replicas = (n: number) => env.eventually(async () => (await env.get(`${RCS(ns)}/${name}`)).status?.replicas === n, `${n} replicas`);
    await replicas(1);
    const scale = await env.get(`${RCS(ns)}/${name}/scale`);
    expect(scale.kind).toBe('Scale');
    expect(scale.status.replicas).toBe(1);
    scale.metadata.resourceVersion = ''; // unconditional
    scale.spec.replicas = 2;
    await env.call('PUT', `${RCS(ns)}/${name}/scale`, scale);
    await replicas(2);
  });
});

describe.concurrent('[sig-apps] Job', () => {
  it('should run a job to completion when tasks sometimes fail and are locally restarted [Conformance]', async () => {
    const ns = await namespace('job-fail-once');
    await env.call('POST', JOBS(ns), newTestJob('failOnce', 'fail-once-local', 2, 4, 6, 'OnFailure'));
    // each pod's container fails once and is restarted by the agent (10 s back-off), then succeeds
    const job = await jobComplete(ns, 'fail-once-local', 4, 120_000);
    expect(condition(job, 'Complete')?.status).toBe('True');
    const pods = (await env.list(PODS(ns), 'batch.kubernetes.io/job-name=fail-once-local')).items as Obj[];
    expect(pods.some((p) => (p.status.containerStatuses?.[0]?.restartCount ?? 0) > 0), 'a container was restarted in place').toBe(true);
  }, 150_000);

  it('should delete a job [Conformance]', async () => {
    const ns = await namespace('job-delete');
    await env.call('POST', JOBS(ns), newTestJob('notTerminate', 'foo', 2, 4, 6));
    await jobPodsRunning(ns, 'foo', 2);
    // DeleteResourceAndWaitForGC: a background delete, then the pods go
    await env.call('DELETE', `${JOBS(ns)}/foo`, { propagationPolicy: 'Background' });
    await env.eventually(async () => (await env.list(PODS(ns), 'batch.kubernetes.io/job-name=foo')).items.length === 0, 'the pods collected');
    expect((await env.ts().request('GET', `${JOBS(ns)}/foo`)).status).toBe(404);
  });

  it('should adopt matching orphans and release non-matching pods [Conformance]', async () => {
    const ns = await namespace('job-adopt');
    const job = { ...(await env.call('POST', JOBS(ns), newTestJob('notTerminate', 'adopt-release', 2, 4, 6))), kind: 'Job' };
    const pods = await jobPodsRunning(ns, 'adopt-release', 2);
    const pod = pods[0]!.metadata.name as string;

    await updatePod(env, ns, pod, (p) => (p.metadata.ownerReferences = null));
    await waitForController(ns, pod, job, 'adopted');

    await updatePod(env, ns, pod, (p) => (p.metadata.labels = null));
    await waitForController(ns, pod, undefined, 'released');
  });

  it('should fail when exceeds active deadline', async () => {
    const ns = await namespace('job-deadline');
    const spec = newTestJob('notTerminate', 'exceed-active-deadline', 2, 4, 6);
    spec.spec.activeDeadlineSeconds = 1;
    await env.call('POST', JOBS(ns), spec);
    // waitForJobFailure(DeadlineExceeded)
    const job = await env.eventually(async () => {
      const j = await env.get(`${JOBS(ns)}/exceed-active-deadline`);
      return condition(j, 'Failed')?.status === 'True' ? j : undefined;
    }, 'the Job failed');
    expect(condition(job, 'Failed')?.reason).toBe('DeadlineExceeded');
    // kube's job controller counts the pods it deletes at the deadline as failed (TestSyncJobPastDeadline)
    expect(job.status).toMatchObject({ failed: 2 });
    expect(job.status).not.toHaveProperty('active');
  });

  it('should fail to exceed backoffLimit', async () => {
    const ns = await namespace('job-backoff');
    const spec = newTestJob('notTerminate', 'backofflimit', 1, 1, 1);
    spec.spec.template.spec.containers[0].command = ['/bin/sh', '-c', 'exit 1']; // NewTestJob's "fail"
    await env.call('POST', JOBS(ns), spec);
    // the one retry comes after the job controller's 10 s back-off
    const job = await env.eventually(async () => {
      const j = await env.get(`${JOBS(ns)}/backofflimit`);
      return condition(j, 'Failed')?.status === 'True' ? j : undefined;
    }, 'the Job failed', 60_000);
    expect(condition(job, 'Failed')?.reason).toBe('BackoffLimitExceeded');
    const pods = (await env.list(PODS(ns), 'batch.kubernetes.io/job-name=backofflimit')).items as Obj[];
    expect(pods.map((p) => p.status.phase)).toEqual(['Failed', 'Failed']);
  }, 90_000);

  /** waitForJobCondition / WaitForJobFailed / WaitForJobComplete: the condition True (with the reason when given) */
  const jobCondition = (ns: string, name: string, type: string, reason?: string, ms = 60_000): Promise<Obj> =>
    env.eventually(async () => {
      const j = await env.get(`${JOBS(ns)}/${name}`);
      const c = condition(j, type);
      return c?.status === 'True' && (reason === undefined || c.reason === reason) ? j : undefined;
    }, `${name} ${type}${reason ? ` (${reason})` : ''}`, ms);

  it('should allow to use the pod failure policy on exit code to fail the job early [Conformance]', async () => {
    const ns = await privilegedNamespace('job-pfp-failjob');
    const dir = await mkdtemp(join(tmpdir(), 'orch-job-'));
    try {
      const spec = newTestJobOnNode('failOnce', 'pod-failure-failjob', 2, 4, 6, 'batch-node', dir);
      spec.spec.podFailurePolicy = { rules: [{ action: 'FailJob', onExitCodes: { operator: 'In', values: [1] } }] };
      await env.call('POST', JOBS(ns), spec);
      const job = await jobCondition(ns, 'pod-failure-failjob', 'Failed');
      // beyond kube's test: the reason the FailJob rule gives, with its interim FailureTarget
      expect(condition(job, 'Failed')?.reason).toBe('PodFailurePolicy');
      expect(condition(job, 'FailureTarget')?.reason).toBe('PodFailurePolicy');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('should allow to use a pod failure policy to ignore failure matching on DisruptionTarget condition [Conformance]', async () => {
    const ns = await privilegedNamespace('job-pfp-disruption');
    const dir = await mkdtemp(join(tmpdir(), 'orch-job-'));
    try {
      const numPods = 3;
      const spec = newTestJobOnNode('notTerminateOncePerIndex', 'evicted-pod-ignore-on-disruption-condition', numPods, numPods, numPods - 1, 'batch-node', dir);
      spec.spec.completionMode = 'Indexed';
      spec.spec.podFailurePolicy = { rules: [{ action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] }] };
      const name = spec.metadata.name as string;
      await env.call('POST', JOBS(ns), spec);
      // WaitForJobReady: status.ready = numPods
      await env.eventually(async () => (await env.get(`${JOBS(ns)}/${name}`)).status?.ready === numPods, 'all the pods ready');
      const pods = await jobPodsRunning(ns, name, numPods);
      expect(pods).toHaveLength(numPods);
      // evict all the pods (together), each then gone from the API
      await Promise.all(pods.map(async (p) => {
        await env.call('POST', `${PODS(ns)}/${p.metadata.name}/eviction`, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: p.metadata.name, namespace: ns } });
        await env.eventually(async () => (await env.ts().request('GET', `${PODS(ns)}/${p.metadata.name}`)).status === 404, `${p.metadata.name} deleted`, 60_000);
      }));
      const job = await jobCondition(ns, name, 'Complete', 'CompletionsReached', 90_000);
      expect(job.status.succeeded).toBe(numPods);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('should create pods for an Indexed job with completion indexes and specified hostname [Conformance]', async () => {
    const ns = await namespace('job-indexed');
    const spec = newTestJob('succeed', 'indexed-job', 2, 4, 6);
    spec.spec.completionMode = 'Indexed';
    await env.call('POST', JOBS(ns), spec);
    await jobComplete(ns, 'indexed-job', 4);
    const pods = (await env.list(PODS(ns), 'batch.kubernetes.io/job-name=indexed-job')).items as Obj[];
    const indexes = new Set<number>();
    for (const p of pods.filter((x) => x.status?.phase === 'Succeeded' && x.metadata.annotations)) {
      const ix = Number(p.metadata.annotations['batch.kubernetes.io/job-completion-index']);
      expect(Number.isInteger(ix), p.metadata.name).toBe(true);
      indexes.add(ix);
      expect(p.spec.hostname).toBe(`indexed-job-${ix}`);
    }
    expect([...indexes].sort()).toEqual([0, 1, 2, 3]);
  });
});

/** cronjob.go's newTestCronJob: one pod per run, restartPolicy OnFailure, an emptyDir at /data */
function newTestCronJob(name: string, schedule: string, concurrencyPolicy: string, command?: string[], successfulJobsHistoryLimit?: number, failedJobsHistoryLimit?: number): Obj {
  const container: Obj = { name: 'c', image: 'registry.k8s.io/e2e-test-images/busybox:1.36.1-1', volumeMounts: [{ mountPath: '/data', name: 'data' }], ...(command ? { command } : {}) };
  return {
    apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name },
    spec: {
      schedule, concurrencyPolicy, successfulJobsHistoryLimit, failedJobsHistoryLimit,
      jobTemplate: { spec: { parallelism: 1, completions: 1, backoffLimit: 1, template: { spec: { restartPolicy: 'OnFailure', volumes: [{ name: 'data', emptyDir: {} }], containers: [container] } } } },
    },
  };
}

describe.concurrent('[sig-apps] CronJob', () => {
  it('should support CronJob API operations [Conformance]', async () => {
    const ns = await namespace('cronjob-api');
    const unique = `${ns}-u`;
    const sel = `special-label=${unique}`;
    const template = newTestCronJob('test-api', '* */1 * * ?', 'Allow', ['/bin/true'], 1, 0);
    template.metadata.labels = { 'special-label': unique };

    const created = await env.call('POST', CRONJOBS(ns), template);
    expect((await env.get(`${CRONJOBS(ns)}/test-api`)).metadata.uid).toBe(created.metadata.uid);
    const cjs = await env.list(CRONJOBS(ns), sel);
    expect(cjs.items).toHaveLength(1);
    expect((await env.list('/apis/batch/v1/cronjobs', sel)).items).toHaveLength(1);

    const patched = await env.call('PATCH', `${CRONJOBS(ns)}/test-api`, { metadata: { annotations: { patched: 'true' } } });
    expect(patched.metadata.annotations).toMatchObject({ patched: 'true' });
    const updated = await env.eventually(async () => {
      const cur = await env.get(`${CRONJOBS(ns)}/test-api`);
      cur.metadata.annotations.updated = 'true';
      const r = await env.ts().request('PUT', `${CRONJOBS(ns)}/test-api`, { body: cur });
      return r.status === 409 ? undefined : (expect(r.status, r.text).toBe(200), r.json<Obj>());
    }, 'the update');
    expect(updated.metadata.annotations).toMatchObject({ updated: 'true' });
    // every event until the patched one is a MODIFIED one (the watch starts after the create)
    const seen = await env.until(CRONJOBS(ns), cjs.metadata.resourceVersion, sel, (e) => {
      expect(e.type).toBe('MODIFIED');
      return e.object.metadata.annotations?.patched === 'true';
    });
    expect(seen.type).toBe('MODIFIED');

    const now1 = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const patchedStatus = await env.call('PATCH', `${CRONJOBS(ns)}/test-api/status`, { metadata: { annotations: { patchedstatus: 'true' } }, status: { lastScheduleTime: now1 } });
    expect(patchedStatus.status.lastScheduleTime).toBe(now1);
    expect(patchedStatus.metadata.annotations).toMatchObject({ patchedstatus: 'true' });

    const now2 = new Date(Date.parse(now1) + 1000).toISOString().replace(/\.\d+Z$/, 'Z');
    const updatedStatus = await env.eventually(async () => {
      const cur = await env.get(`${CRONJOBS(ns)}/test-api`);
      cur.status = { ...(cur.status ?? {}), lastScheduleTime: now2 };
      const r = await env.ts().request('PUT', `${CRONJOBS(ns)}/test-api/status`, { body: cur });
      return r.status === 409 ? undefined : (expect(r.status, r.text).toBe(200), r.json<Obj>());
    }, 'the status update');
    expect(updatedStatus.status.lastScheduleTime).toBe(now2);
    expect((await env.get(`${CRONJOBS(ns)}/test-api/status`)).metadata.uid).toBe(created.metadata.uid);

    // a delete is immediate or leaves the CronJob with a deletionTimestamp and finalizers
    const forRemoval = await env.call('POST', CRONJOBS(ns), { ...template, metadata: { ...template.metadata, name: 'for-removal' } });
    await env.call('DELETE', `${CRONJOBS(ns)}/${forRemoval.metadata.name}`, {});
    const gone = await env.ts().request('GET', `${CRONJOBS(ns)}/for-removal`);
    if (gone.status !== 404) {
      expect(gone.status).toBe(200);
      expect(gone.json<Obj>().metadata.deletionTimestamp).toBeDefined();
      expect(gone.json<Obj>().metadata.finalizers).not.toEqual([]);
    }
    const r = await env.ts().request('DELETE', `${CRONJOBS(ns)}?labelSelector=${encodeURIComponent(sel)}`, { body: {} });
    expect(r.status, r.text).toBe(200);
    const left = (await env.list(CRONJOBS(ns), sel)).items as Obj[];
    expect(left.length).toBeLessThanOrEqual(2);
    for (const cj of left) {
      expect(cj.metadata.deletionTimestamp).toBeDefined();
      expect(cj.metadata.finalizers?.length ?? 0).toBeGreaterThan(0);
    }
  });
});

// The scheduling tests wait minutes for a `*/1 * * * ?` schedule on a real
// cluster. Here a second control plane runs on a JumpClock, and the test
// moves its clock from one schedule time to the next. Its node agent keeps
// real time, so the node lifecycle controller (which would find its Lease
// minutes old after a jump) is off; `sleep 300` pods stay active throughout.
describe('[sig-apps] CronJob scheduling', () => {
  const clock = new JumpClock();
  let t: TestServer | undefined;
  let agent: AgentProcess | undefined;
  beforeAll(async () => {
    t = await startTestServer({ apiDomain: 'k8s.io', clock, ...NO_NODE_LIFECYCLE });
    agent = await startAgentProcess(t, { nodeName: 'cron-node', config: { apiVersion: 'nodeagent.config.k8s.io/v1beta1' } });
    await waitNodeReady(t, agent, 'cron-node');
  }, 90_000);
  afterAll(async () => {
    await stopAgentAndServer(agent, t);
  });
  /** newNamespace, and its default ServiceAccount that the Jobs' pods need */
  const newNs = async (base: string): Promise<string> => {
    const ns = await newNamespace(t!, base);
    await eventually(async () => (await t!.request('GET', `/api/v1/namespaces/${ns}/serviceaccounts/default`)).status === 200, `${ns}'s default ServiceAccount`);
    return ns;
  };
  const SLEEP = ['sleep', '300'];
  const cronJob = async (ns: string, name: string): Promise<Obj> => call(t!, 'GET', `${CRONJOBS(ns)}/${name}`);
  const jobs = async (ns: string): Promise<Obj[]> => listItems(t!, JOBS(ns));
  const activeJobs = (items: Obj[]): Obj[] => items.filter((j) => !['Complete', 'Failed'].some((c) => condition(j, c)?.status === 'True'));
  /**
   * The clock a minute on, and again while `until` does not hold 10 s later (four jumps at most): a sync that
   * read the clock just before a jump arms its next timer from the jumped time (a real clock has no such
   * step), so that minute's Job would never come without another jump.
   */
  const jumpUntil = async (until: () => Promise<boolean>, what: string): Promise<void> => {
    for (let attempt = 0; ; attempt++) {
      clock.jump(60_000);
      if (await eventually(async () => (await until()) || undefined, what, { timeoutMs: 10_000, intervalMs: 100 }).then(() => true, () => false)) return;
      if (attempt === 3) throw new Error(`${what}: not after four jumps of a minute`);
    }
  };
  /** the clock to the next minute's schedule time, and the controller's answer to it */
  const nextMinute = async (ns: string, name: string, until: (cj: Obj, jobs: Obj[]) => boolean, what: string): Promise<Obj> => {
    let cj: Obj = {};
    await jumpUntil(async () => until((cj = await cronJob(ns, name)), await jobs(ns)), what);
    return cj;
  };
  const active = (cj: Obj): Obj[] => (cj.status?.active ?? []) as Obj[];
  const ownJobs = (items: Obj[], cronJobName: string): Obj[] => items.filter((j) => j.metadata.ownerReferences?.[0]?.name === cronJobName);
  // a second, plain CronJob in the namespace: once it has run at the current schedule time, the controller has
  // passed that time, so what the CronJob under test did not do by then it did not do (kube waits minutes instead)
  const witness = (ns: string): Promise<Obj> => call(t!, 'POST', CRONJOBS(ns), newTestCronJob('witness', '*/1 * * * ?', 'Allow', SLEEP));
  /** the clock to the next schedule time, and the witness scheduled at it */
  const witnessNextMinute = (ns: string): Promise<void> => {
    const minute = (): string => new Date(Math.floor(clock.now() / 60_000) * 60_000).toISOString().replace(/\.\d+Z$/, 'Z');
    return jumpUntil(async () => (await cronJob(ns, 'witness')).status?.lastScheduleTime === minute(), 'the witness scheduled at the current minute');
  };

  it('should schedule multiple jobs concurrently [Conformance]', async () => {
    const ns = await newNs('cronjob-concurrent');
    await call(t!, 'POST', CRONJOBS(ns), newTestCronJob('concurrent', '*/1 * * * ?', 'Allow', SLEEP));
    await nextMinute(ns, 'concurrent', (cj) => active(cj).length >= 1, 'one active job');
    await nextMinute(ns, 'concurrent', (cj) => active(cj).length >= 2, 'two active jobs');
    expect(activeJobs(await jobs(ns)).length).toBeGreaterThanOrEqual(2);
    await call(t!, 'DELETE', `${CRONJOBS(ns)}/concurrent`, { propagationPolicy: 'Background' });
  });

  it('should not schedule jobs when suspended [Slow] [Conformance]', async () => {
    const ns = await newNs('cronjob-suspended');
    const spec = newTestCronJob('suspended', '*/1 * * * ?', 'Allow', SLEEP);
    spec.spec.suspend = true;
    await call(t!, 'POST', CRONJOBS(ns), spec);
    await witness(ns);
    // kube: Consistently for five minutes; here five schedule times pass
    for (let i = 0; i < 5; i++) {
      await witnessNextMinute(ns);
      expect(active(await cronJob(ns, 'suspended'))).toEqual([]);
    }
    expect(ownJobs(await jobs(ns), 'suspended')).toEqual([]);
    await call(t!, 'DELETE', `${CRONJOBS(ns)}/suspended`, { propagationPolicy: 'Background' });
  });

  it('should not schedule new jobs when ForbidConcurrent [Slow] [Conformance]', async () => {
    const ns = await newNs('cronjob-forbid');
    await call(t!, 'POST', CRONJOBS(ns), newTestCronJob('forbid', '*/1 * * * ?', 'Forbid', SLEEP));
    await witness(ns);
    const cj = await nextMinute(ns, 'forbid', (c) => active(c).length >= 1, 'a job scheduled');
    expect(active(cj)).toHaveLength(1);
    expect(activeJobs(ownJobs(await jobs(ns), 'forbid'))).toHaveLength(1);
    // the next schedule times pass while the job runs: still one
    for (let i = 0; i < 3; i++) {
      await witnessNextMinute(ns);
      expect(active(await cronJob(ns, 'forbid'))).toHaveLength(1);
    }
    expect(ownJobs(await jobs(ns), 'forbid')).toHaveLength(1);
    await call(t!, 'DELETE', `${CRONJOBS(ns)}/forbid`, { propagationPolicy: 'Background' });
  });

  it('should replace jobs when ReplaceConcurrent [Conformance]', async () => {
    const ns = await newNs('cronjob-replace');
    await call(t!, 'POST', CRONJOBS(ns), newTestCronJob('replace', '*/1 * * * ?', 'Replace', SLEEP));
    const cj = await nextMinute(ns, 'replace', (c) => active(c).length >= 1, 'a job scheduled');
    expect(active(cj)).toHaveLength(1);
    const [first] = activeJobs(await jobs(ns));
    expect(first).toBeDefined();
    // waitForJobReplaced: one job not being deleted, another name
    let alive: Obj[] = [];
    await nextMinute(ns, 'replace', (_c, items) => {
      alive = items.filter((j) => !j.metadata.deletionTimestamp);
      return alive.length > 1 || (alive.length === 1 && alive[0]!.metadata.name !== first!.metadata.name);
    }, 'the job replaced');
    expect(alive.map((j) => j.metadata.name), 'one job running').toHaveLength(1);
    await call(t!, 'DELETE', `${CRONJOBS(ns)}/replace`, { propagationPolicy: 'Background' });
  });
  it('should remove from active list jobs that have been deleted', async () => {
    const ns = await newNs('cronjob-missing');
    const cronJobSpec = await call(t!, 'POST', CRONJOBS(ns), newTestCronJob('forbid', '*/1 * * * ?', 'Forbid', SLEEP));
    const cj = await nextMinute(ns, 'forbid', (c) => active(c).length >= 1, 'a job scheduled');
    expect(active(cj)).toHaveLength(1);
    const job = active(cj)[0]!.name as string;
    // DeleteResourceAndWaitForGC
    await call(t!, 'DELETE', `${JOBS(ns)}/${job}`, { propagationPolicy: 'Background' });
    await eventually(async () => (await listItems(t!, `/api/v1/namespaces/${ns}/pods?labelSelector=batch.kubernetes.io/job-name%3D${job}`)).length === 0, 'the pods collected', 20_000);
    expect((await t!.request('GET', `${JOBS(ns)}/${job}`)).status).toBe(404);
    await eventually(async () => !active(await cronJob(ns, 'forbid')).some((a) => a.name === job), 'the job off the active list', 20_000);
    // waitForEventWithReason: the CronJob's events (Events(ns).Search) include MissingJob
    const fields = `involvedObject.kind=CronJob,involvedObject.name=forbid,involvedObject.uid=${cronJobSpec.metadata.uid}`;
    await eventually(async () => (await listItems(t!, `/api/v1/namespaces/${ns}/events?fieldSelector=${encodeURIComponent(fields)}`)).some((e) => e.reason === 'MissingJob'), 'a MissingJob event', 20_000);
  });
  /** ensureHistoryLimits: one finished Job is kept; the next one's finish takes the first away with its pods */
  async function ensureHistoryLimits(base: string, command: string[], successLimit: number, failedLimit: number): Promise<void> {
    const ns = await newNs(base);
    await call(t!, 'POST', CRONJOBS(ns), newTestCronJob('history', '*/1 * * * ?', 'Allow', command, successLimit, failedLimit));
    const finishedJobs = (items: Obj[]): Obj[] => items.filter((j) => activeJobs([j]).length === 0);
    await jumpUntil(async () => (await jobs(ns)).length > 0, 'a job scheduled');
    await eventually(async () => finishedJobs(await jobs(ns)).length > 0, 'a finished job', 30_000);
    const [first, ...more] = finishedJobs(await jobs(ns));
    expect(more).toEqual([]);
    await jumpUntil(async () => (await jobs(ns)).some((j) => j.metadata.name !== first!.metadata.name), 'a second job scheduled');
    await eventually(async () => !finishedJobs(await jobs(ns)).some((j) => j.metadata.name === first!.metadata.name), 'the first job gone', 30_000);
    await eventually(async () => (await listItems(t!, `/api/v1/namespaces/${ns}/pods?labelSelector=controller-uid%3D${first!.metadata.uid}`)).length === 0, 'its pods gone', 30_000);
    expect(finishedJobs(await jobs(ns))).toHaveLength(1);
    await call(t!, 'DELETE', `${CRONJOBS(ns)}/history`, { propagationPolicy: 'Background' });
  }

  it('should delete successful finished jobs with limit of one successful job', async () => {
    await ensureHistoryLimits('cronjob-success-limit', ['/bin/true'], 1, 0);
  }, 90_000);

  it('should delete failed finished jobs with limit of one job', async () => {
    await ensureHistoryLimits('cronjob-failed-limit', ['/bin/false'], 0, 1);
  }, 90_000);
  it('should not emit unexpected warnings', async () => {
    const ns = await newNs('cronjob-warnings');
    // kube's template has no command: busybox's `sh` ends at once; the simulated runtime would run it forever
    const cj = await call(t!, 'POST', CRONJOBS(ns), newTestCronJob('concurrent', '*/1 * * * ?', 'Allow', ['/bin/true']));
    await jumpUntil(async () => (await jobs(ns)).length >= 1, 'a job');
    await jumpUntil(async () => (await jobs(ns)).length >= 2, 'two jobs');
    await eventually(async () => activeJobs(await jobs(ns)).length < (await jobs(ns)).length, 'a finished job', 30_000);
    const fields = `involvedObject.kind=CronJob,involvedObject.name=concurrent,involvedObject.uid=${cj.metadata.uid}`;
    const events = await listItems(t!, `/api/v1/namespaces/${ns}/events?fieldSelector=${encodeURIComponent(fields)}`);
    expect(events.map((e) => e.reason)).toContain('SuccessfulCreate');
    expect(events.filter((e) => ['MissingJob', 'UnexpectedJob'].includes(e.reason))).toEqual([]);
  }, 90_000);
});
