// What a create of the generic store sets whatever the request said: the
// kind's defaults, the identity and timestamps the server assigns, the first
// generation, an empty status (kube's PrepareForCreate strategies), then the
// kind's own preparation.

import type { UserInfo } from '../auth/types.js';
import { metaOf, newUid, nowTimestamp } from '../machinery/meta.js';
import type { ApiObject, ResourceDefinition } from './types.js';

/** `now`: the store's clock (ms); `user`: who creates (absent for the server's own writes) */
export function prepareCreate(def: ResourceDefinition, obj: ApiObject, now: number, user?: UserInfo): void {
  const meta = metaOf(obj);
  def.strategy.default?.(obj);
  meta.uid = newUid();
  meta.creationTimestamp = nowTimestamp(now);
  delete meta.deletionTimestamp;
  delete meta.deletionGracePeriodSeconds;
  delete meta.resourceVersion;
  if (def.strategy.tracksGeneration) meta.generation = 1;
  if (def.subresources?.includes('status') && !def.strategy.keepsStatusOnCreate) delete obj.status;
  def.strategy.prepareForCreate?.(obj, user);
}
