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

import { StatusError, internalError } from '../core/errors.js';
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
  // a webhook converts asynchronously (convertObjects): a synchronous caller here is a bug, not a None conversion
  if (binding.webhook) throw internalError(`a conversion from ${from} to ${to} needs the conversion webhook, on a path that cannot call it`);
  const src = binding.versions[from];
  let hub = src ? src.toHub(obj) : clone(obj);
  hub.apiVersion = binding.storageVersion;
  if (to === binding.storageVersion) return typeMetaFirst(hub, to);
  const dst = binding.versions[to];
  if (dst) hub = dst.fromHub(hub);
  return typeMetaFirst(hub, to);
}

/**
 * `objects` as `to` through the binding's conversion webhook, in one review (kube batches a
 * list); objects already in `to` are not sent. A failed conversion is kube's 500: on a read a
 * Status without a reason ("conversion webhook for <gvk> failed: …", as kube's response writer
 * answers), on a write kube's InternalError ("Internal error occurred: …", nothing written).
 */
export async function convertObjects(binding: StorageBinding, objects: readonly ApiObject[], to: string, on: 'read' | 'write', list?: boolean): Promise<ApiObject[]> {
  if (!binding.webhook) return objects.map((o) => convertObject(binding, o, to));
  try {
    return await binding.webhook.convert(objects, to, list);
  } catch (e) {
    if (e instanceof StatusError) throw e;
    const message = e instanceof Error ? e.message : String(e);
    throw on === 'read' ? new StatusError(500, '', message) : internalError(message);
  }
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
