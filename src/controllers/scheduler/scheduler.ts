// The scheduler (kube-scheduler's default profile, reduced to what fit.ts
// decides), leader only, on the controller runtime (docs/controllers.md).
// Queue key: a pod's `namespace/name`; a pod is queued when it is pending
// (no `spec.nodeName`, our schedulerName, not being deleted, no scheduling
// gates). One worker: each decision reads the pods bound so far, and a
// binding is in the informer when its write resolves (the store applies and
// publishes before it answers), so two pods never take the same room.
// A pod that fits nowhere gets PodScheduled=False/Unschedulable and a
// FailedScheduling Event, and is tried again when a node or a bound pod
// changes, or after five minutes (kube's podMaxInUnschedulablePodsDuration).

import type { NodeTaintKeys } from '../../machinery/node-taints.js';
import { StatusError } from '../../core/errors.js';
import { type Clock, systemClock } from '../../core/clock.js';
import { type Random, systemRandom } from '../../core/random.js';
import type { CapabilityContext, CapabilityStore } from '../../registry/capabilities.js';
import type { GenericStore } from '../../registry/generic-store.js';
import type { ApiObject, JSONValue, ResourceDefinition } from '../../registry/types.js';
import { isoSeconds } from '../../registry/kinds/pod-eviction.js';
import type { EventRecorder } from '../event-recorder.js';
import { ControllerLoop, LoopController, type Informer, type InformerSource } from '../runtime/index.js';
import { holdsResources, place } from './fit.js';
import { NodeTotals } from './node-totals.js';

export const SCHEDULER_CONTROLLER = 'scheduler';
export const DEFAULT_SCHEDULER = 'default-scheduler';
const MANAGER = 'kube-scheduler';
const SCHEDULER_USER = { username: 'system:kube-scheduler', groups: ['system:authenticated'] };
/** kube's podMaxInUnschedulablePodsDuration: an unschedulable pod is tried again at least this often */
const UNSCHEDULABLE_RETRY_MS = 5 * 60_000;

type Obj = Record<string, JSONValue>;

export interface SchedulerOptions {
  store: InformerSource;
  pods: () => GenericStore;
  /** the pods definition: its `binding` capability is how a pod is bound */
  podsDef: ResourceDefinition;
  nodes: () => GenericStore;
  clock?: Clock;
  random?: Random;
  events?: EventRecorder;
  log?: (msg: string) => void;
  /** the server's node taint keys (default kube's `node.kubernetes.io/…`) */
  taintKeys?: NodeTaintKeys;
}

const specOf = (pod: ApiObject): Obj => (pod.spec ?? {}) as Obj;

/** a pod this scheduler should place */
export function wantsScheduling(pod: ApiObject): boolean {
  const spec = specOf(pod);
  const name = typeof spec.schedulerName === 'string' && spec.schedulerName !== '' ? spec.schedulerName : DEFAULT_SCHEDULER;
  if (name !== DEFAULT_SCHEDULER || (typeof spec.nodeName === 'string' && spec.nodeName !== '')) return false;
  if (pod.metadata?.deletionTimestamp) return false;
  if (Array.isArray(spec.schedulingGates) && spec.schedulingGates.length > 0) return false;
  const phase = (pod.status as Obj | undefined)?.phase;
  return phase !== 'Succeeded' && phase !== 'Failed';
}

/** what the filters read of a node; a status heartbeat that changes none of it wakes nobody */
function nodeFingerprint(node: ApiObject): string {
  const st = (node.status ?? {}) as { allocatable?: unknown; conditions?: { type?: string; status?: string }[] };
  const ready = (st.conditions ?? []).find((c) => c.type === 'Ready')?.status;
  return JSON.stringify([node.metadata?.labels, node.spec, st.allocatable, ready]);
}

export class Scheduler extends LoopController {
  protected readonly loop: ControllerLoop;
  private readonly clock: Clock;
  private readonly random: Random;
  private pods: Informer | undefined;
  private nodes: Informer | undefined;
  /** pods found unschedulable, woken when the cluster changes */
  private readonly unschedulable = new Set<string>();
  /** what the pods bound to each node request */
  private readonly totals: NodeTotals;
  /** bindings made (tests) */
  bound = 0;

  constructor(private readonly o: SchedulerOptions) {
    super();
    this.totals = new NodeTotals(o.taintKeys);
    this.clock = o.clock ?? systemClock;
    this.random = o.random ?? systemRandom;
    this.loop = new ControllerLoop(o.store, { name: 'scheduler', clock: this.clock, log: o.log, baseDelayMs: 200 });
  }

