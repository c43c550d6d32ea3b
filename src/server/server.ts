// Composition root: builds the layers (store → registry → watch → gateway)
// and wires them together. Nothing below imports from here.

import { type Random, systemRandom } from '../core/random.js';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { SchemaAdmission } from '../registry/admission.js';
import { StatusError } from '../core/errors.js';
import { GenericStore } from '../registry/generic-store.js';
import { withBuiltinHandlers } from '../endpoints/handlers/builtin-kinds.js';
import type { HandlerContext } from '../endpoints/handlers/context.js';
import { builtinDefinitions, sharedDefinitions } from '../registry/kinds/index.js';
import { ContinueTokens } from '../registry/list.js';
import { Registry } from '../registry/registry.js';
import type { ApiObject, ResourceDefinition } from '../registry/types.js';
import type { Authorizer } from '../auth/authz/types.js';
import type { UserInfo } from '../auth/types.js';
import { EscalationGuard, type RbacResource } from '../auth/authz/rbac/escalation.js';
import { type AuthorizationOptions, buildAuthorization } from './authorization-setup.js';
import { AuthorizationMetrics } from '../auth/authz/metrics.js';
import { storeObjectSources } from './object-sources.js';
import { startRbacControllers } from './rbac-setup.js';
import { NamespaceController } from '../controllers/namespace.js';
import { NamespaceDefaultsController } from '../controllers/namespace-defaults.js';
import { ServiceAllocator } from '../registry/allocators/service-allocator.js';
import { parseIpv4Cidr } from '../registry/allocators/cidr.js';
import { ServiceAllocationRepair, allocationOwner } from '../controllers/service-allocation-repair.js';
import { LocalAPIServices } from '../controllers/local-apiservices.js';
import { ROOT_CA_PUBLISHER, SERVICE_ACCOUNT_CONTROLLER, controllerEnabled } from './controllers-flag.js';
import { GarbageCollector } from '../controllers/garbage-collector.js';
import { type LeaderGate, runWhileLeader } from '../controllers/leader-gate.js';
import { type NodeLifecycleSettings, startNodeLifecycle } from './node-lifecycle-setup.js';
import { startDisruption } from './disruption-setup.js';
import { startWorkloads } from './workloads-setup.js';
import { FeatureGates } from './feature-gates.js';
import { HealthChecks } from '../gateway/health.js';
import { type HealthPublisher, MAIN_LOOP_CHECK } from '../gateway/health-snapshot.js';
import { publishHealthToWorkers } from './health-publishing.js';
import { earlyShedder } from '../gateway/flowcontrol/early-shed.js';
import { type HttpServer, startHttpServer } from '../gateway/http-server.js';
import { type MuxServer, startMuxServer } from '../gateway/mux-server.js';
import { MAX_BODY_BYTES, createChain, tooLargeResponse } from '../endpoints/chain.js';
import { defaultMaxConnections, type TlsFront, startTlsFront } from '../gateway/tls-front.js';
import { type TlsWorkerPool, startTlsWorkers } from '../gateway/tls-workers.js';
import type { RevisionedStore } from '../store/types.js';
import { listMostRecentFromCache } from '../watch/consistent-read.js';
import { WatchService } from '../watch/service.js';
import { managedFieldsHooks } from '../registry/managed-fields.js';
import { NamespaceLifecycle } from '../registry/namespace-lifecycle.js';
import { ServerMetrics } from './metrics.js';
import { CONTINUE_TOKEN_SECRET_KEY, sharedSecret } from './shared-secret.js';
import { applyRuntimeConfig, parseRuntimeConfig } from './runtime-config.js';
import { nonResourceHandler } from './non-resource.js';
import { type AuthenticationOptions, buildAuthentication } from './authentication-setup.js';
import { ensurePki, issueClientCertificate } from './pki.js';
import { NODE_STREAM_WEBSOCKET_PATHS } from '../endpoints/handlers/node-streams.js';
import { createNodeTransport, KUBELET_CLIENT_COMMON_NAME, KUBELET_CLIENT_ORGANIZATION } from './node-transport.js';
import { checkApiDomain } from './api-domain-check.js';
import { retryWhileUnavailable } from './startup-retry.js';
import { DEFAULT_MIN_REQUEST_TIMEOUT_MS, DEFAULT_REQUEST_TIMEOUT_MS, DEFAULT_TLS_HANDSHAKE_TIMEOUT_MS, type RequestLimitOptions, buildFlowControl } from './request-limits.js';
import { type Clock, sleep, systemClock } from '../core/clock.js';
import { addReadinessChecks } from './readiness.js';
import { timeoutResponse, watchTimeoutMs } from '../gateway/timeouts.js';
import { type AdmissionPluginOptions, admissionHooks } from './admission-plugins.js';
import { writeKubeconfig } from './kubeconfig.js';
import { admissionRegistrationDefinitions } from '../registry/admission/kinds.js';
import { buildAdmissionChain, registerAdmissionMetrics } from './admission-setup.js';
import type { ServiceResolver } from '../registry/admission/webhook-client.js';
import { SchemaNames } from '../machinery/schema/naming.js';
import { serverEventRecorder } from './events.js';
import { type ClusterOptions, openStore, registerStoreMetrics, withClusterStatus } from './open-store.js';
import { type AuditOptions, buildAudit, closeAudit } from './audit-setup.js';
import { startCrds } from './crd-setup.js';
import { cleanupFinalizer } from '../registry/crd/kind.js';

