// batch/v1 Job and CronJob. Stored and served with Kubernetes' defaulting and
// validation; the batch controllers (src/controllers/batch/) run them.

import type { SchemaNames } from '../../machinery/schema/naming.js';
import type { ApiObject, FieldError, JSONValue, ResourceDefinition } from '../types.js';
import { column, countOf, get, getArray, getObject, getString, since } from './columns.js';
import { atomicList, bool, enumOf, int32, int64, obj, opaque, proto, ref, setList, str, time } from '../../machinery/schema/dsl.js';
import { kindSchema } from './meta.js';
import { validateCronSchedule } from './cronjob-validation.js';
import { validateJobImmutable, validateJobPolicies } from './job-validation.js';
import { condition, conditions, defaultPodTemplate, num, selector, selectorText, template, templateContainers, validateSelectorAndTemplate } from './workload-shared.js';
import { POD_TEMPLATE_SHAPE } from '../zero-shape.js';

function jobSpec(n: SchemaNames) {
  return obj('Specification of the desired behaviour of a job.', proto({
    parallelism: 1, completions: 2, activeDeadlineSeconds: 3, podFailurePolicy: 11, successPolicy: 16, backoffLimit: 7, backoffLimitPerIndex: 12,
    maxFailedIndexes: 13, selector: 4, manualSelector: 5, template: 6, ttlSecondsAfterFinished: 8, completionMode: 9, suspend: 10, podReplacementPolicy: 14, managedBy: 15,
  }, {
    parallelism: int32('Maximum desired number of pods running at any given time.'),
    completions: int32('Desired number of successfully finished pods.'),
    activeDeadlineSeconds: int64('Seconds the job may be continuously active before the system tries to terminate it.'),
    podFailurePolicy: obj('How failed pods influence the backoffLimit.', proto({ rules: 1 }, {
      rules: atomicList('Rules evaluated in order.', obj('One rule.', proto({ action: 1, onExitCodes: 2, onPodConditions: 3 }, {
        action: str('FailJob, FailIndex, Ignore or Count.'),
        onExitCodes: obj('Requirement on the container exit codes.', proto({ containerName: 1, operator: 2, values: 3 }, {
          containerName: str('Container the check is restricted to.'),
          operator: str('In or NotIn.'),
          values: setList('Exit codes.', { type: 'integer', format: 'int32' }),
        })),
        onPodConditions: atomicList('Pod condition patterns.', obj('One pattern.', proto({ type: 1, status: 2 }, { type: str('Pod condition type.'), status: str('Pod condition status.') }))),
      }))),
    })),
    successPolicy: obj('When the Job can be declared as succeeded.', proto({ rules: 1 }, {
      rules: atomicList('Alternative rules.', obj('One rule.', proto({ succeededIndexes: 1, succeededCount: 2 }, {
        succeededIndexes: str('Indexes that must have succeeded.'),
        succeededCount: int32('Minimal number of succeeded indexes.'),
      }))),
    })),
    backoffLimit: int32('Number of retries before marking this job failed. Defaults to 6.'),
    backoffLimitPerIndex: int32('Retries within an index before marking it failed.'),
    maxFailedIndexes: int32('Maximal number of failed indexes before marking the Job failed.'),
    selector: selector(n, 'Label query over pods; generated from the job uid unless manualSelector is set.'),
    manualSelector: bool('Controls generation of pod labels and pod selectors.'),
    template: template(n, 'The pods that will be created when executing the job.'),
    ttlSecondsAfterFinished: int32('Lifetime of a finished Job before it is deleted.'),
    completionMode: enumOf('How pod completions are tracked.', ['Indexed', 'NonIndexed']),
    suspend: bool('Whether the Job controller should create pods.'),
    podReplacementPolicy: enumOf('When to create replacement pods.', ['Failed', 'TerminatingOrFailed']),
    managedBy: str('The controller that manages the Job.'),
  }), ['template']);
}

/** Kubernetes' Job defaults and the generated selector (`batch.kubernetes.io/controller-uid`) */
function defaultJob(spec: Record<string, JSONValue> | undefined): void {
  if (!spec) return;
  if (spec.completions === undefined && spec.parallelism === undefined) spec.completions = 1;
  spec.parallelism ??= 1;
  // kube: unlimited (MaxInt32) when backoffLimitPerIndex is set, else 6
  spec.backoffLimit ??= spec.backoffLimitPerIndex !== undefined ? 2147483647 : 6;
  spec.completionMode ??= 'NonIndexed';
  spec.suspend ??= false;
  // kube: a podFailurePolicy needs terminating pods to reach Failed before they are replaced
  spec.podReplacementPolicy ??= spec.podFailurePolicy !== undefined ? 'Failed' : 'TerminatingOrFailed';
  defaultNestedJobSpec(spec);
}

