// The gateway a server listens with (docs/tls.md): the request chain over
// the registry, the uWS HTTP/1.1 server and the multiplexed HTTP/2 server on
// local sockets, and in front of them the TLS terminator (in this process or
// in TLS worker processes, which answer health probes from this process's
// snapshots); the readiness checks are added before the port opens.

import type { Clock } from '../core/clock.js';
import { join } from 'node:path';
import type { Auditor } from '../audit/auditor.js';
import type { Authorizer } from '../auth/authz/types.js';
import { MAX_BODY_BYTES, createChain, tooLargeResponse } from '../endpoints/chain.js';
import type { HandlerContext } from '../endpoints/handlers/context.js';
import { NODE_STREAM_WEBSOCKET_PATHS } from '../endpoints/handlers/node-streams.js';
import { earlyShedder } from '../gateway/flowcontrol/early-shed.js';
import type { HealthChecks } from '../gateway/health.js';
import type { HealthPublisher } from '../gateway/health-snapshot.js';
import { type HttpServer, startHttpServer } from '../gateway/http-server.js';
import { type MuxServer, startMuxServer } from '../gateway/mux-server.js';
import { timeoutResponse } from '../gateway/timeouts.js';
import { defaultMaxConnections, type TlsFront, startTlsFront } from '../gateway/tls-front.js';
import { type TlsWorkerPool, startTlsWorkers } from '../gateway/tls-workers.js';
import type { Registry } from '../registry/registry.js';
import type { RevisionedStore } from '../store/types.js';
import type { WatchService } from '../watch/service.js';
import type { Authentication } from './authentication-setup.js';
import type { AuthorizationSetup } from './authorization-setup.js';
import { publishHealthToWorkers } from './health-publishing.js';
import type { ServerMetrics } from './metrics.js';
import { nonResourceHandler } from './non-resource.js';
import { withClusterStatus } from './open-store.js';
import { type LeaderOnlyController, addReadinessChecks } from './readiness.js';
import { DEFAULT_REQUEST_TIMEOUT_MS, DEFAULT_TLS_HANDSHAKE_TIMEOUT_MS, buildFlowControl } from './request-limits.js';
import type { ServerOptions } from './server-options.js';
import type { Aggregator } from './aggregator/setup.js';

export interface GatewayDeps {
  opts: ServerOptions;
  /** APIServices with a Service: proxied, and listed in discovery (src/server/aggregator/) */
  aggregator?: Aggregator;
  /** the resolved data directory (the gateway's sockets go to its `run/`) */
  dataDir: string;
  pki: { serving: { keyPem: string; certPem: string }; ca: { certPem: string } };
  ctx: HandlerContext;
  auth: Authentication;
  authorizer: Authorizer;
  authorization: AuthorizationSetup;
  auditor: Auditor | undefined;
  health: HealthChecks;
  watch: WatchService;
  registry: Registry;
  store: RevisionedStore;
  metrics: ServerMetrics;
  /** the leader-only controllers, for readiness */
  controllers: () => LeaderOnlyController[];
  clock: Clock;
  log: (msg: string) => void;
}

export interface Gateway {
  port: number;
  url: string;
  /** the address the `kubernetes` Service points at */
  hostForUrl: string;
  tlsWorkerPids(): number[];
  muxRequests(): number;
  /** a health snapshot for the TLS workers now (none without workers answering probes) */
  publishHealthNow(): Promise<void> | undefined;
  /** in-flight requests get `timeoutMs` to finish */
  closeRequests(timeoutMs: number): Promise<void>;
  stopHealthPublishing(): void;
  closeFront(): Promise<void>;
}

export async function startGateway(d: GatewayDeps): Promise<Gateway> {
  const { opts, dataDir, pki, ctx, auth, authorizer, authorization, auditor, health, watch, registry, store, metrics, clock, log } = d;
  const authn = auth.chain;
  let front: TlsFront | undefined;
  let workers: TlsWorkerPool | undefined;
  metrics.gauge('orch_tls_connections_refused_total', 'Client connections closed at accept because the TLS worker (or front) held --max-connections-per-tls-worker.', () => front?.refusedConnections ?? 0);
  metrics.gauge('orch_tls_parent_accepted_connections_total', 'Client connections the main process accepted on the listening socket and handed to a TLS worker (only while no worker is ready).', () => workers?.parentAccepted ?? 0);
  // every part must be ready before /readyz is (issue #15 item 1, src/server/readiness.ts);
  // added before the port opens, so parts started after it count as not ready until they are
  addReadinessChecks(health, {
    store,
    watch,
    ...((opts.tlsWorkers ?? 0) > 0 ? { tlsWorkers: { configured: opts.tlsWorkers!, readyWorkers: () => workers?.readyWorkers() ?? 0 } } : {}),
    controllers: d.controllers,
    clock,
  });
  const socketPath = join(dataDir, 'run', `gateway-${process.pid}.sock`);
  // set once the port is open (securePort 0 picks one)
  let serverAddress = '';
  const flowControl = buildFlowControl(opts.limits ?? {}, { apiDomain: opts.apiDomain, clock, metrics });
  const router = createChain({
    ctx,
    apiDomain: opts.apiDomain,
    authn,
    authz: authorizer,
    health,
    watch,
    nonResource: withClusterStatus(nonResourceHandler(registry, metrics, auth.nonResource, clock, () => serverAddress, d.aggregator?.discovery), store),
    aggregated: d.aggregator?.apis,
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
  serverAddress = `${hostForUrl.includes(':') ? `[${hostForUrl}]` : hostForUrl}:${front.port}`;
  const url = `https://${serverAddress}`;
  return {
    port: front.port,
    url,
    hostForUrl,
    tlsWorkerPids: () => workers?.workerPids() ?? [],
    muxRequests: () => mux?.requests ?? 0,
    publishHealthNow: () => healthPublisher?.publishNow(),
    async closeRequests(timeoutMs) {
      await Promise.all([http.close(timeoutMs), mux?.close(timeoutMs)]);
    },
    stopHealthPublishing: () => healthPublisher?.stop(),
    closeFront: () => front!.close({ graceful: true, timeoutMs: 2000 }),
  };
}
