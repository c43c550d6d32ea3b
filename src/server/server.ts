// Composition root: builds the layers (store → registry → watch → gateway)
// and wires them together. Nothing below imports from here. The parts are
// wired in their own modules: the registry and its stores (stores-setup.ts),
// the controllers (controllers-setup.ts), the gateway and TLS front
// (gateway-setup.ts), the shutdown order (shutdown.ts).

import { systemRandom } from '../core/random.js';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { HandlerContext } from '../endpoints/handlers/context.js';
import { ContinueTokens } from '../registry/list.js';
import type { Authorizer } from '../auth/authz/types.js';
import { EscalationGuard } from '../auth/authz/rbac/escalation.js';
import { buildAuthorization } from './authorization-setup.js';
import { AuthorizationMetrics } from '../auth/authz/metrics.js';
import { storeObjectSources } from './object-sources.js';
import { FeatureGates } from './feature-gates.js';
import { HealthChecks } from '../gateway/health.js';
import { MAIN_LOOP_CHECK } from '../gateway/health-snapshot.js';
import { listMostRecentFromCache } from '../watch/consistent-read.js';
import { WatchService } from '../watch/service.js';
import { ServerMetrics } from './metrics.js';
import { CONTINUE_TOKEN_SECRET_KEY, sharedSecret } from './shared-secret.js';
import { buildAuthentication } from './authentication-setup.js';
import { ensurePki, issueClientCertificate } from './pki.js';
import { createNodeTransport, KUBELET_CLIENT_COMMON_NAME, KUBELET_CLIENT_ORGANIZATION } from './node-transport.js';
import { checkApiDomain } from './api-domain-check.js';
import { startResourceMetrics } from './metrics-setup.js';
import { retryWhileUnavailable } from './startup-retry.js';
import { DEFAULT_MIN_REQUEST_TIMEOUT_MS } from './request-limits.js';
import { sleep, systemClock } from '../core/clock.js';
import { watchTimeoutMs } from '../gateway/timeouts.js';
import { writeKubeconfig } from './kubeconfig.js';
import { registerAdmissionMetrics } from './admission-setup.js';
import { openStore, registerStoreMetrics } from './open-store.js';
import { buildAudit } from './audit-setup.js';
import type { RunningServer, ServerOptions } from './server-options.js';
import { bootstrapNamespaces, buildStores } from './stores-setup.js';
import { startControllers } from './controllers-setup.js';
import { componentProbes } from './component-status.js';
import { withComponentProbes } from '../registry/kinds/componentstatus.js';
import { startGateway } from './gateway-setup.js';
import { startAggregator } from './aggregator/setup.js';
import { shutdownServer } from './shutdown.js';
import { admissionPluginWarnings, enabledAdmissionPlugins } from './admission-plugins.js';
import { NODE_RESTRICTION } from '../auth/authz/node/restriction.js';

