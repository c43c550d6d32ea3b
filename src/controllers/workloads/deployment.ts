// The Deployment controller (kube-controller-manager's `deployment`), leader
// only, on the controller runtime (docs/controllers.md). Queue key: the
// Deployment's `namespace/name`; synced when it changes, when a ReplicaSet it
// controls (or an orphan it selects) changes, and when a pod of one of its
// sets goes (Recreate waits for the old pods). A sync claims the namespace's
// ReplicaSets (claim.ts), then, as kube's syncDeployment: a paused Deployment
// or a scale only resizes (proportionally during a rollout); otherwise one
// step of the strategy (RollingUpdate: grow the new set within maxSurge, or
// shrink old ones within maxUnavailable; Recreate: old sets to 0, wait for
// their pods, then the new set to full size); old sets beyond
// revisionHistoryLimit are deleted once the rollout completes, and the
// status (counts, Available, Progressing) is written when it changed. The
// arithmetic is deployment-plan.ts.

import { StatusError } from '../../core/errors.js';
import { type Clock, systemClock } from '../../core/clock.js';
import type { GenericStore } from '../../registry/generic-store.js';
import type { ApiObject, JSONValue } from '../../registry/types.js';
import { isoSeconds } from '../../registry/kinds/pod-eviction.js';
import type { EventRecorder } from '../event-recorder.js';
import { ControllerLoop, LoopController, type Informer, type InformerSource } from '../runtime/index.js';
import { claimAll } from './claim.js';
import {
  type DeploymentView, DESIRED_REPLICAS, HASH_LABEL, MAX_REPLICAS, REVISION, REVISION_HISTORY, type RsView,
  maxRevision, maxSurgeOf, maxUnavailableOf, newRsReplicas, olderFirst, parseRevision, proportionalScale, revisionOf, rollingScaleDown,
  rolloutComplete, rolloutProgressed, statusCounts, templateHash, templatesEqual,
} from './deployment-plan.js';
import { type OwnerReference, controllerRefOf, labelsOf, newControllerRef, ownedObjectHandlers } from './pods.js';
import { selects } from './replicaset.js';
import { CONTROLLER_MANAGER, type OwnerRef, omitZero, statusUnchanged, updateObject, writeStatus } from './writes.js';

export const DEPLOYMENT_CONTROLLER = 'deployment';

type Obj = Record<string, JSONValue>;

/** annotations of a Deployment that are not copied to its ReplicaSets (kube's annotationsToSkip) */
const NOT_COPIED = new Set(['kubectl.kubernetes.io/last-applied-configuration', REVISION, REVISION_HISTORY, DESIRED_REPLICAS, MAX_REPLICAS, 'deprecated.deployment.rollback.to']);

export interface DeploymentOptions {
  store: InformerSource;
  deployments: () => GenericStore;
  replicaSets: () => GenericStore;
  pods: () => GenericStore;
  clock?: Clock;
  events?: EventRecorder;
  log?: (msg: string) => void;
  workers?: number;
}

interface DSpec {
  replicas?: number;
  selector?: Obj;
  template?: Obj;
  paused?: boolean;
  minReadySeconds?: number;
  revisionHistoryLimit?: number;
  progressDeadlineSeconds?: number;
  strategy?: { type?: string; rollingUpdate?: { maxSurge?: JSONValue; maxUnavailable?: JSONValue } };
}

const specOf = (d: ApiObject): DSpec => (d.spec ?? {}) as DSpec;
/** kube's HasProgressDeadline: unset or MaxInt32 is no deadline */
const progressDeadline = (s: DSpec): number | undefined => (typeof s.progressDeadlineSeconds === 'number' && s.progressDeadlineSeconds !== 2147483647 ? s.progressDeadlineSeconds : undefined);
const int = (v: unknown, dflt: number): number => (typeof v === 'number' ? v : dflt);
const annInt = (rs: ApiObject, key: string): number | undefined => {
  const v = rs.metadata?.annotations?.[key];
  return v !== undefined && /^\d+$/.test(v) ? Number(v) : undefined;
};

