// The CronJob controller (kube-controller-manager's `cronjob`, kube's
// cronjob_controllerv2), leader only. Queue key: the CronJob's
// `namespace/name`; synced when it or one of its Jobs changes, and at its
// next schedule time (a delayed add on the injected clock).
//
// A sync: reconcile status.active with the Jobs it controls (a finished
// Job leaves it, a Complete one moves lastSuccessfulTime); delete finished
// Jobs beyond the history limits; unless suspended or being deleted, find
// the most recent missed schedule time (cronjob-plan.ts) and, within
// startingDeadlineSeconds and the concurrency policy, create the Job
// `<cronjob>-<minutes since the epoch>` from the template with the
// `batch.kubernetes.io/cronjob-scheduled-timestamp` annotation.

import { StatusError, isNamespaceTerminating } from '../../core/errors.js';
import { type Clock, systemClock } from '../../core/clock.js';
import type { GenericStore } from '../../registry/generic-store.js';
import type { ApiObject, JSONValue } from '../../registry/types.js';
import { isoSeconds } from '../../registry/kinds/pod-eviction.js';
import type { EventRecorder } from '../event-recorder.js';
import { ControllerLoop, LoopController, type Informer, type InformerSource } from '../runtime/index.js';
import { controllerRefOf, newControllerRef } from '../workloads/pods.js';
import { CONTROLLER_MANAGER, type OwnerRef, deleteControlled, statusUnchanged, writeStatus } from '../workloads/writes.js';
import { CronError, type CronSchedule, nextAfter, parseCron, rfc3339In } from '../../machinery/cron.js';
import { jobNameFor, mostRecentSchedule, nextSchedule, overHistory } from './cronjob-plan.js';
import { jobFinished } from './job.js';

export const CRONJOB_CONTROLLER = 'cronjob';
export const SCHEDULED_TIMESTAMP = 'batch.kubernetes.io/cronjob-scheduled-timestamp';

type Obj = Record<string, JSONValue>;

export interface CronJobOptions {
  store: InformerSource;
  cronJobs: () => GenericStore;
  jobs: () => GenericStore;
  clock?: Clock;
  events?: EventRecorder;
  log?: (msg: string) => void;
}

interface CSpec {
  schedule?: string;
  timeZone?: string;
  startingDeadlineSeconds?: number;
  concurrencyPolicy?: string;
  suspend?: boolean;
  successfulJobsHistoryLimit?: number;
  failedJobsHistoryLimit?: number;
  jobTemplate?: { metadata?: { labels?: Obj; annotations?: Obj }; spec?: Obj };
}

const specOf = (cj: ApiObject): CSpec => (cj.spec ?? {}) as CSpec;
const conds = (j: ApiObject): Obj[] => (((j.status as Obj | undefined)?.conditions ?? []) as Obj[]);
const complete = (j: ApiObject): boolean => conds(j).some((c) => c.type === 'Complete' && c.status === 'True');

export class CronJobController extends LoopController {
  protected readonly loop: ControllerLoop;
  private readonly clock: Clock;
  private cronJobs: Informer | undefined;
  private jobs: Informer | undefined;

  constructor(private readonly o: CronJobOptions) {
    super();
    this.clock = o.clock ?? systemClock;
    this.loop = new ControllerLoop(o.store, { name: 'cronjob', clock: this.clock, log: o.log, baseDelayMs: 200 });
  }

  start(): void {
    this.stop();
    this.loop.begin((key) => this.sync(key));
    this.cronJobs = this.loop.inform(this.o.cronJobs().rangeKeys(''), {
      add: (_o, key) => this.loop.enqueue(key),
      update: (_old, _o, key) => this.loop.enqueue(key),
    });
    const forJob = (j: ApiObject): void => {
      const ref = controllerRefOf(j);
      if (ref?.kind === 'CronJob') this.loop.enqueue(`${j.metadata?.namespace ?? ''}/${ref.name}`);
    };
    this.jobs = this.loop.inform(this.o.jobs().rangeKeys(''), { add: forJob, update: (_old, j) => forJob(j), delete: forJob });
  }

  stop(): void {
    this.loop.end();
    this.cronJobs = undefined;
    this.jobs = undefined;
  }

