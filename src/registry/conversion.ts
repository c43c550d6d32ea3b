// One kind served at several group/versions over one stored form (spec 000 §6;
// Kubernetes' "storage version" plus conversion). Core v1 Events and
// events.<domain>/v1 Events are one store; so are autoscaling/v1 and /v2
// HorizontalPodAutoscalers. A definition carrying a `StorageBinding` keeps
// its objects under the binding's group/resource, written in the binding's
// storage version, and converts them on every read and write.
//
// Conversion goes through the storage version as the hub: a stored object in
// version A read through version B is A → hub → B. An object stored in a
// version the binding has no converter for is taken as already in the hub's
// shape (so objects written before a binding existed, or custom resources with
// conversion `None`, only have their apiVersion rewritten).
//
// Everything that reads or writes objects goes through GenericStore (keys,
// encode, decode) or converts with `convertObject` (watch cache views, the
// consistent list from the cache), so the registry, discovery, OpenAPI and
// RBAC, which are per served definition, need nothing else.

import { clone } from '../machinery/meta.js';
import type { ApiObject, StorageBinding } from './types.js';

export type { StorageBinding, VersionConverter } from './types.js';

/**
 * `obj` (in the apiVersion it carries; the hub's when it carries none) as
 * `to`. Returns `obj` itself when nothing changes, else a new object; `obj` is
 * never modified.
 */
export function convertObject(binding: StorageBinding, obj: ApiObject, to: string): ApiObject {
  const from = typeof obj.apiVersion === 'string' && obj.apiVersion !== '' ? obj.apiVersion : binding.storageVersion;
  if (from === to) return obj;
  const src = binding.versions[from];
  let hub = src ? src.toHub(obj) : clone(obj);
  hub.apiVersion = binding.storageVersion;
  if (to === binding.storageVersion) return typeMetaFirst(hub, to);
  const dst = binding.versions[to];
  if (dst) hub = dst.fromHub(hub);
  return typeMetaFirst(hub, to);
}

function typeMetaFirst(obj: ApiObject, apiVersion: string): ApiObject {
  const { apiVersion: _a, kind, ...rest } = obj;
  return kind === undefined ? { apiVersion, ...rest } : { apiVersion, kind, ...rest };
}

/** copies `from[a]` to `to[b]` when present (a small helper for field renames) */
export function rename(from: Record<string, unknown>, to: Record<string, unknown>, pairs: [string, string][]): void {
  for (const [a, b] of pairs) {
    const v = from[a];
    if (v !== undefined && v !== null) to[b] = v;
  }
}
