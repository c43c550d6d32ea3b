// The disruption controller (kube-controller-manager's `disruption`), leader
// only, on the controller runtime (docs/controllers.md): it keeps every
// PodDisruptionBudget's status current (budget.ts computes it) so that
// pods/eviction (src/registry/kinds/pod-eviction.ts) can decide. Queue key:
// the budget's `namespace/name`. A budget is synced again when it changes,
// when a pod it selects (before or after the change) changes, when a
// workload in its namespace changes (their scale is the expected count of
// percentage budgets), and when a disruptedPods entry runs out (a delayed
// add on the Clock port). The status is written with the resourceVersion
// the computation read: an eviction that spent the budget meanwhile makes
// it a 409 and the key is retried on the newer budget, never overwriting
// the eviction's disruptedPods entry. Pods left with a stale DisruptionTarget
// condition are queued too (key `pod:namespace/name`, stale-condition.ts).

import { StatusError } from '../../core/errors.js';
import { type Clock, systemClock } from '../../core/clock.js';
import type { GenericStore } from '../../registry/generic-store.js';
import type { ApiObject, JSONValue } from '../../registry/types.js';
import { budgetSelects } from '../../registry/kinds/pod-eviction.js';
import type { EventRecorder } from '../event-recorder.js';
import { ControllerLoop, LABEL_INDEX, LoopController, type Informer, type InformerSource, NAMESPACE_INDEX, labelCandidates, labelIndex } from '../runtime/index.js';
import { type OwnerRef, type ScaleFinder, computeBudget } from './budget.js';
import { controllerRefOf } from '../../machinery/meta.js';
import { clearDisruptionTarget, staleDisruptionWait } from './stale-condition.js';
import { isoSeconds } from '../../registry/kinds/pod-eviction.js';

export const DISRUPTION_CONTROLLER = 'disruption';
export const DISRUPTION_MANAGER = 'kube-controller-manager';

export interface DisruptionStores {
  pdbs: () => GenericStore;
  pods: () => GenericStore;
  /** the workload kinds whose scale counts; absent ones are not served */
  deployments?: () => GenericStore;
  replicaSets?: () => GenericStore;
  statefulSets?: () => GenericStore;
  replicationControllers?: () => GenericStore;
}

export interface DisruptionOptions extends DisruptionStores {
  store: InformerSource;
  clock?: Clock;
  events?: EventRecorder;
  log?: (msg: string) => void;
  /** first retry after a failed write (default 200 ms, doubling) */
  retryMs?: number;
}

/** queue keys of pods whose DisruptionTarget condition may be stale (budget keys are `namespace/name`) */
const STALE_PREFIX = 'pod:';

type Workload = 'deployments' | 'replicaSets' | 'statefulSets' | 'replicationControllers';
const WORKLOADS: Workload[] = ['deployments', 'replicaSets', 'statefulSets', 'replicationControllers'];

export class DisruptionController extends LoopController {
  protected readonly loop: ControllerLoop;
  private readonly clock: Clock;
  private pdbs: Informer | undefined;
  private pods: Informer | undefined;
  private readonly workloads = new Map<Workload, Informer>();
  /** status writes made (tests) */
  writes = 0;
  /** stale DisruptionTarget conditions reset (tests) */
  staleCleared = 0;

  constructor(private readonly o: DisruptionOptions) {
    super();
    this.clock = o.clock ?? systemClock;
    this.loop = new ControllerLoop(o.store, { name: 'disruption', clock: this.clock, log: o.log, baseDelayMs: o.retryMs ?? 200 });
  }

