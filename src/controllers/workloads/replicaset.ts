// The ReplicaSet controller (kube-controller-manager's `replicaset`), and
// with another `kind` the ReplicationController one (`replicationcontroller`,
// kube's is the same code over a map selector). Leader only, on the
// controller runtime (docs/controllers.md). Queue key: the set's
// `namespace/name`; a set is synced when it changes and when a pod it
// controls, or an orphan it selects, changes.
//
// A sync claims the namespace's pods (claim.ts: adopt matching orphans,
// release pods that stopped matching), then creates from the template or
// deletes (replicaset-plan.ts decides which) until `spec.replicas` active
// pods are controlled, and writes the status when it changed. The informer
// holds a created pod when its write resolves (the store publishes before it
// answers), so kube's "expectations" are not needed: the sync the new pods
// trigger sees them.

import { type Clock, systemClock } from '../../core/clock.js';
import type { GenericStore } from '../../registry/generic-store.js';
import type { ApiObject, JSONValue } from '../../registry/types.js';
import { matchesLabelSelector } from '../../registry/kinds/workload-shared.js';
import { isoSeconds } from '../../registry/kinds/pod-eviction.js';
import type { EventRecorder } from '../event-recorder.js';
import { ControllerLoop, LoopController, type Informer, type InformerSource } from '../runtime/index.js';
import { claimAll } from './claim.js';
import { type OwnerReference, controllerRefOf, isPodActive, labelsOf, newControllerRef, ownedObjectHandlers, refersTo, untilAvailable } from './pods.js';
import { type ReplicaCounts, podsToDelete, replicaCounts } from './replicaset-plan.js';
import { CONTROLLER_MANAGER, type OwnerRef, createInBatches, deleteControlled, omitZero, statusUnchanged, writeStatus } from './writes.js';

export const REPLICASET_CONTROLLER = 'replicaset';
export const REPLICATIONCONTROLLER_CONTROLLER = 'replicationcontroller';

type Obj = Record<string, JSONValue>;

/** what differs between a ReplicaSet and a ReplicationController */
export interface ReplicaKind {
  apiVersion: string;
  kind: string;
  /** the set's selector as a metav1.LabelSelector */
  selector(o: ApiObject): Obj | undefined;
}

export const REPLICA_SET: ReplicaKind = {
  apiVersion: 'apps/v1',
  kind: 'ReplicaSet',
  selector: (o) => (o.spec as { selector?: Obj } | undefined)?.selector,
};

export const REPLICATION_CONTROLLER: ReplicaKind = {
  apiVersion: 'v1',
  kind: 'ReplicationController',
  // a map selector, defaulted from the template's labels
  selector: (o) => {
    const spec = (o.spec ?? {}) as { selector?: Obj; template?: { metadata?: { labels?: Obj } } };
    const ml = spec.selector && Object.keys(spec.selector).length > 0 ? spec.selector : spec.template?.metadata?.labels;
    return ml ? { matchLabels: ml } : undefined;
  },
};

export interface ReplicaSetOptions {
  store: InformerSource;
  kind: ReplicaKind;
  sets: () => GenericStore;
  pods: () => GenericStore;
  clock?: Clock;
  events?: EventRecorder;
  log?: (msg: string) => void;
  workers?: number;
}

/** does a (non-empty) selector select these labels; an empty or absent selector selects nothing, as kube's controllers treat it */
export function selects(selector: Obj | undefined, labels: Record<string, JSONValue>): boolean {
  if (!selector) return false;
  const ml = selector.matchLabels as Obj | undefined;
  const me = selector.matchExpressions as unknown[] | undefined;
  if ((!ml || Object.keys(ml).length === 0) && (!me || me.length === 0)) return false;
  return matchesLabelSelector(selector, labels);
}

const int = (v: unknown, dflt: number): number => (typeof v === 'number' ? v : dflt);

export class ReplicaSetController extends LoopController {
  protected readonly loop: ControllerLoop;
  private readonly clock: Clock;
  private sets: Informer | undefined;
  private pods: Informer | undefined;

  /** the API group of the kind's controller references ('' for ReplicationControllers) */
  private readonly group: string;

  constructor(private readonly o: ReplicaSetOptions) {
    super();
    this.clock = o.clock ?? systemClock;
    this.group = o.kind.apiVersion.includes('/') ? o.kind.apiVersion.split('/')[0]! : '';
    this.loop = new ControllerLoop(o.store, { name: o.kind.kind, clock: this.clock, log: o.log, baseDelayMs: 200, workers: o.workers ?? 2 });
  }

  start(): void {
    this.stop();
    this.loop.begin((key) => this.sync(key));
    this.sets = this.loop.inform(this.o.sets().rangeKeys(''), {
      add: (_o, key) => this.loop.enqueue(key),
      update: (_old, _o, key) => this.loop.enqueue(key),
    });
    this.pods = this.loop.inform(this.o.pods().rangeKeys(''), ownedObjectHandlers((pod) => this.enqueueFor(pod)));
  }

  stop(): void {
    this.loop.end();
    this.sets = undefined;
    this.pods = undefined;
  }

