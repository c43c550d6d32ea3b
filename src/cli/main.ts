#!/usr/bin/env node
// `orch server` with kube-apiserver-style flags (README "Server flags").

import { Command, InvalidArgumentError, Option } from 'commander';
import { parseInitialCluster } from '../server/open-store.js';
import { startServer } from '../server/server.js';
import { addAuthenticationFlags, authenticationOptionsFrom } from './auth-flags.js';
import { installWallClockSkew } from '../core/wall-clock-skew.js';
import { addLimitFlags, limitOptionsFrom } from './limit-flags.js';
import { addAuthorizationFlags, authorizationOptionsFrom } from './authz-flags.js';
import { FeatureGateError, FeatureGates, parseFeatureGates } from '../server/feature-gates.js';
import { addNodeAgentCommands } from './nodeagent.js';
import { addBootstrapKubeconfigCommand } from './bootstrap-kubeconfig.js';
import { addAuditFlags, auditOptionsFrom } from './audit-flags.js';
import { addNodeLifecycleFlags, defaultTolerationOptionsFrom, nodeLifecycleOptionsFrom } from './node-lifecycle-flags.js';

/** `--flag`, `--flag=true`, `--flag=false` */
function trueOrFalse(v: string | undefined): boolean {
  if (v === undefined || v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  throw new InvalidArgumentError('must be true or false');
}

/** `--feature-gates=A=true,B=false` (spec 000 §3.3): unknown gates fail here, before anything starts */
function featureGates(v: string, prev?: Record<string, boolean>): Record<string, boolean> {
  try {
    const gates = { ...(prev ?? {}), ...parseFeatureGates(v) };
    new FeatureGates(gates);
    return gates;
  } catch (e) {
    if (e instanceof FeatureGateError) throw new InvalidArgumentError(e.message);
    throw e;
  }
}

function port(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('must be a port number (0-65535)');
  return n;
}

function domain(v: string): string {
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/.test(v)) {
    throw new InvalidArgumentError('must be a DNS domain such as orch.io or k8s.io');
  }
  return v;
}

function count(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 64) throw new InvalidArgumentError('must be a whole number from 0 to 64');
  return n;
}

function positiveDuration(v: string): number {
  const ms = duration(v);
  if (ms <= 0) throw new InvalidArgumentError('must be a duration above 0 such as 15s or 500ms');
  return ms;
}

function duration(v: string): number {
  const m = /^(\d+)(ms|s|m|h)?$/.exec(v);
  if (!m) throw new InvalidArgumentError('must be a duration such as 300s, 5m or 1h');
  const mult = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(m[2] ?? 's') as 'ms' | 's' | 'm' | 'h'];
  return Number(m[1]) * mult;
}

const program = new Command();
program.name('orch').description('orch: a Kubernetes-style control plane').version('0.1.0');