  start(): void {
    this.stop();
    this.loop.begin((key) => this.sync(key));
    this.pdbs = this.loop.inform(this.o.pdbs().rangeKeys(''), {
      add: (_o, key) => this.loop.enqueue(key),
      update: (_old, _o, key) => this.loop.enqueue(key),
    });
    for (const w of WORKLOADS) {
      const gs = this.o[w];
      if (!gs) continue;
      const onWorkload = (o: ApiObject): void => this.enqueueNamespace(o.metadata?.namespace ?? '');
      this.workloads.set(w, this.loop.inform(gs().rangeKeys(''), { add: onWorkload, update: (_old, o) => onWorkload(o), delete: onWorkload }));
    }
    this.pods = this.loop.inform(
      this.o.pods().rangeKeys(''),
      {
        add: (pod, key) => {
          this.enqueueFor(pod);
          this.watchStale(pod, key);
        },
        update: (old, pod, key) => {
          this.enqueueFor(pod);
          this.watchStale(pod, key);
          if (JSON.stringify(old.metadata?.labels ?? {}) !== JSON.stringify(pod.metadata?.labels ?? {})) this.enqueueFor(old);
        },
        delete: (pod) => this.enqueueFor(pod),
      },
      { [LABEL_INDEX]: labelIndex },
    );
  }

  stop(): void {
    this.loop.end();
    this.pdbs = undefined;
    this.pods = undefined;
    this.workloads.clear();
  }

  /** resolves once no budget is queued or being synced (delayed rechecks not counted) */
  /** the budgets selecting a pod (kube's getPdbsForPod, here every one: the eviction refuses overlaps) */
  private enqueueFor(pod: ApiObject): void {
    const ns = pod.metadata?.namespace ?? '';
    const labels = (pod.metadata?.labels ?? {}) as Record<string, JSONValue>;
    for (const key of this.pdbs?.indexKeys(NAMESPACE_INDEX, ns) ?? []) {
      const pdb = this.pdbs!.get(key);
      if (pdb && budgetSelects(pdb, labels)) this.loop.enqueue(key);
    }
  }

  private enqueueNamespace(ns: string): void {
    for (const key of this.pdbs?.indexKeys(NAMESPACE_INDEX, ns) ?? []) this.loop.enqueue(key);
  }

  /** a pod with a DisruptionTarget condition and no deletion: look again when it turns stale */
  private watchStale(pod: ApiObject, key: string): void {
    const wait = staleDisruptionWait(pod, this.clock.now());
    if (wait === undefined) return;
    if (wait === 0) this.loop.enqueue(`${STALE_PREFIX}${key}`);
    else this.loop.enqueueAfter(`${STALE_PREFIX}${key}`, wait);
  }

  /** resets a stale DisruptionTarget to False, pinned to the pod version read (a change meanwhile: decided again) */
  private async syncStale(key: string): Promise<void> {
    const pod = this.pods?.get(key);
    if (!pod) return;
    const wait = staleDisruptionWait(pod, this.clock.now());
    if (wait === undefined) return;
    if (wait > 0) {
      this.loop.enqueueAfter(`${STALE_PREFIX}${key}`, wait);
      return;
    }
    const slash = key.indexOf('/');
    try {
      await this.o.pods().guaranteedUpdate(key.slice(0, slash), key.slice(slash + 1), { dryRun: false, subresource: 'status', manager: DISRUPTION_MANAGER }, (cur) => {
        if (!cur) throw new StatusError(404, 'NotFound', `pods "${key}" not found`);
        return clearDisruptionTarget({ ...cur, metadata: { ...cur.metadata, resourceVersion: pod.metadata?.resourceVersion ?? '' } }, isoSeconds(this.clock.now()));
      });
      this.staleCleared++;
    } catch (e) {
      if (e instanceof StatusError && e.code === 404) return;
      throw e;
    }
  }

