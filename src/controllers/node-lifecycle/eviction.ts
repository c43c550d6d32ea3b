// Taint-based eviction (spec 002 §3 third row; issue 13 item 2), leader only:
// a pod bound to a node with a NoExecute taint it does not tolerate is
// deleted (gracefully: a pod bound to a node is marked Terminating with its
// grace period, docs/deletion.md); a toleration with `tolerationSeconds`
// delays that until so long after the taint's `timeAdded`; a toleration
// without it lets the pod stay. kube's NoExecuteTaintManager, written here
// from its documented behaviour. The controller reads taints only: adding
// them (and rate-limiting that) is the node lifecycle controller's job.
//
// Evictions run from the runtime's WorkQueue (docs/controllers.md), kube's
// "timed workers" as delayed adds: a pod whose eviction is due later is
// added after the wait (the queue keeps the earliest pending add of a key), and
// the worker decides again from the pod and taints as they are then, so a
// taint removed or a toleration added meanwhile needs no timer cancelled. A
// failed delete is retried with the queue's backoff, starting at `retryMs`.
// Before the delete the pod gets kube's DisruptionTarget condition (reason
// DeletionByTaintManager), as kube's controller writes it since 1.26.

import { StatusError } from '../../core/errors.js';
import type { GenericStore } from '../../registry/generic-store.js';
import type { ApiObject, JSONValue } from '../../registry/types.js';
import { unpinned, withDisruptionTarget } from '../../registry/kinds/pod-eviction.js';
import { type Clock, systemClock } from '../../core/clock.js';
import { ControllerLoop, LoopController, type InformerSource } from '../runtime/index.js';
import type { EventRecorder } from '../event-recorder.js';
import { type Taint, type Toleration, evictionDue } from './taints.js';

export interface TaintEvictionOptions {
  store: InformerSource;
  nodes: () => GenericStore;
  pods: () => GenericStore;
  clock?: Clock;
  events?: EventRecorder;
  log?: (msg: string) => void;
  /** how long a failed delete first waits before it is tried again (default 1 s; doubling per failure) */
  retryMs?: number;
  /** parallel evictions (distinct pods; default 4) */
  workers?: number;
}

interface PodRec {
  namespace: string;
  name: string;
  uid: string;
  node: string;
  tolerations: Toleration[];
}

export const TAINT_EVICTION_MANAGER = 'taint-eviction-controller';

export class TaintEvictionController extends LoopController {
  /** NoExecute taints per node */
  private readonly taints = new Map<string, Taint[]>();
  /** when a taint without timeAdded was first seen: node|key|effect → ms */
  private readonly firstSeen = new Map<string, number>();
  private readonly pods = new Map<string, PodRec>();
  private readonly byNode = new Map<string, Set<string>>();
  /** pod key → when its eviction is due, for pods waiting out a toleration (a delayed add in the queue) */
  private readonly due = new Map<string, number>();
  private readonly clock: Clock;
  /** the pods and nodes informers of a start (runtime/) and the queue of pods to evict */
  protected readonly loop: ControllerLoop;
  private stopped = true;
  /** pods deleted (tests and metrics) */
  evicted = 0;

  constructor(private readonly o: TaintEvictionOptions) {
    super();
    this.clock = o.clock ?? systemClock;
    this.loop = new ControllerLoop(o.store, { name: 'taint eviction', clock: this.clock, log: o.log, baseDelayMs: o.retryMs ?? 1000, workers: o.workers ?? 4 });
  }

  start(): void {
    this.stop();
    this.stopped = false;
    this.loop.begin((key) => this.sync(key));
    // each pod is looked at as it comes: the lists arrive in slices, and the
    // Nodes' may come before or after the Pods' (a pod on a node whose taints
    // are not known yet is looked at again when they come, onNode)
    this.loop.inform(this.o.pods().rangeKeys(''), {
      add: (pod) => this.onPod(pod),
      update: (_old, pod) => this.onPod(pod),
      delete: (_pod, key) => this.dropPod(key),
    });
    this.loop.inform(this.o.nodes().rangeKeys(''), {
      add: (node, name) => this.onNode(name, node),
      update: (_old, node, name) => this.onNode(name, node),
      delete: (_node, name) => this.onNode(name, undefined),
    });
  }

  stop(): void {
    this.stopped = true;
    this.loop.end();
    this.due.clear();
    this.taints.clear();
    this.firstSeen.clear();
    this.pods.clear();
    this.byNode.clear();
  }

  /** a pod is queued or being evicted */
  get busy(): boolean {
    return this.loop.queue?.busy ?? false;
  }

  /** resolves once the queue holds no pod and no eviction is running (delayed evictions not counted) */
  /** pods with an eviction scheduled for later (tests) */
  get scheduled(): number {
    return this.due.size;
  }

