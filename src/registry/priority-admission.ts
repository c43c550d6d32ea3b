// The Priority admission plugin (kube-apiserver's, on by default): a new pod
// gets `spec.priority` and `spec.preemptionPolicy` from its PriorityClass —
// the one it names (403 when there is none), else the class marked
// `globalDefault` (whose name it then carries), else 0 and
// PreemptLowerPriority. A priority or policy the pod gives itself must equal
// the computed one. On update the stored values are kept when the new object
// leaves them out, so `kubectl replace` of a manifest is not a spec change.
// A PriorityClass cannot be marked globalDefault while another one is.

import { admissionForbidden } from './admission-forbidden.js';
import type { AdmissionCall, WriteHooks } from './write-options.js';
import type { ApiObject, JSONValue } from './types.js';

export const PRIORITY = 'Priority';

/** kube's system classes (scheduling.SystemPriorityClasses), known even before the leader has stored them */
export const SYSTEM_PRIORITY_CLASSES: Readonly<Record<string, number>> = {
  'system-node-critical': 2000001000,
  'system-cluster-critical': 2000000000,
};

const PREEMPT_LOWER = 'PreemptLowerPriority';

const SYSTEM_DESCRIPTIONS: Readonly<Record<string, string>> = {
  'system-node-critical': 'Used for system critical pods that must not be moved from their current node.',
  'system-cluster-critical': 'Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.',
};

/** the system classes as kube-apiserver stores them at start (its bootstrap-system-priority-classes hook) */
export function systemPriorityClassObjects(apiDomain: string): ApiObject[] {
  return Object.entries(SYSTEM_PRIORITY_CLASSES).map(([name, value]) => ({
    apiVersion: `scheduling.${apiDomain}/v1`, kind: 'PriorityClass', metadata: { name }, value, description: SYSTEM_DESCRIPTIONS[name] ?? '',
  }) as ApiObject);
}

export interface PriorityAdmissionOptions {
  apiDomain: string;
  /** every PriorityClass in the member's state (kube's plugin reads an informer) */
  priorityClasses(): ApiObject[];
}

type Obj = Record<string, JSONValue>;
interface Computed {
  name?: string;
  value: number;
  policy?: string;
}

const valueOf = (pc: ApiObject): number => (typeof pc.value === 'number' ? pc.value : 0);
const policyOf = (pc: ApiObject): string => (typeof pc.preemptionPolicy === 'string' ? pc.preemptionPolicy : PREEMPT_LOWER);

export function priorityAdmission(o: PriorityAdmissionOptions): Required<Pick<WriteHooks, 'mutate' | 'validateAdmission' | 'appliesTo'>> {
  const schedulingGroup = `scheduling.${o.apiDomain}`;
  const isPod = (c: AdmissionCall): boolean => c.def.group === '' && c.def.resource === 'pods' && c.object !== undefined;
  const deny = (c: AdmissionCall, message: string): never => {
    throw admissionForbidden(c, message);
  };

  /** kube's getDefaultPriority: the lowest globalDefault class, else 0 */
  const defaultPriority = (): Computed => {
    const defaults = o.priorityClasses().filter((pc) => pc.globalDefault === true).sort((a, b) => valueOf(a) - valueOf(b));
    const pc = defaults[0];
    return pc ? { name: pc.metadata?.name, value: valueOf(pc), policy: policyOf(pc) } : { value: 0, policy: PREEMPT_LOWER };
  };

  const named = (c: AdmissionCall, name: string): Computed => {
    const pc = o.priorityClasses().find((p) => p.metadata?.name === name);
    if (pc) return { value: valueOf(pc), policy: policyOf(pc) };
    const system = SYSTEM_PRIORITY_CLASSES[name];
    if (system !== undefined) return { value: system, policy: PREEMPT_LOWER };
    return deny(c, `no PriorityClass with name ${name} was found`);
  };

  const admitCreate = (c: AdmissionCall, spec: Obj): void => {
    const className = typeof spec.priorityClassName === 'string' ? spec.priorityClassName : '';
    const computed = className === '' ? defaultPriority() : named(c, className);
    if (className === '' && computed.name) spec.priorityClassName = computed.name;
    if (typeof spec.priority === 'number' && spec.priority !== computed.value) {
      deny(c, `the integer value of priority (${spec.priority}) must not be provided in pod spec; priority admission controller computed ${computed.value} from the given PriorityClass name`);
    }
    spec.priority = computed.value;
    if (computed.policy === undefined) return;
    if (typeof spec.preemptionPolicy === 'string' && spec.preemptionPolicy !== computed.policy) {
      deny(c, `the string value of PreemptionPolicy (${spec.preemptionPolicy}) must not be provided in pod spec; priority admission controller computed ${computed.policy} from the given PriorityClass name`);
    }
    spec.preemptionPolicy = computed.policy;
  };

  return {
    appliesTo: (def) => (def.group === '' && def.resource === 'pods') || (def.group === schedulingGroup && def.resource === 'priorityclasses'),
    async mutate(c) {
      if (!isPod(c) || (c.operation !== 'CREATE' && c.operation !== 'UPDATE')) return c.object;
      // the pod's own writes only: a sub-resource (status, binding) carries the stored spec
      if (c.opts.subresource) return c.object;
      const pod = c.object!;
      const spec = ((pod as { spec?: Obj }).spec ??= {});
      if (c.operation === 'CREATE') {
        admitCreate(c, spec);
        return pod;
      }
      const old = ((c.oldObject as { spec?: Obj } | undefined)?.spec ?? {}) as Obj;
      if (spec.priority === undefined && old.priority !== undefined) spec.priority = old.priority;
      if (spec.preemptionPolicy === undefined && old.preemptionPolicy !== undefined) spec.preemptionPolicy = old.preemptionPolicy;
      return pod;
    },
    // kube's validatePriorityClass: one globalDefault at a time
    async validateAdmission(c) {
      if (c.def.group !== schedulingGroup || c.def.resource !== 'priorityclasses' || !c.object) return;
      if (c.operation !== 'CREATE' && c.operation !== 'UPDATE') return;
      if (c.object.globalDefault !== true) return;
      const other = o.priorityClasses().find((pc) => pc.globalDefault === true && pc.metadata?.name !== c.object?.metadata?.name);
      if (other) deny(c, `PriorityClass ${String(other.metadata?.name)} is already marked as default. Only one default can exist`);
    },
  };
}
