// The DaemonSet controller (kube-controller-manager's `daemonset`), leader
// only, on the controller runtime (docs/controllers.md). Queue key: the
// DaemonSet's `namespace/name`; synced when it changes, when one of its pods
// or revisions (or an orphan it selects) changes, and — every DaemonSet —
// when a node comes, goes, or changes what decides placement.
//
// A sync, as kube's syncDaemonSet: claim the revisions and make sure one
// holds the current template (history.ts), claim the pods, run the per-node
// loop (daemonset-plan.ts planManage: a pod for each node that should run
// one, pinned there by `matchFields metadata.name` for the scheduler to
// bind), then one RollingUpdate step (OnDelete: none), prune old revisions
// and write the status. A ready pod turns available after minReadySeconds
// of the injected clock: the set is looked at again then.

import type { NodeTaintKeys } from '../../machinery/node-taints.js';
import { StatusError } from '../../core/errors.js';
import { type Clock, systemClock } from '../../core/clock.js';
import type { GenericStore } from '../../registry/generic-store.js';
import type { ApiObject, JSONValue } from '../../registry/types.js';
import type { EventRecorder } from '../event-recorder.js';
import { ControllerLoop, LoopController, type Informer, type InformerSource } from '../runtime/index.js';
import { claimAll } from '../workloads/claim.js';
import { type OwnerReference, isPodAvailable, isPodReady, labelsOf, untilAvailable } from '../workloads/pods.js';
import { selects } from '../workloads/replicaset.js';
import { type EventRef, controlledBy, eventRef, keyOf, ownedHandlers, ownerRef, revisionHandlers, selectsTemplate } from './owner.js';
import { CONTROLLER_MANAGER, createInBatches, omitZero, statusUnchanged, writeStatus } from '../workloads/writes.js';
import {
  type DaemonNode, type DaemonPod, TEMPLATE_GENERATION_LABEL, daemonCounts, daemonFenceposts, daemonPlacement, pinnedSpec, planManage, planRollingUpdate, targetNode,
} from './daemonset-plan.js';
import { FailedPodBackoff } from './backoff.js';
import { DEFAULT_HISTORY_LIMIT, REVISION_HASH_LABEL, deleteRevision, ensureRevision, revisionHash, revisionsToPrune } from './history.js';

export const DAEMONSET_CONTROLLER = 'daemonset';

type Obj = Record<string, JSONValue>;

export interface DaemonSetOptions {
  store: InformerSource;
  daemonSets: () => GenericStore;
  revisions: () => GenericStore;
  pods: () => GenericStore;
  nodes: () => GenericStore;
  clock?: Clock;
  events?: EventRecorder;
  log?: (msg: string) => void;
  workers?: number;
  /** the server's node taint keys, for the daemon pods' tolerations (default kube's `node.kubernetes.io/…`) */
  taintKeys?: NodeTaintKeys;
}

interface DsSpec {
  selector?: Obj;
  template?: Obj;
  minReadySeconds?: number;
  revisionHistoryLimit?: number;
  updateStrategy?: { type?: string; rollingUpdate?: { maxSurge?: JSONValue; maxUnavailable?: JSONValue } };
}

const specOf = (ds: ApiObject): DsSpec => (ds.spec ?? {}) as DsSpec;
const int = (v: unknown, dflt: number): number => (typeof v === 'number' ? v : dflt);

/** what of a node decides where daemon pods go */
const placementFacts = (n: ApiObject): string => JSON.stringify([n.metadata?.labels, (n.spec as Obj | undefined)?.taints, (n.spec as Obj | undefined)?.unschedulable]);

/** the template generation pods are labelled with: kube's deprecated annotation when set, else the generation */
function templateGeneration(ds: ApiObject): string {
  return ds.metadata?.annotations?.['deprecated.daemonset.template.generation'] ?? String(ds.metadata?.generation ?? 1);
}

export class DaemonSetController extends LoopController {
  protected readonly loop: ControllerLoop;
  private readonly clock: Clock;
  private sets: Informer | undefined;
  private pods: Informer | undefined;
  private nodes: Informer | undefined;
  private revisions: Informer | undefined;
  private readonly backoff = new FailedPodBackoff();

  constructor(private readonly o: DaemonSetOptions) {
    super();
    this.clock = o.clock ?? systemClock;
    this.loop = new ControllerLoop(o.store, { name: 'daemonset', clock: this.clock, log: o.log, baseDelayMs: 200, workers: o.workers ?? 2 });
  }