export type { RunningServer, ServerOptions } from './server-options.js';

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
  const { registry, nsDef, rbacGroup, admissionChain, serviceAllocator, crds, storeFor, setEscalation, setAuthorizer } = buildStores(opts, store, log, clock, random);
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
  // metrics.<domain>: every node agent's /metrics/resource scraped with the same identity (docs/metrics.md)
  const resourceMetrics = startResourceMetrics({ registry, storeFor, nodeTransport, resolutionMs: opts.metricResolutionMs, clock, log });
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
  setEscalation(new EscalationGuard({ index: authorization.rbac, authorizer: () => authorizer, rbacGroup }));
  setAuthorizer(authorizer);
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

  await retryWhileUnavailable('the built-in namespaces', () => bootstrapNamespaces(storeFor(nsDef), opts.apiDomain), log);
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
  const controllers = await startControllers({
    store,
    registry,
    storeFor,
    nsDef,
    crds,
    apiDomain: opts.apiDomain,
    clusterName: opts.cluster?.name,
    controllers: opts.authn?.controllers,
    nodeLifecycle: opts.nodeLifecycle,
    caPem: pki.ca.certPem,
    ca: pki.ca,
    authorizer,
    signingDurationMs: opts.clusterSigningDurationMs,
    health,
    started,
    log,
    clock,
    random,
    resourceMetrics: resourceMetrics.client,
    hpa: opts.hpa,
  });

  // `kubectl get componentstatuses` asks the store and the leader-run controllers (component-status.ts)
  const probes = componentProbes(store, () => controllers.leaderControllers());
  const csDef = registry.lookup('', 'v1', 'componentstatuses');
  if (csDef) registry.add(withComponentProbes(csDef, () => probes));

  let serverUrl = '';
  const auth = await buildAuthentication(opts.authn ?? {}, { apiDomain: opts.apiDomain, dataDir, pkiDir: pki.paths.dir, registry, store, storeFor, serverUrl: () => serverUrl, caPem: pki.ca.certPem, adminToken: pki.adminToken, nodeRestriction: enabledAdmissionPlugins(opts.admissionPlugins ?? {}).includes(NODE_RESTRICTION), clock, log });

  for (const w of admissionPluginWarnings(opts.admissionPlugins ?? {})) log(`WARNING: ${w}`);
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

  // API aggregation: APIServices with a Service are proxied (docs/compatibility.md "API aggregation")
  const aggregator = await startAggregator({
    apiDomain: opts.apiDomain,
    pkiDir: pki.paths.dir,
    proxyClient: opts.proxyClient,
    requestHeader: opts.authn?.requestHeader,
    clientCAPem: pki.ca.certPem + auth.clientCAPem,
    store,
    registry,
    storeFor,
    resolver: opts.admissionServiceResolver,
    clock,
    log,
  });
  const gateway = await startGateway({
    aggregator,
    opts,
    dataDir,
    pki,
    ctx,
    auth,
    authorizer,
    authorization,
    auditor,
    health,
    watch,
    registry,
    store,
    metrics,
    controllers: () => controllers.leaderControllers(),
    clock,
    log,
  });
  const url = gateway.url;
  serverUrl = url;
  auth.start();
  controllers.startServing({ serviceAllocator, port: gateway.port, address: gateway.hostForUrl });
  // A member that leads at start (every single-node server) returns once its leader-only
  // controllers' informers have listed — a few loop turns — so that /readyz is ready when
  // startServer resolves (informer-sync, src/server/readiness.ts). Bounded: a slow start
  // still returns, and /readyz says what is behind.
  for (let waited = 0; (store.isLeader?.() ?? true) && waited < 10_000; waited += 10) {
    if (controllers.leaderControllers().every((c) => c.running && (c.synced?.() ?? true))) break;
    await sleep(clock, 10);
  }
  // the TLS workers answer /readyz from the last snapshot: one taken now, not one from before a
  // controller that syncs with writes (local APIServices) was done
  await gateway.publishHealthNow();
  const kubeconfigPath = join(dataDir, 'admin.kubeconfig');
  await writeKubeconfig(kubeconfigPath, {
    server: url,
    caPem: pki.ca.certPem,
    token: pki.adminToken,
  });

  let done: Promise<void> | undefined;
  return {
    port: gateway.port,
    url,
    kubeconfigPath,
    store,
    registry,
    watch,
    caPem: pki.ca.certPem,
    adminCertPem: pki.admin.certPem,
    adminKeyPem: pki.admin.keyPem,
    tlsWorkerPids: gateway.tlsWorkerPids,
    muxRequests: gateway.muxRequests,
    shutdown() {
      done ??= (async () => {
        shuttingDown = true;
        resourceMetrics.stop();
        aggregator.stop();
        await shutdownServer({
          controllers,
          authorization,
          auth,
          admissionChain,
          watch,
          gateway,
          auditor,
          nodeTransport,
          store,
          timeoutMs: opts.shutdownTimeoutMs ?? 10_000,
          clock,
        });
      })();
      return done;
    },
  };
}
