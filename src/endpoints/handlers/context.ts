import type { NodeTransport } from './node-transport.js';
import type { GenericStore } from '../../registry/generic-store.js';
import type { ContinueTokens, ListResult } from '../../registry/list.js';
import type { Registry } from '../../registry/registry.js';
import type { ApiObject, ResourceDefinition } from '../../registry/types.js';
import type { FieldSelector } from '../../machinery/selectors/fields.js';
import type { LabelSelector } from '../../machinery/selectors/labels.js';
import type { Authorizer } from '../../auth/authz/types.js';
import type { UserInfo } from '../../auth/types.js';
import type { Clock } from '../../core/clock.js';
import type { SubresourceCreateAdmission } from '../../registry/admission/types.js';

/** What every verb handler may use; built once by the server. */
export interface HandlerContext {
  registry: Registry;
  storeFor(def: ResourceDefinition): GenericStore;
  tokens: ContinueTokens;
  /** the composition root's clock (src/core/clock.ts): table ages, apply timestamps, stream polls */
  clock: Clock;
  /**
   * Serves an unpaged "Most Recent" list from the watch caches once they have
   * caught up to the store's ReadIndex (spec 000 §4.6); undefined = read the
   * store. The watch layer provides it (the registry does not import upward).
   */
  listFromCache?: (
    gs: GenericStore,
    p: { namespace: string; labelSelector: LabelSelector; fieldSelector: FieldSelector },
  ) => Promise<ListResult | undefined>;
  /** feature gates of the server (spec 000 §3.3); absent = every gate at its default */
  featureGates?: { enabled(name: string): boolean };
  /**
   * CONNECT admission of node-agent sub-resources (exec, attach, portforward,
   * proxy; src/registry/admission/chain.ts): throws a StatusError to refuse,
   * returns warnings. Absent = no admission.
   */
  admitConnect?: (a: {
    def: ResourceDefinition;
    subresource: string;
    namespace: string;
    name: string;
    options: ApiObject;
    user: UserInfo;
  }) => Promise<string[]>;
  /**
   * CREATE admission of a sub-resource body of its own kind (pods/eviction's
   * Eviction; src/registry/admission/chain.ts): throws a StatusError to
   * refuse, returns the admitted object. Absent = no admission.
   */
  admitSubresourceCreate?: (a: SubresourceCreateAdmission) => Promise<ApiObject>;
  /** for checks beyond the request's own verb (the unsafe-delete verb of spec 000 §4.10); absent = allowed */
  authorizer?: Authorizer;
  /** the way to node agents for pods/log, exec, attach, portforward and nodes/proxy; absent = those answer 503 */
  nodeTransport?: NodeTransport;
}

// VerbHandler's context is this interface (see VerbHandlerTypes in ../types.ts)
declare module '../../registry/types.js' {
  interface VerbHandlerTypes {
    ctx: HandlerContext;
  }
}
