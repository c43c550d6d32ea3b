// The Job controller (kube-controller-manager's `job`), leader only, on the
// controller runtime (docs/controllers.md). Queue keys: a Job's
// `namespace/name`, and `pod:namespace/name` for a pod that still carries the
// tracking finalizer but whose Job is gone (the finalizer is removed).
//
// A sync, as kube's syncJob: claim the namespace's pods; count the finished
// pods that still carry `batch.kubernetes.io/job-tracking` in three steps
// (their uids into status.uncountedTerminatedPods, the finalizers off, the
// uids into succeeded/failed), so a count survives a crash between writes;
// apply spec.podFailurePolicy to new failures (and, with
// backoffLimitPerIndex, fail indexes: job-index.ts); decide failure
// (podFailurePolicy FailJob, backoffLimit, OnFailure restarts,
// activeDeadlineSeconds, maxFailedIndexes, failed indexes) or success
// (successPolicy, completions), each first as FailureTarget or
// SuccessCriteriaMet while the remaining pods are deleted, then as Failed or
// Complete once none is left (kube 1.31+); otherwise suspend (delete the
// active pods) or create and delete pods as job-plan.ts decides, waiting out
// the exponential back-off after failures. Pods the controller deletes to
// scale down or suspend lose their finalizer first and are not counted as
// failed; those still running when the Job fails count as failed, as kube's.

import { type Clock, systemClock } from '../../core/clock.js';
import type { GenericStore } from '../../registry/generic-store.js';
import type { ApiObject, JSONValue } from '../../registry/types.js';
import { isoSeconds } from '../../registry/kinds/pod-eviction.js';
import type { EventRecorder } from '../event-recorder.js';
import { ControllerLoop, LoopController, type Informer, type InformerSource } from '../runtime/index.js';
import { claimAll } from '../workloads/claim.js';
import { type OwnerReference, controllerRefOf, isPodActive, isPodReady, labelsOf, newControllerRef, ownedObjectHandlers, refersTo } from '../workloads/pods.js';
import { selects } from '../workloads/replicaset.js';
import { CONTROLLER_MANAGER, type OwnerRef, createInBatches, deleteControlled, omitZero, statusUnchanged, updateObject, writeStatus } from '../workloads/writes.js';
import {
  COMPLETION_INDEX, type FailureMatch, TRACKING_FINALIZER, backoffDelay, formatIndexes, indexOf, matchFailurePolicy,
  parseIndexes, pastBackoffLimitOnFailure, planPods,
} from './job-plan.js';
import { type IndexCounts, INDEX_FAILURE_COUNT, INDEX_IGNORED_FAILURE_COUNT, failedByIndex, failsIndex, indexBackoffLeft, matchSuccessPolicy, nextCounts } from './job-index.js';

export const JOB_CONTROLLER = 'job';
/** the spec.managedBy value of Jobs this controller runs (the default) */
export const JOB_CONTROLLER_NAME = 'kubernetes.io/job-controller';

type Obj = Record<string, JSONValue>;

export interface JobOptions {
  store: InformerSource;
  jobs: () => GenericStore;
  pods: () => GenericStore;
  clock?: Clock;
  events?: EventRecorder;
  log?: (msg: string) => void;
  workers?: number;
}

interface JSpec {
  parallelism?: number;
  completions?: number;
  completionMode?: string;
  backoffLimit?: number;
  backoffLimitPerIndex?: number;
  maxFailedIndexes?: number;
  successPolicy?: Obj;
  activeDeadlineSeconds?: number;
  suspend?: boolean;
  selector?: Obj;
  podFailurePolicy?: Obj;
  podReplacementPolicy?: string;
  managedBy?: string;
  template?: { metadata?: { labels?: Obj; annotations?: Obj }; spec?: Obj };
}

interface Uncounted {
  succeeded: string[];
  failed: string[];
}

const specOf = (j: ApiObject): JSpec => (j.spec ?? {}) as JSpec;
const statusOf = (j: ApiObject): Obj => (j.status ?? {}) as Obj;
const conditionsOf = (j: ApiObject): Obj[] => ((statusOf(j).conditions ?? []) as Obj[]);
const hasCondition = (j: ApiObject, type: string): boolean => conditionsOf(j).some((c) => c.type === type && c.status === 'True');
const int = (v: unknown, dflt: number): number => (typeof v === 'number' ? v : dflt);
const phase = (p: ApiObject): string => String((p.status as Obj | undefined)?.phase ?? '');
const hasFinalizer = (p: ApiObject): boolean => (p.metadata?.finalizers ?? []).includes(TRACKING_FINALIZER);