/**
 * The defaults of the types inside a JobSpec, which a CronJob's jobTemplate
 * gets too (kube has no JobSpec-level defaulter; SetDefaults_Job is the Job's):
 * the pod template's (restartPolicy Always like any PodSpec, which validation
 * then refuses unless set) and SetDefaults_PodFailurePolicyOnPodConditionsPattern.
 */
function defaultNestedJobSpec(spec: Record<string, JSONValue> | undefined): void {
  if (!spec) return;
  defaultPodTemplate(getObject(spec, 'template'));
  for (const r of getArray(spec, 'podFailurePolicy', 'rules')) {
    for (const c of getArray(r, 'onPodConditions')) if (c !== null && typeof c === 'object' && !Array.isArray(c)) c.status ??= 'True';
  }
}

/**
 * kube's SetDefaults_Job: a Job without labels takes its template's. kube
 * defaults on every decode, reads from storage included, so a Job created
 * without labels shows the generated selector's labels once prepared.
 */
function defaultJobLabels(o: ApiObject): void {
  const tmplLabels = getObject(o, 'spec', 'template', 'metadata', 'labels');
  if (!o.metadata || !tmplLabels || Object.keys(tmplLabels).length === 0) return;
  if (Object.keys(o.metadata.labels ?? {}).length === 0) o.metadata.labels = { ...(tmplLabels as Record<string, string>) };
}

/** kube's job labels: the generated selector's and the job name, each also under its legacy key */
export const JOB_UID_LABEL = 'batch.kubernetes.io/controller-uid';
export const JOB_NAME_LABEL = 'batch.kubernetes.io/job-name';

/**
 * kube's Job PrepareForCreate: the status is the controller's, and unless
 * `manualSelector` is set the selector is generated from the uid and its
 * labels (with the job name, new and legacy keys) added to the template.
 */
function prepareJob(o: ApiObject): void {
  delete (o as { status?: unknown }).status;
  const spec = getObject(o, 'spec');
  if (!spec || spec.manualSelector === true || spec.selector !== undefined) return;
  const uid = o.metadata?.uid ?? '';
  const name = o.metadata?.name ?? '';
  spec.selector = { matchLabels: { [JOB_UID_LABEL]: uid } };
  const tmpl = (spec.template ??= {}) as Record<string, JSONValue>;
  const meta = (tmpl.metadata ??= {}) as Record<string, JSONValue>;
  meta.labels = { ...((meta.labels ?? {}) as Record<string, JSONValue>), [JOB_UID_LABEL]: uid, [JOB_NAME_LABEL]: name, 'controller-uid': uid, 'job-name': name };
  defaultJobLabels(o);
}

function validateJob(o: ApiObject, at: string, old?: ApiObject): FieldError[] {
  const errs = validateSelectorAndTemplate(o, at, { selectorOptional: true, owner: 'Job', old });
  // kube's validateJobSpec: the PodSpec default (Always) and an absent value read as not given
  const rp = getString(o, ...at.split('.'), 'template', 'spec', 'restartPolicy');
  if (rp === undefined || rp === '' || rp === 'Always') {
    errs.push({ field: `${at}.template.spec.restartPolicy`, type: 'FieldValueRequired', message: 'Required value: valid values: "OnFailure", "Never"' });
  } else if (rp !== 'OnFailure' && rp !== 'Never') {
    errs.push({ field: `${at}.template.spec.restartPolicy`, type: 'FieldValueNotSupported', message: `Unsupported value: ${JSON.stringify(rp)}: supported values: "OnFailure", "Never"` });
  }
  for (const f of ['parallelism', 'completions', 'backoffLimit', 'activeDeadlineSeconds']) {
    const v = get(o, ...at.split('.'), f);
    if (typeof v === 'number' && v < 0) errs.push({ field: `${at}.${f}`, type: 'FieldValueInvalid', message: `Invalid value: ${v}: must be greater than or equal to 0` });
  }
  const spec = getObject(o, ...at.split('.'));
  if (spec) errs.push(...validateJobPolicies(spec, at));
  return errs;
}

