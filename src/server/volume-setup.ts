// The persistent volume controllers' part of the workload wiring
// (workloads-setup.ts), each on when PersistentVolumes and claims are served
// and `--controllers` leaves it on, by kube's names: `persistentvolume-binder`
// (binding, phases, reclaim), `pvc-protection` and `pv-protection` (the
// in-use protection finalizers). docs/controllers.md "Persistent volumes".

import type { GenericStore } from '../registry/generic-store.js';
import type { ResourceDefinition } from '../registry/types.js';
import type { Controller } from '../controllers/leader-gate.js';
import { PERSISTENTVOLUME_BINDER_CONTROLLER, PersistentVolumeController } from '../controllers/volume/pv-controller.js';
import { PVC_PROTECTION_CONTROLLER, PV_PROTECTION_CONTROLLER, PvProtectionController, PvcProtectionController } from '../controllers/volume/protection.js';
import { controllerEnabled } from './controllers-flag.js';
import type { Common, Lookup } from './sets-setup.js';

export function startVolumes(d: Lookup, common: Common, of: (def: ResourceDefinition) => () => GenericStore, add: (name: string, c: Controller) => void): void {
  const pvs = d.registry.lookup('', 'v1', 'persistentvolumes');
  const pvcs = d.registry.lookup('', 'v1', 'persistentvolumeclaims');
  if (!pvs || !pvcs) return;
  const classes = d.registry.lookup(`storage.${d.apiDomain ?? 'k8s.io'}`, 'v1', 'storageclasses');
  if (controllerEnabled(d.controllers, PERSISTENTVOLUME_BINDER_CONTROLLER, true)) {
    add('persistentvolume-binder controller', new PersistentVolumeController({ ...common, events: common.events?.forComponent('persistentvolume-controller'), volumes: of(pvs), claims: of(pvcs), ...(classes ? { classes: of(classes) } : {}) }));
  }
  if (controllerEnabled(d.controllers, PVC_PROTECTION_CONTROLLER, true)) {
    add('pvc-protection controller', new PvcProtectionController({ store: common.store, clock: common.clock, log: common.log, claims: of(pvcs), pods: common.pods }));
  }
  if (controllerEnabled(d.controllers, PV_PROTECTION_CONTROLLER, true)) {
    add('pv-protection controller', new PvProtectionController({ store: common.store, clock: common.clock, log: common.log, volumes: of(pvs) }));
  }
}
