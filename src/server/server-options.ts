// What startServer takes (the flags, as options) and what it hands back, and
// the defaults of the options that are parsed here.

import type { Random } from '../core/random.js';
import type { Clock } from '../core/clock.js';
import type { Authorizer } from '../auth/authz/types.js';
import type { Registry } from '../registry/registry.js';
import type { RevisionedStore } from '../store/types.js';
import type { WatchService } from '../watch/service.js';
import type { AuthorizationOptions } from './authorization-setup.js';
import type { NodeLifecycleSettings } from './node-lifecycle-setup.js';
import type { RequestLimitOptions } from './request-limits.js';
import type { AuthenticationOptions } from './authentication-setup.js';
import type { AdmissionPluginOptions } from './admission-plugins.js';
import type { ServiceResolver } from '../registry/admission/webhook-client.js';
import type { ClusterOptions } from './open-store.js';
import type { AuditOptions } from './audit-setup.js';

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
  /** `--proxy-client-cert-file`/`--proxy-client-key-file`: the client certificate presented to aggregated API servers (default: generated, <pkiDir>/front-proxy-client.crt) */
  proxyClient?: { certFile: string; keyFile: string };
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
  /** `--cluster-signing-duration`: the longest certificate the csrsigning controller issues, ms (default one year) */
  clusterSigningDurationMs?: number;
  /** the node lifecycle and taint eviction controllers (src/server/node-lifecycle-setup.ts) */
  nodeLifecycle?: NodeLifecycleSettings;
  /** `--metric-resolution`: how often node agents' resource metrics are scraped, ms (default 15 s; docs/metrics.md) */
  metricResolutionMs?: number;
  /** `--horizontal-pod-autoscaler-sync-period` and `--horizontal-pod-autoscaler-downscale-stabilization`, ms (defaults 15 s, 5 min) */
  hpa?: { syncPeriodMs?: number; downscaleStabilizationMs?: number };
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

