// The scheduler's writes to pods, as kube-scheduler makes them: the binding
// (through the pods definition's `binding` capability, the same code as
// `POST pods/{name}/binding`), the PodScheduled=False condition with the
// nominated node (one pods/status write, kube's updatePod), and a preemption
// victim's DisruptionTarget condition, deletion and `Preempted` Event (kube
// 1.32's PreemptPod).

import { StatusError } from '../../core/errors.js';
import type { Clock } from '../../core/clock.js';
import type { CapabilityContext, CapabilityStore } from '../../registry/capabilities.js';
import type { GenericStore } from '../../registry/generic-store.js';
import type { ApiObject, JSONValue, ResourceDefinition } from '../../registry/types.js';
import { isoSeconds, withDisruptionTarget } from '../../registry/kinds/pod-eviction.js';
import type { EventRecorder } from '../event-recorder.js';

export const SCHEDULER_MANAGER = 'kube-scheduler';
const SCHEDULER_USER = { username: 'system:kube-scheduler', groups: ['system:authenticated'] };

type Obj = Record<string, JSONValue>;

const nameOf = (pod: ApiObject): { ns: string; name: string } => ({ ns: pod.metadata?.namespace ?? '', name: pod.metadata?.name ?? '' });
const gone = (e: unknown): boolean => e instanceof StatusError && e.code === 404;

export const podRef = (pod: ApiObject) => ({ apiVersion: 'v1', kind: 'Pod', namespace: pod.metadata?.namespace ?? '', name: pod.metadata?.name ?? '', uid: pod.metadata?.uid ?? '' });

/** `status.nominatedNodeName`, '' when unset */
export const nominatedNodeName = (pod: ApiObject): string => {
  const n = (pod.status as { nominatedNodeName?: unknown } | undefined)?.nominatedNodeName;
  return typeof n === 'string' ? n : '';
};

export interface PodWritesOptions {
  pods: () => GenericStore;
  podsDef: ResourceDefinition;
  clock: Clock;
  events?: EventRecorder;
  /** a pod the scheduler still places (status writes are skipped once it is bound or gone) */
  pending: (pod: ApiObject) => boolean;
}

export class PodWrites {
  constructor(private readonly o: PodWritesOptions) {}

  /** POST pods/{name}/binding through the pods definition's capability; false when the pod changed meanwhile */
  async bind(pod: ApiObject, node: string): Promise<boolean> {
    const binding = this.o.podsDef.capabilities?.binding;
    if (!binding?.create) throw new Error('the pods/binding sub-resource is not served');
    const { ns, name } = nameOf(pod);
    const store = this.o.pods();
    const ctx: CapabilityContext = {
      user: SCHEDULER_USER,
      namespace: ns,
      name,
      dryRun: false,
      store: (): CapabilityStore => store,
      storeOf: () => undefined,
      now: () => this.o.clock.now(),
      admitCreate: (o) => Promise.resolve(o),
      fieldValidation: () => 'Strict',
      fieldManager: () => SCHEDULER_MANAGER,
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

  /**
   * PodScheduled=False/Unschedulable with the message, and the nominated node
   * (undefined: left as it is; '': cleared), in one status write made only
   * when something changed and only while the pod is pending
   */
  async markUnschedulable(pod: ApiObject, message: string, nominated?: string): Promise<void> {
    const now = isoSeconds(this.o.clock.now());
    await this.updateStatus(pod, (cur) => {
      if (!this.o.pending(cur)) return;
      const status = (cur.status ??= {}) as { conditions?: Obj[]; nominatedNodeName?: string };
      const conds = status.conditions ?? [];
      const old = conds.find((c) => c.type === 'PodScheduled');
      const sameCondition = old?.status === 'False' && old.reason === 'Unschedulable' && old.message === message;
      const sameNominated = nominated === undefined || (status.nominatedNodeName ?? '') === nominated;
      if (sameCondition && sameNominated) return;
      if (!sameCondition) {
        const next: Obj = {
          type: 'PodScheduled',
          status: 'False',
          lastProbeTime: null,
          lastTransitionTime: old?.status === 'False' && typeof old.lastTransitionTime === 'string' ? old.lastTransitionTime : now,
          reason: 'Unschedulable',
          message,
        };
        status.conditions = old ? conds.map((c) => (c === old ? next : c)) : [...conds, next];
      }
      if (nominated === '') delete status.nominatedNodeName;
      else if (nominated !== undefined) status.nominatedNodeName = nominated;
    }).catch((e: unknown) => {
      if (!gone(e)) throw e;
    });
  }

  /** clears `status.nominatedNodeName` (kube's clearNominatedNodeName), whatever the pod's state */
  async clearNominated(pod: ApiObject): Promise<void> {
    await this.updateStatus(pod, (cur) => {
      const status = (cur.status ?? {}) as { nominatedNodeName?: string };
      if (status.nominatedNodeName) delete status.nominatedNodeName;
    }).catch((e: unknown) => {
      if (!gone(e)) throw e;
    });
  }

  /**
   * kube 1.32's PreemptPod: the victim gets DisruptionTarget=True
   * (PreemptionByScheduler) first, so its own status says why it goes, then
   * is deleted (its grace period; uid precondition) and gets a `Preempted`
   * Event. A victim already gone is done.
   */
  async preemptVictim(victim: ApiObject, preemptor: ApiObject, node: string, schedulerName: string): Promise<void> {
    const { ns, name } = nameOf(victim);
    const uid = victim.metadata?.uid ?? '';
    const nowMs = this.o.clock.now();
    try {
      await this.updateStatus(victim, (cur) => {
        if (cur.metadata?.uid !== uid) throw new StatusError(404, 'NotFound', `pods "${name}" not found`);
        const status = (cur.status ??= {}) as { conditions?: Obj[] };
        const conds = status.conditions ?? [];
        const old = conds.find((c) => c.type === 'DisruptionTarget');
        const message = `${schedulerName}: preempting to accommodate a higher priority pod`;
        if (old?.status === 'True' && old.reason === 'PreemptionByScheduler' && old.message === message) return;
        status.conditions = withDisruptionTarget(conds, 'PreemptionByScheduler', message, nowMs);
      });
      await this.o.pods().delete(ns, name, { dryRun: false, manager: SCHEDULER_MANAGER, preconditions: { uid } });
    } catch (e) {
      // gone, or replaced by a pod of the same name (the uid precondition): nothing to preempt
      if (gone(e) || (e instanceof StatusError && e.code === 409)) return;
      throw e;
    }
    void this.o.events?.event(podRef(victim), 'Normal', 'Preempted', `Preempted by pod ${preemptor.metadata?.uid ?? ''} on node ${node}`);
  }

  /** a pods/status write of what `change` does to the current pod (nothing changed: nothing written) */
  private async updateStatus(pod: ApiObject, change: (cur: ApiObject) => void): Promise<void> {
    const { ns, name } = nameOf(pod);
    await this.o.pods().guaranteedUpdate(ns, name, { dryRun: false, subresource: 'status', manager: SCHEDULER_MANAGER }, (cur) => {
      if (!cur) throw new StatusError(404, 'NotFound', `pods "${name}" not found`);
      change(cur);
      return cur;
    });
  }
}
