// Wiring of CustomResourceDefinitions (issue #16, docs/crds.md): the CRD kind,
// the registrar that serves CRD kinds on every member from the store's applied
// feed, and the leader-only controller for conditions and cleanup.

import type { GenericStore } from '../registry/generic-store.js';
import { crdDefinition } from '../registry/crd/kind.js';
import type { Registry } from '../registry/registry.js';
import { SchemaNames } from '../machinery/schema/naming.js';
import type { ResourceDefinition } from '../registry/types.js';
import { CrdController } from '../controllers/crd-controller.js';
import { CrdRegistrar } from '../controllers/crd-registrar.js';
import { type LeaderGate, runWhileLeader } from '../controllers/leader-gate.js';
import type { RevisionedStore } from '../store/types.js';
import type { Clock } from '../core/clock.js';
import { newUid } from '../machinery/meta.js';
import { storeServiceResolver } from '../registry/admission/lookups.js';
import { type ServiceResolver, WebhookAgents } from '../registry/admission/webhook-client.js';
import { webhookConverter } from '../registry/crd/conversion-webhook.js';
import type { CrdSpec } from '../registry/crd/convert.js';

export interface CrdSetup {
  registrar: CrdRegistrar;
  crdDef: ResourceDefinition;
  /** starts the leader-only controller (needs the server's storeFor) */
  startController(storeFor: (def: ResourceDefinition) => GenericStore): LeaderGate;
}

export function startCrds(o: {
  store: RevisionedStore;
  registry: Registry;
  apiDomain: string;
  log: (msg: string) => void;
  clock: Clock;
  /** where Service references of conversion webhooks lead (the admission webhooks' resolver) */
  resolver?: ServiceResolver;
}): CrdSetup {
  // groups of the built-in kinds (and of kinds other parts of the server add) are not for CRDs
  const reservedGroups = (): ReadonlySet<string> => new Set(o.registry.all().filter((d) => !d.customResource).map((d) => d.group));
  const crdDef = crdDefinition(new SchemaNames(o.apiDomain), { reservedGroups });
  o.registry.add(crdDef);
  // conversion webhooks call out through the admission webhooks' client (URL or Service, caBundle, keep-alive)
  const agents = new WebhookAgents();
  const env = { resolver: o.resolver ?? storeServiceResolver(o.store, o.registry), agents, clock: o.clock, uid: newUid };
  const conversion = { converterFor: (spec: CrdSpec) => webhookConverter(spec.conversion, spec.names.kind, env, spec.names.listKind), close: () => agents.close() };
  const registrar = new CrdRegistrar(o.store, o.registry, o.apiDomain, o.log, conversion);
  registrar.start();
  return {
    registrar,
    crdDef,
    startController: (storeFor) =>
      runWhileLeader(
        o.store,
        new CrdController({ store: o.store, registrar, crds: () => storeFor(crdDef), storeFor, apiDomain: o.apiDomain, log: o.log }),
        { name: 'crd controller', log: o.log },
      ),
  };
}