export function jobDefinition(n: SchemaNames): ResourceDefinition {
  return {
    group: 'batch', version: 'v1', kind: 'Job', resource: 'jobs', singular: 'job', scope: 'Namespaced',
    categories: ['all'], subresources: ['status'],
    schema: kindSchema(n, 'Job represents the configuration of a single job.', proto({ spec: 2, status: 3 }, {
      spec: jobSpec(n),
      status: obj('Current status of a job.', proto({
        conditions: 1, startTime: 2, completionTime: 3, active: 4, succeeded: 5, failed: 6, terminating: 11, completedIndexes: 7, failedIndexes: 10, uncountedTerminatedPods: 8, ready: 9,
      }, {
        conditions: atomicList('The latest available observations of the job.', condition('probed'), { 'x-orch-patch-strategy': 'merge', 'x-orch-patch-merge-key': 'type' }),
        startTime: time('When the job controller started processing the job.'),
        completionTime: time('When the job was completed.'),
        active: int32('Pending and running pods.'),
        succeeded: int32('Pods that reached phase Succeeded.'),
        failed: int32('Pods that reached phase Failed.'),
        terminating: int32('Terminating pods.'),
        completedIndexes: str('Completed indexes (Indexed jobs).'),
        failedIndexes: str('Failed indexes.'),
        uncountedTerminatedPods: obj('Finished pods not yet accounted for in the status counters.', proto({ succeeded: 1, failed: 2 }, {
          succeeded: setList('UIDs of succeeded pods.', { type: 'string' }),
          failed: setList('UIDs of failed pods.', { type: 'string' }),
        })),
        ready: int32('Active pods with a Ready condition.'),
      })),
    })),
    strategy: {
      zeroShape: { spec: { template: POD_TEMPLATE_SHAPE }, status: {} },
      selectableFields: { 'status.successful': countOf('status', 'succeeded') },
      default: (o) => {
        defaultJob(getObject(o, 'spec'));
        defaultJobLabels(o);
      },
      prepareForCreate: prepareJob,
      // kube's Job strategy for batch/v1, with its warning (kubectl sends Background)
      defaultDeletePropagation: { policy: 'Orphan', warning: 'child pods are preserved by default when jobs are deleted; set propagationPolicy=Background to remove them or set propagationPolicy=Orphan to suppress this warning' },
      validate: (o) => validateJob(o, 'spec'),
      validateUpdate: (o, old) => {
        const errs = validateJob(o, 'spec', old);
        const schedulingMutable = get(old, 'spec', 'suspend') === true && get(old, 'status', 'startTime') === undefined;
        errs.push(...validateJobImmutable(getObject(o, 'spec') ?? {}, getObject(old, 'spec') ?? {}, 'spec', schedulingMutable));
        if (JSON.stringify(get(o, 'spec', 'selector') ?? null) !== JSON.stringify(get(old, 'spec', 'selector') ?? null)) {
          errs.push({ field: 'spec.selector', type: 'FieldValueInvalid', message: 'Invalid value: field is immutable' });
        }
        return errs;
      },
      columns: [
        column('Status', 'string', jobStatus, { description: 'Status of the job.' }),
        column('Completions', 'string', (o) => `${num(o, 'status', 'succeeded')}/${get(o, 'spec', 'completions') ?? 1}`, { description: 'The desired number of successfully finished pods the job should be run with.' }),
        column('Duration', 'string', jobDuration, { description: 'Time required to complete the job.' }),
        column('Containers', 'string', (o) => templateContainers(o, 'name', 'spec', 'template'), { priority: 1 }),
        column('Images', 'string', (o) => templateContainers(o, 'image', 'spec', 'template'), { priority: 1 }),
        column('Selector', 'string', (o) => selectorText(o, 'spec', 'selector'), { priority: 1 }),
      ],
    },
  };
}

function jobStatus(o: ApiObject): string {
  const has = (t: string) => getArray(o, 'status', 'conditions').some((c) => get(c, 'type') === t && get(c, 'status') === 'True');
  if (has('Complete')) return 'Complete';
  if (has('Failed')) return 'Failed';
  if (has('Suspended')) return 'Suspended';
  return 'Running';
}

