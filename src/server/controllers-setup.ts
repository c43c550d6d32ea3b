// The in-process controllers (docs/controllers.md) a server runs: the ones that
// start with the registry, and the two that need the serving port (the
// `kubernetes` Service, the local APIServices); which run on the Raft leader
// only, whether their informers have synced (readiness), and their stop.

import type { Clock } from '../core/clock.js';
import type { Random } from '../core/random.js';
import { GarbageCollector } from '../controllers/garbage-collector.js';
import { type LeaderGate, runWhileLeader } from '../controllers/leader-gate.js';
import { LocalAPIServices } from '../controllers/local-apiservices.js';
import { NamespaceController } from '../controllers/namespace.js';
import { NamespaceDefaultsController } from '../controllers/namespace-defaults.js';
import { ServiceAllocationRepair } from '../controllers/service-allocation-repair.js';
import type { HealthChecks } from '../gateway/health.js';
import type { ServiceAllocator } from '../registry/allocators/service-allocator.js';
import type { GenericStore } from '../registry/generic-store.js';
import type { Registry } from '../registry/registry.js';
import type { ResourceDefinition } from '../registry/types.js';
import type { RevisionedStore } from '../store/types.js';
import { ROOT_CA_PUBLISHER, SERVICE_ACCOUNT_CONTROLLER, controllerEnabled } from './controllers-flag.js';
import type { CrdSetup } from './crd-setup.js';
import { startDisruption } from './disruption-setup.js';
import { serverEventRecorder } from './events.js';
import { type NodeLifecycleSettings, startNodeLifecycle } from './node-lifecycle-setup.js';
import { startRbacControllers } from './rbac-setup.js';
import { apfBootstrap } from '../controllers/apf-bootstrap.js';
import { startApfDangling } from '../controllers/apf-dangling.js';
import { BootstrapObjects } from '../controllers/bootstrap-objects.js';
import { systemPriorityClassObjects } from '../registry/priority-admission.js';
import { SystemNamespaces } from '../controllers/system-namespaces.js';
import { bootstrapNamespaces } from './stores-setup.js';
import type { LeaderOnlyController } from './readiness.js';
import { rootCAConfigMapName } from '../core/product-names.js';
import { startWorkloads } from './workloads-setup.js';
import { startCertificateControllers } from './certificates-setup.js';
import { startResourceQuota } from './quota-setup.js';
import type { Authorizer } from '../auth/authz/types.js';
import type { CertificateAndKey } from './pki.js';
import type { ResourceMetricsClient } from '../controllers/metrics/resource-client.js';

export interface ControllerDeps {
  store: RevisionedStore;
  registry: Registry;
  storeFor: (def: ResourceDefinition) => GenericStore;
  nsDef: ResourceDefinition;
  crds: CrdSetup;
  apiDomain: string;
  /** the cluster's name, the events' reporting instance */
  clusterName: string | undefined;
  /** `--controllers` */
  controllers: readonly string[] | undefined;
  nodeLifecycle: NodeLifecycleSettings | undefined;
  caPem: string;
  /** the cluster CA with its key: the csrsigning controller signs with it */
  ca: CertificateAndKey;
  /** the server's authorizer: the csrapproving controller's SubjectAccessReviews */
  authorizer: Authorizer;
  /** `--cluster-signing-duration` (default one year) */
  signingDurationMs?: number;
  health: HealthChecks;
  /** the post-start hooks done (`poststarthook/…` checks) */
  started: Set<string>;
  log: (msg: string) => void;
  clock: Clock;
  random: Random;
  /** the resource metrics port (metrics-setup.ts): the HorizontalPodAutoscaler controller reads pod usage through it */
  resourceMetrics?: ResourceMetricsClient;
  /** the HorizontalPodAutoscaler controller's sync period and downscale stabilization window */
  hpa?: { syncPeriodMs?: number; downscaleStabilizationMs?: number };
}

export interface Controllers {
  /** every leader-only controller: whether it runs here and has synced (src/server/readiness.ts) */
  leaderControllers(): LeaderOnlyController[];
  /** the controllers that need the serving port and address */
  startServing(serving: { serviceAllocator: ServiceAllocator; port: number; address: string }): void;
  stop(): void;
}