  private async sync(key: string): Promise<void> {
    if (key.startsWith(STALE_PREFIX)) return this.syncStale(key.slice(STALE_PREFIX.length));
    const pdb = this.pdbs?.get(key);
    if (!pdb || !this.pods) return;
    const ns = pdb.metadata?.namespace ?? '';
    const name = pdb.metadata?.name ?? '';
    const now = this.clock.now();
    const out = computeBudget(pdb, this.candidates(pdb, ns), this.scaleFinder(), now);
    const ref = { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', namespace: ns, name, uid: pdb.metadata?.uid ?? '' };
    if (out.failed) void this.o.events?.event(ref, 'Warning', 'CalculateExpectedPodCountFailed', `Failed to calculate the number of expected pods: ${out.failed}`);
    if (out.unmanaged.length > 0) {
      void this.o.events?.event(ref, 'Warning', 'UnmanagedPods', `Pods selected by this PodDisruptionBudget were found to be unmanaged. As a result, the status of the PDB cannot be calculated correctly, which may result in undefined behavior. To account for these pods please set ".spec.minAvailable" field of the PDB to an integer value.`);
    }
    if (out.status) await this.write(ns, name, pdb.metadata?.resourceVersion ?? '', out.status);
    if (out.recheckAt !== undefined) this.loop.enqueueAfter(key, Math.max(0, out.recheckAt - now));
  }

  /**
   * The pods a budget may select: for a selector with matchLabels, the
   * smallest label-index bucket of its pairs (computeBudget still applies the
   * whole selector), else every pod of the namespace. A sync was a scan of the
   * namespace's pods (~300 µs per sync at 1,000 pods, docs/controllers.md).
   */
  private candidates(pdb: ApiObject, ns: string): ApiObject[] {
    const ml = (pdb.spec as { selector?: { matchLabels?: Record<string, unknown> } } | undefined)?.selector?.matchLabels;
    return labelCandidates(this.pods!, ns, ml);
  }

  /** the status write, pinned to the budget the computation read; a 409 throws (the queue retries on the newer one) */
  private async write(ns: string, name: string, rv: string, status: Record<string, JSONValue>): Promise<void> {
    try {
      await this.o.pdbs().guaranteedUpdate(ns, name, { dryRun: false, subresource: 'status', manager: DISRUPTION_MANAGER }, (cur) => {
        if (!cur) throw new StatusError(404, 'NotFound', `poddisruptionbudgets.policy "${name}" not found`);
        return { ...cur, metadata: { ...cur.metadata, resourceVersion: rv }, status };
      });
      this.writes++;
    } catch (e) {
      if (e instanceof StatusError && e.code === 404) return;
      throw e;
    }
  }

  /** kube's finders: ReplicaSet (unless a Deployment controls it), Deployment via its ReplicaSet, StatefulSet, ReplicationController */
  private scaleFinder(): ScaleFinder {
    const get = (w: Workload, ns: string, name: string | undefined): ApiObject | undefined => (name ? this.workloads.get(w)?.get(`${ns}/${name}`) : undefined);
    const replicas = (o: ApiObject): number => {
      const r = (o.spec as { replicas?: unknown } | undefined)?.replicas;
      return typeof r === 'number' ? r : 1;
    };
    const matches = (o: ApiObject | undefined, ref: OwnerRef): o is ApiObject => o !== undefined && (!ref.uid || o.metadata?.uid === ref.uid);
    return (ref, ns) => {
      const group = (ref.apiVersion ?? '').split('/')[0];
      if (ref.kind === 'ReplicaSet' && group === 'apps') {
        const rs = get('replicaSets', ns, ref.name);
        if (!matches(rs, ref)) return undefined;
        const owner = controllerRefOf(rs);
        if (owner?.kind !== 'Deployment') return { uid: rs.metadata?.uid ?? '', scale: replicas(rs) };
        const d = get('deployments', ns, owner.name);
        return matches(d, owner) ? { uid: d.metadata?.uid ?? '', scale: replicas(d) } : undefined;
      }
      if (ref.kind === 'StatefulSet' && group === 'apps') {
        const s = get('statefulSets', ns, ref.name);
        return matches(s, ref) ? { uid: s.metadata?.uid ?? '', scale: replicas(s) } : undefined;
      }
      if (ref.kind === 'ReplicationController' && ref.apiVersion === 'v1') {
        const rc = get('replicationControllers', ns, ref.name);
        return matches(rc, ref) ? { uid: rc.metadata?.uid ?? '', scale: replicas(rc) } : undefined;
      }
      return undefined;
    };
  }
}