  start(): void {
    this.stop();
    this.loop.begin((key) => this.sync(key));
    this.totals.clear();
    this.nodes = this.loop.inform(this.o.nodes().rangeKeys(''), {
      add: () => this.wakeUnschedulable(),
      // the fingerprints only when someone waits: Nodes change often (status), pending pods seldom
      update: (old, node) => {
        if (this.unschedulable.size > 0 && nodeFingerprint(old) !== nodeFingerprint(node)) this.wakeUnschedulable();
      },
    });
    this.pods = this.loop.inform(this.o.pods().rangeKeys(''), {
      add: (pod, key) => {
        this.totals.change(undefined, pod);
        this.onPod(pod, key);
      },
      update: (old, pod, key) => {
        this.totals.change(old, pod);
        // a bound pod that stopped holding resources (finished, or its requests changed) may make room
        if (this.unschedulable.size > 0 && holdsResources(old) && (!holdsResources(pod) || JSON.stringify(old.spec) !== JSON.stringify(pod.spec))) this.wakeUnschedulable();
        this.onPod(pod, key);
      },
      delete: (pod, key) => {
        this.totals.change(pod, undefined);
        this.unschedulable.delete(key);
        if (holdsResources(pod)) this.wakeUnschedulable();
      },
    });
  }

  stop(): void {
    this.loop.end();
    this.pods = undefined;
    this.nodes = undefined;
    this.unschedulable.clear();
    this.totals.clear();
  }

  /** resolves once no pod is queued or being scheduled (delayed retries not counted) */
  private onPod(pod: ApiObject, key: string): void {
    if (wantsScheduling(pod)) {
      if (!this.unschedulable.has(key)) this.loop.enqueue(key);
    } else this.unschedulable.delete(key);
  }

  private wakeUnschedulable(): void {
    for (const key of this.unschedulable) this.loop.enqueue(key);
  }

  private async sync(key: string): Promise<void> {
    const pod = this.pods?.get(key);
    if (!pod || !this.nodes || !wantsScheduling(pod)) {
      this.unschedulable.delete(key);
      return;
    }
    const states = this.nodes.list().map((n) => this.totals.state(n));
    const placement = place(pod, states, this.random);
    const ns = pod.metadata?.namespace ?? '';
    const name = pod.metadata?.name ?? '';
    const ref = { apiVersion: 'v1', kind: 'Pod', namespace: ns, name, uid: pod.metadata?.uid ?? '' };
    if ('node' in placement) {
      this.unschedulable.delete(key);
      if (await this.bind(pod, placement.node)) {
        this.bound++;
        void this.o.events?.event(ref, 'Normal', 'Scheduled', `Successfully assigned ${ns}/${name} to ${placement.node}`);
      }
      return;
    }
    this.unschedulable.add(key);
    this.loop.enqueueAfter(key, UNSCHEDULABLE_RETRY_MS);
    void this.o.events?.event(ref, 'Warning', 'FailedScheduling', placement.unschedulable);
    await this.markUnschedulable(ns, name, placement.unschedulable);
  }

  /** POST pods/{name}/binding through the pods definition's capability; false when the pod changed meanwhile */
  private async bind(pod: ApiObject, node: string): Promise<boolean> {
    const binding = this.o.podsDef.capabilities?.binding;
    if (!binding?.create) throw new Error('the pods/binding sub-resource is not served');
    const ns = pod.metadata?.namespace ?? '';
    const name = pod.metadata?.name ?? '';
    const store = this.o.pods();
    const ctx: CapabilityContext = {
      user: SCHEDULER_USER,
      namespace: ns,
      name,
      dryRun: false,
      store: (): CapabilityStore => store,
      storeOf: () => undefined,
      now: () => this.clock.now(),
      admitCreate: (o) => Promise.resolve(o),
      fieldValidation: () => 'Strict',
      fieldManager: () => MANAGER,
    };
    try {
      await binding.create(ctx, {
        apiVersion: 'v1',
        kind: 'Binding',
        metadata: { name, namespace: ns, uid: pod.metadata?.uid ?? '' },
        target: { apiVersion: 'v1', kind: 'Node', name: node },
      } as ApiObject);
      return true;
    } catch (e) {
      // gone, bound by someone else, or recreated under the same name: the informer brings the news
      if (e instanceof StatusError && (e.code === 404 || e.code === 409)) return false;
      throw e;
    }
  }

  /** PodScheduled=False/Unschedulable with the message, written only when it changed and only while the pod is unbound */
  private async markUnschedulable(ns: string, name: string, message: string): Promise<void> {
    const now = isoSeconds(this.clock.now());
    try {
      await this.o.pods().guaranteedUpdate(ns, name, { dryRun: false, subresource: 'status', manager: MANAGER }, (cur) => {
        if (!cur) throw new StatusError(404, 'NotFound', `pods "${name}" not found`);
        if (!wantsScheduling(cur)) return cur;
        const status = (cur.status ??= {}) as { conditions?: Obj[] };
        const conds = status.conditions ?? [];
        const old = conds.find((c) => c.type === 'PodScheduled');
        if (old && old.status === 'False' && old.reason === 'Unschedulable' && old.message === message) return cur;
        const next: Obj = {
          type: 'PodScheduled',
          status: 'False',
          lastProbeTime: null,
          lastTransitionTime: old?.status === 'False' && typeof old.lastTransitionTime === 'string' ? old.lastTransitionTime : now,
          reason: 'Unschedulable',
          message,
        };
        status.conditions = old ? conds.map((c) => (c === old ? next : c)) : [...conds, next];
        return cur;
      });
    } catch (e) {
      if (e instanceof StatusError && e.code === 404) return;
      throw e;
    }
  }
}