export async function startControllers(d: ControllerDeps): Promise<Controllers> {
  const { store, registry, storeFor, nsDef, crds, health, started, log, clock, random } = d;
  // In a cluster the controllers run on the Raft leader only (leader-gate.ts);
  // a follower's post-start hooks are done once the gate is set up, as its
  // controllers are idle by design.
  const events = serverEventRecorder(registry, storeFor, d.clusterName ?? 'orch', log, clock);
  const nsController = runWhileLeader(store, new NamespaceController(store, registry, storeFor, log, events), { name: 'namespace controller', log });
  started.add('start-namespace-controller');
  // the garbage collector (docs/deletion.md); it scans on start, so an interrupted foreground deletion resumes
  const gcController = new GarbageCollector(store, registry, storeFor, log, events, clock);
  const gc = runWhileLeader(store, gcController, { name: 'garbage collector', log });
  health.add({
    name: 'poststarthook/start-garbage-collector',
    check: () => (!gc.running || gcController.hasStarted ? undefined : 'not finished'),
  });
  started.add('start-garbage-collector');
  // a default ServiceAccount and the cluster CA in every namespace (issue #11 item 6)
  const namespaceDefaults = runWhileLeader(
    store,
    new NamespaceDefaultsController({
      store,
      namespaces: () => storeFor(nsDef),
      serviceAccounts: () => storeFor(registry.lookup('', 'v1', 'serviceaccounts')!),
      configMaps: () => storeFor(registry.lookup('', 'v1', 'configmaps')!),
      rootCAConfigMapName: rootCAConfigMapName(d.apiDomain),
      caPem: d.caPem,
      serviceAccount: controllerEnabled(d.controllers, SERVICE_ACCOUNT_CONTROLLER, true),
      rootCA: controllerEnabled(d.controllers, ROOT_CA_PUBLISHER, true),
      log,
    }),
    { name: 'namespace defaults', log },
  );
  const crdController = crds.startController(storeFor);
  // Ready=Unknown and taints for silent nodes, taint-based eviction (issue 13; docs/nodeagent.md)
  const nodeLifecycle = startNodeLifecycle({ store, registry, storeFor, apiDomain: d.apiDomain, events, log, controllers: d.controllers, settings: d.nodeLifecycle ?? {} });
  // PodDisruptionBudget status for pods/eviction (docs/controllers.md)
  const disruption = startDisruption({ store, registry, storeFor, events, log, controllers: d.controllers, clock });
  // the scheduler and the Deployment, ReplicaSet and ReplicationController controllers (docs/controllers.md)
  const workloads = startWorkloads({ store, registry, storeFor, events, log, controllers: d.controllers, clock, random, apiDomain: d.apiDomain, resourceMetrics: d.resourceMetrics, hpa: d.hpa });
  // CertificateSigningRequests signed, auto-approved for node agents, cleaned up (spec 001 §5.3/§5.4)
  // ResourceQuota status counted for the ResourceQuota admission plugin (docs/controllers.md "Resource quota")
  workloads.push(...startResourceQuota({ store, registry, storeFor, log, controllers: d.controllers, clock }));
  workloads.push(...startCertificateControllers({ store, registry, storeFor, log, controllers: d.controllers, clock, apiDomain: d.apiDomain, ca: d.ca, authorizer: d.authorizer, signingDurationMs: d.signingDurationMs }));
  // default roles and bindings (spec 001 §5.14), reconciled by the leader at every start, and aggregation;
  // a leader serves once its defaults are in place, so the first anonymous /version is not refused
  const rbacControllers = startRbacControllers(store, registry, storeFor, d.apiDomain, log);
  await rbacControllers.settled();
  health.add({ name: 'poststarthook/rbac/bootstrap-roles', check: () => rbacControllers.ready() });
  // kube's mandatory FlowSchemas and PriorityLevelConfigurations (only stored; docs/reliability.md)
  const apfGroup = `flowcontrol.apiserver.${d.apiDomain}`;
  const apfStore = (resource: string): (() => GenericStore | undefined) => () => {
    const def = registry.lookup(apfGroup, 'v1', resource);
    return def ? storeFor(def) : undefined;
  };
  const apfBootstrapPass = apfBootstrap({ apiDomain: d.apiDomain, priorityLevels: apfStore('prioritylevelconfigurations'), flowSchemas: apfStore('flowschemas'), clock, log });
  const apf = runWhileLeader(store, apfBootstrapPass, { name: 'apf bootstrap', log });
  if (apf.running) await apfBootstrapPass.settled();
  // each FlowSchema's Dangling condition, as kube-apiserver's APF configuration consumer writes it
  const apfDangling = startApfDangling({ store, flowSchemas: apfStore('flowschemas'), priorityLevels: apfStore('prioritylevelconfigurations'), clock, log });
  // kube's system-node-critical and system-cluster-critical PriorityClasses (the Priority admission plugin knows them anyway)
  const pcDef = registry.lookup(`scheduling.${d.apiDomain}`, 'v1', 'priorityclasses');
  const priorityClasses = new BootstrapObjects({
    name: 'priority class bootstrap',
    manager: 'orch-priority-bootstrap',
    objects: () => systemPriorityClassObjects(d.apiDomain).map((object) => ({ store: () => (pcDef ? storeFor(pcDef) : undefined), object })),
    clock,
    log,
  });
  const pcGate = runWhileLeader(store, priorityClasses, { name: 'priority class bootstrap', log });
  if (pcGate.running) await priorityClasses.settled();
  // a deleted node-lease namespace comes back (kube's system namespaces controller)
  const systemNamespaces = runWhileLeader(
    store,
    new SystemNamespaces({ ensure: () => bootstrapNamespaces(storeFor(nsDef), d.apiDomain), clock, log }),
    { name: 'system namespaces', log },
  );

  let serviceRepair: LeaderGate | undefined;
  let localAPIServices: LeaderGate | undefined;
  const leaderControllers = () => [
    { name: 'namespace controller', running: nsController.running, synced: () => nsController.synced() },
    { name: 'garbage collector', running: gc.running, synced: () => gc.synced() && gcController.hasStarted },
    { name: 'namespace defaults', running: namespaceDefaults.running, synced: () => namespaceDefaults.synced() },
    { name: 'service allocation repair', running: serviceRepair?.running ?? false, synced: () => serviceRepair?.synced() ?? false },
    { name: 'local APIServices', running: localAPIServices?.running ?? false, synced: () => localAPIServices?.synced() ?? false },
    ...(disruption.gate ? [{ name: 'disruption controller', running: disruption.gate.running, synced: () => disruption.gate!.synced() }] : []),
    ...workloads.map((w) => ({ name: w.name, running: w.gate.running, synced: () => w.gate.synced() })),
    ...rbacControllers.controllers(),
  ];
  return {
    leaderControllers,
    startServing(serving) {
      // frees the allocations of deleted Services; the `kubernetes` Service on the first address
      serviceRepair = runWhileLeader(
        store,
        new ServiceAllocationRepair({
          store,
          services: () => storeFor(registry.lookup('', 'v1', 'services')!),
          kubernetesService: { clusterIP: serving.serviceAllocator.firstIp, port: serving.port, address: serving.address },
          endpoints: () => {
            const def = registry.lookup('', 'v1', 'endpoints');
            return def ? storeFor(def) : undefined;
          },
          endpointSlices: () => {
            const def = registry.lookup(`discovery.${registry.apiDomain}`, 'v1', 'endpointslices');
            return def ? { store: storeFor(def), apiVersion: `${def.group}/v1` } : undefined;
          },
          log,
        }),
        { name: 'service allocation repair', log },
      );
      // an APIService for every served group/version (kube's autoregister), apiregistration kept in step
      localAPIServices = runWhileLeader(
        store,
        new LocalAPIServices({
          registry,
          store,
          apiDomain: registry.apiDomain,
          apiServices: () => {
            const def = registry.lookupKind(`apiregistration.${registry.apiDomain}`, 'v1', 'APIService');
            return def ? storeFor(def) : undefined;
          },
          log,
        }),
        { name: 'local APIServices', log },
      );
    },
    stop() {
      nsController.stop();
      namespaceDefaults.stop();
      serviceRepair?.stop();
      localAPIServices?.stop();
      nodeLifecycle.stop();
      disruption.gate?.stop();
      for (const w of workloads) w.gate.stop();
      gc.stop();
      crdController.stop();
      crds.registrar.stop();
      rbacControllers.stop();
      apf.stop();
      apfDangling?.stop();
      systemNamespaces.stop();
      pcGate.stop();
    },
  };
}
