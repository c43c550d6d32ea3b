// The StatefulSet controller (kube-controller-manager's `statefulset`),
// leader only, on the controller runtime (docs/controllers.md). Queue key:
// the set's `namespace/name`; synced when it changes and when one of its
// pods or revisions (or an orphan it selects) changes.
//
// A sync, as kube's StatefulSetControl: claim the revisions and make sure one
// holds the current template (history.ts: the update revision; the status'
// currentRevision names the one before a rolling update finishes), claim the
// pods named `<set>-<ordinal>`, then carry out statefulset-plan.ts planSet's
// actions in order — a pod's PersistentVolumeClaims (from
// volumeClaimTemplates) are created before it — then write the status and
// prune old revisions. A ready pod turns available after minReadySeconds of
// the injected clock: the set is looked at again then.
//
// Storage: the persistent volume controller (../volume/) binds the claims to
// volumes made beforehand; there is no provisioner, and neither the
// scheduler nor the node agent looks at claims: the pod runs without its
// volume, bound or not (docs/controllers.md).

import { StatusError, isNamespaceTerminating } from '../../core/errors.js';
import { type Clock, systemClock } from '../../core/clock.js';
import type { GenericStore } from '../../registry/generic-store.js';
import type { ApiObject, JSONValue } from '../../registry/types.js';
import type { EventRecorder } from '../event-recorder.js';
import { ControllerLoop, LoopController, type Informer, type InformerSource } from '../runtime/index.js';
import { claimAll } from '../workloads/claim.js';
import { type OwnerReference, isPodAvailable, isPodReady, labelsOf, untilAvailable } from '../workloads/pods.js';
import { selects } from '../workloads/replicaset.js';
import { type EventRef, controlledBy, eventRef, ownedHandlers, ownerRef, selectsTemplate } from './owner.js';
import { CONTROLLER_MANAGER, omitZero, statusUnchanged, updateObject, writeStatus } from '../workloads/writes.js';
import { DEFAULT_HISTORY_LIMIT, REVISION_HASH_LABEL, deleteRevision, ensureRevision, revisionsToPrune, templateOf } from './history.js';
import {
  POD_INDEX_LABEL, POD_NAME_LABEL, type SetPod, type SetView, claimName, claimVolumes, ordinalOf, planSet, podName, podRevision, setCounts,
} from './statefulset-plan.js';

export const STATEFULSET_CONTROLLER = 'statefulset';

type Obj = Record<string, JSONValue>;

export interface StatefulSetOptions {
  store: InformerSource;
  statefulSets: () => GenericStore;
  revisions: () => GenericStore;
  pods: () => GenericStore;
  claims: () => GenericStore;
  clock?: Clock;
  events?: EventRecorder;
  log?: (msg: string) => void;
  workers?: number;
}

interface StsSpec {
  replicas?: number;
  selector?: Obj;
  template?: Obj;
  serviceName?: string;
  podManagementPolicy?: string;
  minReadySeconds?: number;
  revisionHistoryLimit?: number;
  ordinals?: { start?: number };
  volumeClaimTemplates?: Obj[];
  persistentVolumeClaimRetentionPolicy?: { whenDeleted?: string; whenScaled?: string };
  updateStrategy?: { type?: string; rollingUpdate?: { partition?: number; maxUnavailable?: JSONValue } };
}

const specOf = (s: ApiObject): StsSpec => (s.spec ?? {}) as StsSpec;
const int = (v: unknown, dflt: number): number => (typeof v === 'number' ? v : dflt);
const claimTemplateName = (t: Obj): string => String((t.metadata as Obj | undefined)?.name ?? '');

export class StatefulSetController extends LoopController {
  protected readonly loop: ControllerLoop;
  private readonly clock: Clock;
  private sets: Informer | undefined;
  private pods: Informer | undefined;
  private revisions: Informer | undefined;
  private claims: Informer | undefined;

  constructor(private readonly o: StatefulSetOptions) {
    super();
    this.clock = o.clock ?? systemClock;
    this.loop = new ControllerLoop(o.store, { name: 'statefulset', clock: this.clock, log: o.log, baseDelayMs: 200, workers: o.workers ?? 2 });
  }

