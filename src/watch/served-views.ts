// The objects a watch of a definition served over another version's storage
// sees: each cached (stored) object converted (and read-defaulted) once, shared by the watchers.
// A CRD's conversion webhook converts asynchronously: its watchers ask `prepareFor` to
// convert the objects of what they are about to send (one review per batch, shared by
// every watcher of the version, in flight or done), then read them through `viewFor`.

import { servedObject, servedObjects } from '../registry/generic-store.js';
import type { ApiObject, ResourceDefinition } from '../registry/types.js';

/** converts what a watcher is about to send; undefined when everything is converted already */
export type PrepareViews = (stored: readonly ApiObject[]) => Promise<void> | undefined;

export class ServedViews {
  /** converted views of cached objects, per served definition (versions over another's storage) */
  private readonly views = new WeakMap<ResourceDefinition, WeakMap<ApiObject, ApiObject>>();
  /** conversions by webhook still in flight, per served definition */
  private readonly inFlight = new WeakMap<ResourceDefinition, WeakMap<ApiObject, Promise<void>>>();

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
    const m = this.memoOf(def);
    if (def.storage?.webhook) {
      // filled by prepareFor before the watcher encodes (src/watch/converting-watcher.ts)
      return (stored) => {
        const v = m.get(stored);
        if (!v) throw new Error('a watch event was encoded before its conversion');
        return v;
      };
    }
    return (stored) => {
      let v = m.get(stored);
      if (!v) {
        v = servedObject(def, stored);
        m.set(stored, v);
      }
      return v;
    };
  }

  /** for a definition converted by a webhook: the preparation its watchers run before each send */
  prepareFor(def: ResourceDefinition): PrepareViews | undefined {
    if (!def.storage?.webhook) return undefined;
    const memo = this.memoOf(def);
    let flying = this.inFlight.get(def);
    if (!flying) this.inFlight.set(def, (flying = new WeakMap()));
    const pending = flying;
    return (stored) => {
      const wanted = new Set<ApiObject>();
      const waits: Promise<void>[] = [];
      for (const o of stored) {
        if (memo.has(o)) continue;
        const p = pending.get(o);
        if (p) waits.push(p);
        else wanted.add(o);
      }
      if (wanted.size > 0) {
        const missing = [...wanted];
        const batch = servedObjects(def, missing).then(
          (served) => {
            missing.forEach((o, i) => memo.set(o, served[i]!));
            for (const o of missing) pending.delete(o);
          },
          (err: unknown) => {
            // a failed conversion is tried again by the next watcher that needs it
            for (const o of missing) pending.delete(o);
            throw err;
          },
        );
        for (const o of missing) pending.set(o, batch);
        waits.push(batch);
      }
      if (waits.length === 0) return undefined;
      return Promise.all(waits).then(() => undefined);
    };
  }

  private memoOf(def: ResourceDefinition): WeakMap<ApiObject, ApiObject> {
    let memo = this.views.get(def);
    if (!memo) {
      memo = new WeakMap();
      this.views.set(def, memo);
    }
    return memo;
  }
}
