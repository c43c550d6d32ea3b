// Where a definition's objects live in the store: the storage key layout
// (`/registry/<group>/<resource>/[<namespace>/]<name>`, `core` for the
// legacy group) and the stored object as the definition's version serves it.

import { convertObject, convertObjects } from './conversion.js';
import { apiVersionOf } from './registry.js';
import type { ApiObject, ResourceDefinition } from './types.js';
import { withZeroShape } from './zero-shape.js';

/** the group and resource whose keys hold a definition's objects (its storage binding's, else its own) */
export function storageResource(def: ResourceDefinition): { group: string; resource: string } {
  return def.storage ? { group: def.storage.group, resource: def.storage.resource } : { group: def.group, resource: def.resource };
}

export function storageKey(def: ResourceDefinition, namespace: string, name: string): string {
  const { group, resource } = storageResource(def);
  const g = group || 'core';
  return def.scope === 'Namespaced' ? `/registry/${g}/${resource}/${namespace}/${name}` : `/registry/${g}/${resource}/${name}`;
}

export function storagePrefix(def: ResourceDefinition, namespace: string): string {
  const { group, resource } = storageResource(def);
  const g = group || 'core';
  return def.scope === 'Namespaced' && namespace
    ? `/registry/${g}/${resource}/${namespace}/`
    : `/registry/${g}/${resource}/`;
}

/**
 * a stored object (decoded) as the definition's version serves it; the same object when no
 * conversion or read default applies and its zero shape is complete (objects stored before
 * the kind had one, or converted from another version, get it here: src/registry/zero-shape.ts)
 */
export function servedObject(def: ResourceDefinition, stored: ApiObject): ApiObject {
  return shapedForServing(def, def.storage ? convertObject(def.storage, stored, apiVersionOf(def)) : stored);
}

/** the zero shape and read defaults of a served (converted) object */
function shapedForServing(def: ResourceDefinition, served: ApiObject): ApiObject {
  const shaped = def.strategy.zeroShape ? withZeroShape(served, def.strategy.zeroShape) : served;
  return def.readDefaults ? def.readDefaults(shaped) : shaped;
}

/**
 * stored objects (decoded) as the definition's version serves them, for a definition whose
 * storage converts through a webhook: one review for the batch (servedObject otherwise)
 */
export async function servedObjects(def: ResourceDefinition, stored: readonly ApiObject[], on: 'read' | 'write' = 'read', list?: boolean): Promise<ApiObject[]> {
  const converted = def.storage ? await convertObjects(def.storage, stored, apiVersionOf(def), on, list) : stored;
  return converted.map((o) => shapedForServing(def, o));
}