addNodeLifecycleFlags(addAuditFlags(addLimitFlags(addAuthorizationFlags(addAuthenticationFlags(program.command('server'))))))
  .description('run a control-plane member (single-node on the embedded store by default)')
  .option('--secure-port <port>', 'HTTPS port (0: any free port)', port, 6443)
  .option('--bind-address <ip>', 'address to listen on', '127.0.0.1')
  .option('--data-dir <dir>', 'where the store, certificates and admin.kubeconfig live', './.orch')
  .option('--api-domain <domain>', 'domain of the API groups (k8s.io lets unmodified Kubernetes clients use every group)', domain, 'orch.io')
  .option('--tls-san <name...>', 'extra DNS names or IPs for the serving certificate')
  .option('--runtime-config <list>', 'APIs to turn off or on: <group>/<version>[/<resource>][=true|false],... (e.g. coordination.orch.io/v1=false)')
  .addOption(new Option('--watch-cache-window <duration>', 'watch history kept per resource (e.g. 300s, 5m)').argParser(duration).default(300_000, '300s'))
  .addOption(new Option('--shutdown-timeout <duration>', 'how long in-flight requests get on SIGTERM (e.g. 10s)').argParser(duration).default(10_000, '10s'))
  .option('--feature-gates <gates>', 'feature gates, Name=true|false,... (e.g. AllowUnsafeMalformedObjectDeletion=true)', featureGates)
  // cluster membership, etcd-style (docs/raft.md "Running a cluster")
  .option('--name <name>', 'this member\'s name in --initial-cluster')
  .option('--initial-cluster <members>', 'run as a Raft member: name=host:peerPort,... (every member)')
  .option('--peer-port <port>', 'peer (Raft gRPC) port; default: the port of this member in --initial-cluster', port)
  .option('--pki-dir <dir>', 'certificates shared by every member (default <data-dir>/pki)')
  .option('--proxy-client-cert-file <file>', 'client certificate presented to aggregated API servers (default <pki-dir>/front-proxy-client.crt, generated)')
  .option('--proxy-client-key-file <file>', 'private key of --proxy-client-cert-file')
  .option('--enable-fault-injection', 'serve the loopback fault-injection endpoint (chaos tests only)')
  .option('--fault-injection-port <port>', 'port of the fault-injection endpoint', port, 0)
  .addOption(new Option('--raft-tick <duration>', 'Raft tick; the election timeout is 10-20 ticks (e.g. 100ms)').argParser(duration).default(100, '100ms'))
  // docs/tls.md: TLS in worker processes (1 descriptor per client here instead of 3, crypto off the API event loop); 0 = in-process
  .option('--service-cluster-ip-range <cidr>', 'IPv4 range Service cluster IPs are allocated from (the first address is the kubernetes Service\'s)', '10.96.0.0/12')
  .option('--service-node-port-range <range>', 'ports NodePort and LoadBalancer Services get their node ports from', '30000-32767')
  // docs/metrics.md: metrics-server's flag of the same name
  .addOption(new Option('--metric-resolution <duration>', 'how often node agents\' resource metrics are scraped for metrics.<domain> (e.g. 15s)').argParser(positiveDuration).default(15_000, '15s'))
  // kube-controller-manager's flags of the same names (docs/controllers.md "HorizontalPodAutoscaler")
  .addOption(new Option('--horizontal-pod-autoscaler-sync-period <duration>', 'how often every HorizontalPodAutoscaler is synced (e.g. 15s)').argParser(positiveDuration).default(15_000, '15s'))
  .addOption(new Option('--horizontal-pod-autoscaler-downscale-stabilization <duration>', 'the window of recommendations a scale-down looks back on (e.g. 5m)').argParser(duration).default(300_000, '5m0s'))
  // spec 001 §5.15; src/server/admission-plugins.ts (NodeRestriction is on by default)
  .option('--enable-admission-plugins <list>', 'admission plugins to turn on, comma separated (NodeRestriction, LimitRanger, ServiceAccount, PodSecurity, Priority, DefaultTolerationSeconds, DefaultStorageClass, StorageObjectInUseProtection, CertificateSubjectRestriction, DefaultIngressClass, ResourceQuota: all on by default)')
  .option('--disable-admission-plugins <list>', 'admission plugins to turn off, comma separated (e.g. NodeRestriction)')
  .option('--tls-workers <n>', 'TLS terminator worker processes (0: terminate TLS in the server process)', count, 2)
  // docs/reliability.md "Health that the main loop cannot delay": on by default with --tls-workers; false sends probes to the main process
  .option('--health-in-tls-workers [bool]', 'TLS workers answer HTTP/1.1 /livez, /readyz, /healthz from the main loop\'s health snapshots (default true)', trueOrFalse)
  .action(async (o: { healthInTlsWorkers?: boolean; securePort: number; bindAddress: string; dataDir: string; apiDomain: string; tlsSan?: string[]; watchCacheWindow: number; shutdownTimeout: number; name?: string; initialCluster?: string; peerPort?: number; pkiDir?: string; proxyClientCertFile?: string; proxyClientKeyFile?: string; enableFaultInjection?: boolean; faultInjectionPort: number; raftTick: number; tlsWorkers: number; runtimeConfig?: string }) => {
    let server;
    try {
      const initialCluster = o.initialCluster ? parseInitialCluster(o.initialCluster) : undefined;
      if (initialCluster && !o.name) throw new Error('--initial-cluster needs --name');
      server = await startServer({
        pkiDir: o.pkiDir,
        proxyClient: proxyClientOf(o.proxyClientCertFile, o.proxyClientKeyFile),
        cluster: initialCluster
          ? {
              name: o.name!,
              initialCluster,
              peerPort: o.peerPort,
              faultInjectionPort: o.enableFaultInjection ? o.faultInjectionPort : undefined,
              // clock jumps for the chaos tests, only with the explicit test flag
              ...(o.enableFaultInjection ? { faultInjectionClock: installWallClockSkew() } : {}),
              tickMs: o.raftTick,
            }
          : undefined,
        dataDir: o.dataDir,
        bindAddress: o.bindAddress,
        securePort: o.securePort,
        apiDomain: o.apiDomain,
        tlsSans: o.tlsSan,
        runtimeConfig: o.runtimeConfig,
        watchWindowMs: o.watchCacheWindow,
        shutdownTimeoutMs: o.shutdownTimeout,
        tlsWorkers: o.tlsWorkers,
        ...(o.healthInTlsWorkers !== undefined ? { healthInTlsWorkers: o.healthInTlsWorkers } : {}),
        featureGates: (o as { featureGates?: Record<string, boolean> }).featureGates,
        authn: authenticationOptionsFrom(o as Record<string, unknown>),
        authorization: authorizationOptionsFrom(o as Record<string, unknown>),
        limits: limitOptionsFrom(o as Record<string, unknown>),
        serviceClusterIpRange: (o as { serviceClusterIpRange?: string }).serviceClusterIpRange,
        serviceNodePortRange: (o as { serviceNodePortRange?: string }).serviceNodePortRange,
        admissionPlugins: { ...admissionPluginOptionsFrom(o as Record<string, unknown>), defaultTolerations: defaultTolerationOptionsFrom(o as Record<string, unknown>) },
        audit: auditOptionsFrom(o as Record<string, unknown>),
        nodeLifecycle: nodeLifecycleOptionsFrom(o as Record<string, unknown>),
        metricResolutionMs: (o as { metricResolution?: number }).metricResolution,
        hpa: {
          syncPeriodMs: (o as { horizontalPodAutoscalerSyncPeriod?: number }).horizontalPodAutoscalerSyncPeriod,
          downscaleStabilizationMs: (o as { horizontalPodAutoscalerDownscaleStabilization?: number }).horizontalPodAutoscalerDownscaleStabilization,
        },
        clusterSigningDurationMs: (o as { clusterSigningDuration?: number }).clusterSigningDuration,
      });
    } catch (e) {
      process.stderr.write(`orch: cannot start: ${(e as Error).message}\n`);
      process.exit(1);
    }
    process.stdout.write(
      `orch is serving on ${server.url}\n` +
        `  kubeconfig: ${server.kubeconfigPath}\n` +
        `  try:        kubectl --kubeconfig ${server.kubeconfigPath} get namespaces\n`,
    );
    let stopping = false;
    const stop = (sig: string) => {
      if (stopping) return;
      stopping = true;
      process.stdout.write(`orch: ${sig} received, shutting down\n`);
      server.shutdown().then(
        () => process.exit(0),
        (e: unknown) => {
          process.stderr.write(`orch: shutdown failed: ${(e as Error).message}\n`);
          process.exit(1);
        },
      );
    };
    process.on('SIGTERM', () => stop('SIGTERM'));
    process.on('SIGINT', () => stop('SIGINT'));
  });

addNodeAgentCommands(program);
addBootstrapKubeconfigCommand(program);

program.parseAsync(process.argv).catch((e: unknown) => {
  process.stderr.write(`orch: ${(e as Error).message}\n`);
  process.exit(1);
});

/** `--enable-admission-plugins` / `--disable-admission-plugins` as lists */
function admissionPluginOptionsFrom(o: Record<string, unknown>): { enable?: string[]; disable?: string[] } {
  const list = (v: unknown): string[] | undefined => (typeof v === 'string' ? v.split(',').map((x) => x.trim()).filter((x) => x !== '') : undefined);
  return { enable: list(o.enableAdmissionPlugins), disable: list(o.disableAdmissionPlugins) };
}

/** `--proxy-client-cert-file` and `--proxy-client-key-file` go together, as kube-apiserver requires */
function proxyClientOf(certFile: string | undefined, keyFile: string | undefined): { certFile: string; keyFile: string } | undefined {
  if (!certFile && !keyFile) return undefined;
  if (!certFile || !keyFile) throw new Error('--proxy-client-cert-file and --proxy-client-key-file must be given together');
  return { certFile, keyFile };
}