  private async sync(key: string): Promise<void> {
    const cj = this.cronJobs?.get(key);
    if (!cj || !this.jobs) return;
    const spec = specOf(cj);
    const ns = cj.metadata?.namespace ?? '';
    const ref: OwnerRef = { apiVersion: 'batch/v1', kind: 'CronJob', namespace: ns, name: cj.metadata?.name ?? '', uid: cj.metadata?.uid ?? '' };
    const now = this.clock.now();
    const st = (cj.status ?? {}) as Obj;
    const owned = this.jobs.inNamespace(ns).filter((j) => controllerRefOf(j)?.uid === ref.uid);
    const byUid = new Map(owned.map((j) => [j.metadata?.uid ?? '', j]));

    // status.active: running Jobs it controls; finished or vanished ones leave it
    let active: Obj[] = [];
    for (const a of (st.active ?? []) as Obj[]) {
      const j = byUid.get(String(a.uid ?? ''));
      if (!j) {
        if (await this.missing(ns, String(a.name ?? ''))) void this.o.events?.event(ref, 'Normal', 'MissingJob', `Active job went missing: ${String(a.name ?? '')}`);
        else active.push(a);
      } else if (jobFinished(j)) {
        void this.o.events?.event(ref, 'Normal', 'SawCompletedJob', `Saw completed job: ${j.metadata?.name ?? ''}, status: ${complete(j) ? 'Complete' : 'Failed'}`);
      } else active.push(a);
    }
    let lastScheduleTime = st.lastScheduleTime as string | undefined;
    // a running Job it made whose status write was lost (its scheduled time past lastScheduleTime) is
    // listed again, as kube's; a Job made by hand (`kubectl create job --from`) has no scheduled time and is not
    for (const j of owned) {
      if (jobFinished(j) || j.metadata?.deletionTimestamp || active.some((a) => a.uid === j.metadata?.uid)) continue;
      const at = Date.parse(j.metadata?.annotations?.[SCHEDULED_TIMESTAMP] ?? '');
      if (Number.isNaN(at) || (lastScheduleTime !== undefined && at <= Date.parse(lastScheduleTime))) {
        // kube's syncCronJob warns of a running Job it controls but does not list, unless the CronJob read again lists it
        if (!(await this.listedNow(key, j))) void this.o.events?.event(ref, 'Warning', 'UnexpectedJob', `Saw a job that the controller did not create or forgot: ${j.metadata?.name ?? ''}`);
        continue;
      }
      active.push(this.objectRef(j));
      lastScheduleTime = isoSeconds(at);
    }
    let lastSuccessfulTime = st.lastSuccessfulTime as string | undefined;
    for (const j of owned) {
      const t = (j.status as Obj | undefined)?.completionTime;
      if (complete(j) && typeof t === 'string' && (!lastSuccessfulTime || Date.parse(t) > Date.parse(lastSuccessfulTime))) lastSuccessfulTime = t;
    }

    // history limits
    const finished = owned.filter((j) => jobFinished(j) && !j.metadata?.deletionTimestamp);
    for (const j of overHistory(finished.filter(complete), spec.successfulJobsHistoryLimit)) await this.deleteJob(j, ref);
    for (const j of overHistory(finished.filter((x) => !complete(x)), spec.failedJobsHistoryLimit)) await this.deleteJob(j, ref);

    let requeue: number | undefined;
    if (!cj.metadata?.deletionTimestamp && spec.suspend !== true && spec.schedule) {
      let sched: CronSchedule | undefined;
      try {
        sched = parseCron(spec.schedule, spec.timeZone);
      } catch (e) {
        const msg = e instanceof CronError ? e.message : String(e);
        void this.o.events?.event(ref, 'Warning', 'UnparseableSchedule', `unparseable schedule: ${JSON.stringify(spec.schedule)} : ${msg}`);
      }
      const earliest = Date.parse(lastScheduleTime ?? cj.metadata?.creationTimestamp ?? '') || now;
      if (sched && nextAfter(sched, earliest) === undefined) {
        // a schedule that never fires (`59 23 31 2 *`): kube's robfig/cron finds a zero time, so two successive
        // times are less than a second apart and the controller says so and does nothing more
        void this.o.events?.event(ref, 'Warning', 'InvalidSchedule', `invalid schedule: ${spec.schedule} : time difference between two schedules is less than 1 second`);
        sched = undefined;
      }
      if (sched) {
        const m = mostRecentSchedule(sched, earliest, now, spec.startingDeadlineSeconds);
        if (m.missed > 100) {
          void this.o.events?.event(ref, 'Warning', 'TooManyMissedTimes', `too many missed start times: ${m.missed}. Set or decrease .spec.startingDeadlineSeconds or check clock skew`);
        }
        const next = nextSchedule(sched, earliest, now);
        if (next !== undefined) requeue = next - now;
        const scheduled = m.mostRecent;
        if (scheduled !== undefined) {
          const tooLate = spec.startingDeadlineSeconds !== undefined && scheduled + spec.startingDeadlineSeconds * 1000 < now;
          const name = jobNameFor(ref.name, scheduled);
          if (tooLate) {
            void this.o.events?.event(ref, 'Warning', 'MissedSchedule', `Missed scheduled time to start a job: ${rfc3339In(scheduled, sched.timeZone)}`);
          } else if (owned.some((j) => j.metadata?.name === name)) {
            // already made (the status write after it was lost): only the time is recorded
            lastScheduleTime = isoSeconds(scheduled);
          } else if (spec.concurrencyPolicy === 'Forbid' && active.length > 0) {
            void this.o.events?.event(ref, 'Normal', 'JobAlreadyActive', 'Not starting job because prior execution is running and concurrency policy is Forbid');
          } else {
            if (spec.concurrencyPolicy === 'Replace') {
              for (const a of active) {
                const j = byUid.get(String(a.uid ?? ''));
                if (j) await this.deleteJob(j, ref);
              }
              active = [];
            }
            const created = await this.createJob(cj, ref, name, scheduled, sched.timeZone);
            if (created) active.push(this.objectRef(created));
            lastScheduleTime = isoSeconds(scheduled);
          }
        }
      }
    }
    const status: Obj = {
      ...(active.length > 0 ? { active } : {}),
      ...(lastScheduleTime ? { lastScheduleTime } : {}),
      ...(lastSuccessfulTime ? { lastSuccessfulTime } : {}),
    };
    const fresh = this.cronJobs?.get(key) ?? cj;
    if (!statusUnchanged((fresh.status ?? {}) as Obj, status)) await writeStatus(this.o.cronJobs(), fresh, status, CONTROLLER_MANAGER);
    // kube requeues 100 ms after the next schedule time
    if (requeue !== undefined) this.loop.enqueueAfter(key, requeue + 100);
  }

