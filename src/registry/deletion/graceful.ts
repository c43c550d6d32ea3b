// Graceful deletion (spec 000 §2.6 gracePeriodSeconds). The specification
// does not say which kinds honour a grace period; we follow Kubernetes for
// pods only and keep it simple (docs/deletion.md):
//   - a pod bound to a node (spec.nodeName set) and still running is marked
//     with deletionTimestamp = now + grace and deletionGracePeriodSeconds =
//     grace, and stays Terminating until its node agent (or a client with
//     gracePeriodSeconds=0, `kubectl delete --force --grace-period=0`)
//     confirms with a zero-grace delete;
//   - every other pod, and every other kind, is deleted at once: the grace
//     period is ignored and deletionGracePeriodSeconds is 0 when finalizers
//     keep the object.

import type { ApiObject, ResourceDefinition } from '../types.js';

/** Kubernetes' default pod terminationGracePeriodSeconds */
export const DEFAULT_POD_GRACE_SECONDS = 30;

/** the grace period a delete request gets for this object: undefined = not graceful */
export function gracePeriodFor(def: ResourceDefinition, obj: ApiObject, requested: number | undefined): number | undefined {
  if (def.group !== '' || def.resource !== 'pods') return undefined;
  const spec = (obj.spec ?? {}) as { nodeName?: unknown; terminationGracePeriodSeconds?: unknown };
  const phase = (obj.status as { phase?: unknown } | undefined)?.phase;
  // nothing runs an unbound or finished pod: no one to wait for
  if (typeof spec.nodeName !== 'string' || spec.nodeName === '') return 0;
  if (phase === 'Succeeded' || phase === 'Failed') return 0;
  if (requested !== undefined) return requested;
  return typeof spec.terminationGracePeriodSeconds === 'number' ? spec.terminationGracePeriodSeconds : DEFAULT_POD_GRACE_SECONDS;
}
