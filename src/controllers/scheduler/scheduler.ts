// The scheduler (kube-scheduler's default profile, reduced to what fit.ts
// decides, and its DefaultPreemption, preemption.ts), leader only, on the
// controller runtime (docs/controllers.md). Queue key: a pod's
// `namespace/name`; a pod is queued when it is pending (no `spec.nodeName`,
// our schedulerName, not being deleted, no scheduling gates). One worker:
// each decision reads the pods bound so far, and a binding is in the informer
// when its write resolves (the store applies and publishes before it
// answers), so two pods never take the same room. A pod nominated to a node
// (`status.nominatedNodeName`, set by preemption) counts there for the pods
// of lower or equal priority, and tries that node first. A pod that fits
// nowhere may preempt lower-priority pods; it gets PodScheduled=False/
// Unschedulable and a FailedScheduling Event, and is tried again when a node
// or a bound pod changes, or after five minutes (kube's
// podMaxInUnschedulablePodsDuration).

import type { NodeTaintKeys } from '../../machinery/node-taints.js';
import { type Clock, systemClock } from '../../core/clock.js';
import { type Random, systemRandom } from '../../core/random.js';
import type { GenericStore } from '../../registry/generic-store.js';
import type { ApiObject, JSONValue, ResourceDefinition } from '../../registry/types.js';
import type { EventRecorder } from '../event-recorder.js';
import { ControllerLoop, LoopController, type Informer, type InformerSource } from '../runtime/index.js';
import { type NoFit, type NodeState, account, filterNode, holdsResources, place } from './fit.js';
import { NodeTotals } from './node-totals.js';
import { PodWrites, nominatedNodeName, podRef } from './pod-writes.js';
import { budgetOf, eligibleToPreempt, findPreemption, podPriority } from './preemption.js';

export const SCHEDULER_CONTROLLER = 'scheduler';
export const DEFAULT_SCHEDULER = 'default-scheduler';
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
  /** the PodDisruptionBudgets preemption respects (absent: none) */
  budgets?: () => GenericStore;
}