export interface ServerOptions {
  dataDir: string;
  bindAddress: string;
  /** 0 = ephemeral (tests) */
  securePort: number;
  apiDomain: string;
  /** extra DNS names / IPs for the serving certificate */
  tlsSans?: string[];
  /** watch history window, ms (spec 000 §8: default 5 minutes) */
  watchWindowMs?: number;
  /** a watcher whose unsent bytes exceed this is ended with 410 (default 10 MiB; docs/watch.md) */
  watchMaxBacklogBytes?: number;
  /** mean interval between watch BOOKMARK events, ms (default 60 s; tests shorten it) */
  watchBookmarkIntervalMs?: number;
  /** continue-token lifetime, ms (spec 000 §8: default 5 minutes; tests shorten it) */
  continueTokenTtlMs?: number;
  /** how long in-flight requests get on shutdown */
  shutdownTimeoutMs?: number;
  /** `--service-cluster-ip-range` (default 10.96.0.0/12) */
  serviceClusterIpRange?: string;
  /** `--service-node-port-range` (default 30000-32767) */
  serviceNodePortRange?: string;
  /** overload protection and deadlines (issue #15); see src/server/request-limits.ts */
  limits?: RequestLimitOptions;
  /** authentication methods (spec 001 §5); see src/server/authentication-setup.ts */
  authn?: AuthenticationOptions;
  log?: (msg: string) => void;
  /** feature gates by name (spec 000 §3.3, src/server/feature-gates.ts); an unknown name fails the start */
  featureGates?: Record<string, boolean>;
  /** `--runtime-config` (spec 000 §9.1), e.g. `coordination.orch.io/v1=false` */
  runtimeConfig?: string;
  /** replaces the authorizer chain built from `authorization` (tests) */
  authorizer?: Authorizer;
  /** `--authorization-*` flags (spec 001 §5.12); default mode `Node,RBAC` */
  authorization?: AuthorizationOptions;
  /** `--enable-admission-plugins` / `--disable-admission-plugins` (src/server/admission-plugins.ts) */
  admissionPlugins?: AdmissionPluginOptions;
  /** replaces how webhook `service` references are resolved (tests; default: the Service's Endpoints) */
  admissionServiceResolver?: ServiceResolver;
  /** certificates shared by every member of a cluster (default <dataDir>/pki) */
  pkiDir?: string;
  /** run as a member of a Raft cluster instead of the single-node store (docs/raft.md) */
  cluster?: ClusterOptions;
  /**
   * TLS terminator worker processes (src/gateway/tls-workers.ts, docs/tls.md);
   * 0 (default) terminates TLS in this process.
   */
  tlsWorkers?: number;
  /**
   * TLS workers answer HTTP/1.1 health probes from this process's snapshots
   * (src/server/health-publishing.ts); default true when `tlsWorkers` > 0,
   * false sends every probe to this process (docs/reliability.md).
   */
  healthInTlsWorkers?: boolean;
  /** `--audit-*` flags (issue 16 item 3, docs/audit.md) */
  audit?: AuditOptions;
  /** the node lifecycle and taint eviction controllers (src/server/node-lifecycle-setup.ts) */
  nodeLifecycle?: NodeLifecycleSettings;
  /** time and timers for every part (default the system clock; tests may pass a ManualClock, src/core/clock.ts) */
  clock?: Clock;
  /** jitter and random picks for every part (default Math.random; src/core/random.ts) */
  random?: Random;
}

