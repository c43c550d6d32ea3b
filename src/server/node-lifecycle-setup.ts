// Wires the node lifecycle controller and the taint eviction controller
// (src/controllers/node-lifecycle/, issue 13) to the store, each behind the
// leader gate. `--controllers` names them as kube-controller-manager does:
// `nodelifecycle` and `taint-eviction-controller`, both on by default.

import type { GenericStore } from '../registry/generic-store.js';
import type { Registry } from '../registry/registry.js';
import type { ResourceDefinition } from '../registry/types.js';
import type { EventRecorder } from '../controllers/event-recorder.js';
import { type LeaderGate, runWhileLeader } from '../controllers/leader-gate.js';
import { NodeLifecycleController } from '../controllers/node-lifecycle/controller.js';
import { TaintEvictionController } from '../controllers/node-lifecycle/eviction.js';
import type { ZoneRules } from '../controllers/node-lifecycle/zones.js';
import type { Clock } from '../core/clock.js';
import type { RevisionedStore } from '../store/types.js';
import { controllerEnabled } from './controllers-flag.js';
import { performance } from 'node:perf_hooks';

export const NODE_LIFECYCLE_CONTROLLER = 'nodelifecycle';
export const TAINT_EVICTION_CONTROLLER = 'taint-eviction-controller';

export interface NodeLifecycleSettings {
  /** `--node-monitor-grace-period` (default 50 s) */
  monitorGracePeriodMs?: number;
  /** `--node-monitor-period` (default 5 s): zone states and held-back taints */
  monitorPeriodMs?: number;
  /** `--node-eviction-rate` etc. (zones.ts) */
  zoneRules?: Partial<ZoneRules>;
  clock?: Clock;
  /** tests: replaces the event-loop probe (whether the process was saturated since the last call) */
  saturated?: () => boolean;
}

/**
 * Whether this process's event loop was busy for at least `threshold` of the
 * time since the last call (Node's event-loop utilization): a member that
 * saturated reads renewals late, so the node lifecycle controller does not
 * count that time as the nodes' silence (docs/nodeagent.md "Control plane
 * behind"). 0.9: an ordinary loaded member stays below it; one whose request
 * backlog grows does not.
 */
export function eventLoopSaturation(threshold = 0.9): () => boolean {
  let last = performance.eventLoopUtilization();
  return () => {
    const now = performance.eventLoopUtilization();
    const busy = performance.eventLoopUtilization(now, last).utilization;
    last = now;
    return busy >= threshold;
  };
}

export function startNodeLifecycle(d: {
  store: RevisionedStore;
  registry: Registry;
  storeFor: (def: ResourceDefinition) => GenericStore;
  apiDomain: string;
  events?: EventRecorder;
  log: (msg: string) => void;
  controllers?: readonly string[];
  settings: NodeLifecycleSettings;
}): { stop(): void; lifecycle?: NodeLifecycleController; eviction?: TaintEvictionController } {
  const gates: LeaderGate[] = [];
  const nodesDef = d.registry.lookup('', 'v1', 'nodes');
  const podsDef = d.registry.lookup('', 'v1', 'pods');
  const leaseDef = d.registry.lookup(`coordination.${d.apiDomain}`, 'v1', 'leases');
  let lifecycle: NodeLifecycleController | undefined;
  let eviction: TaintEvictionController | undefined;
  if (nodesDef && controllerEnabled(d.controllers, NODE_LIFECYCLE_CONTROLLER, true)) {
    lifecycle = new NodeLifecycleController({
      store: d.store,
      nodes: () => d.storeFor(nodesDef),
      leases: () => (leaseDef ? d.storeFor(leaseDef) : undefined),
      apiDomain: d.apiDomain,
      clock: d.settings.clock,
      monitorGracePeriodMs: d.settings.monitorGracePeriodMs,
      monitorPeriodMs: d.settings.monitorPeriodMs,
      zoneRules: d.settings.zoneRules,
      saturated: d.settings.saturated ?? eventLoopSaturation(),
      events: d.events?.forComponent('node-controller'),
      log: d.log,
    });
    gates.push(runWhileLeader(d.store, lifecycle, { name: 'node lifecycle controller', log: d.log }));
  }
  if (nodesDef && podsDef && controllerEnabled(d.controllers, TAINT_EVICTION_CONTROLLER, true)) {
    eviction = new TaintEvictionController({ store: d.store, nodes: () => d.storeFor(nodesDef), pods: () => d.storeFor(podsDef), clock: d.settings.clock, events: d.events?.forComponent('taint-eviction-controller'), log: d.log });
    gates.push(runWhileLeader(d.store, eviction, { name: 'taint eviction controller', log: d.log }));
  }
  return {
    lifecycle,
    eviction,
    stop() {
      for (const g of gates) g.stop();
    },
  };
}
