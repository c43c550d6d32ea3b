// batch/v1 Job and CronJob (issue #11 item 4): kube's defaults, the generated
// selector and labels of a Job, schedule validation; no controller runs them
// yet (docs/compatibility.md).

import type { SchemaNames } from '../schema/naming.js';
import type { ApiObject, FieldError, ResourceDefinition } from '../types.js';
import { column, get, getString, since } from './columns.js';
import { atomicList, bool, enumOf, int32, int64, obj, opaque, ref, str, time } from './dsl.js';
import { kindSchema } from './meta.js';
import { selectorText } from './scale.js';
import { conditions, containersCell, defaultTemplate, immutable, labelSelector, podTemplateSpec, setDefault, validateTemplate } from './workload-common.js';

/** `kubernetes.io` with --api-domain k8s.io, else the domain (label keys of the product) */
export const labelDomain = (apiDomain: string): string => (apiDomain === 'k8s.io' ? 'kubernetes.io' : apiDomain);

function jobSpecSchema(n: SchemaNames) {
  return obj('Desired behaviour of the Job.', {
    parallelism: int32('Pods running at once; default 1.', { minimum: 0 }),
    completions: int32('Successful pods needed; default 1.', { minimum: 0 }),
    activeDeadlineSeconds: int64('Seconds the job may run before it is terminated.', { minimum: 1 }),
    podFailurePolicy: opaque('How pod failures count.'),
    successPolicy: opaque('When the job is declared succeeded.'),
    backoffLimit: int32('Retries before the job fails; default 6.', { minimum: 0 }),
    backoffLimitPerIndex: int32('Retries per index (Indexed jobs).'),
    maxFailedIndexes: int32('Failed indexes before the job fails.'),
    selector: labelSelector(n, 'Label selector of the pods; generated unless manualSelector.'),
    manualSelector: bool('The selector is given by the user.'),
    template: podTemplateSpec(n, 'Template of the pods.'),
    ttlSecondsAfterFinished: int32('Seconds after finishing before the job is deleted.'),
    completionMode: enumOf('How completions are tracked; default NonIndexed.', ['Indexed', 'NonIndexed']),
    suspend: bool('The job is suspended.'),
    podReplacementPolicy: enumOf('When replacement pods are created.', ['Failed', 'TerminatingOrFailed']),
    managedBy: str('Controller that manages the job.'),
  }, ['template']);
}

function validateJobTemplate(o: ApiObject, ...path: string[]): FieldError[] {
  const errs = validateTemplate(o, ...path);
  const rp = getString(o, ...path, 'spec', 'restartPolicy');
  if (rp !== 'OnFailure' && rp !== 'Never') {
    errs.push({ field: `${path.join('.')}.spec.restartPolicy`, type: 'FieldValueRequired', message: 'Required value: valid values: "OnFailure", "Never"' });
  }
  return errs;
}

function defaultJobSpec(o: ApiObject, ...path: string[]): void {
  setDefault(o, 1, ...path, 'parallelism');
  if (get(o, ...path, 'completionMode') !== 'Indexed') setDefault(o, 1, ...path, 'completions');
  setDefault(o, 6, ...path, 'backoffLimit');
  setDefault(o, 'NonIndexed', ...path, 'completionMode');
  setDefault(o, false, ...path, 'suspend');
  setDefault(o, 'TerminatingOrFailed', ...path, 'podReplacementPolicy');
  // the template gets no restartPolicy default: a Job must choose OnFailure or Never
  const spec = get(o, ...path, 'template', 'spec');
  const rp = spec && typeof spec === 'object' && !Array.isArray(spec) ? spec.restartPolicy : undefined;
  defaultTemplate(o, ...path, 'template');
  if (spec && typeof spec === 'object' && !Array.isArray(spec)) {
    if (rp === undefined) delete spec.restartPolicy;
  }
}

