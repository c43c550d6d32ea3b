// The Job, CronJob and TTL-after-finished controllers (src/controllers/batch/)
// on a real LocalStore with a simulated clock: the test plays the node agent
// (it sets pod phases and container exit codes), and moves the clock for
// back-off, activeDeadlineSeconds, cron schedules and TTLs. No sleeps: the
// clock only moves when the test says so.

import { describe, expect, it } from 'vitest';
import type { ApiObject } from '../../src/registry/types.js';
import { SCHEDULED_TIMESTAMP } from '../../src/controllers/batch/cronjob.js';
import { COMPLETION_INDEX, TRACKING_FINALIZER } from '../../src/controllers/batch/job-plan.js';
import { type Env, type Obj, T0, active, advance, condition, conditions, createJob, env, eventMessages, finish, getJob, podsOf, settled, status } from '../helpers/batch-env.js';

describe('Job controller', () => {
  it('a NonIndexed Job: never more than parallelism active, finalizers removed once counted, SuccessCriteriaMet then Complete', async () => {
    const e = await env();
    const job = await createJob(e, 'pi', { completions: 3, parallelism: 2 });
    expect(job.spec).toMatchObject({ selector: { matchLabels: { 'batch.kubernetes.io/controller-uid': job.metadata!.uid } } });
    let ps = await podsOf(e, 'pi');
    expect(ps).toHaveLength(2);
    for (const p of ps) {
      expect(p.metadata?.labels).toMatchObject({ 'batch.kubernetes.io/controller-uid': job.metadata!.uid, 'batch.kubernetes.io/job-name': 'pi', 'controller-uid': job.metadata!.uid, 'job-name': 'pi' });
      expect(p.metadata?.finalizers).toEqual([TRACKING_FINALIZER]);
      expect(p.metadata?.ownerReferences).toEqual([{ apiVersion: 'batch/v1', kind: 'Job', name: 'pi', uid: job.metadata!.uid, controller: true, blockOwnerDeletion: true }]);
      expect(p.metadata?.generateName).toBe('pi-');
    }
    expect(await status(e, 'pi')).toMatchObject({ active: 2, succeeded: 0, failed: 0, startTime: '2026-01-01T00:00:30Z' });
    const first = ps[0]!;
    await finish(e, first, 0);
    ps = await podsOf(e, 'pi');
    expect(active(ps)).toHaveLength(2);
    expect(ps.find((p) => p.metadata?.uid === first.metadata?.uid)?.metadata?.finalizers).toBeUndefined();
    expect(await status(e, 'pi')).toMatchObject({ active: 2, succeeded: 1, uncountedTerminatedPods: {} });
    for (const p of active(ps)) await finish(e, p, 0);
    const st = await status(e, 'pi');
    expect(st).toMatchObject({ active: 0, succeeded: 3, failed: 0, completionTime: '2026-01-01T00:00:30Z' });
    const types = ((st.conditions ?? []) as Obj[]).map((c) => `${String(c.type)}=${String(c.status)}:${String(c.reason)}`);
    expect(types).toEqual(['SuccessCriteriaMet=True:CompletionsReached', 'Complete=True:CompletionsReached']);
    for (const p of await podsOf(e, 'pi')) expect(p.metadata?.finalizers).toBeUndefined();
  });

  it('Indexed: one pod per index with the annotation, label, hostname and JOB_COMPLETION_INDEX; each index completed once', async () => {
    const e = await env();
    await createJob(e, 'idx', { completions: 3, parallelism: 3, completionMode: 'Indexed' });
    // kube's JobStatus.completedIndexes is omitempty: nothing completed, no field
    expect((await getJob(e, 'idx')).status).toMatchObject({ active: 3 });
    expect((await getJob(e, 'idx')).status).not.toHaveProperty('completedIndexes');
    const ps = await podsOf(e, 'idx');
    expect(ps.map((p) => p.metadata?.annotations?.[COMPLETION_INDEX]).sort()).toEqual(['0', '1', '2']);
    for (const p of ps) {
      const i = p.metadata!.annotations![COMPLETION_INDEX]!;
      expect(p.metadata?.labels?.[COMPLETION_INDEX]).toBe(i);
      expect(p.metadata?.generateName).toBe(`idx-${i}-`);
      expect((p.spec as Obj).hostname).toBe(`idx-${i}`);
      expect(((p.spec as Obj).containers as Obj[])[0]!.env).toEqual([{ name: 'JOB_COMPLETION_INDEX', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: `metadata.annotations['${COMPLETION_INDEX}']` } } }]);
    }
    const byIndex = (i: string) => ps.find((p) => p.metadata?.annotations?.[COMPLETION_INDEX] === i)!;
    await finish(e, byIndex('2'), 0);
    await finish(e, byIndex('0'), 0);
    expect(await status(e, 'idx')).toMatchObject({ completedIndexes: '0,2', succeeded: 2, active: 1 });
    // index 1 fails: its replacement carries index 1 again, after the back-off
    await finish(e, byIndex('1'), 1);
    expect(active(await podsOf(e, 'idx'))).toHaveLength(0);
    await advance(e, 9_000);
    expect(active(await podsOf(e, 'idx'))).toHaveLength(0);
    await advance(e, 1_001);
    const again = active(await podsOf(e, 'idx'));
    expect(again.map((p) => p.metadata?.annotations?.[COMPLETION_INDEX])).toEqual(['1']);
    await finish(e, again[0]!, 0);
    expect(await status(e, 'idx')).toMatchObject({ completedIndexes: '0-2', succeeded: 3, failed: 1 });
    expect(await condition(e, 'idx', 'Complete')).toMatchObject({ status: 'True' });
  });

  it('backoffLimit: failed pods are replaced after 10 s, 20 s, …; past the limit FailureTarget then Failed with BackoffLimitExceeded', async () => {
    const e = await env();
    await createJob(e, 'bad', { backoffLimit: 2 });
    const fail = async (): Promise<void> => {
      const a = active(await podsOf(e, 'bad'));
      expect(a).toHaveLength(1);
      await finish(e, a[0]!, 1);
    };
    await fail();
    expect(await status(e, 'bad')).toMatchObject({ failed: 1, active: 0 });
    await advance(e, 9_000);
    expect(active(await podsOf(e, 'bad'))).toHaveLength(0);
    await advance(e, 1_001);
    await fail();
    await advance(e, 19_000);
    expect(active(await podsOf(e, 'bad'))).toHaveLength(0);
    await advance(e, 1_001);
    await fail();
    const st = await status(e, 'bad');
    expect(st).toMatchObject({ failed: 3, active: 0 });
    expect(st.completionTime).toBeUndefined();
    const types = ((st.conditions ?? []) as Obj[]).map((c) => `${String(c.type)}:${String(c.reason)}`);
    expect(types).toEqual(['FailureTarget:BackoffLimitExceeded', 'Failed:BackoffLimitExceeded']);
    expect(await condition(e, 'bad', 'Failed')).toMatchObject({ message: 'Job has reached the specified backoff limit' });
    await advance(e, 600_000);
    expect(await podsOf(e, 'bad')).toHaveLength(3);
  });

  it('activeDeadlineSeconds: the active pods are deleted and the Job fails with DeadlineExceeded', async () => {
    const e = await env();
    await createJob(e, 'slow', { parallelism: 2, completions: 4, activeDeadlineSeconds: 30 });
    expect(active(await podsOf(e, 'slow'))).toHaveLength(2);
    await advance(e, 29_000);
    expect(await condition(e, 'slow', 'Failed')).toBeUndefined();
    await advance(e, 1_001);
    expect(await podsOf(e, 'slow')).toHaveLength(0);
    expect(await condition(e, 'slow', 'Failed')).toMatchObject({ status: 'True', reason: 'DeadlineExceeded', message: 'Job was active longer than specified deadline' });
    // the pods still running when the Job fails count as failed (kube's TestSyncJobPastDeadline)
    expect(await status(e, 'slow')).toMatchObject({ failed: 2, active: 0, uncountedTerminatedPods: {} });
  });

  it('suspend deletes the active pods (not counted as failed) and sets Suspended; resuming creates them again', async () => {
    const e = await env();
    await createJob(e, 'sus', { parallelism: 2, completions: 2 });
    const made = active(await podsOf(e, 'sus')).map((p) => p.metadata!.name!);
    expect(made).toHaveLength(2);
    await e.gs('jobs', 'batch').guaranteedUpdate('default', 'sus', { dryRun: false }, (cur) => ({ ...cur!, spec: { ...(cur!.spec as Obj), suspend: true } }));
    await settled(e);
    expect(await podsOf(e, 'sus')).toHaveLength(0);
    // kube's pod control: `Deleted pod: <name>`
    expect(eventMessages(e, 'Job', 'sus', 'SuccessfulDelete').sort()).toEqual(made.map((n) => `Deleted pod: ${n}`).sort());
    expect(await condition(e, 'sus', 'Suspended')).toMatchObject({ status: 'True', reason: 'JobSuspended', message: 'Job suspended' });
    expect(await status(e, 'sus')).toMatchObject({ active: 0, failed: 0 });
    expect((await status(e, 'sus')).startTime).toBeUndefined();
    await e.gs('jobs', 'batch').guaranteedUpdate('default', 'sus', { dryRun: false }, (cur) => ({ ...cur!, spec: { ...(cur!.spec as Obj), suspend: false } }));
    await settled(e);
    expect(active(await podsOf(e, 'sus'))).toHaveLength(2);
    expect(await condition(e, 'sus', 'Suspended')).toMatchObject({ status: 'False', reason: 'JobResumed' });
  });

  it('podFailurePolicy: Ignore on DisruptionTarget is not counted, Count on exit code 3 is, FailJob on exit code 42 fails the Job', async () => {
    const e = await env();
    await createJob(e, 'pfp', {
      backoffLimit: 6,
      podFailurePolicy: {
        rules: [
          { action: 'FailJob', onExitCodes: { containerName: 'c', operator: 'In', values: [42] } },
          { action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget' }] },
          { action: 'Count', onExitCodes: { operator: 'In', values: [3] } },
        ],
      },
    });
    let a = active(await podsOf(e, 'pfp'));
    await finish(e, a[0]!, 137, { conditions: [{ type: 'DisruptionTarget', status: 'True', reason: 'PreemptionByScheduler' }] });
    expect(await status(e, 'pfp')).toMatchObject({ failed: 0 });
    // an ignored failure starts no back-off: the replacement comes at once
    a = active(await podsOf(e, 'pfp'));
    expect(a).toHaveLength(1);
    await finish(e, a[0]!, 3);
    expect(await status(e, 'pfp')).toMatchObject({ failed: 1 });
    await advance(e, 10_001);
    a = active(await podsOf(e, 'pfp'));
    expect(a).toHaveLength(1);
    await finish(e, a[0]!, 42);
    const failed = await condition(e, 'pfp', 'Failed');
    expect(failed).toMatchObject({ status: 'True', reason: 'PodFailurePolicy', message: `Container c for pod default/${a[0]!.metadata!.name!} failed with exit code 42 matching FailJob rule at index 0` });
    expect(await status(e, 'pfp')).toMatchObject({ failed: 2 });
  });

  it('restartPolicy OnFailure: container restarts of the active pods count against backoffLimit', async () => {
    const e = await env();
    await createJob(e, 'onf', { backoffLimit: 2, template: { spec: { containers: [{ name: 'c', image: 'busybox' }], restartPolicy: 'OnFailure' } } });
    const [p] = active(await podsOf(e, 'onf'));
    await e.gs('pods').guaranteedUpdate('default', p!.metadata!.name!, { dryRun: false, subresource: 'status' }, (cur) => ({
      ...cur!, status: { phase: 'Running', containerStatuses: [{ name: 'c', image: 'busybox', imageID: '', ready: false, restartCount: 2, state: { waiting: { reason: 'CrashLoopBackOff' } } }] },
    }));
    await settled(e);
    expect(await condition(e, 'onf', 'Failed')).toMatchObject({ reason: 'BackoffLimitExceeded' });
    expect(await podsOf(e, 'onf')).toHaveLength(0);
    // the restarting pod, deleted as the Job fails, is its failure
    expect(await status(e, 'onf')).toMatchObject({ failed: 1, active: 0 });
  });

  it('a count interrupted after its first write (uids in uncountedTerminatedPods, finalizer still on) is finished once by the next run', async () => {
    const e = await env();
    await createJob(e, 'crash', { completions: 2 });
    const [p] = active(await podsOf(e, 'crash'));
    // the controller "crashes": stopped, the pod finishes, and the status holds what its first write would have
    e.controllers[0]!.stop();
    await finish(e, p!, 0);
    await e.gs('jobs', 'batch').guaranteedUpdate('default', 'crash', { dryRun: false, subresource: 'status' }, (cur) => ({
      ...cur!, status: { ...(cur!.status as Obj), uncountedTerminatedPods: { succeeded: [p!.metadata!.uid!] } },
    }));
    expect((await podsOf(e, 'crash'))[0]!.metadata?.finalizers).toEqual([TRACKING_FINALIZER]);
    e.controllers[0]!.start();
    await settled(e);
    expect(await status(e, 'crash')).toMatchObject({ succeeded: 1, failed: 0, active: 1, uncountedTerminatedPods: {} });
    expect((await podsOf(e, 'crash')).find((x) => x.metadata?.uid === p!.metadata!.uid)?.metadata?.finalizers).toBeUndefined();
  });

  it('a Job whose spec.managedBy names another controller is left alone', async () => {
    const e = await env();
    await createJob(e, 'theirs', { managedBy: 'example.com/other' });
    await createJob(e, 'ours', { managedBy: 'kubernetes.io/job-controller' });
    expect(await podsOf(e, 'theirs')).toHaveLength(0);
    // the empty status every Job carries (kube's Go zero shape): nothing the controller wrote
    expect((await getJob(e, 'theirs')).status).toEqual({});
    expect(await podsOf(e, 'ours')).toHaveLength(1);
  });

  it('a pod whose Job is gone loses the tracking finalizer', async () => {
    const e = await env();
    const job = await createJob(e, 'gone', {});
    const [p] = await podsOf(e, 'gone');
    await e.gs('pods').delete('default', p!.metadata!.name!, { dryRun: false, gracePeriodSeconds: 30 });
    // unbound: deleted at once but for the finalizer, which the job would count as a failure
    await e.gs('jobs', 'batch').delete('default', 'gone', { dryRun: false, propagationPolicy: 'Orphan', preconditions: { uid: job.metadata!.uid! } });
    await settled(e);
    expect(await podsOf(e, 'gone')).toHaveLength(0);
  });
});

