// The Endpoints and EndpointSlice controllers' part of the workload wiring
// (workloads-setup.ts), by kube's `--controllers` names `endpoint`,
// `endpointslice` and `endpointslicemirroring`, all on by default, each on when its kinds are served.
// docs/controllers.md "Endpoints and EndpointSlices".

import type { GenericStore } from '../registry/generic-store.js';
import type { ResourceDefinition } from '../registry/types.js';
import type { Controller } from '../controllers/leader-gate.js';
import { ENDPOINT_CONTROLLER, EndpointsController } from '../controllers/endpoints/endpoints-controller.js';
import { ENDPOINTSLICE_CONTROLLER, EndpointSliceController } from '../controllers/endpoints/endpointslice-controller.js';
import { ENDPOINTSLICE_MIRRORING_CONTROLLER, EndpointSliceMirroringController } from '../controllers/endpoints/endpointslice-mirroring.js';
import { controllerEnabled } from './controllers-flag.js';
import type { Common, Lookup } from './sets-setup.js';

export function startEndpoints(d: Lookup, common: Common, of: (def: ResourceDefinition) => () => GenericStore, add: (name: string, c: Controller) => void): void {
  const services = d.registry.lookup('', 'v1', 'services');
  if (!services) return;
  const base = { store: common.store, clock: common.clock, log: common.log, services: of(services), pods: common.pods };
  const endpoints = d.registry.lookup('', 'v1', 'endpoints');
  if (endpoints && controllerEnabled(d.controllers, ENDPOINT_CONTROLLER, true)) {
    add('endpoint controller', new EndpointsController({ ...base, events: common.events?.forComponent('endpoint-controller'), endpoints: of(endpoints) }));
  }
  const group = `discovery.${d.apiDomain ?? 'k8s.io'}`;
  const slices = d.registry.lookup(group, 'v1', 'endpointslices');
  const nodes = d.registry.lookup('', 'v1', 'nodes');
  if (slices && controllerEnabled(d.controllers, ENDPOINTSLICE_CONTROLLER, true)) {
    add('endpointslice controller', new EndpointSliceController({
      ...base,
      events: common.events?.forComponent('endpoint-slice-controller'),
      slices: of(slices),
      sliceApiVersion: `${group}/v1`,
      ...(nodes ? { nodes: of(nodes) } : {}),
    }));
  }
  if (slices && endpoints && controllerEnabled(d.controllers, ENDPOINTSLICE_MIRRORING_CONTROLLER, true)) {
    add('endpointslicemirroring controller', new EndpointSliceMirroringController({
      store: common.store, clock: common.clock, log: common.log, services: of(services), endpoints: of(endpoints), slices: of(slices), sliceApiVersion: `${group}/v1`,
    }));
  }
}