  /** the CronJob as the store has it now lists `job` as active (kube re-reads it from the API server) */
  private async listedNow(key: string, job: ApiObject): Promise<boolean> {
    const [ns, name] = key.split('/') as [string, string];
    try {
      const cur = await this.o.cronJobs().get(ns, name);
      return (((cur.status as Obj | undefined)?.active ?? []) as Obj[]).some((a) => a.uid === job.metadata?.uid);
    } catch (e) {
      if (e instanceof StatusError && e.code === 404) return false;
      throw e;
    }
  }

  /**
   * an active Job the informer does not have is gone only if the store says so
   * (kube's syncCronJob reads it from the API server, so that an informer
   * behind the status does not drop a Job it has not seen yet)
   */
  private async missing(ns: string, name: string): Promise<boolean> {
    try {
      await this.o.jobs().get(ns, name);
      return false;
    } catch (e) {
      if (e instanceof StatusError && e.code === 404) return true;
      throw e;
    }
  }

  private objectRef(j: ApiObject): Obj {
    return { kind: 'Job', namespace: j.metadata?.namespace ?? '', name: j.metadata?.name ?? '', uid: j.metadata?.uid ?? '', apiVersion: 'batch/v1', resourceVersion: j.metadata?.resourceVersion ?? '' };
  }

  /** the Job of one schedule time (kube's getJobFromTemplate2) */
  private async createJob(cj: ApiObject, ref: OwnerRef, name: string, scheduled: number, zone: string | undefined): Promise<ApiObject | undefined> {
    const t = specOf(cj).jobTemplate ?? {};
    const job = {
      apiVersion: 'batch/v1', kind: 'Job',
      metadata: {
        name, namespace: ref.namespace,
        labels: structuredClone(t.metadata?.labels ?? {}),
        annotations: { ...(structuredClone(t.metadata?.annotations ?? {}) as Record<string, string>), [SCHEDULED_TIMESTAMP]: rfc3339In(scheduled, zone) },
        ownerReferences: [newControllerRef(ref)],
      },
      spec: structuredClone(t.spec ?? {}),
    } as unknown as ApiObject;
    try {
      const r = await this.o.jobs().create(ref.namespace, job, { dryRun: false, manager: CONTROLLER_MANAGER });
      void this.o.events?.event(ref, 'Normal', 'SuccessfulCreate', `Created job ${name}`);
      return r.object;
    } catch (e) {
      if (e instanceof StatusError && e.code === 409) return undefined;
      // kube's cronjob controller: any creation in a namespace being deleted fails; nothing to report
      if (isNamespaceTerminating(e)) return undefined;
      const msg = e instanceof Error ? e.message : String(e);
      void this.o.events?.event(ref, 'Warning', 'FailedCreate', `Error creating job: ${msg}`);
      throw e;
    }
  }

  private async deleteJob(j: ApiObject, ref: OwnerRef): Promise<void> {
    // kube's cronjob deleteJob: `Deleted job <name>`, no colon
    await deleteControlled(this.o.jobs(), j, ref, this.o.events, (name) => `Deleted job ${name}`, 'Background');
  }
}