function view(rs: ApiObject): RsView {
  const st = (rs.status ?? {}) as Obj;
  return {
    name: rs.metadata?.name ?? '',
    replicas: int((rs.spec as Obj | undefined)?.replicas, 1),
    statusReplicas: int(st.replicas, 0),
    ready: int(st.readyReplicas, 0),
    available: int(st.availableReplicas, 0),
    created: Date.parse(rs.metadata?.creationTimestamp ?? '') || 0,
    maxReplicas: annInt(rs, MAX_REPLICAS),
    desiredReplicas: annInt(rs, DESIRED_REPLICAS),
  };
}

function deploymentView(d: ApiObject): DeploymentView {
  const s = specOf(d);
  return { replicas: int(s.replicas, 1), recreate: s.strategy?.type === 'Recreate', maxSurge: s.strategy?.rollingUpdate?.maxSurge, maxUnavailable: s.strategy?.rollingUpdate?.maxUnavailable };
}

/** kube's SetDeploymentCondition: unchanged when status, reason and message are; lastTransitionTime kept while the status is */
function setCondition(conds: Obj[], type: string, status: string, reason: string, message: string, now: string, touch = false): Obj[] {
  const old = conds.find((c) => c.type === type);
  if (old && old.status === status && old.reason === reason && old.message === message && !touch) return conds;
  const next: Obj = { type, status, lastUpdateTime: now, lastTransitionTime: old?.status === status && typeof old.lastTransitionTime === 'string' ? old.lastTransitionTime : now, reason, message };
  return old ? conds.map((c) => (c === old ? next : c)) : [...conds, next];
}

interface Step {
  newRs?: ApiObject;
  olds: ApiObject[];
  /** the new set was created by this sync */
  created?: boolean;
}

export class DeploymentController extends LoopController {
  protected readonly loop: ControllerLoop;
  private readonly clock: Clock;
  private deployments: Informer | undefined;
  private sets: Informer | undefined;
  private pods: Informer | undefined;

  constructor(private readonly o: DeploymentOptions) {
    super();
    this.clock = o.clock ?? systemClock;
    this.loop = new ControllerLoop(o.store, { name: 'deployment', clock: this.clock, log: o.log, baseDelayMs: 200, workers: o.workers ?? 2 });
  }

  start(): void {
    this.stop();
    this.loop.begin((key) => this.sync(key));
    this.deployments = this.loop.inform(this.o.deployments().rangeKeys(''), {
      add: (_o, key) => this.loop.enqueue(key),
      update: (_old, _o, key) => this.loop.enqueue(key),
    });
    this.sets = this.loop.inform(this.o.replicaSets().rangeKeys(''), ownedObjectHandlers((rs) => this.enqueueFor(rs)));
    // Recreate waits until the old sets' pods are gone
    this.pods = this.loop.inform(this.o.pods().rangeKeys(''), {
      delete: (pod) => {
        const ref = controllerRefOf(pod);
        const rs = ref?.kind === 'ReplicaSet' ? this.sets?.get(`${pod.metadata?.namespace ?? ''}/${ref.name}`) : undefined;
        if (rs) this.enqueueFor(rs);
      },
    });
  }

  stop(): void {
    this.loop.end();
    this.deployments = undefined;
    this.sets = undefined;
    this.pods = undefined;
  }

  /** the Deployment controlling a ReplicaSet, else every Deployment of the namespace selecting the orphan */
  private enqueueFor(rs: ApiObject): void {
    const ns = rs.metadata?.namespace ?? '';
    const ref = controllerRefOf(rs);
    if (ref) {
      if (ref.kind === 'Deployment') this.loop.enqueue(`${ns}/${ref.name}`);
      return;
    }
    for (const d of this.deployments?.inNamespace(ns) ?? []) if (selects(specOf(d).selector, labelsOf(rs))) this.loop.enqueue(`${ns}/${d.metadata?.name ?? ''}`);
  }

