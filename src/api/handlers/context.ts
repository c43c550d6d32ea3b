import type { GenericStore } from '../generic-store.js';
import type { ContinueTokens } from '../list.js';
import type { Registry } from '../registry.js';
import type { ResourceDefinition } from '../types.js';
import type { WatchService } from '../../watch/service.js';
import type { Authorizer } from '../../auth/authz/types.js';

/** What every verb handler may use; built once by the server. */
export interface HandlerContext {
  registry: Registry;
  storeFor(def: ResourceDefinition): GenericStore;
  tokens: ContinueTokens;
  /**
   * The watch caches: unpaged "Most Recent" lists are served from them once
   * they have caught up to the store's ReadIndex (spec 000 §4.6). Absent =
   * every list reads the store.
   */
  watch?: WatchService;
  /** feature gates of the server (spec 000 §3.3); absent = every gate at its default */
  featureGates?: { enabled(name: string): boolean };
  /** for checks beyond the request's own verb (the unsafe-delete verb of spec 000 §4.10); absent = allowed */
  authorizer?: Authorizer;
}
