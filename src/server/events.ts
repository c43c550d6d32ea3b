// The server's event recorder (src/controllers/event-recorder.ts) writing
// core v1 Events through the generic store (docs/events.md).

import { StatusError } from '../core/errors.js';
import type { GenericStore } from '../registry/generic-store.js';
import type { Registry } from '../registry/registry.js';
import type { ApiObject, ResourceDefinition } from '../registry/types.js';
import type { Clock } from '../core/clock.js';
import { EventRecorder } from '../controllers/event-recorder.js';

export function serverEventRecorder(
  registry: Registry,
  storeFor: (def: ResourceDefinition) => GenericStore,
  host: string,
  log: (msg: string) => void,
  clock?: Clock,
): EventRecorder | undefined {
  const def = registry.lookup('', 'v1', 'events');
  if (!def) return undefined;
  const gs = () => storeFor(def);
  return new EventRecorder(
    {
      async create(namespace, event) {
        const r = await gs().create(namespace, event as ApiObject, { dryRun: false, manager: 'orch-server' });
        return r.object.metadata?.name ?? '';
      },
      async update(namespace, name, patch) {
        try {
          await gs().guaranteedUpdate(namespace, name, { dryRun: false, manager: 'orch-server' }, (cur) => ({ ...cur!, ...patch }));
          return true;
        } catch (e) {
          if (e instanceof StatusError && e.code === 404) return false;
          throw e;
        }
      },
    },
    { component: 'orch-server', host, log, clock },
  );
}