  /** the set controlling the pod, else every set of the namespace selecting the orphan */
  private enqueueFor(pod: ApiObject): void {
    const ns = pod.metadata?.namespace ?? '';
    const ref = controllerRefOf(pod);
    if (ref) {
      if (refersTo(ref, this.group, this.o.kind.kind)) this.loop.enqueue(`${ns}/${ref.name}`);
      return;
    }
    const labels = labelsOf(pod);
    for (const s of this.sets?.inNamespace(ns) ?? []) if (selects(this.o.kind.selector(s), labels)) this.loop.enqueue(`${ns}/${s.metadata?.name ?? ''}`);
  }

  private ownerRef(set: ApiObject): OwnerReference {
    return newControllerRef({ apiVersion: this.o.kind.apiVersion, kind: this.o.kind.kind, name: set.metadata?.name ?? '', uid: set.metadata?.uid ?? '' });
  }

  /** the set's active pods after adopting and releasing (kube's claimPods) */
  private async claimPods(set: ApiObject): Promise<ApiObject[]> {
    const selector = this.o.kind.selector(set);
    const owned = await claimAll(this.o.pods(), set, this.pods!.inNamespace(set.metadata?.namespace ?? ''), (p) => selects(selector, labelsOf(p)), this.ownerRef(set));
    return owned.filter(isPodActive);
  }

  private async sync(key: string): Promise<void> {
    const set = this.sets?.get(key);
    if (!set || !this.pods) return;
    const ns = set.metadata?.namespace ?? '';
    const name = set.metadata?.name ?? '';
    const spec = (set.spec ?? {}) as { replicas?: number; minReadySeconds?: number; template?: { metadata?: Obj; spec?: Obj } };
    const ref = { apiVersion: this.o.kind.apiVersion, kind: this.o.kind.kind, namespace: ns, name, uid: set.metadata?.uid ?? '' };
    let pods = await this.claimPods(set);
    let failure: string | undefined;
    if (!set.metadata?.deletionTimestamp) {
      const diff = pods.length - int(spec.replicas, 1);
      if (diff < 0) failure = await this.createPods(set, -diff, ref);
      else if (diff > 0) {
        const related = this.pods.inNamespace(ns).filter((p) => controllerRefOf(p)?.uid === set.metadata?.uid && isPodActive(p));
        await Promise.all(podsToDelete(pods, diff, related).map((p) => deleteControlled(this.o.pods(), p, ref, this.o.events)));
      }
      // the informer now holds what the writes did
      pods = this.pods.inNamespace(ns).filter((p) => controllerRefOf(p)?.uid === set.metadata?.uid && isPodActive(p));
    }
    const now = this.clock.now();
    const minReady = int(spec.minReadySeconds, 0);
    const counts = replicaCounts(pods, (spec.template?.metadata?.labels ?? {}) as Obj, minReady, now);
    await this.writeStatus(set, counts, failure);
    // a ready pod turns available after minReadySeconds: look again then
    const waits = pods.map((p) => untilAvailable(p, minReady, now)).filter((w): w is number => w !== undefined);
    if (waits.length > 0) this.loop.enqueueAfter(key, Math.min(...waits) + 1);
    if (failure) throw new Error(failure);
  }

  /** creates `count` pods in slow-start batches; the first failure stops it and is returned */
  private async createPods(set: ApiObject, count: number, ref: OwnerRef): Promise<string | undefined> {
    const tmpl = ((set.spec as Obj | undefined)?.template ?? {}) as { metadata?: { labels?: Obj; annotations?: Obj }; spec?: Obj };
    const pod = (): ApiObject => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        generateName: `${ref.name}-`,
        namespace: ref.namespace,
        ...(tmpl.metadata?.labels ? { labels: structuredClone(tmpl.metadata.labels) as Record<string, string> } : {}),
        ...(tmpl.metadata?.annotations ? { annotations: structuredClone(tmpl.metadata.annotations) as Record<string, string> } : {}),
        ownerReferences: [this.ownerRef(set) as unknown as Obj],
      },
      spec: structuredClone(tmpl.spec ?? {}),
    }) as ApiObject;
    return createInBatches(this.o.pods(), ref, Array.from({ length: count }, () => pod), this.o.events);
  }

  /**
   * status with observedGeneration and the ReplicaFailure condition, as kube's
   * calculateStatus: set on a failed create when there is none, kept as it is
   * while creates keep failing (a new message on every retry, each naming
   * another generated pod, would be a status write per retry: a write loop
   * that starves clients' updates of the set with 409s), removed after a sync
   * without failure
   */
  private async writeStatus(set: ApiObject, counts: ReplicaCounts, failure: string | undefined): Promise<void> {
    const cur = (set.status ?? {}) as Obj;
    const conds = (Array.isArray(cur.conditions) ? cur.conditions : []) as Obj[];
    const old = conds.find((c) => c.type === 'ReplicaFailure');
    let conditions = conds.filter((c) => c.type !== 'ReplicaFailure');
    if (failure) {
      conditions = old ? conds : [...conditions, { type: 'ReplicaFailure', status: 'True', lastTransitionTime: isoSeconds(this.clock.now()), reason: 'FailedCreate', message: failure }];
    }
    const status: Obj = { ...counts, observedGeneration: set.metadata?.generation ?? 0, ...(conditions.length > 0 ? { conditions } : {}) };
    // kube's ReplicaSetStatus: `replicas` always, the other counters omitempty
    omitZero(status, ['fullyLabeledReplicas', 'readyReplicas', 'availableReplicas', 'observedGeneration']);
    if (statusUnchanged(cur, status)) return;
    await writeStatus(this.o.sets(), set, status, CONTROLLER_MANAGER);
  }
}
