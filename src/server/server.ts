// Composition root: builds the layers (store → registry → watch → gateway)
// and wires them together. Nothing below imports from here.

import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { SchemaAdmission } from '../api/admission.js';
import { StatusError, forbidden } from '../api/errors.js';
import { GenericStore, decodeObject, storageKey } from '../api/generic-store.js';
import type { HandlerContext } from '../api/handlers/context.js';
import { builtinDefinitions, sharedDefinitions } from '../api/kinds/index.js';
import { ContinueTokens } from '../api/list.js';
import { Registry } from '../api/registry.js';
import type { ApiObject, ResourceDefinition } from '../api/types.js';
import type { Authorizer } from '../auth/authz/types.js';
import type { UserInfo } from '../auth/types.js';
import { EscalationGuard, type RbacResource } from '../auth/authz/rbac/escalation.js';
import { type AuthorizationOptions, buildAuthorization } from './authorization-setup.js';
import { AuthorizationMetrics } from '../auth/authz/metrics.js';
import { storeObjectSources } from './object-sources.js';
import { startRbacControllers } from './rbac-setup.js';
import { NamespaceController } from '../controllers/namespace.js';
import { NamespaceDefaultsController } from '../controllers/namespace-defaults.js';
import { ServiceAllocator } from '../api/allocators/service-allocator.js';
import { parseIpv4Cidr } from '../api/allocators/cidr.js';
import { ServiceAllocationRepair, allocationOwner } from '../controllers/service-allocation-repair.js';
import { ROOT_CA_PUBLISHER, SERVICE_ACCOUNT_CONTROLLER, controllerEnabled } from './controllers-flag.js';
import { GarbageCollector } from '../controllers/garbage-collector.js';
import { runWhileLeader } from '../controllers/leader-gate.js';
import { FeatureGates } from './feature-gates.js';
import { HealthChecks } from '../gateway/health.js';
import { type HttpServer, startHttpServer } from '../gateway/http-server.js';
import { MAX_BODY_BYTES, createRouter, tooLargeResponse } from '../gateway/router.js';
import { type TlsFront, startTlsFront } from '../gateway/tls-front.js';
import { type TlsWorkerPool, startTlsWorkers } from '../gateway/tls-workers.js';
import type { RevisionedStore } from '../store/types.js';
import { listMostRecentFromCache } from '../watch/consistent-read.js';
import { WatchService } from '../watch/service.js';
import { managedFieldsHooks } from './managed-fields.js';
import { ServerMetrics } from './metrics.js';
import { CONTINUE_TOKEN_SECRET_KEY, sharedSecret } from './shared-secret.js';
import { applyRuntimeConfig, parseRuntimeConfig } from './runtime-config.js';
import { nonResourceHandler } from './non-resource.js';
import { type AuthenticationOptions, buildAuthentication } from './authentication-setup.js';
import { ensurePki } from './pki.js';
import { checkApiDomain } from './api-domain-check.js';
import { DEFAULT_MIN_REQUEST_TIMEOUT_MS, type RequestLimitOptions, buildFlowControl } from './request-limits.js';
import { systemClock } from '../core/clock.js';
import { watchTimeoutMs } from '../gateway/timeouts.js';
import { type AdmissionPluginOptions, admissionHooks } from './admission-plugins.js';
import { writeKubeconfig } from './kubeconfig.js';
import { serverEventRecorder } from './events.js';
import { type ClusterOptions, openStore, registerStoreMetrics, withClusterStatus } from './open-store.js';

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
  /** certificates shared by every member of a cluster (default <dataDir>/pki) */
  pkiDir?: string;
  /** run as a member of a Raft cluster instead of the single-node store (docs/raft.md) */
  cluster?: ClusterOptions;
  /**
   * TLS terminator worker processes (src/gateway/tls-workers.ts, docs/tls.md);
   * 0 (default) terminates TLS in this process.
   */
  tlsWorkers?: number;
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
  const featureGates = new FeatureGates(opts.featureGates);
  const dataDir = resolve(opts.dataDir);
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  await mkdir(join(dataDir, 'run'), { recursive: true, mode: 0o700 });

  const hosts = ['localhost', '127.0.0.1', '::1', ...(opts.tlsSans ?? [])];
  if (opts.bindAddress !== '0.0.0.0' && opts.bindAddress !== '::' && !hosts.includes(opts.bindAddress)) hosts.push(opts.bindAddress);
  const pki = await ensurePki(opts.pkiDir ? resolve(opts.pkiDir) : join(dataDir, 'pki'), { hosts });

  const store = await openStore({ ...opts, log }, dataDir, pki);
  try {
    await checkApiDomain(store, opts.apiDomain);
  } catch (e) {
    await store.close();
    throw e;
  }
  const defs = sharedDefinitions(opts.apiDomain);
  const served = applyRuntimeConfig(builtinDefinitions(opts.apiDomain), parseRuntimeConfig(opts.runtimeConfig ?? ''));
  const registry = new Registry(opts.apiDomain, defs, served);
  const admission = new SchemaAdmission(defs);
  const nsDef = registry.lookup('', 'v1', 'namespaces')!;
  const rbacGroup = `rbac.authorization.${opts.apiDomain}`;
  let escalation: EscalationGuard | undefined;
  // every namespaced write asks: the namespace is decoded once per revision of it, not per write
  const namespaceStates = new Map<string, { modRevision: number; state: 'Active' | 'Terminating' }>();
  const namespaceState = (ns: string): 'Active' | 'Terminating' | undefined => {
    const kv = store.range({ key: storageKey(nsDef, '', ns) }).kvs[0];
    if (!kv) {
      namespaceStates.delete(ns);
      return undefined;
    }
    const known = namespaceStates.get(ns);
    if (known?.modRevision === kv.modRevision) return known.state;
    const state = decodeObject(kv).metadata?.deletionTimestamp ? 'Terminating' : 'Active';
    namespaceStates.set(ns, { modRevision: kv.modRevision, state });
    return state;
  };
  const hooks = {
    ...managedFieldsHooks(defs),
    beforeDelete(def: ResourceDefinition, obj: ApiObject) {
      if (def === nsDef && BUILTIN_NAMESPACES.includes(obj.metadata?.name ?? '')) {
        throw forbidden(`namespaces "${obj.metadata?.name}" is forbidden: this namespace may not be deleted`, {
          name: obj.metadata?.name,
          kind: 'namespaces',
        });
      }
    },
  };
  Object.assign(hooks, admissionHooks(hooks, opts.admissionPlugins ?? {}, opts.apiDomain));
  // RBAC escalation prevention (spec 001 §5.14) needs the requesting user and the authorizer;
  // only the RBAC kinds' stores get the hook, so other writes do not pay for it
  const rbacHooks = {
    ...hooks,
    async authorizeWrite(def: ResourceDefinition, obj: ApiObject, old: ApiObject | undefined, o: { user?: UserInfo }) {
      await escalation?.check(def.resource as RbacResource, obj, old, o.user);
    },
  };
  // Service cluster IPs and node ports, claimed with the Service's own write (src/api/allocators/)
  const serviceAllocator = new ServiceAllocator({
    range: parseIpv4Cidr(opts.serviceClusterIpRange ?? DEFAULT_SERVICE_CIDR),
    nodePorts: parsePortRange(opts.serviceNodePortRange ?? DEFAULT_NODE_PORT_RANGE),
    ownerOf: (key) => {
      const kv = store.range({ key }).kvs[0];
      return kv ? (allocationOwner(kv) ?? { namespace: '', name: '', uid: '?' }) : undefined;
    },
    random: Math.random,
  });
  const serviceHooks = { ...hooks, reserve: (_def: ResourceDefinition, obj: ApiObject, old: ApiObject | undefined) => serviceAllocator.reserve(obj, old) };
  const stores = new Map<ResourceDefinition, GenericStore>();
  const storeFor = (def: ResourceDefinition): GenericStore => {
    let gs = stores.get(def);
    if (!gs) {
      const defHooks = def.group === rbacGroup ? rbacHooks : def.group === '' && def.resource === 'services' ? serviceHooks : hooks;
      gs = new GenericStore(def, store, admission, defHooks, namespaceState);
      stores.set(def, gs);
    }
    return gs;
  };
  const tokenSecret = await sharedSecret(store, CONTINUE_TOKEN_SECRET_KEY);
  const ctx: HandlerContext = { registry, storeFor, tokens: new ContinueTokens(tokenSecret, opts.continueTokenTtlMs) };
  ctx.featureGates = featureGates;
  // spec 001 §5.12: the chain of --authorization-mode (default Node,RBAC); every check goes
  // through it (requests, impersonation, access reviews, unsafe deletion, escalation)
  const metrics = new ServerMetrics();
  const authorization = await buildAuthorization(opts.authorization ?? {}, {
    apiDomain: opts.apiDomain,
    log,
    sources: storeObjectSources(store, registry, log),
    metrics: new AuthorizationMetrics(metrics.registry),
    nodeWithSelectors: featureGates.enabled('AuthorizeNodeWithSelectors'),
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
  health.add({ name: 'etcd', check: () => (store.healthy() ? undefined : 'the store is not healthy') });
  for (const hook of ['bootstrap-namespaces', 'start-watch-cache', 'start-namespace-controller']) {
    health.add({ name: `poststarthook/${hook}`, check: () => (started.has(hook) ? undefined : 'not finished') });
  }
  health.add({ name: 'shutdown', check: () => (shuttingDown ? 'process is shutting down' : undefined) }, 'ready');

  await bootstrapNamespaces(storeFor(nsDef));
  started.add('bootstrap-namespaces');
  const minRequestTimeoutMs = opts.limits?.minRequestTimeoutMs ?? DEFAULT_MIN_REQUEST_TIMEOUT_MS;
  const watch = new WatchService(store, {
    windowMs: opts.watchWindowMs,
    bookmarkIntervalMs: opts.watchBookmarkIntervalMs,
    apiDomain: opts.apiDomain,
    defaultTimeoutMs: () => watchTimeoutMs(minRequestTimeoutMs, Math.random),
  });
  ctx.listFromCache = (gs, p) => listMostRecentFromCache(watch, gs, p);
  started.add('start-watch-cache');
  // In a cluster the controllers run on the Raft leader only (leader-gate.ts);
  // a follower's post-start hooks are done once the gate is set up, as its
  // controllers are idle by design.
  const events = serverEventRecorder(registry, storeFor, opts.cluster?.name ?? 'orch', log);
  const nsController = runWhileLeader(store, new NamespaceController(store, registry, storeFor, log, events), { name: 'namespace controller', log });
  started.add('start-namespace-controller');
  // the garbage collector (docs/deletion.md); it scans on start, so an interrupted foreground deletion resumes
  const gcController = new GarbageCollector(store, registry, storeFor, log);
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
  // default roles and bindings (spec 001 §5.14), reconciled by the leader at every start, and aggregation;
  // a leader serves once its defaults are in place, so the first anonymous /version is not refused
  const rbacControllers = startRbacControllers(store, registry, storeFor, opts.apiDomain, log);
  await rbacControllers.settled();
  health.add({ name: 'poststarthook/rbac/bootstrap-roles', check: () => rbacControllers.ready() });

  let serverUrl = '';
  const auth = await buildAuthentication(opts.authn ?? {}, { apiDomain: opts.apiDomain, dataDir, pkiDir: pki.paths.dir, registry, store, storeFor, serverUrl: () => serverUrl, caPem: pki.ca.certPem, log });
  const authn = auth.chain;

  auth.registerMetrics((name, help, read) => metrics.gauge(name, help, read));
  metrics.gauge('orch_store_revision', 'The applied revision of the store.', () => store.revision);
  metrics.gauge('orch_store_compact_revision', 'The oldest revision still readable.', () => store.compactRevision);
  metrics.gauge('orch_watchers', 'Open watch streams.', () => watch.stats().watchers);
  registerStoreMetrics(metrics, store);

  let front: TlsFront | undefined;
  const socketPath = join(dataDir, 'run', `gateway-${process.pid}.sock`);
  const router = createRouter({
    ctx,
    apiDomain: opts.apiDomain,
    authn,
    authz: authorizer,
    health,
    watch,
    nonResource: withClusterStatus(nonResourceHandler(registry, metrics, auth.nonResource), store),
    observe: (info, code, seconds) => metrics.observe(info, code, seconds),
    onDeprecated: (def, info) => metrics.deprecatedRequested(info, def.deprecated?.removedRelease),
    peerFor: (addr) => front?.peerFor(addr),
    log,
    flowControl: buildFlowControl(opts.limits ?? {}, { apiDomain: opts.apiDomain, clock: systemClock, metrics }),
    requestTimeoutMs: opts.limits?.requestTimeoutMs,
    clock: systemClock,
  });
  const http: HttpServer = await startHttpServer({
    listen: { unixPath: socketPath },
    maxBodyBytes: MAX_BODY_BYTES,
    handle: router,
    tooLarge: tooLargeResponse,
  });
  const frontOptions = {
    host: opts.bindAddress,
    port: opts.securePort,
    key: pki.serving.keyPem,
    cert: pki.serving.certPem,
    clientCA: pki.ca.certPem + auth.clientCAPem,
    backendSocketPath: socketPath,
  };
  let workers: TlsWorkerPool | undefined;
  if ((opts.tlsWorkers ?? 0) > 0) front = workers = await startTlsWorkers({ ...frontOptions, workers: opts.tlsWorkers!, log });
  else front = await startTlsFront(frontOptions);
  const hostForUrl = opts.bindAddress === '0.0.0.0' || opts.bindAddress === '::' ? '127.0.0.1' : opts.bindAddress;
  const url = `https://${hostForUrl.includes(':') ? `[${hostForUrl}]` : hostForUrl}:${front.port}`;
  serverUrl = url;
  auth.start();
  // frees the allocations of deleted Services; the `kubernetes` Service on the first address
  const serviceRepair = runWhileLeader(
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
  const kubeconfigPath = join(dataDir, 'admin.kubeconfig');
  await writeKubeconfig(kubeconfigPath, {
    server: url,
    caPem: pki.ca.certPem,
    clientCertPem: pki.admin.certPem,
    clientKeyPem: pki.admin.keyPem,
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
    shutdown() {
      done ??= (async () => {
        shuttingDown = true;
        nsController.stop();
        namespaceDefaults.stop();
        serviceRepair.stop();
        gc.stop();
        rbacControllers.stop();
        authorization.stop();
        auth.stop();
        watch.close();
        await http.close(opts.shutdownTimeoutMs ?? 10_000);
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