  start(): void {
    this.stop();
    this.loop.begin((key) => this.sync(key));
    this.sets = this.loop.inform(this.o.daemonSets().rangeKeys(''), {
      add: (_o, key) => this.loop.enqueue(key),
      update: (_old, _o, key) => this.loop.enqueue(key),
    });
    const owned = ownedHandlers('DaemonSet', () => this.sets, (key) => this.loop.enqueue(key));
    this.pods = this.loop.inform(this.o.pods().rangeKeys(''), owned);
    this.revisions = this.loop.inform(this.o.revisions().rangeKeys(''), revisionHandlers('DaemonSet', () => this.sets, (key) => this.loop.enqueue(key)));
    this.nodes = this.loop.inform(this.o.nodes().rangeKeys(''), {
      add: () => this.enqueueAll(),
      update: (old, n) => {
        if (placementFacts(old) !== placementFacts(n)) this.enqueueAll();
      },
      delete: () => this.enqueueAll(),
    });
  }

  stop(): void {
    this.loop.end();
    this.sets = undefined;
    this.pods = undefined;
    this.nodes = undefined;
    this.revisions = undefined;
  }

  private enqueueAll(): void {
    for (const ds of this.sets?.list() ?? []) this.loop.enqueue(keyOf(ds));
  }

  private ownerRef(o: ApiObject): OwnerReference {
    return ownerRef('DaemonSet', o);
  }

  private eventRef(o: ApiObject): EventRef {
    return eventRef('DaemonSet', o);
  }

