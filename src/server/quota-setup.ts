// Wires the resource quota controller (src/controllers/quota/, kube's
// `resourcequota`) to the store behind the leader gate; `--controllers`
// names it as kube-controller-manager does (on by default).

import { type LeaderGate, runWhileLeader } from '../controllers/leader-gate.js';
import { RESOURCE_QUOTA_CONTROLLER, ResourceQuotaController } from '../controllers/quota/controller.js';
import type { GenericStore } from '../registry/generic-store.js';
import { controllerEnabled } from './controllers-flag.js';
import type { LeaderControllerDeps } from './disruption-setup.js';

export function startResourceQuota(d: LeaderControllerDeps): { gate?: LeaderGate; controller?: ResourceQuotaController } {
  if (!controllerEnabled(d.controllers, RESOURCE_QUOTA_CONTROLLER, true)) return {};
  const core = (resource: string): (() => GenericStore) | undefined => {
    const def = d.registry.lookup('', 'v1', resource);
    return def ? () => d.storeFor(def) : undefined;
  };
  const stores = {
    resourceQuotas: core('resourcequotas'),
    pods: core('pods'),
    services: core('services'),
    configMaps: core('configmaps'),
    secrets: core('secrets'),
    persistentVolumeClaims: core('persistentvolumeclaims'),
    replicationControllers: core('replicationcontrollers'),
  };
  const { resourceQuotas, pods, services, configMaps, secrets, persistentVolumeClaims, replicationControllers } = stores;
  if (!resourceQuotas || !pods || !services || !configMaps || !secrets || !persistentVolumeClaims || !replicationControllers) return {};
  const controller = new ResourceQuotaController({
    store: d.store,
    resourceQuotas,
    pods,
    services,
    configMaps,
    secrets,
    persistentVolumeClaims,
    replicationControllers,
    clock: d.clock,
    log: d.log,
  });
  return { controller, gate: runWhileLeader(d.store, controller, { name: 'resourcequota controller', log: d.log }) };
}
