// Pod facts the workload controllers share (kube's pkg/api/v1/pod and
// controller_utils): active, ready, available, and controller references.

import type { ApiObject, JSONValue } from '../../registry/types.js';
import type { InformerHandlers } from '../runtime/index.js';
import { controllerRefOf } from '../../machinery/meta.js';

// the controller reference and the Ready condition, as the rest of the server reads them
export { type OwnerReference, controllerRefOf, newControllerRef, refersTo } from '../../machinery/meta.js';
export { podReady as isPodReady } from '../../registry/kinds/pod-eviction.js';

type Obj = Record<string, JSONValue>;

const conditions = (pod: ApiObject): Obj[] => {
  const c = (pod.status as Obj | undefined)?.conditions;
  return Array.isArray(c) ? (c as Obj[]) : [];
};

const phaseOf = (pod: ApiObject): string => String((pod.status as Obj | undefined)?.phase ?? '');

/** not finished and not being deleted (kube's IsPodActive) */
export function isPodActive(pod: ApiObject): boolean {
  const phase = phaseOf(pod);
  return phase !== 'Succeeded' && phase !== 'Failed' && !pod.metadata?.deletionTimestamp;
}

/** when the pod became Ready (ms), undefined when it is not */
export function readySince(pod: ApiObject): number | undefined {
  const c = conditions(pod).find((x) => x.type === 'Ready' && x.status === 'True');
  if (!c) return undefined;
  const t = typeof c.lastTransitionTime === 'string' ? Date.parse(c.lastTransitionTime) : NaN;
  return Number.isNaN(t) ? 0 : t;
}

/** ready for at least minReadySeconds (kube's IsPodAvailable) */
export function isPodAvailable(pod: ApiObject, minReadySeconds: number, now: number): boolean {
  const since = readySince(pod);
  if (since === undefined) return false;
  return minReadySeconds <= 0 || since + minReadySeconds * 1000 <= now;
}

/** ms until a ready pod turns available; undefined when it is not ready or already is */
export function untilAvailable(pod: ApiObject, minReadySeconds: number, now: number): number | undefined {
  const since = readySince(pod);
  if (since === undefined || minReadySeconds <= 0) return undefined;
  const at = since + minReadySeconds * 1000;
  return at > now ? at - now : undefined;
}

export function labelsOf(o: ApiObject): Record<string, JSONValue> {
  return (o.metadata?.labels ?? {}) as Record<string, JSONValue>;
}

/**
 * informer handlers for the objects a controller owns: `enqueueFor` gets each
 * added, changed or deleted object, and the old version too when its
 * controller reference or labels changed (a released or relabelled object
 * concerns its former owner as well)
 */
export function ownedObjectHandlers(enqueueFor: (o: ApiObject) => void): InformerHandlers {
  return {
    add: (o) => enqueueFor(o),
    update: (old, o) => {
      enqueueFor(o);
      if (controllerRefOf(old)?.uid !== controllerRefOf(o)?.uid || JSON.stringify(labelsOf(old)) !== JSON.stringify(labelsOf(o))) enqueueFor(old);
    },
    delete: (o) => enqueueFor(o),
  };
}