  private onNode(name: string, node: ApiObject | undefined): void {
    let taints: Taint[] = [];
    if (node) {
      const t = (node.spec as { taints?: unknown } | undefined)?.taints;
      if (Array.isArray(t)) taints = (t as Taint[]).filter((x) => x && x.effect === 'NoExecute');
    }
    const before = this.taints.get(name) ?? [];
    const same = before.length === taints.length && before.every((t, i) => t.key === taints[i]!.key && t.value === taints[i]!.value && t.timeAdded === taints[i]!.timeAdded);
    if (same) return;
    if (taints.length === 0) this.taints.delete(name);
    else this.taints.set(name, taints);
    const now = this.clock.now();
    for (const t of taints) {
      const k = `${name}|${t.key}|${t.effect}`;
      if (!t.timeAdded && !this.firstSeen.has(k)) this.firstSeen.set(k, now);
    }
    for (const k of [...this.firstSeen.keys()]) if (k.startsWith(`${name}|`) && !taints.some((t) => k === `${name}|${t.key}|${t.effect}`)) this.firstSeen.delete(k);
    for (const key of this.byNode.get(name) ?? []) this.process(key);
  }

  private onPod(pod: ApiObject, process = true): void {
    const namespace = pod.metadata?.namespace ?? '';
    const name = pod.metadata?.name ?? '';
    const key = `${namespace}/${name}`;
    const spec = (pod.spec ?? {}) as { nodeName?: string; tolerations?: Toleration[] };
    // a pod being deleted or not bound is none of this controller's business
    if (!spec.nodeName || pod.metadata?.deletionTimestamp) {
      this.dropPod(key);
      return;
    }
    const prev = this.pods.get(key);
    if (prev && prev.node !== spec.nodeName) this.byNode.get(prev.node)?.delete(key);
    this.pods.set(key, { namespace, name, uid: pod.metadata?.uid ?? '', node: spec.nodeName, tolerations: Array.isArray(spec.tolerations) ? spec.tolerations : [] });
    let set = this.byNode.get(spec.nodeName);
    if (!set) this.byNode.set(spec.nodeName, (set = new Set()));
    set.add(key);
    if (process) this.process(key);
  }

  private dropPod(key: string): void {
    const p = this.pods.get(key);
    if (!p) return;
    this.pods.delete(key);
    const set = this.byNode.get(p.node);
    set?.delete(key);
    if (set?.size === 0) this.byNode.delete(p.node);
    this.cancel(key);
  }

  private cancel(key: string): void {
    this.due.delete(key);
  }

  /** a pod or its node's taints changed: evict now, schedule, or cancel (from an informer handler) */
  private process(key: string): void {
    if (this.evaluate(key)) this.loop.enqueue(key);
  }

  /** the queue's worker: the eviction of `key` if it is due now; a throw retries with backoff */
  private async sync(key: string): Promise<void> {
    const p = this.evaluate(key);
    if (p) await this.evict(p);
  }

  /**
   * The pod of `key` if its eviction is due now; otherwise its eviction is
   * scheduled (a delayed add, decided again when it comes) or, if it no
   * longer applies, cancelled with the Event kube's taint manager records.
   */
  private evaluate(key: string): PodRec | undefined {
    if (this.stopped) return undefined;
    const p = this.pods.get(key);
    if (!p) return undefined;
    const taints = this.taints.get(p.node) ?? [];
    const due = taints.length === 0 ? undefined : evictionDue(taints, p.tolerations, (t) => (t.timeAdded ? Date.parse(t.timeAdded) : (this.firstSeen.get(`${p.node}|${t.key}|${t.effect}`) ?? this.clock.now())));
    const wasScheduled = this.due.has(key);
    this.cancel(key);
    if (due === undefined) {
      if (wasScheduled) void this.o.events?.event({ apiVersion: 'v1', kind: 'Pod', namespace: p.namespace, name: p.name, uid: p.uid }, 'Normal', 'TaintManagerEviction', `Cancelling deletion of Pod ${key}`);
      return undefined;
    }
    const wait = due - this.clock.now();
    if (wait <= 0) return p;
    this.due.set(key, due);
    this.loop.enqueueAfter(key, wait);
    return undefined;
  }

  /**
   * kube's deletePodHandler: the `Marking for deletion` Event, the pod's
   * DisruptionTarget condition (reason DeletionByTaintManager, a status write
   * of that pod uid), then the delete (uid precondition). Gone or replaced is
   * done; anything else throws for a retry.
   */
  private async evict(p: PodRec): Promise<void> {
    const key = `${p.namespace}/${p.name}`;
    void this.o.events?.event({ apiVersion: 'v1', kind: 'Pod', namespace: p.namespace, name: p.name, uid: p.uid }, 'Normal', 'TaintManagerEviction', `Marking for deletion Pod ${key}`);
    try {
      await this.o.pods().guaranteedUpdate(p.namespace, p.name, { dryRun: false, subresource: 'status', manager: TAINT_EVICTION_MANAGER }, (cur) => {
        if (!cur || cur.metadata?.uid !== p.uid) throw new StatusError(404, 'NotFound', `pods "${p.name}" not found`);
        const status = (cur.status ??= {}) as { conditions?: Record<string, JSONValue>[] };
        status.conditions = withDisruptionTarget(status.conditions ?? [], 'DeletionByTaintManager', 'Taint manager: deleting due to NoExecute taint', this.clock.now());
        return unpinned(cur);
      });
      await this.o.pods().delete(p.namespace, p.name, { dryRun: false, manager: TAINT_EVICTION_MANAGER, preconditions: { uid: p.uid } });
      this.evicted++;
      this.o.log?.(`taint eviction: deleting pod ${key} from node ${p.node}`);
    } catch (e) {
      if (e instanceof StatusError && (e.code === 404 || e.code === 409)) return;
      throw e;
    }
  }
}
