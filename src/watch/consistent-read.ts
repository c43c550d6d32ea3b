// "Most Recent" lists served from the watch cache (spec 000 §4.6: a
// consistent read "may be served from an internal watch cache kept
// consistent by progress notifications"). The cache is consistent once it has
// applied every write up to the store's ReadIndex; then its state is the
// latest committed state and no store range is needed.
//
// Only unpaged lists qualify: a paged list must be readable at the exact
// revision of its first chunk (spec 000 §4.5), which the cache does not keep.

import { type GenericStore, TOO_LARGE_RV_WAIT_MS, servedObject } from '../registry/generic-store.js';
import type { ListResult } from '../registry/list.js';
import { clone } from '../machinery/meta.js';
import { apiVersionOf } from '../registry/registry.js';
import { type FieldSelector, compileFieldSelector } from '../machinery/selectors/fields.js';
import { type LabelSelector, matchesLabels } from '../machinery/selectors/labels.js';
import { throwAsStatus } from '../registry/status-table.js';
import type { ApiObject } from '../registry/types.js';
import { withTypeMeta } from './encode.js';
import type { WatchService } from './service.js';

export interface CachedListParams {
  /** '' = all namespaces */
  namespace: string;
  labelSelector: LabelSelector;
  fieldSelector: FieldSelector;
}

/**
 * A consistent list from the watch cache, or undefined when the cache did
 * not catch up with the ReadIndex in time (the caller then reads the store).
 * Items are deep copies: callers may change them freely.
 */
export async function listMostRecentFromCache(
  watches: WatchService,
  gs: GenericStore,
  p: CachedListParams,
  waitMs = TOO_LARGE_RV_WAIT_MS,
): Promise<ListResult | undefined> {
  // objects a conversion webhook converts are listed from the store, one review per range (src/registry/list.ts)
  if (gs.convertsByWebhook) return undefined;
  let matchField: ((o: ApiObject) => boolean) | undefined;
  try {
    matchField = p.fieldSelector.length > 0 ? compileFieldSelector(gs.def, p.fieldSelector) : undefined;
  } catch (e) {
    throwAsStatus(e);
  }
  const index = await gs.store.readIndex();
  if (!(await watches.waitForRevision(index, waitMs))) return undefined;
  // synchronous from here: the snapshot and its revision belong together
  const cache = watches.cacheFor(gs.def);
  const revision = watches.cacheRevision;
  const namespace = gs.def.scope === 'Namespaced' ? p.namespace : '';
  const apiVersion = apiVersionOf(gs.def);
  const items: ApiObject[] = [];
  for (const cached of cache.snapshot(namespace)) {
    // the cache holds stored objects; a version served over another's storage sees them converted (src/registry/conversion.ts)
    const object = servedObject(gs.def, cached.object);
    if (p.labelSelector.length > 0 && !matchesLabels(p.labelSelector, object.metadata?.labels)) continue;
    if (matchField && !matchField(object)) continue;
    items.push(clone(withTypeMeta(object, apiVersion, gs.def.kind)));
  }
  return { items, resourceVersion: String(revision) };
}