  private refOf(d: ApiObject): OwnerRef {
    return { apiVersion: 'apps/v1', kind: 'Deployment', namespace: d.metadata?.namespace ?? '', name: d.metadata?.name ?? '', uid: d.metadata?.uid ?? '' };
  }

  /** the latest cached version of a set this sync wrote */
  private fresh(rs: ApiObject): ApiObject {
    return this.sets?.get(`${rs.metadata?.namespace ?? ''}/${rs.metadata?.name ?? ''}`) ?? rs;
  }

  private async claimSets(d: ApiObject): Promise<ApiObject[]> {
    const sel = specOf(d).selector;
    const ref = newControllerRef(this.refOf(d));
    return claimAll(this.o.replicaSets(), d, this.sets!.inNamespace(d.metadata?.namespace ?? ''), (rs) => selects(sel, labelsOf(rs)), ref);
  }

  private async sync(key: string): Promise<void> {
    const d = this.deployments?.get(key);
    if (!d || !this.sets) return;
    const spec = specOf(d);
    const sel = spec.selector ?? {};
    if (Object.keys((sel.matchLabels ?? {}) as Obj).length === 0 && ((sel.matchExpressions ?? []) as JSONValue[]).length === 0) {
      // an empty selector would select every ReplicaSet of the namespace: kube refuses to act on it
      void this.o.events?.event(this.refOf(d), 'Warning', 'SelectingAll', 'This deployment is selecting all pods. A non-empty selector is required.');
      return;
    }
    const rsList = await this.claimSets(d);
    if (d.metadata?.deletionTimestamp) {
      const step = this.split(d, rsList);
      await this.writeStatus(d, step, false);
      return;
    }
    if (spec.paused || this.isScalingEvent(d, rsList)) {
      const step = await this.syncRevision(d, rsList, false);
      await this.scale(d, step);
      const after = this.refresh(step);
      if (spec.paused) await this.cleanup(d, after.olds);
      await this.writeStatus(d, after, false);
      return;
    }
    if (spec.strategy?.type === 'Recreate') await this.recreate(d, rsList);
    else await this.rolling(d, rsList);
  }

  /** the new set (the oldest whose template is the Deployment's) and the others */
  private split(d: ApiObject, rsList: ApiObject[]): Step {
    const byAge = [...rsList].sort((a, b) => olderFirst(view(a), view(b)));
    const newRs = byAge.find((rs) => templatesEqual((rs.spec as Obj | undefined)?.template, specOf(d).template));
    return { newRs, olds: byAge.filter((rs) => rs !== newRs) };
  }

  private refresh(step: Step): Step {
    return { ...step, newRs: step.newRs && this.fresh(step.newRs), olds: step.olds.map((rs) => this.fresh(rs)) };
  }

  /** kube's isScalingEvent: an active set whose desired-replicas annotation is not the Deployment's replicas */
  private isScalingEvent(d: ApiObject, rsList: ApiObject[]): boolean {
    const replicas = deploymentView(d).replicas;
    return rsList.some((rs) => {
      const v = view(rs);
      return v.replicas > 0 && v.desiredReplicas !== undefined && v.desiredReplicas !== replicas;
    });
  }

  /**
   * kube's getAllReplicaSetsAndSyncRevision: the new set gets revision
   * max(old revisions) + 1 and the Deployment's annotations; with `create`,
   * a missing new set is created (named `<deployment>-<hash>`).
   */
  private async syncRevision(d: ApiObject, rsList: ApiObject[], create: boolean): Promise<Step> {
    const step = this.split(d, rsList);
    const revision = maxRevision(step.olds) + 1n;
    if (step.newRs) {
      const rs = step.newRs;
      const annotations = this.setAnnotations(d, { ...(rs.metadata?.annotations ?? {}) }, revision);
      const minReady = int(specOf(d).minReadySeconds, 0);
      if (JSON.stringify(annotations) !== JSON.stringify(rs.metadata?.annotations ?? {}) || int((rs.spec as Obj | undefined)?.minReadySeconds, 0) !== minReady) {
        step.newRs = (await updateObject(this.o.replicaSets(), rs, CONTROLLER_MANAGER, (cur) => {
          cur.metadata!.annotations = annotations;
          (cur.spec as Obj).minReadySeconds = minReady;
        })) ?? rs;
      }
    } else if (create) {
      step.newRs = await this.createNewSet(d, step.olds, revision);
      step.created = true;
    }
    if (step.newRs) await this.syncDeploymentRevision(d, String(revisionOf(step.newRs)));
    return step;
  }

