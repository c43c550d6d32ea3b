// The objects a watch of a definition served over another version's storage
// sees: each cached (stored) object converted (and read-defaulted) once, shared by the watchers.

import { servedObject } from '../registry/generic-store.js';
import type { ApiObject, ResourceDefinition } from '../registry/types.js';

export class ServedViews {
  /** converted views of cached objects, per served definition (versions over another's storage) */
  private readonly views = new WeakMap<ResourceDefinition, WeakMap<ApiObject, ApiObject>>();

  /**
   * Cached objects are stored objects; a definition served over another
   * version's storage sees each converted once (shared by its watchers, kept
   * as long as the cached object lives).
   */
  viewFor(def: ResourceDefinition): ((stored: ApiObject) => ApiObject) | undefined {
    if (!def.storage && !def.readDefaults) {
      // written objects carry their zero shape already: a check of its paths, no copy (and no memo) unless one lacks it
      return def.strategy.zeroShape ? (stored) => servedObject(def, stored) : undefined;
    }
    let memo = this.views.get(def);
    if (!memo) {
      memo = new WeakMap();
      this.views.set(def, memo);
    }
    const m = memo;
    return (stored) => {
      let v = m.get(stored);
      if (!v) {
        v = servedObject(def, stored);
        m.set(stored, v);
      }
      return v;
    };
  }
}