/** a Job with Complete or Failed: nothing more happens to it */
export function jobFinished(j: ApiObject): boolean {
  return hasCondition(j, 'Complete') || hasCondition(j, 'Failed');
}

/** kube's isPodFailed: Failed, or (without a podFailurePolicy, replacing terminating pods) deleted before it succeeded */
function podFailed(p: ApiObject, spec: JSpec): boolean {
  if (phase(p) === 'Failed') return true;
  if (spec.podFailurePolicy || spec.podReplacementPolicy === 'Failed') return false;
  return Boolean(p.metadata?.deletionTimestamp) && phase(p) !== 'Succeeded';
}

/** kube's condition update: a new type is appended; an existing one keeps its lastTransitionTime while its status does */
function setCondition(conds: Obj[], type: string, status: string, reason: string, message: string, now: string): Obj[] {
  const old = conds.find((c) => c.type === type);
  if (old && old.status === status && old.reason === reason && old.message === message) return conds;
  const next: Obj = { type, status, lastProbeTime: now, lastTransitionTime: old?.status === status ? (old.lastTransitionTime ?? now) : now, reason, message };
  return old ? conds.map((c) => (c === old ? next : c)) : [...conds, next];
}

export class JobController extends LoopController {
  protected readonly loop: ControllerLoop;
  private readonly clock: Clock;
  private jobs: Informer | undefined;
  private pods: Informer | undefined;
  /** failures since the last success and when the last was counted, per Job uid (kube's backoff records) */
  private readonly backoff = new Map<string, { failures: number; at: number }>();
  /** when each index last had a counted failure, per Job uid (backoffLimitPerIndex; in memory as the Job-wide records) */
  private readonly indexFailedAt = new Map<string, Map<number, number>>();

  constructor(private readonly o: JobOptions) {
    super();
    this.clock = o.clock ?? systemClock;
    this.loop = new ControllerLoop(o.store, { name: 'job', clock: this.clock, log: o.log, baseDelayMs: 200, workers: o.workers ?? 2 });
  }

  start(): void {
    this.stop();
    this.loop.begin((key) => (key.startsWith('pod:') ? this.syncOrphan(key.slice(4)) : this.sync(key)));
    this.jobs = this.loop.inform(this.o.jobs().rangeKeys(''), {
      add: (_o, key) => this.loop.enqueue(key),
      update: (_old, _o, key) => this.loop.enqueue(key),
      delete: (j) => {
        this.backoff.delete(j.metadata?.uid ?? '');
        this.indexFailedAt.delete(j.metadata?.uid ?? '');
        // its pods' finalizers must go for the garbage collector to delete them
        for (const p of this.pods?.inNamespace(j.metadata?.namespace ?? '') ?? []) if (controllerRefOf(p)?.uid === j.metadata?.uid && hasFinalizer(p)) this.loop.enqueue(`pod:${p.metadata?.namespace ?? ''}/${p.metadata?.name ?? ''}`);
      },
    });
    this.pods = this.loop.inform(this.o.pods().rangeKeys(''), ownedObjectHandlers((pod) => this.enqueueFor(pod)));
  }

  stop(): void {
    this.loop.end();
    this.jobs = undefined;
    this.pods = undefined;
  }

  private enqueueFor(pod: ApiObject): void {
    const ns = pod.metadata?.namespace ?? '';
    const ref = controllerRefOf(pod);
    if (ref) {
      if (!refersTo(ref, 'batch', 'Job')) return;
      const job = this.jobs?.get(`${ns}/${ref.name}`);
      if (job && job.metadata?.uid === ref.uid) this.loop.enqueue(`${ns}/${ref.name}`);
      else if (hasFinalizer(pod)) this.loop.enqueue(`pod:${ns}/${pod.metadata?.name ?? ''}`);
      return;
    }
    if (hasFinalizer(pod)) this.loop.enqueue(`pod:${ns}/${pod.metadata?.name ?? ''}`);
    const labels = labelsOf(pod);
    for (const j of this.jobs?.inNamespace(ns) ?? []) if (selects(specOf(j).selector, labels)) this.loop.enqueue(`${ns}/${j.metadata?.name ?? ''}`);
  }