export function jobDefinition(n: SchemaNames): ResourceDefinition {
  const ld = labelDomain(n.apiDomain);
  return {
    group: 'batch',
    version: 'v1',
    kind: 'Job',
    resource: 'jobs',
    singular: 'job',
    scope: 'Namespaced',
    categories: ['all'],
    subresources: ['status'],
    schema: kindSchema(n, 'Job represents the configuration of a single job.', {
      spec: jobSpecSchema(n),
      status: obj('Current status of the job.', {
        conditions: conditions('Latest observations of the state.'),
        startTime: time('When the job started.'),
        completionTime: time('When the job completed.'),
        active: int32('Pending and running pods.'),
        succeeded: int32('Pods that succeeded.'),
        failed: int32('Pods that failed.'),
        terminating: int32('Pods terminating.'),
        completedIndexes: str('Completed indexes (Indexed jobs).'),
        failedIndexes: str('Failed indexes.'),
        uncountedTerminatedPods: opaque('Terminated pods not yet counted.'),
        ready: int32('Pods ready.'),
      }),
    }),
    strategy: {
      tracksGeneration: true,
      default: (o) => defaultJobSpec(o, 'spec'),
      // kube generates the selector and pod labels from the job's uid unless manualSelector
      prepareForCreate(o) {
        if (get(o, 'spec', 'manualSelector') === true) return;
        const uid = o.metadata?.uid ?? '';
        const name = o.metadata?.name ?? '';
        const labels: Record<string, string> = { [`batch.${ld}/controller-uid`]: uid, [`batch.${ld}/job-name`]: name, 'controller-uid': uid, 'job-name': name };
        setDefault(o, {}, 'spec', 'template', 'metadata');
        const meta = get(o, 'spec', 'template', 'metadata') as Record<string, unknown>;
        meta.labels = { ...((meta.labels as Record<string, string> | undefined) ?? {}), ...labels };
        (o.spec as Record<string, unknown>).selector = { matchLabels: { [`batch.${ld}/controller-uid`]: uid } };
      },
      validate: (o) => validateJobTemplate(o, 'spec', 'template'),
      validateUpdate: (o, old) => [...validateJobTemplate(o, 'spec', 'template'), ...immutable(o, old, 'spec', 'selector'), ...immutable(o, old, 'spec', 'completions'), ...immutable(o, old, 'spec', 'completionMode')],
      columns: [
        column('Status', 'string', jobStatus, { description: 'Status of the job.' }),
        column('Completions', 'string', (o) => `${Number(get(o, 'status', 'succeeded') ?? 0)}/${get(o, 'spec', 'completions') ?? 1}`, { description: 'The desired number of successfully finished pods the job should be run with.' }),
        column('Duration', 'string', (o) => {
          const start = getString(o, 'status', 'startTime');
          if (!start) return '';
          const end = getString(o, 'status', 'completionTime');
          return since(start, end ? Date.parse(end) : Date.now());
        }, { description: 'Time required to complete the job.' }),
        column('Containers', 'string', (o) => containersCell(o, 'name', 'spec', 'template'), { priority: 1, description: 'Names of each container in the template.' }),
        column('Images', 'string', (o) => containersCell(o, 'image', 'spec', 'template'), { priority: 1, description: 'Images referenced by each container in the template.' }),
        column('Selector', 'string', (o) => selectorText(get(o, 'spec', 'selector')), { priority: 1, description: 'Selector of the pods.' }),
      ],
      selectableFields: { 'status.successful': (o) => String(get(o, 'status', 'succeeded') ?? 0) },
    },
  };
}

function jobStatus(o: ApiObject): string {
  const conds = (get(o, 'status', 'conditions') as { type?: string; status?: string }[] | undefined) ?? [];
  const has = (t: string): boolean => conds.some((c) => c.type === t && c.status === 'True');
  if (has('Complete')) return 'Complete';
  if (has('Failed')) return 'Failed';
  if (has('Suspended')) return 'Suspended';
  if (has('FailureTarget')) return 'FailureTarget';
  if (has('SuccessCriteriaMet')) return 'SuccessCriteriaMet';
  return 'Running';
}

const CRON_MACROS = new Set(['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly']);

/** five cron fields (or a macro), as kube's parser accepts them */
export function validCron(s: string): boolean {
  const text = s.replace(/^(CRON_)?TZ=\S+\s+/, '').trim();
  if (CRON_MACROS.has(text)) return true;
  if (/^@every\s+\S+$/.test(text)) return true;
  const fields = text.split(/\s+/);
  if (fields.length !== 5) return false;
  return fields.every((f) => /^(\*|\?|[0-9A-Za-z]+(-[0-9A-Za-z]+)?)(\/\d+)?(,(\*|[0-9A-Za-z]+(-[0-9A-Za-z]+)?)(\/\d+)?)*$/.test(f));
}

