// The Priority admission plugin (kube-apiserver's, on by default): a new pod's
// `spec.priorityClassName` is resolved to `spec.priority` and
// `spec.preemptionPolicy` (a pod without one gets the global default class, or
// priority 0 and PreemptLowerPriority, as every pod on kube 1.32 shows); a
// class that does not exist, or a priority the pod states that differs from
// its class, is a 403. An update keeps the stored values when the client
// leaves them out. A second PriorityClass marked globalDefault is refused.
// The built-in system classes are created at start (bootstrapPriorityClasses).

import { StatusError, forbidden, qualifiedResource } from '../core/errors.js';
import type { AdmissionCall, WriteHooks } from './write-options.js';
import type { GenericStore } from './generic-store.js';
import type { ApiObject } from './types.js';

export const PRIORITY = 'Priority';

/** the cluster's PriorityClasses as this member holds them */
export interface PriorityClassAccess {
  get(name: string): ApiObject | undefined;
  list(): ApiObject[];
}

type Spec = { priorityClassName?: unknown; priority?: unknown; preemptionPolicy?: unknown };

function refuse(c: AdmissionCall, message: string): StatusError {
  return forbidden(`${qualifiedResource(c.def.resource, c.def.group)} "${c.name}" is forbidden: ${message}`, { name: c.name, group: c.def.group || undefined, kind: c.def.resource });
}

/** kube's getDefaultPriorityClass: among globalDefault classes, the lowest value */
function defaultClass(classes: PriorityClassAccess): ApiObject | undefined {
  let best: ApiObject | undefined;
  for (const pc of classes.list()) {
    if ((pc as { globalDefault?: unknown }).globalDefault !== true) continue;
    if (!best || value(pc) < value(best)) best = pc;
  }
  return best;
}

const value = (pc: ApiObject): number => (typeof (pc as { value?: unknown }).value === 'number' ? (pc as { value: number }).value : 0);
const policy = (pc: ApiObject): string | undefined => {
  const p = (pc as { preemptionPolicy?: unknown }).preemptionPolicy;
  return typeof p === 'string' ? p : undefined;
};

export function priorityAdmission(classes: PriorityClassAccess, schedulingGroup: string): Required<Pick<WriteHooks, 'mutate' | 'validateAdmission'>> {
  return {
    async mutate(c) {
      if (c.opts.subresource || c.def.group !== '' || c.def.resource !== 'pods' || !c.object) return c.object;
      const spec = (c.object.spec ??= {}) as Spec;
      if (c.operation === 'UPDATE') {
        // set on create; validation refuses a change, so only a value left out is carried over
        const old = (c.oldObject?.spec ?? {}) as Spec;
        if (spec.priority === undefined && old.priority !== undefined) spec.priority = old.priority;
        if (spec.preemptionPolicy === undefined && old.preemptionPolicy !== undefined) spec.preemptionPolicy = old.preemptionPolicy;
        return c.object;
      }
      if (c.operation !== 'CREATE') return c.object;
      let priority = 0;
      let preemption: string | undefined = 'PreemptLowerPriority';
      const name = typeof spec.priorityClassName === 'string' ? spec.priorityClassName : '';
      if (!name) {
        const dpc = defaultClass(classes);
        if (dpc) {
          spec.priorityClassName = dpc.metadata?.name ?? '';
          priority = value(dpc);
          preemption = policy(dpc);
        }
      } else {
        const pc = classes.get(name);
        if (!pc) throw refuse(c, `no PriorityClass with name ${name} was found`);
        priority = value(pc);
        preemption = policy(pc);
      }
      if (typeof spec.priority === 'number' && spec.priority !== priority) {
        throw refuse(c, `the integer value of priority (${spec.priority}) must not be provided in pod spec; priority admission controller computed ${priority} from the given PriorityClass name`);
      }
      spec.priority = priority;
      if (preemption !== undefined) {
        if (typeof spec.preemptionPolicy === 'string' && spec.preemptionPolicy !== preemption) {
          throw refuse(c, `the string value of PreemptionPolicy (${spec.preemptionPolicy}) must not be provided in pod spec; priority admission controller computed ${preemption} from the given PriorityClass name`);
        }
        spec.preemptionPolicy = preemption;
      }
      return c.object;
    },
    async validateAdmission(c) {
      if (c.opts.subresource || c.def.group !== schedulingGroup || c.def.resource !== 'priorityclasses' || !c.object) return;
      if (c.operation !== 'CREATE' && c.operation !== 'UPDATE') return;
      if ((c.object as { globalDefault?: unknown }).globalDefault !== true) return;
      const dpc = defaultClass(classes);
      if (dpc && (c.operation === 'CREATE' || dpc.metadata?.name !== c.name)) {
        throw refuse(c, `PriorityClass ${dpc.metadata?.name ?? ''} is already marked as default. Only one default can exist`);
      }
    },
  };
}

/** kube's bootstrap-system-priority-classes: the two classes for system-critical pods, created unless present */
export async function bootstrapPriorityClasses(gs: GenericStore, apiVersion: string): Promise<void> {
  const builtin = [
    { name: 'system-node-critical', value: 2_000_001_000, description: 'Used for system critical pods that must not be moved from their current node.' },
    { name: 'system-cluster-critical', value: 2_000_000_000, description: 'Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.' },
  ];
  for (const b of builtin) {
    if (gs.readRaw('', b.name)) continue;
    try {
      await gs.create('', { apiVersion, kind: 'PriorityClass', metadata: { name: b.name }, value: b.value, description: b.description, preemptionPolicy: 'PreemptLowerPriority' } as ApiObject, { dryRun: false });
    } catch (e) {
      if (!(e instanceof StatusError && e.code === 409)) throw e;
    }
  }
}