  /** a pod with the tracking finalizer and no Job of its own: the finalizer goes (kube's orphan pod cleanup) */
  private async syncOrphan(key: string): Promise<void> {
    const pod = this.pods?.get(key);
    if (!pod || !hasFinalizer(pod)) return;
    const ref = controllerRefOf(pod);
    const job = ref ? this.jobs?.get(`${pod.metadata?.namespace ?? ''}/${ref.name}`) : undefined;
    if (job && job.metadata?.uid === ref?.uid) return;
    await this.removeFinalizer(pod);
  }

  private refOf(j: ApiObject): OwnerRef {
    return { apiVersion: 'batch/v1', kind: 'Job', namespace: j.metadata?.namespace ?? '', name: j.metadata?.name ?? '', uid: j.metadata?.uid ?? '' };
  }

  private async removeFinalizer(pod: ApiObject): Promise<void> {
    await updateObject(this.o.pods(), pod, CONTROLLER_MANAGER, (cur) => {
      const rest = (cur.metadata?.finalizers ?? []).filter((f) => f !== TRACKING_FINALIZER);
      if (rest.length > 0) cur.metadata!.finalizers = rest;
      else delete cur.metadata!.finalizers;
    });
  }

  private async sync(key: string): Promise<void> {
    const job = this.jobs?.get(key);
    if (!job || !this.pods) return;
    const spec = specOf(job);
    // spec.managedBy names another controller: the Job is its business (kube's JobManagedBy)
    if (spec.managedBy !== undefined && spec.managedBy !== JOB_CONTROLLER_NAME) return;
    const ref = this.refOf(job);
    const ownerRef = newControllerRef(ref);
    const matches = (p: ApiObject): boolean => selects(spec.selector, labelsOf(p));
    const pods = await claimAll(this.o.pods(), job, this.pods.inNamespace(ref.namespace), matches, ownerRef);
    if (jobFinished(job) || job.metadata?.deletionTimestamp) {
      // nothing is counted any more: finished and terminating pods only lose their finalizer
      await Promise.all(pods.filter((p) => hasFinalizer(p) && (!isPodActive(p) || job.metadata?.deletionTimestamp)).map((p) => this.removeFinalizer(p)));
      return;
    }
    const now = this.clock.now();
    const nowIso = isoSeconds(now);
    const indexed = spec.completionMode === 'Indexed';
    const completions = spec.completions;
    const st = statusOf(job);
    const prevUncounted = (st.uncountedTerminatedPods ?? {}) as Partial<Uncounted>;
    const uncounted: Uncounted = { succeeded: [...(prevUncounted.succeeded ?? [])], failed: [...(prevUncounted.failed ?? [])] };
    const known = new Set([...uncounted.succeeded, ...uncounted.failed]);
    const completed = parseIndexes(st.completedIndexes as string | undefined, completions ?? 0);
    // backoffLimitPerIndex (KEP-3850): failures are counted per index and an index past its limit fails
    const perIndex = indexed && spec.backoffLimitPerIndex !== undefined;
    const failedIdx = perIndex ? parseIndexes(st.failedIndexes as string | undefined, completions ?? 0) : new Set<number>();
    const idxFailedAt = this.indexFailedAt.get(ref.uid) ?? new Map<number, number>();
    let failJob: FailureMatch | undefined;
    const ignored: ApiObject[] = [];
    let newFailures = 0;
    let newSuccesses = 0;

    // 1. finished pods not yet counted: into uncountedTerminatedPods (completedIndexes at once, as kube)
    for (const p of pods) {
      const uid = p.metadata?.uid ?? '';
      // a failure listed by an earlier sync that stopped before counting it still decides a FailJob rule
      if (spec.podFailurePolicy && uncounted.failed.includes(uid)) {
        const m = matchFailurePolicy(spec.podFailurePolicy, p);
        if (m?.action === 'FailJob') failJob ??= m;
      }
      if (!hasFinalizer(p) || known.has(uid)) continue;
      if (phase(p) === 'Succeeded') {
        uncounted.succeeded.push(uid);
        newSuccesses++;
        const i = indexed ? indexOf(p, completions ?? 0) : undefined;
        if (i !== undefined) completed.add(i);
      } else if (podFailed(p, spec)) {
        const m = spec.podFailurePolicy ? matchFailurePolicy(spec.podFailurePolicy, p) : undefined;
        if (m?.action === 'Ignore') {
          ignored.push(p);
          continue;
        }
        if (m?.action === 'FailJob') failJob ??= m;
        const i = perIndex ? indexOf(p, completions ?? 0) : undefined;
        if (i !== undefined) {
          if (failsIndex(p, m, spec.backoffLimitPerIndex!)) failedIdx.add(i);
          idxFailedAt.set(i, now);
        }
        uncounted.failed.push(uid);
        newFailures++;
      }
    }
    const counting = newSuccesses + newFailures > 0;
    // the status that records uncounted pods before their finalizers go (and a failing Job's target condition)
    // completedIndexes is a Go string with omitempty (kube's JobStatus): none completed, no field; failedIndexes is a *string, kept
    const indexFields = (): Obj => ({ ...(indexed && completed.size > 0 ? { completedIndexes: formatIndexes(completed) } : {}), ...(perIndex ? { failedIndexes: formatIndexes(failedIdx) } : {}) });
    const interim = (more: Obj = {}): Obj => ({ ...st, uncountedTerminatedPods: uncounted as unknown as Obj, ...indexFields(), ...more });
    if (counting) await writeStatus(this.o.jobs(), job, interim(), CONTROLLER_MANAGER);
    // 2. their finalizers off (and the ignored failures')
    const uncountedSet = new Set([...uncounted.succeeded, ...uncounted.failed]);
    await Promise.all(pods.filter((p) => hasFinalizer(p) && (uncountedSet.has(p.metadata?.uid ?? '') || ignored.includes(p))).map((p) => this.removeFinalizer(p)));
    // 3. counted
    const succeeded = indexed ? completed.size : int(st.succeeded, 0) + uncounted.succeeded.length;
    let failed = int(st.failed, 0) + uncounted.failed.length;
    const rec = this.backoff.get(ref.uid) ?? { failures: 0, at: 0 };
    if (newSuccesses > 0) rec.failures = 0;
    if (newFailures > 0) {
      rec.failures += newFailures;
      rec.at = now;
    }
    this.backoff.set(ref.uid, rec);
    if (perIndex) this.indexFailedAt.set(ref.uid, idxFailedAt);

    const current = (): ApiObject[] => this.pods!.inNamespace(ref.namespace).filter((p) => controllerRefOf(p)?.uid === ref.uid);
    let active = pods.filter(isPodActive);
    let conditions = conditionsOf(job);
    let startTime = st.startTime as string | undefined;
    let completionTime = st.completionTime as string | undefined;
    const suspended = spec.suspend === true;
    let requeue: number | undefined;

    // failure and success, first as the target conditions
    const failureTarget = conditions.find((c) => c.type === 'FailureTarget' && c.status === 'True');
    const successTarget = conditions.find((c) => c.type === 'SuccessCriteriaMet' && c.status === 'True');
    if (!failureTarget && !successTarget) {
      let failure: { reason: string; message: string } | undefined;
      if (failJob) failure = { reason: 'PodFailurePolicy', message: failJob.message };
      else if (failed > int(spec.backoffLimit, 6) || (spec.template?.spec?.restartPolicy === 'OnFailure' && pastBackoffLimitOnFailure(active, int(spec.backoffLimit, 6)))) {
        failure = { reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' };
      } else if (!suspended && startTime && spec.activeDeadlineSeconds !== undefined && Date.parse(startTime) + spec.activeDeadlineSeconds * 1000 <= now) {
        failure = { reason: 'DeadlineExceeded', message: 'Job was active longer than specified deadline' };
      } else if (perIndex && spec.maxFailedIndexes !== undefined && failedIdx.size > spec.maxFailedIndexes) {
        failure = { reason: 'MaxFailedIndexesExceeded', message: 'Job has exceeded the specified maximal number of failed indexes' };
      }
      if (!failure && !suspended && startTime && spec.activeDeadlineSeconds !== undefined) requeue = Date.parse(startTime) + spec.activeDeadlineSeconds * 1000 - now;
      const done = completions === undefined ? succeeded > 0 && active.length === 0 : succeeded >= completions;
      // successPolicy (KEP-3998) is looked at before the completions, as kube's syncJob
      const policy = !failure && indexed && spec.successPolicy ? matchSuccessPolicy(spec.successPolicy, completions ?? 0, completed) : undefined;
      if (!failure && perIndex && !done && failedIdx.size > 0 && completed.size + failedIdx.size >= (completions ?? 0)) {
        failure = { reason: 'FailedIndexes', message: 'Job has failed indexes' };
      }
      if (failure && !policy) {
        conditions = setCondition(conditions, 'FailureTarget', 'True', failure.reason, failure.message, nowIso);
        void this.o.events?.event(ref, 'Warning', failure.reason, failure.message);
      } else if (policy) {
        conditions = setCondition(conditions, 'SuccessCriteriaMet', 'True', 'SuccessPolicy', policy.message, nowIso);
      } else if (done) {
        conditions = setCondition(conditions, 'SuccessCriteriaMet', 'True', 'CompletionsReached', 'Reached expected number of succeeded pods', nowIso);
      }
    }
    const finishing = conditions.some((c) => (c.type === 'FailureTarget' || c.type === 'SuccessCriteriaMet') && c.status === 'True');
    if (conditions.some((c) => c.type === 'FailureTarget' && c.status === 'True')) {
      // kube's trackJobStatusAndRemoveFinalizers: once the Job fails, every pod not terminated with success counts
      // as failed (kube's TestSyncJobPastDeadline: the active pods deleted at the deadline are failures), recorded in
      // uncountedTerminatedPods with the FailureTarget condition before the finalizers go
      const more = pods.filter((p) => hasFinalizer(p) && !uncounted.failed.includes(p.metadata?.uid ?? '') && phase(p) !== 'Succeeded'
        && (!indexed || indexOf(p, completions ?? 0) !== undefined) && matchFailurePolicy(spec.podFailurePolicy, p)?.action !== 'Ignore');
      if (more.length > 0) {
        uncounted.failed.push(...more.map((p) => p.metadata?.uid ?? ''));
        await writeStatus(this.o.jobs(), job, interim({ conditions }), CONTROLLER_MANAGER);
        await Promise.all(more.map((p) => this.removeFinalizer(p)));
        failed += more.length;
      }
    }

    if (finishing) {
      await Promise.all(active.map((p) => this.deletePod(p, ref)));
    } else if (suspended) {
      if (active.length > 0) await Promise.all(active.map((p) => this.deletePod(p, ref)));
      if (!hasCondition(job, 'Suspended')) void this.o.events?.event(ref, 'Normal', 'Suspended', 'Job suspended');
      conditions = setCondition(conditions, 'Suspended', 'True', 'JobSuspended', 'Job suspended', nowIso);
      startTime = undefined;
    } else {
      if (conditions.some((c) => c.type === 'Suspended' && c.status === 'True')) {
        conditions = setCondition(conditions, 'Suspended', 'False', 'JobResumed', 'Job resumed', nowIso);
        void this.o.events?.event(ref, 'Normal', 'Resumed', 'Job resumed');
        startTime = undefined;
      }
      if (!startTime) {
        startTime = nowIso;
        if (spec.activeDeadlineSeconds !== undefined) requeue = spec.activeDeadlineSeconds * 1000;
      }
      const terminating = pods.filter((p) => p.metadata?.deletionTimestamp && phase(p) !== 'Succeeded' && phase(p) !== 'Failed').length;
      const plan = planPods({
        parallelism: int(spec.parallelism, 1), completions, indexed, succeeded, completed, failed: failedIdx, active,
        terminating: spec.podReplacementPolicy === 'Failed' ? terminating : 0,
      });
      await Promise.all(plan.remove.map((p) => this.deletePod(p, ref)));
      if (perIndex && plan.create > 0) {
        // each index waits out its own back-off; its replacement carries the counts on (kube's getNewIndexFailureCounts)
        const byIndex = failedByIndex(pods, completions ?? 0, (p) => podFailed(p, spec), (p) => matchFailurePolicy(spec.podFailurePolicy, p)?.action === 'Ignore');
        const counts = new Map<number, IndexCounts>();
        for (const i of plan.indexes) {
          const c = nextCounts(byIndex.get(i) ?? []);
          const left = indexBackoffLeft(c.failures, idxFailedAt.get(i), now);
          if (left > 0) requeue = Math.min(requeue ?? Infinity, left);
          else counts.set(i, c);
        }
        if (counts.size > 0) await this.createPods(job, [...counts.keys()], counts.size, ref, counts);
      } else if (plan.create > 0) {
        const wait = backoffDelay(rec.failures) - (now - rec.at);
        if (wait > 0) requeue = Math.min(requeue ?? Infinity, wait);
        else await this.createPods(job, plan.indexes, plan.create, ref);
      }
    }

    // the informer now holds what the writes did
    const all = current();
    active = all.filter(isPodActive);
    const terminatingNow = all.filter((p) => p.metadata?.deletionTimestamp && phase(p) !== 'Succeeded' && phase(p) !== 'Failed').length;
    if (finishing && active.length === 0 && terminatingNow === 0) {
      const target = conditions.find((c) => (c.type === 'FailureTarget' || c.type === 'SuccessCriteriaMet') && c.status === 'True')!;
      const type = target.type === 'FailureTarget' ? 'Failed' : 'Complete';
      conditions = setCondition(conditions, type, 'True', String(target.reason), String(target.message), nowIso);
      if (type === 'Complete') {
        completionTime = nowIso;
        void this.o.events?.event(ref, 'Normal', 'Completed', 'Job completed');
      }
    }
    const status: Obj = {
      ...(conditions.length > 0 ? { conditions } : {}),
      ...(startTime ? { startTime } : {}),
      ...(completionTime ? { completionTime } : {}),
      active: active.length,
      ready: active.filter(isPodReady).length,
      succeeded,
      failed,
      terminating: terminatingNow,
      ...indexFields(),
      uncountedTerminatedPods: {},
    };
    // kube's JobStatus: active, succeeded and failed are non-pointer omitempty (ready and terminating are pointers)
    omitZero(status, ['active', 'succeeded', 'failed']);
    const fresh = this.jobs?.get(key) ?? job;
    if (!statusUnchanged(statusOf(fresh), status)) await writeStatus(this.o.jobs(), fresh, status, CONTROLLER_MANAGER);
    if (requeue !== undefined && Number.isFinite(requeue)) this.loop.enqueueAfter(key, requeue + 1);
  }

  /** the pod of `index` (Indexed) or a plain one, from the template (kube's job labels, finalizer, controller reference) */
  private podFor(job: ApiObject, ref: OwnerRef, index: number | undefined, counts?: IndexCounts): ApiObject {
    const tmpl = specOf(job).template ?? {};
    const labels = structuredClone(tmpl.metadata?.labels ?? {}) as Record<string, string>;
    const annotations = structuredClone(tmpl.metadata?.annotations ?? {}) as Record<string, string>;
    const spec = structuredClone(tmpl.spec ?? {}) as Obj;
    if (index !== undefined) {
      annotations[COMPLETION_INDEX] = String(index);
      // backoffLimitPerIndex: the failure count always, the ignored count once there is one (as kube)
      if (counts) {
        annotations[INDEX_FAILURE_COUNT] = String(counts.failures);
        if (counts.ignored > 0) annotations[INDEX_IGNORED_FAILURE_COUNT] = String(counts.ignored);
      }
      labels[COMPLETION_INDEX] = String(index);
      spec.hostname ??= `${ref.name}-${index}`;
      const env = { name: 'JOB_COMPLETION_INDEX', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: `metadata.annotations['${COMPLETION_INDEX}']` } } };
      for (const list of ['initContainers', 'containers']) {
        for (const c of (spec[list] ?? []) as Obj[]) {
          const envs = ((c.env ?? []) as Obj[]).filter((e) => e.name !== 'JOB_COMPLETION_INDEX');
          c.env = [env, ...envs] as unknown as JSONValue;
        }
      }
    }
    return {
      apiVersion: 'v1', kind: 'Pod',
      metadata: {
        generateName: index !== undefined ? `${ref.name}-${index}-` : `${ref.name}-`,
        namespace: ref.namespace,
        labels, annotations,
        finalizers: [TRACKING_FINALIZER],
        ownerReferences: [newControllerRef(ref) as unknown as Obj],
      },
      spec,
    } as ApiObject;
  }

  private async createPods(job: ApiObject, indexes: number[], count: number, ref: OwnerRef, counts?: Map<number, IndexCounts>): Promise<void> {
    const makers = indexes.length > 0 ? indexes.map((i) => () => this.podFor(job, ref, i, counts?.get(i))) : Array.from({ length: count }, () => () => this.podFor(job, ref, undefined));
    const failure = await createInBatches(this.o.pods(), ref, makers, this.o.events);
    if (failure) throw new Error(failure);
  }

  /** the finalizer off first, so the deletion is not counted as a failure (kube's deleteJobPods) */
  private async deletePod(pod: ApiObject, ref: OwnerRef): Promise<void> {
    if (hasFinalizer(pod)) await this.removeFinalizer(pod);
    await deleteControlled(this.o.pods(), pod, ref, this.o.events);
  }
}
