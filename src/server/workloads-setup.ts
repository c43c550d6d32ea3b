// Wires the workload controllers and the scheduler (src/controllers/workloads/,
// src/controllers/scheduler/) to the store behind leader gates; `--controllers`
// names them as kube-controller-manager does (`deployment`, `replicaset`,
// `replicationcontroller`, `daemonset`, `statefulset`, all on by default) plus `scheduler` for the
// in-process scheduler (on by default; `-scheduler` leaves pods to an
// external one, docs/controllers.md), and the batch controllers
// (src/controllers/batch/: `job`, `cronjob`, `ttl-after-finished`, on by
// default as in kube), the HorizontalPodAutoscaler controller
// (`horizontalpodautoscaling`, src/controllers/autoscaling/), the persistent volume controllers (volume-setup.ts),
// and the Endpoints and EndpointSlice controllers (endpoints-setup.ts).

import { nodeTaintKeys } from '../machinery/node-taints.js';
import type { GenericStore } from '../registry/generic-store.js';
import type { ResourceDefinition } from '../registry/types.js';
import { type Controller, type LeaderGate, runWhileLeader } from '../controllers/leader-gate.js';
import { SCHEDULER_CONTROLLER, Scheduler } from '../controllers/scheduler/scheduler.js';
import { REPLICASET_CONTROLLER, REPLICATIONCONTROLLER_CONTROLLER, REPLICATION_CONTROLLER, REPLICA_SET, ReplicaSetController } from '../controllers/workloads/replicaset.js';
import { DEPLOYMENT_CONTROLLER, DeploymentController } from '../controllers/workloads/deployment.js';
import { JOB_CONTROLLER, JobController } from '../controllers/batch/job.js';
import { CRONJOB_CONTROLLER, CronJobController } from '../controllers/batch/cronjob.js';
import { TTL_AFTER_FINISHED_CONTROLLER, TtlAfterFinishedController } from '../controllers/batch/ttl-after-finished.js';
import type { Random } from '../core/random.js';
import { HPA_CONTROLLER, HpaController, type ScaleTarget } from '../controllers/autoscaling/hpa.js';
import type { EventRecorder } from '../controllers/event-recorder.js';
import type { ResourceMetricsClient } from '../controllers/metrics/resource-client.js';
import { startSets } from './sets-setup.js';
import { startVolumes } from './volume-setup.js';
import { startEndpoints } from './endpoints-setup.js';
import { controllerEnabled } from './controllers-flag.js';
import type { LeaderControllerDeps } from './disruption-setup.js';

export interface WorkloadGate {
  name: string;
  gate: LeaderGate;
}

export interface WorkloadDeps extends LeaderControllerDeps {
  random?: Random;
  apiDomain?: string;
  /** the HorizontalPodAutoscaler controller's pod metrics (metrics-setup.ts); absent: it reports kube's "no metrics API" failures */
  resourceMetrics?: ResourceMetricsClient;
  /** `--horizontal-pod-autoscaler-sync-period`, `--horizontal-pod-autoscaler-downscale-stabilization` (ms) */
  hpa?: { syncPeriodMs?: number; downscaleStabilizationMs?: number };
}