export interface RunningServer {
  port: number;
  url: string;
  kubeconfigPath: string;
  store: RevisionedStore;
  registry: Registry;
  watch: WatchService;
  caPem: string;
  adminCertPem: string;
  adminKeyPem: string;
  /** graceful: readiness false, in-flight requests finish, watches end, store closes */
  shutdown(): Promise<void>;
  /** process ids of the TLS worker processes (empty with `tlsWorkers: 0`) */
  tlsWorkerPids(): number[];
  /** requests that reached the main process over the multiplexed channel (HTTP/2, and HTTP/1.1 unless `--http1-over-mux=false`) */
  muxRequests(): number;
}

/** namespaces that exist from the start and may not be deleted */
/** kube's `kube-root-ca.crt` with --api-domain k8s.io, else `orch-root-ca.crt` (docs/architecture.md) */
export function rootCAConfigMapName(apiDomain: string): string {
  return apiDomain === 'k8s.io' ? 'kube-root-ca.crt' : 'orch-root-ca.crt';
}

export const DEFAULT_SERVICE_CIDR = '10.96.0.0/12';
export const DEFAULT_NODE_PORT_RANGE = '30000-32767';

/** `--service-node-port-range`: `min-max`, inclusive */
export function parsePortRange(text: string): { min: number; max: number } {
  const m = /^(\d+)-(\d+)$/.exec(text);
  const min = Number(m?.[1]);
  const max = Number(m?.[2]);
  if (!m || min < 1 || max > 65535 || min > max) throw new Error(`--service-node-port-range: "${text}" is not a port range such as 30000-32767`);
  return { min, max };
}

export const BUILTIN_NAMESPACES = ['default', 'orch-system', 'orch-public', 'orch-node-lease'];

