// The DaemonSet and StatefulSet controllers' part of the workload wiring
// (workloads-setup.ts): each runs when its kinds are served and
// `--controllers` leaves it on (kube's names `daemonset`, `statefulset`).

import { nodeTaintKeys } from '../machinery/node-taints.js';
import type { Clock } from '../core/clock.js';
import type { GenericStore } from '../registry/generic-store.js';
import type { ResourceDefinition } from '../registry/types.js';
import type { EventRecorder } from '../controllers/event-recorder.js';
import type { Controller } from '../controllers/leader-gate.js';
import type { InformerSource } from '../controllers/runtime/index.js';
import { controllerEnabled } from './controllers-flag.js';
import { DAEMONSET_CONTROLLER, DaemonSetController } from '../controllers/sets/daemonset.js';
import { STATEFULSET_CONTROLLER, StatefulSetController } from '../controllers/sets/statefulset.js';

/** what the workload wiring's parts read from the composition root (sets here, volumes in volume-setup.ts) */
export interface Lookup {
  registry: { lookup(group: string, version: string, resource: string): ResourceDefinition | undefined };
  controllers?: readonly string[];
  apiDomain?: string;
}

/** the options every workload controller shares */
export interface Common {
  store: InformerSource;
  pods: () => GenericStore;
  clock?: Clock;
  events?: EventRecorder;
  log?: (msg: string) => void;
}

export function startSets(d: Lookup, common: Common, of: (def: ResourceDefinition) => () => GenericStore, add: (name: string, c: Controller) => void): void {
  const revisions = d.registry.lookup('apps', 'v1', 'controllerrevisions');
  if (!revisions) return;
  const nodes = d.registry.lookup('', 'v1', 'nodes');
  const ds = d.registry.lookup('apps', 'v1', 'daemonsets');
  if (ds && nodes && controllerEnabled(d.controllers, DAEMONSET_CONTROLLER, true)) {
    add('daemonset controller', new DaemonSetController({ ...common, events: common.events?.forComponent('daemonset-controller'), daemonSets: of(ds), revisions: of(revisions), nodes: of(nodes), taintKeys: nodeTaintKeys(d.apiDomain ?? 'orch.io') }));
  }
  const sts = d.registry.lookup('apps', 'v1', 'statefulsets');
  const pvcs = d.registry.lookup('', 'v1', 'persistentvolumeclaims');
  if (sts && pvcs && controllerEnabled(d.controllers, STATEFULSET_CONTROLLER, true)) {
    add('statefulset controller', new StatefulSetController({ ...common, events: common.events?.forComponent('statefulset-controller'), statefulSets: of(sts), revisions: of(revisions), claims: of(pvcs) }));
  }
}