function jobDuration(o: ApiObject, now: number): string {
  const start = getString(o, 'status', 'startTime');
  if (!start) return '';
  const end = getString(o, 'status', 'completionTime');
  return since(start, end ? Date.parse(end) : now);
}

export function cronJobDefinition(n: SchemaNames): ResourceDefinition {
  return {
    group: 'batch', version: 'v1', kind: 'CronJob', resource: 'cronjobs', singular: 'cronjob', scope: 'Namespaced',
    shortNames: ['cj'], categories: ['all'], subresources: ['status'],
    schema: kindSchema(n, 'CronJob represents the configuration of a single cron job.', proto({ spec: 2, status: 3 }, {
      spec: obj('Specification of the desired behaviour of a cron job.', proto({
        schedule: 1, timeZone: 8, startingDeadlineSeconds: 2, concurrencyPolicy: 3, suspend: 4, jobTemplate: 5, successfulJobsHistoryLimit: 6, failedJobsHistoryLimit: 7,
      }, {
        schedule: str('The schedule in Cron format.'),
        timeZone: str('The time zone name for the given schedule.'),
        startingDeadlineSeconds: int64('Deadline in seconds for starting the job if it misses its scheduled time.'),
        concurrencyPolicy: enumOf('How to treat concurrent executions of a Job.', ['Allow', 'Forbid', 'Replace']),
        suspend: bool('Tells the controller to suspend subsequent executions.'),
        jobTemplate: obj('The job that will be created when executing a CronJob.', proto({ metadata: 1, spec: 2 }, {
          metadata: ref(n.meta('ObjectMeta'), "Standard object's metadata of the jobs created from this template."),
          spec: jobSpec(n),
        })),
        successfulJobsHistoryLimit: int32('Successful finished jobs to retain. Defaults to 3.'),
        failedJobsHistoryLimit: int32('Failed finished jobs to retain. Defaults to 1.'),
      }), ['schedule', 'jobTemplate']),
      status: obj('Current status of a cron job.', proto({ active: 1, lastScheduleTime: 4, lastSuccessfulTime: 5 }, {
        active: atomicList('Pointers to currently running jobs.', ref(n.core('ObjectReference'))),
        lastScheduleTime: time('The last time the job was successfully scheduled.'),
        lastSuccessfulTime: time('The last time the job successfully completed.'),
      })),
    })),
    strategy: {
      zeroShape: { spec: { jobTemplate: { metadata: {}, spec: { template: POD_TEMPLATE_SHAPE } } }, status: {} },
      default: (o) => {
        const spec = getObject(o, 'spec');
        if (!spec) return;
        spec.concurrencyPolicy ??= 'Allow';
        spec.suspend ??= false;
        spec.successfulJobsHistoryLimit ??= 3;
        spec.failedJobsHistoryLimit ??= 1;
        defaultNestedJobSpec(getObject(spec, 'jobTemplate', 'spec'));
      },
      validate: (o) => validateCronJob(o),
      validateUpdate: (o, old) => validateCronJob(o, old),
      columns: [
        column('Schedule', 'string', (o) => getString(o, 'spec', 'schedule') ?? ''),
        column('Timezone', 'string', (o) => getString(o, 'spec', 'timeZone') ?? '<none>'),
        // kube's printCronJob writes printBoolPtr's string ("True", "False", "<unset>") in this boolean column
        column('Suspend', 'boolean', (o) => {
          const s = get(o, 'spec', 'suspend');
          return typeof s === 'boolean' ? (s ? 'True' : 'False') : '<unset>';
        }),
        column('Active', 'integer', (o) => getArray(o, 'status', 'active').length),
        column('Last Schedule', 'string', (o, now) => {
          const t = getString(o, 'status', 'lastScheduleTime');
          return t ? since(t, now) : '<none>';
        }),
        column('Containers', 'string', (o) => templateContainers(o, 'name', 'spec', 'jobTemplate', 'spec', 'template'), { priority: 1 }),
        column('Images', 'string', (o) => templateContainers(o, 'image', 'spec', 'jobTemplate', 'spec', 'template'), { priority: 1 }),
      ],
    },
  };
}

function validateCronJob(o: ApiObject, old?: ApiObject): FieldError[] {
  return [...validateJob(o, 'spec.jobTemplate.spec', old), ...validateCronSchedule(o, old)];
}

export const batchFactories = [jobDefinition, cronJobDefinition];
