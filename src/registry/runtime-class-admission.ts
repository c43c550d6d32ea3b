// The RuntimeClass admission plugin (kube-apiserver's, on by default; kube's
// plugin/pkg/admission/runtimeclass). On a pod create (not an update, not a
// sub-resource) that names `spec.runtimeClassName`, the class must exist (else
// 403 `pod rejected: RuntimeClass "x" not found`); its `overhead.podFixed`
// becomes the pod's `spec.overhead`, and its `scheduling` node selector and
// tolerations are merged into the pod's. The validating step checks again
// after the mutating webhooks: a pod's overhead must equal its class's, and a
// pod whose class defines none (or that names no class) may not set one, as
// only this plugin is meant to write the field.

import { parseQuantity } from '../core/quantity.js';
import { type Toleration, mergeTolerations } from '../machinery/toleration-merge.js';
import { admissionForbidden } from './admission-forbidden.js';
import type { AdmissionCall, WriteHooks } from './write-options.js';
import type { ApiObject, JSONValue } from './types.js';
import { coreResources } from './write-hooks.js';

export const RUNTIME_CLASS = 'RuntimeClass';

export interface RuntimeClassAdmissionOptions {
  /** every RuntimeClass in the member's state (kube's plugin reads an informer) */
  runtimeClasses(): readonly ApiObject[];
  /** waits until this member has what the leader committed: asked once after a miss, as kube falls back from its informer to a live GET */
  catchUp?: () => Promise<void>;
}

type Obj = Record<string, JSONValue>;
interface PodSpec {
  runtimeClassName?: string;
  overhead?: Record<string, JSONValue>;
  nodeSelector?: Record<string, string>;
  tolerations?: Toleration[];
}
interface RuntimeClass {
  overhead?: { podFixed?: Record<string, JSONValue> };
  scheduling?: { nodeSelector?: Record<string, string>; tolerations?: Toleration[] };
}

const MISMATCH = "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead";

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const size = (m: unknown): number => (isObj(m) ? Object.keys(m).length : 0);

/** kube's Semantic.DeepEqual of two ResourceLists: the same names, each quantity equal by value ("1Gi" = "1073741824"); nil = empty */
function sameResources(a: Record<string, JSONValue> | undefined, b: Record<string, JSONValue> | undefined): boolean {
  if (size(a) !== size(b)) return false;
  return Object.entries(a ?? {}).every(([name, q]) => b !== undefined && Object.hasOwn(b, name) && parseQuantity(q) === parseQuantity(b[name]));
}

export function runtimeClassAdmission(o: RuntimeClassAdmissionOptions): Required<Pick<WriteHooks, 'mutate' | 'validateAdmission' | 'appliesTo'>> {
  /** kube's shouldIgnore plus its Create-only handler: pods themselves, created */
  const applies = (c: AdmissionCall): boolean =>
    c.operation === 'CREATE' && !c.opts.subresource && c.def.group === '' && c.def.resource === 'pods' && isObj(c.object);

  const find = (name: string): ApiObject | undefined => o.runtimeClasses().find((rc) => rc.metadata?.name === name);

  /** the pod's class; undefined when it names none; 403 when it names one that does not exist (kube's prepareObjects) */
  const classOf = async (c: AdmissionCall, spec: PodSpec): Promise<RuntimeClass | undefined> => {
    // a pointer in kube: "" is a name (and not found), only an absent field is no class
    if (typeof spec.runtimeClassName !== 'string') return undefined;
    let rc = find(spec.runtimeClassName);
    if (!rc && o.catchUp) {
      await o.catchUp();
      rc = find(spec.runtimeClassName);
    }
    if (!rc) throw admissionForbidden(c, `pod rejected: RuntimeClass ${JSON.stringify(spec.runtimeClassName)} not found`);
    return rc as RuntimeClass;
  };

  /** kube's setOverhead: a class with `overhead` decides the pod's; a differing one the pod brings is refused */
  const setOverhead = (c: AdmissionCall, spec: PodSpec, rc: RuntimeClass): void => {
    if (!rc.overhead) return;
    const podFixed = rc.overhead.podFixed;
    if (size(spec.overhead) > 0 && !sameResources(podFixed, spec.overhead)) throw admissionForbidden(c, MISMATCH);
    // copied: the class object is shared by every admission that reads it
    if (size(podFixed) > 0) spec.overhead = structuredClone(podFixed);
    else delete spec.overhead;
  };

  /** kube's setScheduling: the class's node selector joins the pod's (a key set to another value is refused), tolerations merged */
  const setScheduling = (c: AdmissionCall, spec: PodSpec, rc: RuntimeClass): void => {
    if (!rc.scheduling) return;
    const nodeSelector = rc.scheduling.nodeSelector ?? {};
    const tolerations = rc.scheduling.tolerations ?? [];
    if (spec.nodeSelector === undefined) {
      if (size(nodeSelector) > 0) spec.nodeSelector = { ...nodeSelector };
    } else if (isObj(spec.nodeSelector)) {
      for (const [key, value] of Object.entries(nodeSelector)) {
        const podValue = spec.nodeSelector[key];
        if (podValue !== undefined && podValue !== value) {
          throw admissionForbidden(c, `conflict: runtimeClass.scheduling.nodeSelector[${key}] = ${value}; pod.spec.nodeSelector[${key}] = ${podValue}`);
        }
        spec.nodeSelector[key] = value;
      }
    }
    // not a list yet is schema validation's to refuse (admission mutates before it)
    if (spec.tolerations !== undefined && !Array.isArray(spec.tolerations)) return;
    const merged = mergeTolerations(spec.tolerations ?? [], structuredClone(tolerations));
    if (merged.length > 0) spec.tolerations = merged;
  };

  /** kube's validateOverhead: only a class's overhead may be the pod's */
  const validateOverhead = (c: AdmissionCall, spec: PodSpec, rc: RuntimeClass | undefined): void => {
    if (size(spec.overhead) === 0) return;
    if (!rc?.overhead) throw admissionForbidden(c, 'pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead');
    if (!sameResources(rc.overhead.podFixed, spec.overhead)) throw admissionForbidden(c, MISMATCH);
  };

  /** the pod's spec; absent or not an object, an empty one (schema validation refuses the latter) */
  const specOf = (c: AdmissionCall): PodSpec => {
    const spec = (c.object as { spec?: JSONValue }).spec;
    return isObj(spec) ? (spec as PodSpec) : {};
  };

  return {
    appliesTo: coreResources('pods'),
    async mutate(c) {
      if (!applies(c)) return c.object;
      const spec = specOf(c);
      const rc = await classOf(c, spec);
      if (!rc) return c.object;
      setOverhead(c, spec, rc);
      setScheduling(c, spec, rc);
      return c.object;
    },
    // after the mutating webhooks, as kube's Validate: the class is looked up again and the overhead checked
    async validateAdmission(c) {
      if (!applies(c)) return;
      const spec = specOf(c);
      validateOverhead(c, spec, await classOf(c, spec));
    },
  };
}
