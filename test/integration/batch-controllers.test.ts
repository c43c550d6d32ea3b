// The Job, CronJob and TTL-after-finished controllers against a started
// server with kubectl 1.32: the test plays the node agent (it finishes the
// Job's pods with a phase and an exit code), so `kubectl wait` sees
// Complete and Failed; `kubectl create job --from=cronjob/x` makes a Job
// the controllers run; `kubectl delete job` takes its pods along (the
// garbage collector, and the tracking finalizer removed for it), and a
// plain API DELETE orphans them with kube's warning; an Indexed Job with
// backoffLimitPerIndex, FailIndex and a successPolicy, and kubectl seeing
// kube's 422 for a field kube refuses; a never-firing schedule's
// InvalidSchedule event. No timing
// is asserted: `eventually` and kubectl's --timeout only bound a failure.

import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { runKubectl } from '../helpers/kubectl.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

let ts: TestServer;
let kc: string;
const PODS = '/api/v1/namespaces/default/pods';
const JOBS = '/apis/batch/v1/namespaces/default/jobs';

interface Obj {
  metadata: { name: string; uid: string; labels?: Record<string, string>; annotations?: Record<string, string>; finalizers?: string[]; ownerReferences?: { kind: string; name: string; uid: string; controller?: boolean }[] };
  spec: Record<string, unknown>;
  status?: Record<string, unknown> & { phase?: string; conditions?: { type: string; status: string; reason?: string }[] };
}

async function podsOf(job: string): Promise<Obj[]> {
  const r = await ts.request('GET', `${PODS}?labelSelector=${encodeURIComponent(`batch.kubernetes.io/job-name=${job}`)}`);
  expect(r.status, r.text).toBe(200);
  return r.json<{ items: Obj[] }>().items;
}

/** the node agent's part: the pod ran and its container exited with `code` */
async function finish(p: Obj, code: number): Promise<void> {
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const status = {
    phase: code === 0 ? 'Succeeded' : 'Failed',
    containerStatuses: [{ name: String(((p.spec.containers as { name: string }[])[0])!.name), image: 'busybox', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: code, reason: code === 0 ? 'Completed' : 'Error', startedAt: now, finishedAt: now } } }],
  };
  const r = await ts.request('PUT', `${PODS}/${p.metadata.name}/status`, { body: { ...p, status } });
  expect(r.status, r.text).toBe(200);
}

async function activePod(job: string): Promise<Obj> {
  return eventually(async () => (await podsOf(job)).find((p) => !p.status?.phase || p.status.phase === 'Pending'), `an active pod of ${job}`, { timeoutMs: 30_000 });
}

beforeAll(async () => {
  // no scheduler: the pods stay unbound, the test finishes them
  ts = await startTestServer({ authn: { controllers: ['*', '-scheduler'] } });
  kc = join(ts.dataDir, 'admin.kubeconfig');
});

afterAll(async () => {
  await ts?.stop();
});

