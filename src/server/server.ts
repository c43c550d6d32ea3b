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
import { AllowAllAuthorizer, type Authorizer } from '../auth/authz/types.js';
import { NamespaceController } from '../controllers/namespace.js';
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
import { type AuthorizationOptions, buildAuthorization } from './authorization-setup.js';
import { storeObjectSources } from './object-sources.js';
import { type AdmissionPluginOptions, admissionHooks } from './admission-plugins.js';
import { writeKubeconfig } from './kubeconfig.js';
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
  /** authentication methods (spec 001 §5); see src/server/authentication-setup.ts */
  authn?: AuthenticationOptions;
  log?: (msg: string) => void;
  /** feature gates by name (spec 000 §3.3, src/server/feature-gates.ts); an unknown name fails the start */
  featureGates?: Record<string, boolean>;
  /** `--runtime-config` (spec 000 §9.1), e.g. `coordination.orch.io/v1=false` */
  runtimeConfig?: string;
  /** the authorizer chain; default allow-all (the authorization issue replaces it) */
  authorizer?: Authorizer;
  /** authorization flags (spec 001 §5.12); used when `authorizer` is not given */
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
  const defs = sharedDefinitions(opts.apiDomain);
  const served = applyRuntimeConfig(builtinDefinitions(opts.apiDomain), parseRuntimeConfig(opts.runtimeConfig ?? ''));
  const registry = new Registry(opts.apiDomain, defs, served);
  const admission = new SchemaAdmission(defs);
  const nsDef = registry.lookup('', 'v1', 'namespaces')!;
  const namespaceState = (ns: string): 'Active' | 'Terminating' | undefined => {
    const kv = store.range({ key: storageKey(nsDef, '', ns) }).kvs[0];
    if (!kv) return undefined;
    return decodeObject(kv).metadata?.deletionTimestamp ? 'Terminating' : 'Active';
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
  const stores = new Map<ResourceDefinition, GenericStore>();
  const storeFor = (def: ResourceDefinition): GenericStore => {
    let gs = stores.get(def);
    if (!gs) {
      gs = new GenericStore(def, store, admission, hooks, namespaceState);
      stores.set(def, gs);
    }
    return gs;
  };
  const tokenSecret = await sharedSecret(store, CONTINUE_TOKEN_SECRET_KEY);
  const ctx: HandlerContext = { registry, storeFor, tokens: new ContinueTokens(tokenSecret, opts.continueTokenTtlMs) };
  ctx.featureGates = featureGates;
  // Allow-all until the authorization issue lands; every check already goes
  // through this interface (requests, impersonation, unsafe deletion).
  const authz = !opts.authorizer && opts.authorization
    ? await buildAuthorization(opts.authorization, { apiDomain: opts.apiDomain, log, sources: storeObjectSources(store, registry, log), nodeWithSelectors: featureGates.enabled('AuthorizeNodeWithSelectors') })
    : undefined;
  authz?.start();
  const authorizer: Authorizer = opts.authorizer ?? authz?.chain ?? new AllowAllAuthorizer();
  ctx.authorizer = authorizer;

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
  const watch = new WatchService(store, { windowMs: opts.watchWindowMs, bookmarkIntervalMs: opts.watchBookmarkIntervalMs, apiDomain: opts.apiDomain });
  ctx.listFromCache = (gs, p) => listMostRecentFromCache(watch, gs, p);
  started.add('start-watch-cache');
  // In a cluster the controllers run on the Raft leader only (leader-gate.ts);
  // a follower's post-start hooks are done once the gate is set up, as its
  // controllers are idle by design.
  const nsController = runWhileLeader(store, new NamespaceController(store, registry, storeFor, log), { name: 'namespace controller', log });
  started.add('start-namespace-controller');
  // the garbage collector (docs/deletion.md); it scans on start, so an interrupted foreground deletion resumes
  const gcController = new GarbageCollector(store, registry, storeFor, log);
  const gc = runWhileLeader(store, gcController, { name: 'garbage collector', log });
  health.add({
    name: 'poststarthook/start-garbage-collector',
    check: () => (!gc.running || gcController.hasStarted ? undefined : 'not finished'),
  });
  started.add('start-garbage-collector');

  let serverUrl = '';
  const auth = await buildAuthentication(opts.authn ?? {}, { apiDomain: opts.apiDomain, dataDir, pkiDir: pki.paths.dir, registry, store, storeFor, serverUrl: () => serverUrl, caPem: pki.ca.certPem, log });
  const authn = auth.chain;
  if (!opts.authorizer && !authz) log('WARNING: authorization is allow-all: every authenticated or anonymous request is permitted (the RBAC authorizer is not built yet)');

  const metrics = new ServerMetrics();
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
        gc.stop();
        auth.stop();
        authz?.stop();
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