/** the pods informer's index of the node a pod is bound to */
const NODE_INDEX = 'scheduler:spec.nodeName';
const nodeIndex = (pod: ApiObject): string[] => {
  const n = (pod.spec as { nodeName?: unknown } | undefined)?.nodeName;
  return typeof n === 'string' && n !== '' ? [n] : [];
};

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
  private budgets: Informer | undefined;
  /** pods found unschedulable, woken when the cluster changes */
  private readonly unschedulable = new Set<string>();
  /** what the pods bound to each node request */
  private readonly totals: NodeTotals;
  /** pending pods nominated to a node (kube's nominator): node → pod key → pod */
  private readonly nominated = new Map<string, Map<string, ApiObject>>();
  private readonly writes: PodWrites;
  /** bindings made (tests) */
  bound = 0;
  /** victims preempted (tests) */
  preempted = 0;

  constructor(private readonly o: SchedulerOptions) {
    super();
    this.totals = new NodeTotals(o.taintKeys);
    this.clock = o.clock ?? systemClock;
    this.random = o.random ?? systemRandom;
    this.loop = new ControllerLoop(o.store, { name: 'scheduler', clock: this.clock, log: o.log, baseDelayMs: 200 });
    this.writes = new PodWrites({ pods: o.pods, podsDef: o.podsDef, clock: this.clock, events: o.events, pending: wantsScheduling });
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
      // a pod nominated to a node that went looks again (and drops the nomination when nothing else helps)
      delete: () => this.wakeUnschedulable(),
    });
    this.budgets = this.o.budgets ? this.loop.inform(this.o.budgets().rangeKeys('')) : undefined;
    this.pods = this.loop.inform(
      this.o.pods().rangeKeys(''),
      {
        add: (pod, key) => {
          this.totals.change(undefined, pod);
          this.nominate(key, pod);
          this.onPod(pod, key);
        },
        update: (old, pod, key) => {
          this.totals.change(old, pod);
          this.nominate(key, pod);
          // a bound pod that stopped holding resources (finished, or its requests changed) may make room
          if (this.unschedulable.size > 0 && holdsResources(old) && (!holdsResources(pod) || JSON.stringify(old.spec) !== JSON.stringify(pod.spec))) this.wakeUnschedulable();
          this.onPod(pod, key);
        },
        delete: (pod, key) => {
          this.totals.change(pod, undefined);
          this.nominate(key, undefined);
          this.unschedulable.delete(key);
          if (holdsResources(pod)) this.wakeUnschedulable();
        },
      },
      { [NODE_INDEX]: nodeIndex },
    );
  }

  stop(): void {
    this.loop.end();
    this.pods = undefined;
    this.nodes = undefined;
    this.budgets = undefined;
    this.unschedulable.clear();
    this.totals.clear();
    this.nominated.clear();
  }

  private onPod(pod: ApiObject, key: string): void {
    if (wantsScheduling(pod)) {
      if (!this.unschedulable.has(key)) this.loop.enqueue(key);
    } else this.unschedulable.delete(key);
  }

  private wakeUnschedulable(): void {
    for (const key of this.unschedulable) this.loop.enqueue(key);
  }

  /** keeps the nominator: a pending pod with `status.nominatedNodeName` is nominated there */
  private nominate(key: string, pod: ApiObject | undefined): void {
    for (const [node, pods] of this.nominated) {
      if (pods.delete(key) && pods.size === 0) this.nominated.delete(node);
    }
    const node = pod && wantsScheduling(pod) ? nominatedNodeName(pod) : '';
    if (node === '') return;
    let pods = this.nominated.get(node);
    if (!pods) this.nominated.set(node, (pods = new Map()));
    pods.set(key, pod!);
  }

  /** the node as the filters see it for `pod`: the pods bound there, and those nominated there of at least its priority (kube's RunFilterPluginsWithNominatedPods) */
  private stateFor(node: ApiObject, pod: ApiObject, key: string): NodeState {
    const state = this.totals.state(node);
    const priority = podPriority(pod);
    for (const [k, p] of this.nominated.get(node.metadata?.name ?? '') ?? []) {
      if (k !== key && podPriority(p) >= priority) account(state, p, 1);
    }
    return state;
  }

  /** the pods bound to a node that hold its resources */
  private podsOn(node: string): ApiObject[] {
    return (this.pods?.byIndex(NODE_INDEX, node) ?? []).filter(holdsResources);
  }

  private async sync(key: string): Promise<void> {
    const pod = this.pods?.get(key);
    if (!pod || !this.nodes || !wantsScheduling(pod)) {
      this.unschedulable.delete(key);
      return;
    }
    const nodes = this.nodes.list();
    const states = nodes.map((n) => this.stateFor(n, pod, key));
    // kube's evaluateNominatedNode: the node preemption made room on comes first
    const nominated = nominatedNodeName(pod);
    const onNominated = states.find((s) => s.node.metadata?.name === nominated);
    const placement = onNominated && filterNode(pod, onNominated).reasons.length === 0 ? { node: nominated } : place(pod, states, this.random);
    if ('node' in placement) {
      this.unschedulable.delete(key);
      if (await this.writes.bind(pod, placement.node)) {
        this.bound++;
        const { namespace, name } = podRef(pod);
        void this.o.events?.event(podRef(pod), 'Normal', 'Scheduled', `Successfully assigned ${namespace}/${name} to ${placement.node}`);
        // bound elsewhere: the nomination no longer applies
        if (nominated !== '' && nominated !== placement.node) await this.writes.clearNominated(pod);
      }
      return;
    }
    // in the set before any preemption write, so the victims' deletions wake it
    this.unschedulable.add(key);
    this.loop.enqueueAfter(key, UNSCHEDULABLE_RETRY_MS);
    const { suffix, nominate } = await this.preempt(pod, key, states, placement);
    const message = suffix ? `${placement.unschedulable} preemption: ${suffix}` : placement.unschedulable;
    void this.o.events?.event(podRef(pod), 'Warning', 'FailedScheduling', message);
    await this.writes.markUnschedulable(pod, message, nominate);
  }

  /**
   * kube's PostFilter (DefaultPreemption): the message suffix when preemption
   * does not help, and the nominated node to write (undefined: unchanged,
   * '': cleared). On success the victims are preempted and lower-priority pods
   * nominated to the same node lose their nomination.
   */
  private async preempt(pod: ApiObject, key: string, states: NodeState[], placement: NoFit): Promise<{ suffix?: string; nominate?: string }> {
    // no nodes at all is no FitError: kube runs no preemption, and drops the nomination (ErrNoNodesAvailable)
    if (states.length === 0) return { nominate: '' };
    const nominated = nominatedNodeName(pod);
    const onNominated = nominated === '' ? undefined : { status: placement.statuses.get(nominated), pods: this.podsOn(nominated) };
    const notEligible = eligibleToPreempt(pod, onNominated);
    if (notEligible) return { suffix: notEligible };
    const budgets = (this.budgets?.list() ?? []).map(budgetOf);
    // the pods of the nodes preemption may help on (the others are not dry-run)
    const nodes = states.map((state) => {
      const name = state.node.metadata?.name ?? '';
      return { state, pods: placement.statuses.get(name)?.resolvable ? this.podsOn(name) : [] };
    });
    const found = findPreemption(pod, nodes, placement.statuses, budgets, this.random);
    if ('message' in found) return { suffix: found.message, nominate: '' };
    const { node, victims } = found.candidate;
    const schedulerName = (specOf(pod).schedulerName as string | undefined) || DEFAULT_SCHEDULER;
    for (const victim of victims.pods) {
      // a victim already terminating needs no second call (kube's prepareCandidate)
      if (victim.metadata?.deletionTimestamp) continue;
      await this.writes.preemptVictim(victim, pod, node, schedulerName);
      this.preempted++;
    }
    // lower-priority pods nominated to the node may no longer fit there: they look again (getLowerPriorityNominatedPods)
    const priority = podPriority(pod);
    for (const [k, p] of this.nominated.get(node) ?? []) {
      if (k === key || podPriority(p) >= priority) continue;
      await this.writes.clearNominated(p);
      this.loop.enqueue(k);
    }
    return { nominate: node };
  }
}
