// The RBAC controllers of a server (spec 001 §5.14), leader only: the default
// roles and bindings (cluster-wide and in the system and public namespaces)
// reconciled at start, and ClusterRole aggregation.

import type { GenericStore } from '../registry/generic-store.js';
import type { Registry } from '../registry/registry.js';
import type { ResourceDefinition } from '../registry/types.js';
import { bootstrapNames, defaultPolicy } from '../auth/authz/rbac/bootstrap-policy.js';
import { ClusterRoleAggregationController } from '../controllers/clusterrole-aggregation.js';
import { runWhileLeader } from '../controllers/leader-gate.js';
import { RbacDefaultsController } from '../controllers/rbac-defaults.js';
import type { RevisionedStore } from '../store/types.js';
import type { LeaderOnlyController } from './readiness.js';

export interface RbacControllers {
  /** resolves when this member, if it leads now, has reconciled the defaults */
  settled(): Promise<void>;
  /** readiness: undefined when done (or not leading), else the reason (poststarthook/rbac/bootstrap-roles) */
  ready(): string | undefined;
  /** the leader-only controllers, for the informer-sync readiness check */
  controllers(): LeaderOnlyController[];
  stop(): void;
}

export function startRbacControllers(
  store: RevisionedStore,
  registry: Registry,
  storeFor: (def: ResourceDefinition) => GenericStore,
  apiDomain: string,
  log: (msg: string) => void,
): RbacControllers {
  const group = `rbac.authorization.${apiDomain}`;
  const crDef = registry.lookup(group, 'v1', 'clusterroles')!;
  const crbDef = registry.lookup(group, 'v1', 'clusterrolebindings')!;
  const roleDef = registry.lookup(group, 'v1', 'roles')!;
  const rbDef = registry.lookup(group, 'v1', 'rolebindings')!;
  const defaults = new RbacDefaultsController({
    store,
    policy: defaultPolicy(apiDomain),
    autoupdateAnnotation: bootstrapNames(apiDomain).autoupdate,
    clusterRoles: () => storeFor(crDef),
    clusterRoleBindings: () => storeFor(crbDef),
    roles: () => storeFor(roleDef),
    roleBindings: () => storeFor(rbDef),
    log,
  });
  const defaultsGate = runWhileLeader(store, defaults, { name: 'rbac defaults', log });
  const aggregation = runWhileLeader(store, new ClusterRoleAggregationController(store, () => storeFor(crDef), log), { name: 'clusterrole aggregation', log });
  return {
    settled: () => (defaultsGate.running ? defaults.settled() : Promise.resolve()),
    ready: () => (!defaultsGate.running || defaults.done ? undefined : 'not finished'),
    controllers: () => [
      { name: 'rbac defaults', running: defaultsGate.running, synced: () => defaultsGate.synced() },
      { name: 'clusterrole aggregation', running: aggregation.running, synced: () => aggregation.synced() },
    ],
    stop() {
      defaultsGate.stop();
      aggregation.stop();
    },
  };
}