export function startWorkloads(d: WorkloadDeps): WorkloadGate[] {
  const pods = d.registry.lookup('', 'v1', 'pods');
  if (!pods) return [];
  const of = (def: ResourceDefinition) => (): GenericStore => d.storeFor(def);
  const out: WorkloadGate[] = [];
  const add = (name: string, controller: Controller): void => {
    out.push({ name, gate: runWhileLeader(d.store, controller, { name, log: d.log }) });
  };
  const common = { store: d.store, pods: of(pods), clock: d.clock, events: d.events, log: d.log };
  // each controller records under kube's component name (event-recorder.ts forComponent)
  const as = (component: string): { events?: EventRecorder } => (d.events ? { events: d.events.forComponent(component) } : {});
  const nodes = d.registry.lookup('', 'v1', 'nodes');
  if (nodes && controllerEnabled(d.controllers, SCHEDULER_CONTROLLER, true)) {
    // preemption respects PodDisruptionBudgets (kube's DefaultPreemption reads them through its informer)
    const pdbs = d.registry.lookup('policy', 'v1', 'poddisruptionbudgets');
    add('scheduler', new Scheduler({
      ...common, ...as('default-scheduler'), podsDef: pods, nodes: of(nodes), random: d.random, taintKeys: nodeTaintKeys(d.apiDomain ?? 'orch.io'), ...(pdbs ? { budgets: of(pdbs) } : {}),
    }));
  }
  const rs = d.registry.lookup('apps', 'v1', 'replicasets');
  if (rs && controllerEnabled(d.controllers, REPLICASET_CONTROLLER, true)) {
    add('replicaset controller', new ReplicaSetController({ ...common, ...as('replicaset-controller'), kind: REPLICA_SET, sets: of(rs) }));
  }
  const rc = d.registry.lookup('', 'v1', 'replicationcontrollers');
  if (rc && controllerEnabled(d.controllers, REPLICATIONCONTROLLER_CONTROLLER, true)) {
    add('replicationcontroller controller', new ReplicaSetController({ ...common, ...as('replication-controller'), kind: REPLICATION_CONTROLLER, sets: of(rc) }));
  }
  const deployments = d.registry.lookup('apps', 'v1', 'deployments');
  if (deployments && rs && controllerEnabled(d.controllers, DEPLOYMENT_CONTROLLER, true)) {
    add('deployment controller', new DeploymentController({ ...common, ...as('deployment-controller'), deployments: of(deployments), replicaSets: of(rs) }));
  }
  startSets(d, common, of, add);
  startVolumes(d, common, of, add);
  startEndpoints(d, common, of, add);
  const jobs = d.registry.lookup('batch', 'v1', 'jobs');
  if (jobs && controllerEnabled(d.controllers, JOB_CONTROLLER, true)) {
    add('job controller', new JobController({ ...common, ...as('job-controller'), jobs: of(jobs) }));
  }
  const cronJobs = d.registry.lookup('batch', 'v1', 'cronjobs');
  if (jobs && cronJobs && controllerEnabled(d.controllers, CRONJOB_CONTROLLER, true)) {
    add('cronjob controller', new CronJobController({ store: d.store, cronJobs: of(cronJobs), jobs: of(jobs), clock: d.clock, ...as('cronjob-controller'), log: d.log }));
  }
  // kube-controller-manager's `horizontalpodautoscaling` (on by default); it scales any kind with a scale sub-resource
  const hpas = d.registry.lookup('autoscaling', 'v2', 'horizontalpodautoscalers');
  if (hpas && controllerEnabled(d.controllers, HPA_CONTROLLER, true)) {
    const scaleTarget = (group: string, kind: string): ScaleTarget | undefined => {
      const def = d.registry.all().find((x) => x.group === group && x.kind === kind && x.scale !== undefined);
      return def ? { def, store: d.storeFor(def) } : undefined;
    };
    // pod CPU and memory come from this server's scraper (metrics-setup.ts), as kube's from metrics-server
    add('horizontal pod autoscaler', new HpaController({
      store: d.store, hpas: of(hpas), pods: of(pods), scaleTarget, resourceMetrics: d.resourceMetrics, clock: d.clock, ...as('horizontal-pod-autoscaler'), log: d.log,
      syncPeriodMs: d.hpa?.syncPeriodMs, downscaleStabilizationMs: d.hpa?.downscaleStabilizationMs,
    }));
  }
  if (jobs && controllerEnabled(d.controllers, TTL_AFTER_FINISHED_CONTROLLER, true)) {
    add('ttl-after-finished controller', new TtlAfterFinishedController({ store: d.store, jobs: of(jobs), clock: d.clock, log: d.log }));
  }
  return out;
}