export async function startServer(opts: ServerOptions): Promise<RunningServer> {
  const log = opts.log ?? ((m: string) => process.stderr.write(`${m}\n`));
  // the composition root owns time and randomness: every part below gets these two ports
  const clock = opts.clock ?? systemClock;
  const random = opts.random ?? systemRandom;
  const featureGates = new FeatureGates(opts.featureGates);
  const dataDir = resolve(opts.dataDir);
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  await mkdir(join(dataDir, 'run'), { recursive: true, mode: 0o700 });

  const hosts = ['localhost', '127.0.0.1', '::1', ...(opts.tlsSans ?? [])];
  if (opts.bindAddress !== '0.0.0.0' && opts.bindAddress !== '::' && !hosts.includes(opts.bindAddress)) hosts.push(opts.bindAddress);
  const pki = await ensurePki(opts.pkiDir ? resolve(opts.pkiDir) : join(dataDir, 'pki'), { hosts, now: clock.now() });

  const store = await openStore({ ...opts, log, clock, random }, dataDir, pki);
  try {
    await retryWhileUnavailable('recording the API domain', () => checkApiDomain(store, opts.apiDomain), log);
  } catch (e) {
    await store.close();
    throw e;
  }
  const defs = sharedDefinitions(opts.apiDomain);
  const served = applyRuntimeConfig(
    [...withBuiltinHandlers(builtinDefinitions(opts.apiDomain)), ...admissionRegistrationDefinitions(new SchemaNames(opts.apiDomain))],
    parseRuntimeConfig(opts.runtimeConfig ?? ''),
  );
  const registry = new Registry(opts.apiDomain, defs, served);
  const admission = new SchemaAdmission(defs, [cleanupFinalizer(opts.apiDomain)]);
  const nsDef = registry.lookup('', 'v1', 'namespaces')!;
  const rbacGroup = `rbac.authorization.${opts.apiDomain}`;
  let escalation: EscalationGuard | undefined;
  // namespace lifecycle and managedFields run in the registry's write path (src/registry/)
  const namespaces = new NamespaceLifecycle(store, nsDef, BUILTIN_NAMESPACES);
  const namespaceState = namespaces.state;
  const hooks = { ...managedFieldsHooks(defs, clock), ...namespaces.hooks() };
  Object.assign(hooks, admissionHooks(hooks, opts.admissionPlugins ?? {}, opts.apiDomain));
  // webhooks and ValidatingAdmissionPolicies (src/registry/admission/, docs/admission.md); every member
  // follows the configuration objects through its applied feed
  const admissionChain = buildAdmissionChain(registry, store, opts.apiDomain, log, opts.admissionServiceResolver, clock);
  if (admissionChain) Object.assign(hooks, admissionChain.hooks());
  // RBAC escalation prevention (spec 001 §5.14) needs the requesting user and the authorizer;
  // only the RBAC kinds' stores get the hook, so other writes do not pay for it
  const rbacHooks = {
    ...hooks,
    async authorizeWrite(def: ResourceDefinition, obj: ApiObject, old: ApiObject | undefined, o: { user?: UserInfo }) {
      await escalation?.check(def.resource as RbacResource, obj, old, o.user);
    },
  };
  // Service cluster IPs and node ports, claimed with the Service's own write (src/registry/allocators/)
  const serviceAllocator = new ServiceAllocator({
    range: parseIpv4Cidr(opts.serviceClusterIpRange ?? DEFAULT_SERVICE_CIDR),
    nodePorts: parsePortRange(opts.serviceNodePortRange ?? DEFAULT_NODE_PORT_RANGE),
    ownerOf: (key) => {
      const kv = store.range({ key }).kvs[0];
      return kv ? (allocationOwner(kv) ?? { namespace: '', name: '', uid: '?' }) : undefined;
    },
    random,
  });
  const serviceHooks = { ...hooks, reserve: (_def: ResourceDefinition, obj: ApiObject, old: ApiObject | undefined) => serviceAllocator.reserve(obj, old) };
  // CustomResourceDefinitions (docs/crds.md): served on every member from the applied feed
  const crds = startCrds({ store, registry, apiDomain: opts.apiDomain, log });
  const customHooks = { ...hooks, guardCreate: (def: ResourceDefinition) => crds.registrar.guardCreate(def) };
  const stores = new Map<ResourceDefinition, GenericStore>();
  const storeFor = (def: ResourceDefinition): GenericStore => {
    let gs = stores.get(def);
    if (!gs) {
      const defHooks = def.customResource ? customHooks : def.group === rbacGroup ? rbacHooks : def.group === '' && def.resource === 'services' ? serviceHooks : hooks;
      gs = new GenericStore(def, store, admission, defHooks, namespaceState, clock);
      stores.set(def, gs);
    }
    return gs;
  };
  const tokenSecret = await retryWhileUnavailable('the continue-token secret', () => sharedSecret(store, CONTINUE_TOKEN_SECRET_KEY), log);
  const ctx: HandlerContext = { registry, storeFor, tokens: new ContinueTokens(tokenSecret, opts.continueTokenTtlMs, clock), clock };
  ctx.featureGates = featureGates;
  if (admissionChain) ctx.admitConnect = (a) => admissionChain.admitConnect(a);
  if (admissionChain) ctx.admitSubresourceCreate = (a) => admissionChain.admitSubresourceCreate(a);
  // pods/log, exec, attach, portforward and nodes/proxy go on to node agents with this identity (docs/nodeagent.md "Streams")
  const nodeTransport = createNodeTransport(
    await issueClientCertificate(pki, { commonName: KUBELET_CLIENT_COMMON_NAME, organizations: [KUBELET_CLIENT_ORGANIZATION], now: clock.now() }),
    clock,
  );
  ctx.nodeTransport = nodeTransport;
  // spec 001 §5.12: the chain of --authorization-mode (default Node,RBAC); every check goes
  // through it (requests, impersonation, access reviews, unsafe deletion, escalation)
  const metrics = new ServerMetrics();
  // a bad audit policy or webhook file stops the start before anything runs (docs/audit.md)
  let auditor;
  try {
    auditor = await buildAudit(opts.audit ?? {}, { apiDomain: opts.apiDomain, registry: metrics.registry, clock, log });
  } catch (e) {
    await store.close();
    throw e;
  }
  const authorization = await buildAuthorization(opts.authorization ?? {}, {
    apiDomain: opts.apiDomain,
    log,
    sources: storeObjectSources(store, registry, log),
    metrics: new AuthorizationMetrics(metrics.registry),
    nodeWithSelectors: featureGates.enabled('AuthorizeNodeWithSelectors'),
    clock,
  });
  authorization.start();
  const authorizer: Authorizer = opts.authorizer ?? authorization.chain;
  ctx.authorizer = authorizer;
  escalation = new EscalationGuard({ index: authorization.rbac, authorizer: () => authorizer, rbacGroup });
  if (opts.authorizer) log('authorization: a custom authorizer was given');
  else {
    const modes = authorization.chain.current().map((e) => e.type).filter((t) => t !== 'SystemMasters');
    log(`authorization: ${modes.join(',')} (system:masters first)`);
    if (modes.includes('AlwaysAllow')) log('WARNING: authorization mode AlwaysAllow: every authenticated or anonymous request is permitted');
  }

  const health = new HealthChecks();
  let shuttingDown = false;
  const started = new Set<string>();
  health.add({ name: 'ping', check: () => undefined });
  health.add({ name: 'log', check: () => undefined });
  // answered here whenever this loop answers; in a TLS worker it fails when this loop stops publishing
  health.add({ name: MAIN_LOOP_CHECK, check: () => undefined });
  health.add({ name: 'etcd', check: () => (store.healthy() ? undefined : 'the store is not healthy') });
  for (const hook of ['bootstrap-namespaces', 'start-watch-cache', 'start-namespace-controller']) {
    health.add({ name: `poststarthook/${hook}`, check: () => (started.has(hook) ? undefined : 'not finished') });
  }
  health.add({ name: 'shutdown', check: () => (shuttingDown ? 'process is shutting down' : undefined) }, 'ready');

  await retryWhileUnavailable('the built-in namespaces', () => bootstrapNamespaces(storeFor(nsDef)), log);
  started.add('bootstrap-namespaces');
  const minRequestTimeoutMs = opts.limits?.minRequestTimeoutMs ?? DEFAULT_MIN_REQUEST_TIMEOUT_MS;
  const watch = new WatchService(store, {
    windowMs: opts.watchWindowMs,
    bookmarkIntervalMs: opts.watchBookmarkIntervalMs,
    maxBacklogBytes: opts.watchMaxBacklogBytes,
    backlogBudgetBytes: opts.limits?.watchBacklogBudgetBytes,
    apiDomain: opts.apiDomain,
    defaultTimeoutMs: () => watchTimeoutMs(minRequestTimeoutMs, random),
    clock,
    random,
  });
  ctx.listFromCache = (gs, p) => listMostRecentFromCache(watch, gs, p);
  started.add('start-watch-cache');
  // In a cluster the controllers run on the Raft leader only (leader-gate.ts);
  // a follower's post-start hooks are done once the gate is set up, as its
  // controllers are idle by design.
  const events = serverEventRecorder(registry, storeFor, opts.cluster?.name ?? 'orch', log, clock);
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
      rootCAConfigMapName: rootCAConfigMapName(opts.apiDomain),
      caPem: pki.ca.certPem,
      serviceAccount: controllerEnabled(opts.authn?.controllers, SERVICE_ACCOUNT_CONTROLLER, true),
      rootCA: controllerEnabled(opts.authn?.controllers, ROOT_CA_PUBLISHER, true),
      log,
    }),
    { name: 'namespace defaults', log },
  );
  const crdController = crds.startController(storeFor);
  // Ready=Unknown and taints for silent nodes, taint-based eviction (issue 13; docs/nodeagent.md)
  const nodeLifecycle = startNodeLifecycle({ store, registry, storeFor, apiDomain: opts.apiDomain, events, log, controllers: opts.authn?.controllers, settings: opts.nodeLifecycle ?? {} });
  // PodDisruptionBudget status for pods/eviction (docs/controllers.md)
  const disruption = startDisruption({ store, registry, storeFor, events, log, controllers: opts.authn?.controllers, clock });
  // the scheduler and the Deployment, ReplicaSet and ReplicationController controllers (docs/controllers.md)
  const workloads = startWorkloads({ store, registry, storeFor, events, log, controllers: opts.authn?.controllers, clock, random, apiDomain: opts.apiDomain });
  // default roles and bindings (spec 001 §5.14), reconciled by the leader at every start, and aggregation;
  // a leader serves once its defaults are in place, so the first anonymous /version is not refused
  const rbacControllers = startRbacControllers(store, registry, storeFor, opts.apiDomain, log);
  await rbacControllers.settled();
  health.add({ name: 'poststarthook/rbac/bootstrap-roles', check: () => rbacControllers.ready() });

  let serverUrl = '';
  const auth = await buildAuthentication(opts.authn ?? {}, { apiDomain: opts.apiDomain, dataDir, pkiDir: pki.paths.dir, registry, store, storeFor, serverUrl: () => serverUrl, caPem: pki.ca.certPem, adminToken: pki.adminToken, clock, log });
  const authn = auth.chain;

  auth.registerMetrics((name, help, read) => metrics.gauge(name, help, read));
  metrics.gauge('orch_store_revision', 'The applied revision of the store.', () => store.revision);
  metrics.gauge('orch_store_compact_revision', 'The oldest revision still readable.', () => store.compactRevision);
  metrics.gauge('orch_watchers', 'Open watch streams.', () => watch.stats().watchers);
  // the server-wide watch backlog budget (--watch-backlog-budget, src/watch/backlog-budget.ts)
  metrics.gauge('orch_watch_backlog_bytes', 'Bytes queued for all watch streams (upper bound).', () => watch.stats().backlogBytes);
  metrics.gauge('orch_watch_backlog_budget_expired_total', 'Watch streams ended with 410 because the server-wide backlog budget was exceeded.', () => watch.stats().budgetWatchersEnded);
  metrics.gauge('orch_watch_slow_expired_total', 'Watch streams ended with 410 because they fell behind their own backlog bound.', () => watch.stats().slowWatchersEnded);
  registerStoreMetrics(metrics, store);
  if (admissionChain) registerAdmissionMetrics(admissionChain, metrics.registry);

  let front: TlsFront | undefined;
  let workers: TlsWorkerPool | undefined;
  metrics.gauge('orch_tls_connections_refused_total', 'Client connections closed at accept because the TLS worker (or front) held --max-connections-per-tls-worker.', () => front?.refusedConnections ?? 0);
  metrics.gauge('orch_tls_parent_accepted_connections_total', 'Client connections the main process accepted on the listening socket and handed to a TLS worker (only while no worker is ready).', () => workers?.parentAccepted ?? 0);
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
  // every part must be ready before /readyz is (issue #15 item 1, src/server/readiness.ts);
  // added before the port opens, so parts started after it count as not ready until they are
  addReadinessChecks(health, {
    store,
    watch,
    ...((opts.tlsWorkers ?? 0) > 0 ? { tlsWorkers: { configured: opts.tlsWorkers!, readyWorkers: () => workers?.readyWorkers() ?? 0 } } : {}),
    controllers: () => leaderControllers(),
    clock,
  });
  const socketPath = join(dataDir, 'run', `gateway-${process.pid}.sock`);
  const flowControl = buildFlowControl(opts.limits ?? {}, { apiDomain: opts.apiDomain, clock, metrics });
  const router = createChain({
    ctx,
    apiDomain: opts.apiDomain,
    authn,
    authz: authorizer,
    health,
    watch,
    nonResource: withClusterStatus(nonResourceHandler(registry, metrics, auth.nonResource, clock), store),
    observe: (info, code, seconds) => metrics.observe(info, code, seconds),
    onDeprecated: (def, info) => metrics.deprecatedRequested(info, def.deprecated?.removedRelease),
    peerFor: (addr) => front?.peerFor(addr),
    log,
    flowControl,
    requestTimeoutMs: opts.limits?.requestTimeoutMs,
    clock,
    audit: auditor ? { auditor, remoteAddressFor: (addr) => front?.connectionFor(addr)?.remoteAddress } : undefined,
  });
  // what flow control would refuse at once is answered 429 before the body or authentication
  const shed = flowControl ? earlyShedder({ flow: flowControl, peerFor: (addr) => front?.peerFor(addr), tokenUsers: auth.tokenUsers }) : undefined;
  const http: HttpServer = await startHttpServer({
    listen: { unixPath: socketPath },
    maxBodyBytes: MAX_BODY_BYTES,
    handle: router,
    tooLarge: tooLargeResponse,
    // a trickled body gets no longer than a request's deadline (docs/reliability.md "Slow clients")
    bodyTimeoutMs: opts.limits?.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
    bodyTimedOut: timeoutResponse,
    clock,
    // exec, attach, port-forward and the proxies (docs/nodeagent.md "Streams")
    webSocketPaths: NODE_STREAM_WEBSOCKET_PATHS,
    ...(shed ? { shed } : {}),
  });
  // HTTP/2 streams and plain HTTP/1.1 requests arrive multiplexed over one connection per TLS front
  // process (docs/tls.md "HTTP/2", "HTTP/1.1 over the multiplexed channel")
  const http1OverMux = opts.limits?.http1OverMux ?? true;
  const mux: MuxServer | undefined = opts.limits?.disableHttp2 && !http1OverMux
    ? undefined
    : await startMuxServer({
        path: join(dataDir, 'run', `gateway-h2-${process.pid}.sock`),
        maxBodyBytes: MAX_BODY_BYTES,
        handle: router,
        tooLarge: tooLargeResponse,
        ...(shed ? { shed } : {}),
      });
  const frontOptions = {
    host: opts.bindAddress,
    port: opts.securePort,
    key: pki.serving.keyPem,
    cert: pki.serving.certPem,
    clientCA: pki.ca.certPem + auth.clientCAPem,
    backendSocketPath: socketPath,
    ...(mux ? { muxSocketPath: mux.path } : {}),
    http1OverMux,
    requestBodyTimeoutMs: opts.limits?.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
    handshakeTimeoutMs: opts.limits?.tlsHandshakeTimeoutMs ?? DEFAULT_TLS_HANDSHAKE_TIMEOUT_MS,
    http2: !opts.limits?.disableHttp2,
    ...(opts.limits?.http2MaxStreamsPerConnection ? { http2MaxStreams: opts.limits.http2MaxStreamsPerConnection } : {}),
  };
  let healthPublisher: HealthPublisher | undefined;
  if ((opts.tlsWorkers ?? 0) > 0) {
    const healthInWorkers = opts.healthInTlsWorkers ?? true;
    front = workers = await startTlsWorkers({ ...frontOptions, workers: opts.tlsWorkers!, log, clock, healthInWorkers, maxConnectionsPerWorker: opts.limits?.maxConnectionsPerTlsWorker ?? 0 });
    // probes answered by the workers from this loop's results (src/server/health-publishing.ts)
    if (healthInWorkers) healthPublisher = publishHealthToWorkers({
      health,
      workers,
      authn,
      authorizer,
      authorizerTypes: opts.authorizer ? undefined : authorization.chain.current().map((e) => e.type),
      audited: auditor !== undefined,
      clock,
      log,
    });
  } else {
    const cap = opts.limits?.maxConnectionsPerTlsWorker ?? 0;
    front = await startTlsFront({ ...frontOptions, ...(cap > 0 ? { maxConnections: Math.min(cap, defaultMaxConnections()) } : {}) });
  }
  const hostForUrl = opts.bindAddress === '0.0.0.0' || opts.bindAddress === '::' ? '127.0.0.1' : opts.bindAddress;
  const url = `https://${hostForUrl.includes(':') ? `[${hostForUrl}]` : hostForUrl}:${front.port}`;
  serverUrl = url;
  auth.start();
  // frees the allocations of deleted Services; the `kubernetes` Service on the first address
  serviceRepair = runWhileLeader(
    store,
    new ServiceAllocationRepair({
      store,
      services: () => storeFor(registry.lookup('', 'v1', 'services')!),
      kubernetesService: { clusterIP: serviceAllocator.firstIp, port: front.port, address: hostForUrl },
      endpoints: () => {
        const def = registry.lookup('', 'v1', 'endpoints');
        return def ? storeFor(def) : undefined;
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
      apiDomain: registry.apiDomain,
      apiServices: () => {
        const def = registry.lookupKind(`apiregistration.${registry.apiDomain}`, 'v1', 'APIService');
        return def ? storeFor(def) : undefined;
      },
      log,
    }),
    { name: 'local APIServices', log },
  );
  // A member that leads at start (every single-node server) returns once its leader-only
  // controllers' informers have listed — a few loop turns — so that /readyz is ready when
  // startServer resolves (informer-sync, src/server/readiness.ts). Bounded: a slow start
  // still returns, and /readyz says what is behind.
  for (let waited = 0; (store.isLeader?.() ?? true) && waited < 10_000; waited += 10) {
    if (leaderControllers().every((c) => c.running && (c.synced?.() ?? true))) break;
    await sleep(clock, 10);
  }
  // the TLS workers answer /readyz from the last snapshot: one taken now, not one from before a
  // controller that syncs with writes (local APIServices) was done
  await healthPublisher?.publishNow();
  const kubeconfigPath = join(dataDir, 'admin.kubeconfig');
  await writeKubeconfig(kubeconfigPath, {
    server: url,
    caPem: pki.ca.certPem,
    token: pki.adminToken,
  });

  let done: Promise<void> | undefined;
  return {
    port: front.port,
    url,
    kubeconfigPath,
    store,
    registry,
    watch,
    caPem: pki.ca.certPem,
    adminCertPem: pki.admin.certPem,
    adminKeyPem: pki.admin.keyPem,
    tlsWorkerPids: () => workers?.workerPids() ?? [],
    muxRequests: () => mux?.requests ?? 0,
    shutdown() {
      done ??= (async () => {
        shuttingDown = true;
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
        authorization.stop();
        auth.stop();
        admissionChain?.stop();
        watch.close();
        await Promise.all([http.close(opts.shutdownTimeoutMs ?? 10_000), mux?.close(opts.shutdownTimeoutMs ?? 10_000)]);
        await closeAudit(auditor, 5000, clock);
        nodeTransport.close();
        healthPublisher?.stop();
        await front!.close({ graceful: true, timeoutMs: 2000 });
        await store.close();
      })();
      return done;
    },
  };
}

async function bootstrapNamespaces(gs: GenericStore): Promise<void> {
  for (const name of BUILTIN_NAMESPACES) {
    if (gs.readRaw('', name)) continue;
    try {
      await gs.create('', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }, { dryRun: false });
    } catch (e) {
      if (!(e instanceof StatusError && e.code === 409)) throw e;
    }
  }
}
