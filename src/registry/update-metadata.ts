// What an update of the generic store takes from the stored object rather
// than from the request (the metadata a client cannot change), and what
// counts as a change: the desired state for generation, everything but the
// volatile fields for a no-op.

import { metaOf, nowTimestamp } from '../machinery/meta.js';
import type { ApiObject, ObjectMeta, ResourceDefinition } from './types.js';

/** the metadata an update cannot change, taken from the stored object */
export function carryOver(def: ResourceDefinition, next: ApiObject, current: ApiObject, name: string): void {
  const meta = metaOf(next);
  const cur = current.metadata!;
  meta.name = name;
  if (def.scope === 'Namespaced') meta.namespace = cur.namespace;
  meta.uid = cur.uid;
  meta.creationTimestamp = cur.creationTimestamp;
  if (cur.deletionTimestamp !== undefined) {
    meta.deletionTimestamp = cur.deletionTimestamp;
    if (cur.deletionGracePeriodSeconds !== undefined) meta.deletionGracePeriodSeconds = cur.deletionGracePeriodSeconds;
  } else {
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
  }
  if (meta.generateName === undefined && cur.generateName !== undefined) meta.generateName = cur.generateName;
  if (cur.generation !== undefined) meta.generation = cur.generation;
  else delete meta.generation;
  canonicalManagedFieldTimes(meta);
}

/**
 * Clients re-encode the times they read (e.g. `…:27.000Z` from a Date);
 * store them in the canonical second-precision form so a replace that
 * changes nothing is recognised as a no-op.
 */
function canonicalManagedFieldTimes(meta: ObjectMeta): void {
  const mf = meta.managedFields;
  if (!Array.isArray(mf)) return;
  for (const e of mf) {
    if (e && typeof e === 'object' && typeof e.time === 'string') {
      const t = Date.parse(e.time);
      if (!Number.isNaN(t)) e.time = nowTimestamp(t);
    }
  }
}

export function specOf(o: ApiObject): unknown {
  const { metadata: _m, status: _s, apiVersion: _a, kind: _k, ...rest } = o;
  return rest;
}

/** fields that differ between two reads without being a change (resourceVersion) */
export function stripVolatile(o: ApiObject): ApiObject {
  const c = { ...o, metadata: { ...(o.metadata ?? {}) } };
  delete c.metadata.resourceVersion;
  return c;
}