  private async sync(key: string): Promise<void> {
    const ds = this.sets?.get(key);
    if (!ds || !this.pods || !this.nodes || !this.revisions) return;
    const spec = specOf(ds);
    const ns = ds.metadata?.namespace ?? '';
    const sel = spec.selector;
    if (!selectsTemplate(ds)) {
      // an empty selector would select every pod of the namespace: kube refuses to act on it
      void this.o.events?.event(this.eventRef(ds), 'Warning', 'SelectingAll', 'This daemon set is selecting all pods. A non-empty selector is required.');
      return;
    }
    const ref = this.ownerRef(ds);
    const matches = (o: ApiObject): boolean => selects(sel, labelsOf(o));
    const revisions = await claimAll(this.o.revisions(), ds, this.revisions.inNamespace(ns), matches, ref);
    const pods = await claimAll(this.o.pods(), ds, this.pods.inNamespace(ns), matches, ref);
    const fit = daemonPlacement(spec.template ?? {}, this.o.taintKeys);
    const nodes: DaemonNode[] = this.nodes.list().map((n) => ({ name: n.metadata?.name ?? '', ...fit(n) }));
    const minReady = int(spec.minReadySeconds, 0);
    if (ds.metadata?.deletionTimestamp) {
      await this.writeStatus(ds, nodes, this.views(pods, undefined, ds, minReady));
      return;
    }
    const { update, revisions: history } = await ensureRevision(this.o.revisions(), { obj: ds, ref, store: this.o.daemonSets() }, revisions);
    const hash = revisionHash(update);
    const rolling = (spec.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate';
    const desired = nodes.filter((n) => n.shouldRun).length;
    const { surge, unavailable } = daemonFenceposts(spec.updateStrategy?.rollingUpdate?.maxSurge, spec.updateStrategy?.rollingUpdate?.maxUnavailable, desired);
    const views = this.views(pods, hash, ds, minReady);
    const known = new Set(nodes.map((n) => n.name));
    // pods of nodes that no longer exist: no node agent will finish them
    const stranded = new Set(views.filter((v) => !known.has(v.node)).map((v) => v.name));
    const manage = planManage(nodes, views, rolling && surge > 0, (node) => this.failedWaits(key, node, views));
    let failure = await this.act(ds, hash, manage, stranded);
    if (rolling) {
      const plan = planRollingUpdate(nodes, this.views(this.owned(ds), hash, ds, minReady), surge, unavailable);
      failure = (await this.act(ds, hash, plan, new Set())) ?? failure;
    }
    const after = this.owned(ds);
    this.backoff.gc(this.clock.now());
    await this.prune(ds, history, after, update);
    await this.writeStatus(ds, nodes, this.views(after, hash, ds, minReady));
    const now = this.clock.now();
    const waits = after.map((p) => untilAvailable(p, minReady, now)).filter((w): w is number => w !== undefined);
    if (waits.length > 0) this.loop.enqueueAfter(key, Math.min(...waits) + 1);
    if (failure) throw new Error(failure);
  }

  /**
   * A node with a failed daemon pod in backoff: the set is looked at again
   * when it runs out. Otherwise the failed pod may go now, and the next one
   * on that node waits longer (a Warning Event, as kube's FailedDaemonPod).
   */
  private failedWaits(key: string, node: string, views: DaemonPod[]): boolean {
    const failed = views.find((v) => v.node === node && v.failed && !v.deleting);
    if (!failed) return false;
    const now = this.clock.now();
    const id = `${key}/${node}`;
    const wait = this.backoff.remaining(id, now);
    if (wait > 0) {
      this.loop.enqueueAfter(key, wait + 1);
      return true;
    }
    this.backoff.next(id, now);
    const ds = this.sets?.get(key);
    if (ds) void this.o.events?.event(this.eventRef(ds), 'Warning', 'FailedDaemonPod', `Found failed daemon pod ${ds.metadata?.namespace ?? ''}/${failed.name} on node ${node}, will try to kill it`);
    return false;
  }

  /** the pods the set controls, as the informer holds them after this sync's writes */
  private owned(o: ApiObject): ApiObject[] {
    return controlledBy(this.pods, o);
  }

  private views(pods: ApiObject[], hash: string | undefined, ds: ApiObject, minReady: number): DaemonPod[] {
    const now = this.clock.now();
    const gen = templateGeneration(ds);
    return pods.map((p) => {
      const labels = p.metadata?.labels ?? {};
      const phase = (p.status as Obj | undefined)?.phase;
      return {
        name: p.metadata?.name ?? '',
        node: targetNode(p),
        updated: (hash !== undefined && labels[REVISION_HASH_LABEL] === hash) || labels[TEMPLATE_GENERATION_LABEL] === gen,
        ready: isPodReady(p),
        available: isPodAvailable(p, minReady, now),
        failed: phase === 'Failed' || phase === 'Succeeded',
        deleting: Boolean(p.metadata?.deletionTimestamp),
        created: Date.parse(p.metadata?.creationTimestamp ?? '') || 0,
      };
    });
  }

  /** deletes (`stranded` pods without a grace period), then creates in slow-start batches; the first failure is returned */
  private async act(ds: ApiObject, hash: string, plan: { create: string[]; delete: string[] }, stranded: Set<string>): Promise<string | undefined> {
    const ns = ds.metadata?.namespace ?? '';
    const ev = this.eventRef(ds);
    await Promise.all(plan.delete.map(async (name) => {
      try {
        await this.o.pods().delete(ns, name, { dryRun: false, ...(stranded.has(name) ? { gracePeriodSeconds: 0 } : {}) });
        void this.o.events?.event(ev, 'Normal', 'SuccessfulDelete', `Deleted pod: ${name}`);
      } catch (e) {
        if (!(e instanceof StatusError && (e.code === 404 || e.code === 409))) throw e;
      }
    }));
    return createInBatches(this.o.pods(), ev, plan.create.map((node) => () => this.podFor(ds, hash, node)), this.o.events);
  }

  /** the template for one node: kube's labels (revision hash, template generation), pinned there */
  private podFor(ds: ApiObject, hash: string, node: string): ApiObject {
    const tmpl = (specOf(ds).template ?? {}) as { metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> }; spec?: Obj };
    return {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        generateName: `${ds.metadata?.name ?? ''}-`,
        namespace: ds.metadata?.namespace ?? '',
        labels: { ...(tmpl.metadata?.labels ?? {}), [REVISION_HASH_LABEL]: hash, [TEMPLATE_GENERATION_LABEL]: templateGeneration(ds) },
        ...(tmpl.metadata?.annotations ? { annotations: { ...tmpl.metadata.annotations } } : {}),
        ownerReferences: [this.ownerRef(ds) as unknown as Obj],
      },
      spec: pinnedSpec(tmpl.spec ?? {}, node, this.o.taintKeys),
    } as ApiObject;
  }

  /** revisions beyond revisionHistoryLimit that no pod runs go, oldest first */
  private async prune(ds: ApiObject, history: ApiObject[], pods: ApiObject[], update: ApiObject): Promise<void> {
    const live = new Set(pods.map((p) => p.metadata?.labels?.[REVISION_HASH_LABEL] ?? '').filter((h) => h !== ''));
    const keep = new Set([update.metadata?.name ?? '']);
    for (const cr of revisionsToPrune(history, live, keep, int(specOf(ds).revisionHistoryLimit, DEFAULT_HISTORY_LIMIT))) await deleteRevision(this.o.revisions(), cr);
  }

  private async writeStatus(ds: ApiObject, nodes: DaemonNode[], pods: DaemonPod[]): Promise<void> {
    const cur = (ds.status ?? {}) as Obj;
    const status: Obj = {
      ...(cur.collisionCount !== undefined ? { collisionCount: cur.collisionCount } : {}),
      ...(cur.conditions !== undefined ? { conditions: cur.conditions } : {}),
      ...daemonCounts(nodes, pods),
      observedGeneration: ds.metadata?.generation ?? 0,
    };
    // kube's DaemonSetStatus: the scheduled/misscheduled/ready numbers always, these omitempty
    omitZero(status, ['observedGeneration', 'updatedNumberScheduled', 'numberAvailable', 'numberUnavailable']);
    if (statusUnchanged(cur, status)) return;
    await writeStatus(this.o.daemonSets(), ds, status, CONTROLLER_MANAGER);
  }
}
