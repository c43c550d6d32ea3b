// Wires the disruption controller (src/controllers/disruption/, kube's
// `disruption`) to the store behind the leader gate; `--controllers` names
// it as kube-controller-manager does (on by default).

import type { GenericStore } from '../registry/generic-store.js';
import type { Registry } from '../registry/registry.js';
import type { ResourceDefinition } from '../registry/types.js';
import type { EventRecorder } from '../controllers/event-recorder.js';
import { type LeaderGate, runWhileLeader } from '../controllers/leader-gate.js';
import { DISRUPTION_CONTROLLER, DisruptionController } from '../controllers/disruption/controller.js';
import type { Clock } from '../core/clock.js';
import type { RevisionedStore } from '../store/types.js';
import { controllerEnabled } from './controllers-flag.js';

/** what a leader-only controller's setup takes from the composition root */
export interface LeaderControllerDeps {
  store: RevisionedStore;
  registry: Registry;
  storeFor: (def: ResourceDefinition) => GenericStore;
  events?: EventRecorder;
  log: (msg: string) => void;
  /** `--controllers` */
  controllers?: readonly string[];
  clock?: Clock;
}

export function startDisruption(d: LeaderControllerDeps): { gate?: LeaderGate; controller?: DisruptionController } {
  const pdbs = d.registry.lookup('policy', 'v1', 'poddisruptionbudgets');
  const pods = d.registry.lookup('', 'v1', 'pods');
  if (!pdbs || !pods || !controllerEnabled(d.controllers, DISRUPTION_CONTROLLER, true)) return {};
  const storeOf = (group: string, resource: string): (() => GenericStore) | undefined => {
    const def = d.registry.lookup(group, 'v1', resource);
    return def ? () => d.storeFor(def) : undefined;
  };
  const controller = new DisruptionController({
    store: d.store,
    pdbs: () => d.storeFor(pdbs),
    pods: () => d.storeFor(pods),
    deployments: storeOf('apps', 'deployments'),
    replicaSets: storeOf('apps', 'replicasets'),
    statefulSets: storeOf('apps', 'statefulsets'),
    replicationControllers: storeOf('', 'replicationcontrollers'),
    clock: d.clock,
    // kube's disruption controller records as the controller manager itself
    events: d.events?.forComponent('controllermanager'),
    log: d.log,
  });
  return { controller, gate: runWhileLeader(d.store, controller, { name: 'disruption controller', log: d.log }) };
}