  start(): void {
    this.stop();
    this.loop.begin((key) => this.sync(key));
    this.sets = this.loop.inform(this.o.statefulSets().rangeKeys(''), {
      add: (_o, key) => this.loop.enqueue(key),
      update: (_old, _o, key) => this.loop.enqueue(key),
    });
    const owned = ownedHandlers('StatefulSet', () => this.sets, (key) => this.loop.enqueue(key));
    this.pods = this.loop.inform(this.o.pods().rangeKeys(''), owned);
    this.revisions = this.loop.inform(this.o.revisions().rangeKeys(''), owned);
    this.claims = this.loop.inform(this.o.claims().rangeKeys(''));
  }

  stop(): void {
    this.loop.end();
    this.sets = undefined;
    this.pods = undefined;
    this.revisions = undefined;
    this.claims = undefined;
  }

  private ownerRef(o: ApiObject): OwnerReference {
    return ownerRef('StatefulSet', o);
  }

  private eventRef(o: ApiObject): EventRef {
    return eventRef('StatefulSet', o);
  }

  private async sync(key: string): Promise<void> {
    const set = this.sets?.get(key);
    if (!set || !this.pods || !this.revisions || !this.claims) return;
    const spec = specOf(set);
    const ns = set.metadata?.namespace ?? '';
    const name = set.metadata?.name ?? '';
    if (!selectsTemplate(set)) {
      void this.o.events?.event(this.eventRef(set), 'Warning', 'SelectingAll', 'This statefulset is selecting all pods. A non-empty selector is required.');
      return;
    }
    const ref = this.ownerRef(set);
    const matches = (o: ApiObject): boolean => selects(spec.selector, labelsOf(o));
    const revisions = await claimAll(this.o.revisions(), set, this.revisions.inNamespace(ns), matches, ref);
    // a set's pods are the ones named after it (kube's isMemberOf)
    const member = (p: ApiObject): boolean => matches(p) && ordinalOf(name, p.metadata?.name ?? '') !== undefined;
    await claimAll(this.o.pods(), set, this.pods.inNamespace(ns), member, ref);
    if (set.metadata?.deletionTimestamp) return;
    const { update, revisions: history } = await ensureRevision(this.o.revisions(), { obj: set, ref, store: this.o.statefulSets() }, revisions);
    const st = (set.status ?? {}) as Obj;
    const current = history.find((r) => r.metadata?.name === st.currentRevision) ?? update;
    const view: SetView = {
      replicas: int(spec.replicas, 1),
      start: int(spec.ordinals?.start, 0),
      parallel: spec.podManagementPolicy === 'Parallel',
      rolling: (spec.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate',
      partition: int(spec.updateStrategy?.rollingUpdate?.partition, 0),
      maxUnavailable: spec.updateStrategy?.rollingUpdate?.maxUnavailable,
      currentRevision: current.metadata?.name ?? '',
      updateRevision: update.metadata?.name ?? '',
    };
    const minReady = int(spec.minReadySeconds, 0);
    const templates = new Map<string, Obj>([[view.currentRevision, templateOf(current)], [view.updateRevision, (spec.template ?? {}) as Obj]]);
    let failure: string | undefined;
    for (const a of planSet(view, this.views(set, minReady))) {
      try {
        if (a.op === 'create') await this.createPod(set, a.ordinal, a.revision, templates.get(a.revision) ?? {});
        else {
          if (a.reason === 'finished') this.recreating(set, a.name);
          await this.deletePod(set, a.name, a.reason === 'condemned');
        }
      } catch (e) {
        failure = e instanceof Error ? e.message : String(e);
        break;
      }
    }
    const pods = this.owned(set);
    const views = this.views(set, minReady);
    await this.writeStatus(set, view, views, pods);
    const live = new Set(pods.map(podRevision).filter((r) => r !== ''));
    const keep = new Set([view.currentRevision, view.updateRevision]);
    for (const cr of revisionsToPrune(history, live, keep, int(spec.revisionHistoryLimit, DEFAULT_HISTORY_LIMIT))) await deleteRevision(this.o.revisions(), cr);
    const now = this.clock.now();
    const waits = pods.map((p) => untilAvailable(p, minReady, now)).filter((w): w is number => w !== undefined);
    if (waits.length > 0) this.loop.enqueueAfter(key, Math.min(...waits) + 1);
    if (failure) throw new Error(failure);
  }

  private owned(o: ApiObject): ApiObject[] {
    return controlledBy(this.pods, o);
  }

  private views(set: ApiObject, minReady: number): SetPod[] {
    const now = this.clock.now();
    const name = set.metadata?.name ?? '';
    return this.owned(set).flatMap((p) => {
      const ordinal = ordinalOf(name, p.metadata?.name ?? '');
      if (ordinal === undefined) return [];
      const phase = (p.status as Obj | undefined)?.phase;
      const running = phase === 'Running';
      return [{
        name: p.metadata?.name ?? '',
        ordinal,
        revision: podRevision(p),
        ready: running && isPodReady(p),
        available: running && isPodAvailable(p, minReady, now),
        finished: phase === 'Failed' || phase === 'Succeeded',
        deleting: Boolean(p.metadata?.deletionTimestamp),
      }];
    });
  }

  /** the claims of one ordinal, created when missing (kube's createPersistentVolumeClaims) */
  private async ensureClaims(set: ApiObject, ordinal: number): Promise<void> {
    const spec = specOf(set);
    const ns = set.metadata?.namespace ?? '';
    const setName = set.metadata?.name ?? '';
    const whenDeleted = spec.persistentVolumeClaimRetentionPolicy?.whenDeleted ?? 'Retain';
    for (const t of spec.volumeClaimTemplates ?? []) {
      const cname = claimName(claimTemplateName(t), setName, ordinal);
      const existing = this.claims?.get(`${ns}/${cname}`);
      if (existing) {
        if (existing.metadata?.deletionTimestamp) throw new Error(`claim ${cname} is being deleted`);
        continue;
      }
      const meta = (t.metadata ?? {}) as { labels?: Record<string, string>; annotations?: Record<string, string> };
      const claim = {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: {
          name: cname,
          namespace: ns,
          labels: { ...(meta.labels ?? {}), ...(((spec.selector?.matchLabels ?? {}) as Record<string, string>)) },
          ...(meta.annotations ? { annotations: { ...meta.annotations } } : {}),
          // whenDeleted: Delete — the set controls the claim and the garbage collector takes it with the set
          // (a controller reference, as since kube's KEP-4375 fix)
          ...(whenDeleted === 'Delete' ? { ownerReferences: [this.ownerRef(set) as unknown as Obj] } : {}),
        },
        spec: structuredClone((t.spec ?? {}) as Obj),
      } as unknown as ApiObject;
      try {
        await this.o.claims().create(ns, claim, { dryRun: false, manager: CONTROLLER_MANAGER });
        void this.o.events?.event(this.eventRef(set), 'Normal', 'SuccessfulCreate', `create Claim ${cname} Pod ${podName(setName, ordinal)} in StatefulSet ${setName} success`);
      } catch (e) {
        if (e instanceof StatusError && e.code === 409) continue;
        if (isNamespaceTerminating(e)) return; // nothing can be created there any more
        const msg = e instanceof Error ? e.message : String(e);
        void this.o.events?.event(this.eventRef(set), 'Warning', 'FailedCreate', `create Claim ${cname} for Pod ${podName(setName, ordinal)} in StatefulSet ${setName} failed error: ${msg}`);
        throw e;
      }
    }
  }

  private async createPod(set: ApiObject, ordinal: number, revision: string, template: Obj): Promise<void> {
    const spec = specOf(set);
    const ns = set.metadata?.namespace ?? '';
    const setName = set.metadata?.name ?? '';
    const name = podName(setName, ordinal);
    await this.ensureClaims(set, ordinal);
    const meta = (template.metadata ?? {}) as { labels?: Record<string, string>; annotations?: Record<string, string> };
    const podSpec = structuredClone((template.spec ?? {}) as Obj);
    const claims = (spec.volumeClaimTemplates ?? []).map(claimTemplateName);
    if (claims.length > 0) podSpec.volumes = claimVolumes(podSpec, claims, setName, ordinal);
    podSpec.hostname = name;
    if (spec.serviceName) podSpec.subdomain = spec.serviceName;
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name,
        namespace: ns,
        labels: { ...(meta.labels ?? {}), [POD_NAME_LABEL]: name, [POD_INDEX_LABEL]: String(ordinal), [REVISION_HASH_LABEL]: revision },
        ...(meta.annotations ? { annotations: { ...meta.annotations } } : {}),
        ownerReferences: [this.ownerRef(set) as unknown as Obj],
      },
      spec: podSpec,
    } as unknown as ApiObject;
    try {
      await this.o.pods().create(ns, pod, { dryRun: false, manager: CONTROLLER_MANAGER });
      void this.o.events?.event(this.eventRef(set), 'Normal', 'SuccessfulCreate', `create Pod ${name} in StatefulSet ${setName} successful`);
    } catch (e) {
      // the previous pod of that name is still going: the next sync retries
      if (e instanceof StatusError && e.code === 409) return;
      if (isNamespaceTerminating(e)) return; // nothing can be created there any more
      const msg = e instanceof Error ? e.message : String(e);
      void this.o.events?.event(this.eventRef(set), 'Warning', 'FailedCreate', `create Pod ${name} in StatefulSet ${setName} failed error: ${msg}`);
      throw e;
    }
  }

  /**
   * kube's processReplica before it deletes a finished pod to make it again (a pod the node rejected or
   * evicted is Failed): Warning RecreatingFailedPod, or Normal RecreatingTerminatedPod for a Succeeded one
   */
  private recreating(set: ApiObject, name: string): void {
    const ns = set.metadata?.namespace ?? '';
    const failed = (this.pods?.get(`${ns}/${name}`)?.status as Obj | undefined)?.phase === 'Failed';
    const what = `StatefulSet ${ns}/${set.metadata?.name ?? ''} is recreating ${failed ? 'failed' : 'terminated'} Pod ${name}`;
    void this.o.events?.event(this.eventRef(set), failed ? 'Warning' : 'Normal', failed ? 'RecreatingFailedPod' : 'RecreatingTerminatedPod', what);
  }

  /** deletes a pod; a condemned one under whenScaled: Delete first hands its claims to it (in place of the set), so they go with it */
  private async deletePod(set: ApiObject, name: string, condemned: boolean): Promise<void> {
    const spec = specOf(set);
    const ns = set.metadata?.namespace ?? '';
    const setName = set.metadata?.name ?? '';
    const pod = this.pods?.get(`${ns}/${name}`);
    if (!pod) return;
    if (condemned && spec.persistentVolumeClaimRetentionPolicy?.whenScaled === 'Delete') {
      const ordinal = ordinalOf(setName, name)!;
      const podRef = { apiVersion: 'v1', kind: 'Pod', name, uid: pod.metadata?.uid ?? '' };
      for (const t of spec.volumeClaimTemplates ?? []) {
        const c = this.claims?.get(`${ns}/${claimName(claimTemplateName(t), setName, ordinal)}`);
        if (!c || c.metadata?.ownerReferences?.some((r) => r.uid === podRef.uid)) continue;
        // the set's own reference goes, or the collector would keep the claim for the set
        await updateObject(this.o.claims(), c, CONTROLLER_MANAGER, (cur) => {
          cur.metadata!.ownerReferences = [...(cur.metadata!.ownerReferences ?? []).filter((r) => r.uid !== set.metadata?.uid), podRef];
        });
      }
    }
    try {
      await this.o.pods().delete(ns, name, { dryRun: false, preconditions: { uid: pod.metadata?.uid ?? '' } });
      void this.o.events?.event(this.eventRef(set), 'Normal', 'SuccessfulDelete', `delete Pod ${name} in StatefulSet ${setName} successful`);
    } catch (e) {
      if (!(e instanceof StatusError && (e.code === 404 || e.code === 409))) throw e;
    }
  }

  /** kube's status: counts, the revisions (current moves to update once every pod is updated and ready), collisionCount */
  private async writeStatus(set: ApiObject, view: SetView, pods: SetPod[], objs: ApiObject[]): Promise<void> {
    const created = new Set(objs.filter((p) => String((p.status as Obj | undefined)?.phase ?? '') !== '').map((p) => p.metadata?.name ?? ''));
    const counts = setCounts(view, pods, (p) => created.has(p.name));
    let currentRevision = view.currentRevision;
    if (view.rolling && counts.updatedReplicas === counts.replicas && counts.readyReplicas === counts.replicas) {
      currentRevision = view.updateRevision;
      counts.currentReplicas = counts.updatedReplicas;
    }
    const cur = (set.status ?? {}) as Obj;
    const status: Obj = {
      observedGeneration: set.metadata?.generation ?? 0,
      ...counts,
      currentRevision,
      updateRevision: view.updateRevision,
      collisionCount: int(cur.collisionCount, 0),
      ...(cur.conditions !== undefined ? { conditions: cur.conditions } : {}),
    };
    // kube's StatefulSetStatus: `replicas` and `availableReplicas` always, these omitempty
    omitZero(status, ['observedGeneration', 'readyReplicas', 'currentReplicas', 'updatedReplicas']);
    if (statusUnchanged(cur, status)) return;
    await writeStatus(this.o.statefulSets(), set, status, CONTROLLER_MANAGER);
  }
}