describe('TTL after finished', () => {
  it('deletes a finished Job ttlSecondsAfterFinished after its completion', async () => {
    const e = await env();
    await createJob(e, 'ttl', { ttlSecondsAfterFinished: 100 });
    await finish(e, active(await podsOf(e, 'ttl'))[0]!, 0);
    expect(await condition(e, 'ttl', 'Complete')).toMatchObject({ status: 'True' });
    await advance(e, 99_000);
    expect(await e.gs('jobs', 'batch').get('default', 'ttl')).toBeDefined();
    await advance(e, 1_001);
    await expect(e.gs('jobs', 'batch').get('default', 'ttl')).rejects.toMatchObject({ code: 404 });
  });
});

describe('CronJob controller', () => {
  async function cron(e: Env, name: string, spec: Obj): Promise<void> {
    await e.gs('cronjobs', 'batch').create('default', {
      apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name },
      spec: { jobTemplate: { metadata: { labels: { team: 'a' } }, spec: { template: { spec: { containers: [{ name: 'c', image: 'busybox' }], restartPolicy: 'Never' } } } }, ...spec },
    }, { dryRun: false });
    await settled(e);
  }
  const jobs = async (e: Env): Promise<ApiObject[]> => e.gs('jobs', 'batch').list('default');
  const cjStatus = async (e: Env, name: string): Promise<Obj> => (((await e.gs('cronjobs', 'batch').get('default', name)) as ApiObject).status ?? {}) as Obj;

  it('creates <name>-<minutes> at each schedule time with the scheduled-timestamp annotation; Forbid waits for the active Job', async () => {
    const e = await env();
    await cron(e, 'tick', { schedule: '*/5 * * * *', concurrencyPolicy: 'Forbid' });
    expect(await jobs(e)).toHaveLength(0);
    await advance(e, 5 * 60_000); // 00:05:30
    let js = await jobs(e);
    const at = Date.parse('2026-01-01T00:05:00Z');
    expect(js.map((j) => j.metadata?.name)).toEqual([`tick-${at / 60_000}`]);
    expect(js[0]!.metadata?.annotations?.[SCHEDULED_TIMESTAMP]).toBe('2026-01-01T00:05:00Z');
    expect(js[0]!.metadata?.labels).toMatchObject({ team: 'a' });
    expect(js[0]!.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'CronJob', name: 'tick', controller: true });
    expect(await cjStatus(e, 'tick')).toMatchObject({ lastScheduleTime: '2026-01-01T00:05:00Z', active: [{ kind: 'Job', name: `tick-${at / 60_000}` }] });
    await advance(e, 5 * 60_000); // 00:10:30: the first still runs
    expect(await jobs(e)).toHaveLength(1);
    // it finishes: the 00:10 time it held back still falls within no deadline, so it starts now (as kube's)
    await finish(e, active(await podsOf(e, js[0]!.metadata!.name!))[0]!, 0);
    const st = await cjStatus(e, 'tick');
    expect(st).toMatchObject({ lastSuccessfulTime: '2026-01-01T00:10:30Z', lastScheduleTime: '2026-01-01T00:10:00Z' });
    expect((st.active as Obj[]).map((a) => a.name)).toEqual([`tick-${at / 60_000 + 5}`]);
    js = await jobs(e);
    expect(js.map((j) => j.metadata?.name).sort()).toEqual([`tick-${at / 60_000}`, `tick-${at / 60_000 + 5}`]);
  });

  it('Replace deletes the running Job; history limits keep the newest finished Jobs; suspend stops scheduling', async () => {
    const e = await env();
    await cron(e, 'rep', { schedule: '@hourly', concurrencyPolicy: 'Replace', successfulJobsHistoryLimit: 1 });
    await advance(e, 3_600_000);
    const first = (await jobs(e))[0]!;
    await advance(e, 3_600_000);
    const names = (await jobs(e)).map((j) => j.metadata?.name);
    expect(names).not.toContain(first.metadata!.name);
    expect(names).toHaveLength(1);
    // kube's cronjob deleteJob words it `Deleted job <name>` (no colon, unlike pod deletes)
    expect(eventMessages(e, 'CronJob', 'rep', 'SuccessfulDelete')).toEqual([`Deleted job ${first.metadata!.name}`]);
    // two finish; one is kept
    await finish(e, active(await podsOf(e, names[0]!))[0]!, 0);
    await e.gs('cronjobs', 'batch').guaranteedUpdate('default', 'rep', { dryRun: false }, (cur) => ({ ...cur!, spec: { ...(cur!.spec as Obj), concurrencyPolicy: 'Allow' } }));
    await advance(e, 3_600_000);
    const third = (await jobs(e)).find((j) => j.metadata?.name !== names[0])!;
    await finish(e, active(await podsOf(e, third.metadata!.name!))[0]!, 0);
    expect((await jobs(e)).map((j) => j.metadata?.name)).toEqual([third.metadata!.name]);
    expect(eventMessages(e, 'CronJob', 'rep', 'SuccessfulDelete')).toEqual([`Deleted job ${first.metadata!.name}`, `Deleted job ${names[0]!}`]);
    await e.gs('cronjobs', 'batch').guaranteedUpdate('default', 'rep', { dryRun: false }, (cur) => ({ ...cur!, spec: { ...(cur!.spec as Obj), suspend: true } }));
    await advance(e, 3 * 3_600_000);
    expect(await jobs(e)).toHaveLength(1);
  });

  it('startingDeadlineSeconds: a time missed by more is skipped; more than 100 missed times still start the latest', async () => {
    const e = await env();
    await cron(e, 'late', { schedule: '0 * * * *', startingDeadlineSeconds: 60, suspend: true });
    await advance(e, 3_600_000 + 120_000); // 01:02:30: 01:00 missed by 150 s
    await e.gs('cronjobs', 'batch').guaranteedUpdate('default', 'late', { dryRun: false }, (cur) => ({ ...cur!, spec: { ...(cur!.spec as Obj), suspend: false } }));
    await settled(e);
    expect(await jobs(e)).toHaveLength(0);
    await cron(e, 'many', { schedule: '* * * * *', suspend: true });
    await advance(e, 200 * 60_000);
    await e.gs('cronjobs', 'batch').guaranteedUpdate('default', 'many', { dryRun: false }, (cur) => ({ ...cur!, spec: { ...(cur!.spec as Obj), suspend: false } }));
    await settled(e);
    const made = (await jobs(e)).map((j) => j.metadata?.name);
    expect(made).toEqual([`many-${Math.floor(e.clock.now() / 60_000)}`]);
  });

  it('status.active: a Job made by hand from the CronJob is not listed; one of its own with a later scheduled time is', async () => {
    const e = await env();
    await cron(e, 'own', { schedule: '0 3 * * *' });
    const cj = (await e.gs('cronjobs', 'batch').get('default', 'own')) as ApiObject;
    const owner = [{ apiVersion: 'batch/v1', kind: 'CronJob', name: 'own', uid: cj.metadata!.uid!, controller: true, blockOwnerDeletion: true }];
    const make = async (name: string, annotations: Record<string, string>): Promise<void> => {
      await e.gs('jobs', 'batch').create('default', {
        apiVersion: 'batch/v1', kind: 'Job', metadata: { name, annotations, ownerReferences: owner },
        spec: { template: { spec: { containers: [{ name: 'c', image: 'busybox' }], restartPolicy: 'Never' } } },
      }, { dryRun: false });
      await settled(e);
    };
    await make('own-manual', { 'cronjob.kubernetes.io/instantiate': 'manual' });
    expect((await cjStatus(e, 'own')).active).toBeUndefined();
    await make('own-29453760', { [SCHEDULED_TIMESTAMP]: '2026-01-01T00:00:00Z' });
    expect(await cjStatus(e, 'own')).toMatchObject({ active: [{ name: 'own-29453760' }], lastScheduleTime: '2026-01-01T00:00:00Z' });
  });

  it('@every 90s: a Job every 90 s from the creation second, named by the scheduled minute', async () => {
    const e = await env();
    await cron(e, 'every', { schedule: '@every 90s' }); // created at 00:00:30
    await advance(e, 60_000); // 00:01:30: the first time is 00:02:00
    expect(await jobs(e)).toHaveLength(0);
    await advance(e, 60_000); // 00:02:30
    expect((await jobs(e)).map((j) => j.metadata?.annotations?.[SCHEDULED_TIMESTAMP])).toEqual(['2026-01-01T00:02:00Z']);
    await advance(e, 90_000); // 00:04:00
    const js = await jobs(e);
    const at = [Date.parse('2026-01-01T00:02:00Z'), Date.parse('2026-01-01T00:03:30Z')];
    expect(js.map((j) => j.metadata?.name).sort()).toEqual(at.map((t) => `every-${Math.floor(t / 60_000)}`).sort());
    expect(js.map((j) => j.metadata?.annotations?.[SCHEDULED_TIMESTAMP]).sort()).toEqual(['2026-01-01T00:02:00Z', '2026-01-01T00:03:30Z']);
    expect(await cjStatus(e, 'every')).toMatchObject({ lastScheduleTime: '2026-01-01T00:03:30Z' });
  });

  it('spec.timeZone: the schedule is read on that zone\'s wall clock and the annotation carries its offset', async () => {
    const e = await env();
    // 09:00 in Tokyo is 00:00 UTC
    await cron(e, 'tz', { schedule: '0 9 * * *', timeZone: 'Asia/Tokyo' });
    await advance(e, 24 * 3_600_000);
    const js = await jobs(e);
    expect(js.map((j) => j.metadata?.name)).toEqual([`tz-${Date.parse('2026-01-02T00:00:00Z') / 60_000}`]);
    expect(js[0]!.metadata?.annotations?.[SCHEDULED_TIMESTAMP]).toBe('2026-01-02T09:00:00+09:00');
  });
});