  /** the Deployment's annotations copied onto a set's, and its revision moved up to `revision` (the old one kept in the history) */
  private setAnnotations(d: ApiObject, ann: Record<string, string>, revision: bigint): Record<string, string> {
    for (const [k, v] of Object.entries(d.metadata?.annotations ?? {})) if (!NOT_COPIED.has(k)) ann[k] = v;
    if (parseRevision(ann[REVISION]) < revision) {
      if (ann[REVISION]) ann[REVISION_HISTORY] = ann[REVISION_HISTORY] ? `${ann[REVISION_HISTORY]},${ann[REVISION]}` : ann[REVISION];
      ann[REVISION] = String(revision);
    }
    return ann;
  }

  private async syncDeploymentRevision(d: ApiObject, revision: string): Promise<void> {
    if (d.metadata?.annotations?.[REVISION] === revision) return;
    await updateObject(this.o.deployments(), d, CONTROLLER_MANAGER, (cur) => {
      cur.metadata!.annotations = { ...(cur.metadata!.annotations ?? {}), [REVISION]: revision };
    });
  }

  private async createNewSet(d: ApiObject, olds: ApiObject[], revision: bigint): Promise<ApiObject> {
    const spec = specOf(d);
    const dv = deploymentView(d);
    const ns = d.metadata?.namespace ?? '';
    const collisionCount = (d.status as Obj | undefined)?.collisionCount as number | undefined;
    const hash = templateHash(spec.template, collisionCount);
    const template = structuredClone(spec.template ?? {}) as { metadata?: { labels?: Record<string, string> } };
    template.metadata = { ...(template.metadata ?? {}), labels: { ...(template.metadata?.labels ?? {}), [HASH_LABEL]: hash } };
    const selector = structuredClone(spec.selector ?? {}) as { matchLabels?: Record<string, string> };
    selector.matchLabels = { ...(selector.matchLabels ?? {}), [HASH_LABEL]: hash };
    const name = `${d.metadata?.name ?? ''}-${hash}`;
    const replicas = newRsReplicas(dv, olds.map(view), undefined);
    const annotations = this.setAnnotations(d, {}, revision);
    annotations[DESIRED_REPLICAS] = String(dv.replicas);
    annotations[MAX_REPLICAS] = String(dv.replicas + maxSurgeOf(dv));
    const ownerRef = newControllerRef(this.refOf(d));
    const rs = {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name, namespace: ns, labels: template.metadata.labels, annotations, ownerReferences: [ownerRef as unknown as Obj] },
      spec: { replicas, minReadySeconds: int(spec.minReadySeconds, 0), selector, template },
    } as unknown as ApiObject;
    try {
      const created = (await this.o.replicaSets().create(ns, rs, { dryRun: false, manager: CONTROLLER_MANAGER })).object;
      if (replicas > 0) void this.o.events?.event(this.refOf(d), 'Normal', 'ScalingReplicaSet', `Scaled up replica set ${name} from 0 to ${replicas}`);
      return this.fresh(created);
    } catch (e) {
      if (!(e instanceof StatusError && e.code === 409)) throw e;
      // ours already (a sync that did not see it yet): use it; otherwise a hash collision
      const existing = this.sets?.get(`${ns}/${name}`);
      if (existing && controllerRefOf(existing)?.uid === d.metadata?.uid && templatesEqual((existing.spec as Obj | undefined)?.template, spec.template)) return existing;
      await writeStatus(this.o.deployments(), d, { ...((d.status ?? {}) as Obj), collisionCount: (collisionCount ?? 0) + 1 }, CONTROLLER_MANAGER);
      throw new Error(`replica set ${name} exists with another template: collision count raised`);
    }
  }

  /** sets a set's size and its desired/max-replicas annotations (kube's scaleReplicaSet) */
  private async scaleSet(d: ApiObject, rs: ApiObject, size: number): Promise<boolean> {
    const dv = deploymentView(d);
    const v = view(rs);
    const desired = String(dv.replicas);
    const max = String(dv.replicas + maxSurgeOf(dv));
    const ann = rs.metadata?.annotations ?? {};
    if (v.replicas === size && ann[DESIRED_REPLICAS] === desired && ann[MAX_REPLICAS] === max) return false;
    await updateObject(this.o.replicaSets(), rs, CONTROLLER_MANAGER, (cur) => {
      (cur.spec as Obj).replicas = size;
      cur.metadata!.annotations = { ...(cur.metadata!.annotations ?? {}), [DESIRED_REPLICAS]: desired, [MAX_REPLICAS]: max };
    });
    if (v.replicas !== size) {
      void this.o.events?.event(this.refOf(d), 'Normal', 'ScalingReplicaSet', `Scaled ${size > v.replicas ? 'up' : 'down'} replica set ${v.name} from ${v.replicas} to ${size}`);
    }
    return v.replicas !== size;
  }

  /** kube's scale: one active set takes the whole size; a saturated new set empties the old; else proportional */
  private async scale(d: ApiObject, step: Step): Promise<void> {
    const dv = deploymentView(d);
    const all = step.newRs ? [step.newRs, ...step.olds] : step.olds;
    const active = all.filter((rs) => view(rs).replicas > 0);
    const latest = step.newRs ?? [...step.olds].sort((a, b) => olderFirst(view(b), view(a)))[0];
    const only = active.length === 1 ? active[0] : active.length === 0 ? latest : undefined;
    if (only) {
      await this.scaleSet(d, only, dv.replicas);
      return;
    }
    const n = step.newRs && view(step.newRs);
    if (n && n.desiredReplicas === dv.replicas && n.replicas === dv.replicas && n.available === dv.replicas) {
      for (const rs of step.olds) if (view(rs).replicas > 0) await this.scaleSet(d, rs, 0);
      return;
    }
    if (dv.recreate) return;
    const sizes = proportionalScale(dv, active.map(view), int((d.status as Obj | undefined)?.replicas, 0));
    for (const rs of active) await this.scaleSet(d, rs, sizes.get(view(rs).name) ?? view(rs).replicas);
  }

  private async rolling(d: ApiObject, rsList: ApiObject[]): Promise<void> {
    const dv = deploymentView(d);
    const step = await this.syncRevision(d, rsList, true);
    const newRs = step.newRs!;
    const nv = view(newRs);
    // grow (or trim) the new set
    if (nv.replicas !== dv.replicas) {
      const target = nv.replicas > dv.replicas ? dv.replicas : newRsReplicas(dv, [...step.olds.map(view), nv], nv);
      if (target !== nv.replicas && (await this.scaleSet(d, newRs, target))) {
        await this.writeStatus(d, this.refresh(step), true);
        return;
      }
    }
    // shrink the old ones within maxUnavailable
    const downs = rollingScaleDown(dv, step.olds.map(view), view(this.fresh(newRs)));
    let scaled = false;
    for (const rs of step.olds) {
      const size = downs.get(view(rs).name);
      if (size !== undefined && (await this.scaleSet(d, rs, size))) scaled = true;
    }
    const after = this.refresh(step);
    if (!scaled && rolloutComplete(dv.replicas, statusCounts([...after.olds, after.newRs!].map(view), view(after.newRs!)))) await this.cleanup(d, after.olds);
    await this.writeStatus(d, this.refresh(step), true);
  }

  private async recreate(d: ApiObject, rsList: ApiObject[]): Promise<void> {
    const dv = deploymentView(d);
    let step = await this.syncRevision(d, rsList, false);
    let scaled = false;
    for (const rs of step.olds) if (view(rs).replicas > 0 && (await this.scaleSet(d, rs, 0))) scaled = true;
    if (scaled || this.oldPodsRunning(step.olds)) {
      await this.writeStatus(d, this.refresh(step), true);
      return;
    }
    if (!step.newRs) step = await this.syncRevision(d, rsList, true);
    if (await this.scaleSet(d, step.newRs!, dv.replicas)) {
      await this.writeStatus(d, this.refresh(step), true);
      return;
    }
    const after = this.refresh(step);
    if (rolloutComplete(dv.replicas, statusCounts([...after.olds, after.newRs!].map(view), view(after.newRs!)))) await this.cleanup(d, after.olds);
    await this.writeStatus(d, this.refresh(step), true);
  }

  /** an old set still counts pods, or a pod of one is not finished (Terminating ones count) */
  private oldPodsRunning(olds: ApiObject[]): boolean {
    if (olds.some((rs) => view(rs).statusReplicas > 0)) return true;
    const uids = new Set(olds.map((rs) => rs.metadata?.uid ?? ''));
    const ns = olds[0]?.metadata?.namespace ?? '';
    return (this.pods?.inNamespace(ns) ?? []).some((p) => {
      const phase = (p.status as Obj | undefined)?.phase;
      return uids.has(controllerRefOf(p)?.uid ?? '') && phase !== 'Succeeded' && phase !== 'Failed';
    });
  }

  /** old sets beyond revisionHistoryLimit that are empty and settled go, lowest revision first */
  private async cleanup(d: ApiObject, olds: ApiObject[]): Promise<void> {
    const limit = specOf(d).revisionHistoryLimit;
    if (typeof limit !== 'number') return;
    const cleanable = olds.filter((rs) => !rs.metadata?.deletionTimestamp);
    let diff = cleanable.length - limit;
    if (diff <= 0) return;
    for (const rs of [...cleanable].sort((a, b) => (revisionOf(a) < revisionOf(b) ? -1 : revisionOf(a) > revisionOf(b) ? 1 : 0))) {
      if (diff <= 0) break;
      const v = view(rs);
      const observed = int((rs.status as Obj | undefined)?.observedGeneration, 0);
      if (v.statusReplicas !== 0 || v.replicas !== 0 || (rs.metadata?.generation ?? 0) > observed) continue;
      try {
        await this.o.replicaSets().delete(rs.metadata?.namespace ?? '', v.name, { dryRun: false, preconditions: { uid: rs.metadata?.uid ?? '' } });
      } catch (e) {
        if (!(e instanceof StatusError && (e.code === 404 || e.code === 409))) throw e;
      }
      diff--;
    }
  }

  /**
   * The status from the sets (kube's calculateStatus and syncRolloutStatus):
   * counts, Available against replicas − maxUnavailable, and — when
   * `rollout` (a strategy step, not a pause or a scale) — Progressing:
   * NewReplicaSetCreated / FoundNewReplicaSet, ReplicaSetUpdated when
   * something moved, NewReplicaSetAvailable when complete,
   * ProgressDeadlineExceeded when nothing moved for progressDeadlineSeconds.
   */
  private async writeStatus(d: ApiObject, step: Step, rollout: boolean): Promise<void> {
    const spec = specOf(d);
    const dv = deploymentView(d);
    const nowMs = this.clock.now();
    const now = isoSeconds(nowMs);
    const all = step.newRs ? [step.newRs, ...step.olds] : step.olds;
    const nv = step.newRs && view(step.newRs);
    const counts = statusCounts(all.map(view), nv);
    const old = (d.status ?? {}) as Obj;
    let conds = (Array.isArray(old.conditions) ? old.conditions : []) as Obj[];
    conds = counts.availableReplicas >= dv.replicas - maxUnavailableOf(dv)
      ? setCondition(conds, 'Available', 'True', 'MinimumReplicasAvailable', 'Deployment has minimum availability.', now)
      : setCondition(conds, 'Available', 'False', 'MinimumReplicasUnavailable', 'Deployment does not have minimum availability.', now);
    const deadline = progressDeadline(spec);
    const progressing = conds.find((c) => c.type === 'Progressing');
    // kube's checkPausedConditions: only with a deadline, and a reported timeout is left alone
    if (deadline !== undefined && progressing?.reason !== 'ProgressDeadlineExceeded') {
      if (spec.paused) {
        if (progressing?.reason !== 'DeploymentPaused') conds = setCondition(conds, 'Progressing', 'Unknown', 'DeploymentPaused', 'Deployment is paused', now);
      } else if (progressing?.reason === 'DeploymentPaused') {
        conds = setCondition(conds, 'Progressing', 'Unknown', 'DeploymentResumed', 'Deployment is resumed', now);
      }
    }
    // no deadline: kube's syncRolloutStatus removes any Progressing condition
    if (rollout && deadline === undefined) conds = conds.filter((c) => c.type !== 'Progressing');
    let recheck: number | undefined;
    if (rollout && nv && deadline !== undefined) {
      const rsName = JSON.stringify(nv.name);
      // a new set resets the condition, even after a timeout (kube's getNewReplicaSet)
      if (step.created) conds = setCondition(conds, 'Progressing', 'True', 'NewReplicaSetCreated', `Created new replica set ${rsName}`, now);
      else if (!conds.some((c) => c.type === 'Progressing')) conds = setCondition(conds, 'Progressing', 'True', 'FoundNewReplicaSet', `Found new replica set ${rsName}`, now);
      const cur = conds.find((c) => c.type === 'Progressing');
      // a completed rollout stays complete through scaling (kube's isCompleteDeployment)
      const alreadyComplete = counts.replicas === counts.updatedReplicas && cur?.reason === 'NewReplicaSetAvailable';
      if (alreadyComplete) {
        // nothing to report
      } else if (rolloutComplete(dv.replicas, counts)) {
        conds = setCondition(conds, 'Progressing', 'True', 'NewReplicaSetAvailable', `ReplicaSet ${rsName} has successfully progressed.`, now);
      } else if (rolloutProgressed(old as Partial<typeof counts>, counts)) {
        conds = setCondition(conds, 'Progressing', 'True', 'ReplicaSetUpdated', `ReplicaSet ${rsName} is progressing.`, now, true);
        recheck = deadline * 1000 + 1000;
      } else if (cur && cur.reason !== 'NewReplicaSetAvailable' && cur.reason !== 'ProgressDeadlineExceeded') {
        // nothing moved since lastUpdateTime: timed out once the deadline has passed, whatever the reason
        // (DeploymentResumed, Unknown, included: kube's DeploymentTimedOut); else looked at again then (requeueStuckDeployment)
        const since = Date.parse(String(cur.lastUpdateTime ?? '')) || nowMs;
        if (since + deadline * 1000 < nowMs) conds = setCondition(conds, 'Progressing', 'False', 'ProgressDeadlineExceeded', `ReplicaSet ${rsName} has timed out progressing.`, now);
        else recheck = since + deadline * 1000 - nowMs + 1000;
      }
    }
    const status: Obj = {
      observedGeneration: d.metadata?.generation ?? 0,
      ...counts,
      conditions: conds,
      ...(old.collisionCount !== undefined ? { collisionCount: old.collisionCount } : {}),
    };
    // kube's DeploymentStatus counters are all omitempty
    omitZero(status, ['observedGeneration', 'replicas', 'updatedReplicas', 'readyReplicas', 'availableReplicas', 'unavailableReplicas']);
    if (!statusUnchanged(old, status)) await writeStatus(this.o.deployments(), d, status, CONTROLLER_MANAGER);
    if (recheck !== undefined) this.loop.enqueueAfter(`${d.metadata?.namespace ?? ''}/${d.metadata?.name ?? ''}`, recheck);
  }
}
