import type { GenericStore } from '../generic-store.js';
import type { ContinueTokens } from '../list.js';
import type { Registry } from '../registry.js';
import type { ResourceDefinition } from '../types.js';

/** What every verb handler may use; built once by the server. */
export interface HandlerContext {
  registry: Registry;
  storeFor(def: ResourceDefinition): GenericStore;
  tokens: ContinueTokens;
}
