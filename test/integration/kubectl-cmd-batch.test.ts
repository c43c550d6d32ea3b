// Port of kube's kubectl command tests for Jobs, CronJobs and Events (kubernetes/kubernetes
// test/cmd/batch.sh, test/cmd/testdata/batch.txtar, test/cmd/events.sh), run with the real kubectl 1.32
// against orch with kube's group names and no node agent. Ported:
//   run_job_tests / batch.txtar — create cronjob (client and server dry-run create nothing), get and
//     describe (also with --chunk-size, whose lists carry `limit`), create job --from=cronjob (dry-runs,
//     `-o name`), the Job's owner and template, delete messages;
//   run_kubectl_events_tests — the CronJob controller's `InvalidSchedule` warning for a schedule that
//     never fires (`59 23 31 2 *`) through `kubectl events` (-A, -n, --for, --watch, --types,
//     --no-headers, -o json|yaml).

import { describe, expect, it } from 'vitest';
import { type Obj, cmdEnv } from '../helpers/kubectl-cmd.js';

const env = cmdEnv();
const { ok, run, json, describeChunks, until } = env;
/** kube's `{{range.items}}{{.metadata.name}}:{{end}}` */
const names = async (...args: string[]): Promise<string> => (await env.names(...args)).map((x) => `${x}:`).join('');
const namespace = env.newNs;
const PERL = 'registry.k8s.io/perl';
const NEVER = '59 23 31 2 *';
const cronjob = (n: string, ...flags: string[]): Promise<string> =>
  ok('create', 'cronjob', 'pi', `--schedule=${NEVER}`, `--namespace=${n}`, `--image=${PERL}`, ...flags, '--', 'perl', '-Mbignum=bpi', '-wle', 'print bpi(20)');

