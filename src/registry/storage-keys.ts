// Where a definition's objects live in the store: the storage key layout
// (`/registry/<group>/<resource>/[<namespace>/]<name>`, `core` for the
// legacy group) and the stored object as the definition's version serves it.

import { convertObject } from './conversion.js';
import { apiVersionOf } from './registry.js';
import type { ApiObject, ResourceDefinition } from './types.js';

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

/** a stored object (decoded) as the definition's version serves it; the same object when no conversion or read default applies */
export function servedObject(def: ResourceDefinition, stored: ApiObject): ApiObject {
  const served = def.storage ? convertObject(def.storage, stored, apiVersionOf(def)) : stored;
  return def.readDefaults ? def.readDefaults(served) : served;
}