describe('batch controllers with kubectl', () => {
  it('kubectl create job runs a pod with kube\'s labels (the Job carries them too); kubectl wait --for=condition=complete returns once it succeeded', async () => {
    const create = await runKubectl(kc, ['create', 'job', 'hello', '--image=busybox', '--', 'echo', 'hi']);
    expect(create.code, create.stderr).toBe(0);
    const job = (await ts.request('GET', `${JOBS}/hello`)).json<Obj>();
    // SetDefaults_Job: a Job without labels takes its template's, the generated ones included
    expect(job.metadata.labels).toEqual({ 'batch.kubernetes.io/controller-uid': job.metadata.uid, 'batch.kubernetes.io/job-name': 'hello', 'controller-uid': job.metadata.uid, 'job-name': 'hello' });
    const pod = await activePod('hello');
    expect(pod.metadata.labels).toMatchObject({ 'batch.kubernetes.io/controller-uid': job.metadata.uid, 'batch.kubernetes.io/job-name': 'hello', 'controller-uid': job.metadata.uid, 'job-name': 'hello' });
    expect(pod.metadata.finalizers).toEqual(['batch.kubernetes.io/job-tracking']);
    expect(pod.metadata.ownerReferences).toMatchObject([{ kind: 'Job', name: 'hello', uid: job.metadata.uid, controller: true }]);
    expect((pod.spec.containers as { command: string[] }[])[0]!.command).toEqual(['echo', 'hi']);
    await finish(pod, 0);
    const wait = await runKubectl(kc, ['wait', '--for=condition=complete', 'job/hello', '--timeout=25s']);
    expect(wait.code, wait.stderr).toBe(0);
    expect(wait.stdout).toContain('job.batch/hello condition met');
    const get = await runKubectl(kc, ['get', 'job', 'hello']);
    expect(get.stdout).toMatch(/hello\s+Complete\s+1\/1/);
    const done = (await ts.request('GET', `${JOBS}/hello`)).json<Obj>();
    // kube's JobStatus leaves out the omitempty counters at 0
    expect(done.status).toMatchObject({ succeeded: 1 });
    expect(done.status).not.toHaveProperty('active');
    expect(done.status).not.toHaveProperty('failed');
    expect(done.status?.conditions?.map((c) => c.type)).toEqual(['SuccessCriteriaMet', 'Complete']);
    expect((await podsOf('hello'))[0]!.metadata.finalizers).toBeUndefined();
  });

  it('a failing Job with backoffLimit 0 reaches Failed with BackoffLimitExceeded', async () => {
    const r = await ts.request('POST', JOBS, {
      body: { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'boom' }, spec: { backoffLimit: 0, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox', command: ['false'] }] } } } },
    });
    expect(r.status, r.text).toBe(201);
    await finish(await activePod('boom'), 1);
    const wait = await runKubectl(kc, ['wait', '--for=condition=failed', 'job/boom', '--timeout=25s']);
    expect(wait.code, wait.stderr).toBe(0);
    const job = (await ts.request('GET', `${JOBS}/boom`)).json<Obj>();
    expect(job.status?.conditions?.find((c) => c.type === 'Failed')).toMatchObject({ status: 'True', reason: 'BackoffLimitExceeded' });
    expect(job.status).toMatchObject({ failed: 1 });
    expect(job.status).not.toHaveProperty('succeeded');
  });

  it('Indexed with backoffLimitPerIndex: FailIndex fails index 0 without a retry, index 1 succeeds, kubectl wait sees Failed (FailedIndexes)', async () => {
    const r = await ts.request('POST', JOBS, {
      body: {
        apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'perindex' },
        spec: {
          completions: 2, parallelism: 2, completionMode: 'Indexed', backoffLimitPerIndex: 1,
          podFailurePolicy: { rules: [{ action: 'FailIndex', onExitCodes: { operator: 'In', values: [42] } }] },
          template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } },
        },
      },
    });
    expect(r.status, r.text).toBe(201);
    const at = async (i: string): Promise<Obj> => eventually(async () => (await podsOf('perindex')).find((p) => (!p.status?.phase || p.status.phase === 'Pending') && p.metadata.annotations?.['batch.kubernetes.io/job-completion-index'] === i), `a pod of index ${i}`, { timeoutMs: 30_000 });
    const zero = await at('0');
    expect(zero.metadata.annotations?.['batch.kubernetes.io/job-index-failure-count']).toBe('0');
    await finish(zero, 42);
    await finish(await at('1'), 0);
    const wait = await runKubectl(kc, ['wait', '--for=condition=failed', 'job/perindex', '--timeout=25s']);
    expect(wait.code, wait.stderr).toBe(0);
    const job = (await ts.request('GET', `${JOBS}/perindex`)).json<Obj>();
    expect(job.status).toMatchObject({ failedIndexes: '0', completedIndexes: '1', failed: 1, succeeded: 1 });
    expect(job.status?.conditions?.find((c) => c.type === 'Failed')).toMatchObject({ status: 'True', reason: 'FailedIndexes' });
    // no second pod was made for index 0
    expect((await podsOf('perindex')).filter((p) => p.metadata.annotations?.['batch.kubernetes.io/job-completion-index'] === '0')).toHaveLength(1);
  });

  it('a successPolicy ends an Indexed Job once its leader index succeeded: kubectl wait --for=condition=complete', async () => {
    const r = await ts.request('POST', JOBS, {
      body: {
        apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'leader' },
        spec: { completions: 3, parallelism: 3, completionMode: 'Indexed', successPolicy: { rules: [{ succeededIndexes: '0' }] }, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } },
      },
    });
    expect(r.status, r.text).toBe(201);
    const zero = await eventually(async () => (await podsOf('leader')).find((p) => p.metadata.annotations?.['batch.kubernetes.io/job-completion-index'] === '0'), 'the pod of index 0', { timeoutMs: 30_000 });
    await finish(zero, 0);
    const wait = await runKubectl(kc, ['wait', '--for=condition=complete', 'job/leader', '--timeout=25s']);
    expect(wait.code, wait.stderr).toBe(0);
    const job = (await ts.request('GET', `${JOBS}/leader`)).json<Obj>();
    expect(job.status?.conditions?.map((c) => `${c.type}:${c.reason}`)).toEqual(['SuccessCriteriaMet:SuccessPolicy', 'Complete:SuccessPolicy']);
    expect(job.status).toMatchObject({ completedIndexes: '0', succeeded: 1 });
    expect(job.status).not.toHaveProperty('active');
  });

  it('kubectl create -f of a Job kube refuses (backoffLimitPerIndex on a NonIndexed Job) prints kube\'s 422', async () => {
    const file = join(ts.dataDir, 'bad-job.json');
    await writeFile(file, JSON.stringify({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'refused' }, spec: { backoffLimitPerIndex: 1, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } } }));
    const r = await runKubectl(kc, ['create', '-f', file]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('The Job "refused" is invalid: spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode');
    expect((await ts.request('GET', `${JOBS}/refused`)).status).toBe(404);
  });

  it("a Job or CronJob manifest without restartPolicy is kube's 422 (the PodSpec default Always is not a Job's)", async () => {
    const file = join(ts.dataDir, 'no-restart-policy.yaml');
    const containers = [{ name: 'c', image: 'busybox' }];
    await writeFile(file, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [
      { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'norp' }, spec: { template: { spec: { containers } } } },
      { apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'norp' }, spec: { schedule: '@hourly', jobTemplate: { spec: { template: { spec: { containers } } } } } },
    ] }));
    const r = await runKubectl(kc, ['create', '-f', file]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('Job.batch "norp" is invalid: spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"');
    expect(r.stderr).toContain('CronJob.batch "norp" is invalid: spec.jobTemplate.spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"');
  });

  it('kubectl create job --from=cronjob/x makes a Job the controller runs; kubectl delete job takes its pods along', async () => {
    const cj = await runKubectl(kc, ['create', 'cronjob', 'nightly', '--image=busybox', '--schedule=0 3 * * *', '--', 'true']);
    expect(cj.code, cj.stderr).toBe(0);
    const from = await runKubectl(kc, ['create', 'job', 'manual', '--from=cronjob/nightly']);
    expect(from.code, from.stderr).toBe(0);
    const job = (await ts.request('GET', `${JOBS}/manual`)).json<Obj>();
    expect(job.metadata.annotations?.['cronjob.kubernetes.io/instantiate']).toBe('manual');
    expect(job.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'CronJob', name: 'nightly' });
    const pod = await activePod('manual');
    expect((pod.spec.containers as { command: string[] }[])[0]!.command).toEqual(['true']);
    // a running Job the CronJob controls but did not make: kube's UnexpectedJob warning on the CronJob
    const fields = encodeURIComponent('involvedObject.kind=CronJob,involvedObject.name=nightly');
    const warned = await eventually(async () => {
      const events = (await ts.request('GET', `/api/v1/namespaces/default/events?fieldSelector=${fields}`)).json<{ items: { reason: string; type: string; message: string }[] }>().items;
      return events.find((e) => e.reason === 'UnexpectedJob');
    }, 'an UnexpectedJob event', { timeoutMs: 20_000 });
    expect(warned).toMatchObject({ type: 'Warning', message: 'Saw a job that the controller did not create or forgot: manual' });
    const del = await runKubectl(kc, ['delete', 'job', 'manual']);
    expect(del.code, del.stderr).toBe(0);
    await eventually(async () => (await podsOf('manual')).length === 0, 'the Job\'s pods deleted', { timeoutMs: 30_000 });
  });

  it('a DELETE of a Job without a propagation policy orphans its pods with kube\'s warning; they lose the tracking finalizer and keep running', async () => {
    const r = await ts.request('POST', JOBS, {
      body: { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'keep' }, spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox', command: ['sleep', '60'] }] } } } },
    });
    expect(r.status, r.text).toBe(201);
    const pod = await activePod('keep');
    const del = await ts.request('DELETE', `${JOBS}/keep`);
    expect(del.status, del.text).toBe(200);
    expect(String(del.headers.warning)).toContain('child pods are preserved by default when jobs are deleted; set propagationPolicy=Background to remove them or set propagationPolicy=Orphan to suppress this warning');
    await eventually(async () => (await ts.request('GET', `${JOBS}/keep`)).status === 404, 'the Job gone', { timeoutMs: 30_000 });
    const left = await eventually(async () => {
      const p = (await ts.request('GET', `${PODS}/${pod.metadata.name}`)).json<Obj>();
      return !p.metadata.ownerReferences && !p.metadata.finalizers ? p : undefined;
    }, 'the pod orphaned without the finalizer', { timeoutMs: 30_000 });
    expect(left.metadata.uid).toBe(pod.metadata.uid);
    expect((left as { metadata: { deletionTimestamp?: string } }).metadata.deletionTimestamp).toBeUndefined();
    // an explicit policy says what it wants: no warning
    const again = await ts.request('POST', JOBS, {
      body: { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'quiet' }, spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } } },
    });
    expect(again.status, again.text).toBe(201);
    const quiet = await ts.request('DELETE', `${JOBS}/quiet`, { body: { propagationPolicy: 'Background' } });
    expect(quiet.status, quiet.text).toBe(200);
    expect(quiet.headers.warning).toBeUndefined();
  });

  it('a CronJob whose schedule never fires (Feb 31) gets kube\'s InvalidSchedule warning, seen with kubectl events', async () => {
    const c = await runKubectl(kc, ['create', 'cronjob', 'never', '--schedule=59 23 31 2 *', '--image=busybox', '--', 'true']);
    expect(c.code, c.stderr).toBe(0);
    const out = await eventually(async () => {
      const r = await runKubectl(kc, ['events', '--for=CronJob/never', '--types=Warning']);
      return r.stdout.includes('InvalidSchedule') ? r.stdout : undefined;
    }, 'the InvalidSchedule event');
    expect(out).toContain('invalid schedule: 59 23 31 2 * : time difference between two schedules is less than 1 second');
    expect((await ts.request('GET', `${JOBS}`)).json<{ items: Obj[] }>().items.filter((j) => j.metadata.name.startsWith('never-'))).toEqual([]);
  });

  it('ttlSecondsAfterFinished: 0 deletes the Job once it completed', async () => {
    const r = await ts.request('POST', JOBS, {
      body: { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'brief' }, spec: { ttlSecondsAfterFinished: 0, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox', command: ['true'] }] } } } },
    });
    expect(r.status, r.text).toBe(201);
    await finish(await activePod('brief'), 0);
    await eventually(async () => (await ts.request('GET', `${JOBS}/brief`)).status === 404, 'the finished Job deleted', { timeoutMs: 30_000 });
    await eventually(async () => (await podsOf('brief')).length === 0, 'its pod deleted with it', { timeoutMs: 30_000 });
  });
});

describe('Job labels', () => {
  it('a Job without labels takes its template labels as sent; one with labels keeps its own', async () => {
    const job = (name: string, labels?: Record<string, string>): Record<string, unknown> => ({
      apiVersion: 'batch/v1', kind: 'Job', metadata: { name, ...(labels ? { labels } : {}) },
      spec: { template: { metadata: { labels: { app: 'x' } }, spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } },
    });
    const bare = await ts.request('POST', JOBS, { body: job('lbl-bare') });
    expect(bare.status, bare.text).toBe(201);
    expect(bare.json<Obj>().metadata.labels).toEqual({ app: 'x' });
    const own = await ts.request('POST', JOBS, { body: job('lbl-own', { team: 'a' }) });
    expect(own.json<Obj>().metadata.labels).toEqual({ team: 'a' });
    // an update that clears the labels gets the template's again, as kube's defaulting on decode does
    const cleared = await ts.request('PATCH', `${JOBS}/lbl-own`, { body: { metadata: { labels: null } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
    expect(cleared.status, cleared.text).toBe(200);
    expect(cleared.json<Obj>().metadata.labels).toMatchObject({ app: 'x', 'job-name': 'lbl-own' });
  });
});