export function cronJobDefinition(n: SchemaNames): ResourceDefinition {
  return {
    group: 'batch',
    version: 'v1',
    kind: 'CronJob',
    resource: 'cronjobs',
    singular: 'cronjob',
    scope: 'Namespaced',
    shortNames: ['cj'],
    categories: ['all'],
    subresources: ['status'],
    schema: kindSchema(n, 'CronJob represents the configuration of a single cron job.', {
      spec: obj('Desired behaviour of the CronJob.', {
        schedule: str('The schedule, in Cron format.'),
        timeZone: str('Time zone of the schedule.'),
        startingDeadlineSeconds: int64('Seconds after a missed start before the run is skipped.'),
        concurrencyPolicy: enumOf('How concurrent runs are treated; default Allow.', ['Allow', 'Forbid', 'Replace']),
        suspend: bool('Later runs are suspended.'),
        jobTemplate: obj('The job to create.', {
          metadata: ref(n.meta('ObjectMeta'), 'Metadata of the jobs created.'),
          spec: jobSpecSchema(n),
        }),
        successfulJobsHistoryLimit: int32('Finished jobs to keep; default 3.'),
        failedJobsHistoryLimit: int32('Failed jobs to keep; default 1.'),
      }, ['schedule', 'jobTemplate']),
      status: obj('Current status.', {
        active: atomicList('Running jobs.', ref(n.core('ObjectReference'))),
        lastScheduleTime: time('Last time a job was scheduled.'),
        lastSuccessfulTime: time('Last time a job completed.'),
      }),
    }),
    strategy: {
      tracksGeneration: true,
      default(o) {
        setDefault(o, 'Allow', 'spec', 'concurrencyPolicy');
        setDefault(o, false, 'spec', 'suspend');
        setDefault(o, 3, 'spec', 'successfulJobsHistoryLimit');
        setDefault(o, 1, 'spec', 'failedJobsHistoryLimit');
        if (get(o, 'spec', 'jobTemplate', 'spec')) defaultJobSpec(o, 'spec', 'jobTemplate', 'spec');
      },
      validate: validateCronJob,
      validateUpdate: (o) => validateCronJob(o),
      columns: [
        column('Schedule', 'string', (o) => getString(o, 'spec', 'schedule') ?? '', { description: 'The schedule.' }),
        column('Timezone', 'string', (o) => getString(o, 'spec', 'timeZone') ?? '<none>', { description: 'The time zone.' }),
        column('Suspend', 'boolean', (o) => get(o, 'spec', 'suspend') === true, { description: 'Whether later runs are suspended.' }),
        column('Active', 'integer', (o) => ((get(o, 'status', 'active') as unknown[] | undefined) ?? []).length, { description: 'Running jobs.' }),
        column('Last Schedule', 'date', (o) => getString(o, 'status', 'lastScheduleTime') ?? null, { description: 'Last time a job was scheduled.' }),
        column('Containers', 'string', (o) => containersCell(o, 'name', 'spec', 'jobTemplate', 'spec', 'template'), { priority: 1, description: 'Names of the containers.' }),
        column('Images', 'string', (o) => containersCell(o, 'image', 'spec', 'jobTemplate', 'spec', 'template'), { priority: 1, description: 'Images of the containers.' }),
      ],
    },
  };
}

function validateCronJob(o: ApiObject): FieldError[] {
  const errs: FieldError[] = [];
  const schedule = getString(o, 'spec', 'schedule');
  if (schedule === undefined || schedule === '') errs.push({ field: 'spec.schedule', type: 'FieldValueRequired', message: 'Required value' });
  else if (!validCron(schedule)) errs.push({ field: 'spec.schedule', type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(schedule)}: unparseable schedule: expected exactly 5 fields` });
  if (!get(o, 'spec', 'jobTemplate', 'spec', 'template')) errs.push({ field: 'spec.jobTemplate.spec.template', type: 'FieldValueRequired', message: 'Required value' });
  else errs.push(...validateJobTemplate(o, 'spec', 'jobTemplate', 'spec', 'template'));
  return errs;
}
