// A real LocalStore in a temp dir with the built-in kinds' GenericStores, for
// controller unit tests that need the registry's write path but no server.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Clock } from '../../src/core/clock.js';
import { SchemaAdmission } from '../../src/registry/admission.js';
import { GenericStore, type WriteHooks } from '../../src/registry/generic-store.js';
import { builtinDefinitions, sharedDefinitions } from '../../src/registry/kinds/index.js';
import { Registry } from '../../src/registry/registry.js';
import type { ResourceDefinition } from '../../src/registry/types.js';
import { LocalStore } from '../../src/store/local-store.js';

export interface LocalRegistry {
  store: LocalStore;
  /** the GenericStore of `resource` in `group` (`version`, default v1), one per definition */
  gs(resource: string, group?: string, version?: string): GenericStore;
  registry: Registry;
  /** closes the store and removes the temp dir */
  close(): Promise<void>;
}

/**
 * `clock`: the stores' creation and deletion timestamps (a ManualClock for controllers on simulated time);
 * `hooks`: the write hooks of every store (an admission that refuses, as a webhook or policy would)
 */
export async function openLocalRegistry(domain: string, prefix: string, clock?: Clock, hooks: WriteHooks = {}): Promise<LocalRegistry> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const store = await LocalStore.open(join(dir, 'store'));
  const defs = sharedDefinitions(domain);
  const registry = new Registry(domain, defs, builtinDefinitions(domain));
  const admission = new SchemaAdmission(defs);
  const stores = new Map<ResourceDefinition, GenericStore>();
  const gs = (resource: string, group = '', version = 'v1'): GenericStore => {
    const def = registry.lookup(group, version, resource)!;
    if (!stores.has(def)) stores.set(def, new GenericStore(def, store, admission, hooks, undefined, clock));
    return stores.get(def)!;
  };
  return {
    store,
    gs,
    registry,
    async close() {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Waits until controllers on this registry are idle: their handlers run inside
 * the store's publish, so a few turns let the workers pick up what the writes caused.
 */
export async function settleControllers(controllers: readonly { settled(): Promise<void> }[]): Promise<void> {
  for (let i = 0; i < 6; i++) {
    for (const c of controllers) await c.settled();
    await new Promise((r) => setImmediate(r));
  }
}