describe.concurrent('kubectl batch (test/cmd/batch.sh, batch.txtar, events.sh)', () => {
  it('run_job_tests: a CronJob, and a Job made from it', async () => {
    const n = await namespace('test-jobs');
    expect(await ok('create', '--dry-run=client', '-o', 'name', 'namespace', 'x')).toBe('namespace/x\n');
    expect(await cronjob(n, '--dry-run=client')).toBe('cronjob.batch/pi created (dry run)\n');
    expect(await cronjob(n, '--dry-run=server')).toBe('cronjob.batch/pi created (server dry run)\n');
    expect(await names('cronjob', '-n', n)).toBe('');
    expect(await cronjob(n)).toBe('cronjob.batch/pi created\n');
    const cj = await json('cronjob/pi', '-n', n);
    expect(cj.spec).toMatchObject({ schedule: NEVER, concurrencyPolicy: 'Allow', suspend: false, successfulJobsHistoryLimit: 3, failedJobsHistoryLimit: 1 });
    expect(cj.spec.jobTemplate.spec.template.spec.containers[0]).toMatchObject({ name: 'pi', image: PERL, command: ['perl', '-Mbignum=bpi', '-wle', 'print bpi(20)'] });
    const [table, described] = await Promise.all([ok('get', 'cronjob/pi', '-n', n), ok('describe', 'cronjob/pi', '-n', n), describeChunks(['-n', n], 'cronjobs', ['events'])]);
    expect(table.split('\n')[0]).toMatch(/^NAME\s+SCHEDULE\s+TIMEZONE\s+SUSPEND\s+ACTIVE\s+LAST SCHEDULE\s+AGE$/);
    expect(table.split('\n')[1]).toMatch(/^pi\s+59 23 31 2 \*\s+<none>\s+False\s+0\s+<none>\s+\d+s$/);
    for (const s of ['Name:', 'pi', 'Schedule:', NEVER]) expect(described).toContain(s);

    expect(await ok('create', 'job', 'test-job', '--from=cronjob/pi', '--dry-run=true', `--namespace=${n}`, '-o', 'name')).toBe('job.batch/test-job\n');
    expect(await ok('create', 'job', 'test-job', '--from=cronjob/pi', `--namespace=${n}`, '--dry-run=client')).toBe('job.batch/test-job created (dry run)\n');
    expect(await ok('create', 'job', 'test-job', '--from=cronjob/pi', `--namespace=${n}`, '--dry-run=server')).toBe('job.batch/test-job created (server dry run)\n');
    expect(await names('jobs', '-n', n)).toBe('');
    expect(await ok('create', 'job', 'test-job', '--from=cronjob/pi', `--namespace=${n}`)).toBe('job.batch/test-job created\n');
    const job = await json('job/test-job', '-n', n);
    expect(job.metadata.annotations).toEqual({ 'cronjob.kubernetes.io/instantiate': 'manual' });
    expect(job.metadata.ownerReferences).toEqual([
      { apiVersion: 'batch/v1', kind: 'CronJob', name: 'pi', uid: cj.metadata.uid, controller: true },
    ]);
    expect(job.spec.template.spec.containers[0].image).toBe(PERL);
    const [jobTable, jobDescribed] = await Promise.all([ok('get', 'job/test-job', '-n', n), ok('describe', 'job/test-job', '-n', n), describeChunks(['-n', n], 'jobs', ['events'])]);
    expect(jobTable.split('\n')[0]).toMatch(/^NAME\s+STATUS\s+COMPLETIONS\s+DURATION\s+AGE$/);
    expect(jobTable.split('\n')[1]).toMatch(/^test-job\s+Running\s+0\/1\s+\d+s\s+\d+s$/);
    for (const re of [/Name:\s+test-job/, /Controlled By:\s+CronJob\/pi/, /Parallelism:\s+1/, /Completions:\s+1/]) expect(jobDescribed).toMatch(re);

    expect(await ok('delete', 'job', 'test-job', `--namespace=${n}`)).toBe('job.batch "test-job" deleted\n');
    expect(await ok('delete', 'cronjob', 'pi', `--namespace=${n}`)).toBe('cronjob.batch "pi" deleted\n');
    expect(await ok('delete', 'namespace', n)).toBe(`namespace "${n}" deleted\n`);
  });

  it('run_kubectl_events_tests: the InvalidSchedule warning of a CronJob that never fires', async () => {
    const n = await namespace('test-events');
    // the other test makes a CronJob pi too, concurrently: -A is read for the rows of this namespace
    const rowsOfNamespace = (out: string): string => out.split('\n').filter((l) => l.startsWith(`${n} `)).join('\n');
    expect(rowsOfNamespace(await ok('events', '-A'))).not.toContain('CronJob/pi');
    await cronjob(n);
    const warning = /\S+\s+Warning\s+InvalidSchedule\s+CronJob\/pi\s+invalid schedule: 59 23 31 2 \* : time difference between two schedules is less than 1 second/;
    await until(async () => warning.test(rowsOfNamespace(await ok('events', '-A'))), 'the InvalidSchedule event');
    const [inNs, forCj, watched, warnings, normal, headless, asJson, asYaml] = await Promise.all([
      ok('events', '-n', n),
      ok('events', '-n', n, '--for=Cronjob/pi'),
      run('events', '-n', n, '--for=Cronjob/pi', '--watch', '--request-timeout=1'),
      ok('events', '-n', n, '--for=Cronjob/pi', '--types=Warning'),
      ok('events', '-n', n, '--for=Cronjob/pi', '--types=Normal'),
      ok('events', '-n', n, '--for=Cronjob/pi', '--no-headers'),
      ok('events', '-n', n, '--for=Cronjob/pi', '--output=json'),
      ok('events', '-n', n, '--for=Cronjob/pi', '--output=yaml'),
    ]);
    for (const out of [inNs, forCj, watched.stdout, warnings, headless]) expect(out).toMatch(warning);
    expect(inNs.split('\n')[0]).toMatch(/^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE$/);
    expect(normal).not.toContain('InvalidSchedule');
    expect(headless).not.toContain('LAST SEEN');
    const list = JSON.parse(asJson) as Obj;
    expect(list.kind).toBe('EventList');
    expect(list.items[0]).toMatchObject({
      type: 'Warning',
      reason: 'InvalidSchedule',
      involvedObject: { kind: 'CronJob', name: 'pi', namespace: n, apiVersion: 'batch/v1' },
      source: { component: 'cronjob-controller' },
    });
    expect(asYaml).toContain('reason: InvalidSchedule');
    await ok('delete', 'cronjob', 'pi', `--namespace=${n}`);
  });
});
