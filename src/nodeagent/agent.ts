// `orch nodeagent`: the composition of the node agent (spec 002). Loads the
// configuration, takes the lock file, connects to the container runtime (or
// starts the simulated one), registers the Node, keeps its conditions,
// status and Lease current, runs its pods and serves its HTTPS endpoints.
// Without a kubeconfig it runs standalone: static pods only (§1).

import { nodeReadyWording } from '../core/product-names.js';
import { mkdir } from 'node:fs/promises';
import { hostname, networkInterfaces, platform, release } from 'node:os';
import { join, resolve } from 'node:path';
import { ApiClient, type KubeObject } from './api-client.js';
import { type Clock, systemClock } from './clock.js';
import { NodeConditions } from './conditions.js';
import type { NodeAgentConfig } from './config/load.js';
import { sampleHost, pressures, type HostReadings } from './host.js';
import { checkKubeconfigs, readKubeconfig } from './kubeconfig.js';
import { LeaseHeartbeat } from './lease.js';
import { acquireLock, type FileLock } from './lock.js';
import { type NodeFacts, nodeLabels, nodeStatus, patchNodeStatus, registerNode, resources } from './node-status.js';
import { type AdmissionNode, goos } from './admission.js';
import { safeSysctls, sysctlAllowlist } from './sysctl-allowlist.js';
import { PodManager } from './pod-manager.js';
import { PodSyncer } from './pod-sync.js';
import { ProbeManager } from './probes/manager.js';
import { RuntimeClient } from './runtime/client.js';
import { type RunningSim, startRuntimeSim } from './runtime/sim-server.js';
import { type AgentServer, startAgentServer } from './server.js';
import { DevicePluginRegistry } from './device-plugins.js';
import { apiEnvReader, apiVolumeReader } from './env-reader.js';
import { EventRecorder, noEvents } from './events/recorder.js';
import { conditionEvent, msg, nodeRef } from './events/kubelet-events.js';
import { bootstrapKubeconfig } from './tls-bootstrap.js';
import { ClientCertificateRotation } from './cert-rotation.js';

export interface AgentOptions {
  config: NodeAgentConfig;
  kubeconfig?: string;
  /** `--bootstrap-kubeconfig`: TLS bootstrapping when `kubeconfig` is absent or expired (tls-bootstrap.ts) */
  bootstrapKubeconfig?: string;
  /** `--rotate-certificates`: renew the client certificate at 70–90 % of its lifetime (cert-rotation.ts) */
  rotateCertificates?: boolean;
  rootDir: string;
  certDir?: string;
  hostnameOverride?: string;
  nodeIP?: string;
  nodeExternalIP?: string;
  lockFile: string;
  domain: string;
  clock?: Clock;
  log?: (m: string) => void;
}

export interface RunningAgent {
  nodeName: string;
  port: number;
  runtimeEndpoint: string;
  /** true while the runtime answers (the Ready condition, /healthz, the watchdog) */
  healthy(): boolean;
  onReady(fn: () => void): void;
  stop(): Promise<void>;
}

function defaultIP(): string {
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return '127.0.0.1';
}

export async function startAgent(o: AgentOptions): Promise<RunningAgent> {
  const clock = o.clock ?? systemClock;
  const log = o.log ?? ((m: string) => process.stderr.write(`nodeagent: ${m}\n`));
  const c = o.config;
  const rootDir = resolve(o.rootDir);
  // a kubeconfig the agent cannot use stops it before anything starts (the lock, the root dir, the runtime)
  await checkKubeconfigs({ kubeconfig: o.kubeconfig, bootstrapKubeconfig: o.bootstrapKubeconfig, now: clock.now() });
  const lock: FileLock = acquireLock(o.lockFile);
  const cleanups: (() => Promise<void> | void)[] = [() => lock.release()];
  const stopAll = async () => {
    for (const f of cleanups.reverse()) await Promise.resolve(f()).catch(() => {});
  };
  try {
    for (const d of ['checkpoints', 'seccomp', 'device-plugins', 'pods']) await mkdir(join(rootDir, d), { recursive: true, mode: 0o700 });

    // the runtime (spec 002 §4.2): the configured endpoint, else the simulator on a socket under the root dir
    let sim: RunningSim | undefined;
    let endpoint = c.containerRuntimeEndpoint;
    if (!endpoint) {
      sim = await startRuntimeSim(join(rootDir, 'runtime-sim.sock'), [], clock);
      endpoint = `unix://${sim.socket}`;
      cleanups.push(() => sim!.stop());
      log(`no containerRuntimeEndpoint configured: started the simulated runtime on ${endpoint}`);
    }
    const runtime = new RuntimeClient(endpoint, c.imageServiceEndpoint || endpoint, Math.min(c.runtimeRequestTimeout, 30_000), clock);
    cleanups.push(() => runtime.close());

    const nodeName = (o.hostnameOverride ?? hostname()).toLowerCase();
    const facts: NodeFacts = {
      name: nodeName,
      hostname: nodeName,
      internalIP: o.nodeIP ?? defaultIP(),
      externalIP: o.nodeExternalIP,
      port: 0,
      maxPods: c.maxPods,
      systemReserved: c.systemReserved,
      kubeReserved: c.kubeReserved,
      evictionHard: c.evictionHard,
      labels: c.nodeLabels,
      taints: c.registerWithTaints,
      extended: {},
    };

    const certDir = o.certDir ?? join(rootDir, 'pki');
    if (o.bootstrapKubeconfig) {
      await bootstrapKubeconfig({ kubeconfig: o.kubeconfig!, bootstrapKubeconfig: o.bootstrapKubeconfig, certDir, nodeName, domain: o.domain, clock, log });
    }
    const credentials = o.kubeconfig ? await readKubeconfig(o.kubeconfig) : undefined;
    const api = credentials ? new ApiClient(credentials) : undefined;
    if (api) cleanups.push(() => api.close());
    else log('no --kubeconfig: running standalone (static pods only)');
    if (api && o.rotateCertificates) {
      if (credentials?.certPem) {
        const rotation = new ClientCertificateRotation({ api, certDir, nodeName, domain: o.domain, clock, log });
        rotation.start(credentials.certPem);
        cleanups.push(() => rotation.stop());
      } else log('--rotate-certificates: the kubeconfig has no client certificate to rotate');
    }
    // kubelet's Events (events/recorder.ts); standalone, there is nowhere to write them
    const events = api ? new EventRecorder({ api, clock, host: nodeName, log, qps: c.eventRecordQPS, burst: c.eventBurst }) : undefined;
    if (events) cleanups.push(() => events.stop());
    const nodeEvent = (reason: string) => events?.event(nodeRef(nodeName), 'Normal', reason, msg.nodeStatus(nodeName, reason));
    events?.event(nodeRef(nodeName), 'Normal', 'Starting', msg.starting());
    let unschedulable = false;
    // kubelet records NodeReady/NodeNotReady when Ready changes from what the stored Node said, so a
    // restart of a Ready node records none: the first decision waits for registration (registerNode)
    let lastReady: string | undefined;
    const readyEvent = (status: string) => {
      if (status === 'Unknown' || status === lastReady) return;
      lastReady = status;
      nodeEvent(status === 'True' ? 'NodeReady' : 'NodeNotReady');
    };

    let runtimeHealthy = false;
    let wasHealthy: boolean | undefined;
    let runtimeName = 'unknown';
    let node: KubeObject | undefined;
    let statusDirty = true;
    let lastReport = -Infinity;
    let readings: HostReadings | undefined;
    const readyListeners: (() => void)[] = [];
    let readyFired = false;
    const conditions = new NodeConditions(clock, c.evictionPressureTransitionPeriod, (type, status) => {
      if (type === 'Ready') {
        if (lastReady !== undefined) readyEvent(status);
      } else {
        const reason = conditionEvent(type, status);
        if (reason) nodeEvent(reason);
      }
      statusDirty = true;
      void tickStatus();
    });
    cleanups.push(() => conditions.stop());

    // spec 002 §4.2: device plugin registration on <root-dir>/device-plugins/nodeagent.sock
    const devices = new DevicePluginRegistry(join(rootDir, 'device-plugins'), log, () => {
      facts.extended = devices.capacity();
      statusDirty = true;
      void tickStatus();
    });
    await devices.start();
    facts.extended = devices.capacity();
    cleanups.push(() => devices.stop());

    const allocatable = () => (readings ? resources(readings, facts).allocatable : {});
    const envReader = api ? apiEnvReader(api) : undefined;
    const volumeReader = api ? apiVolumeReader(api, o.domain) : undefined;
    const labelDomain = o.domain === 'k8s.io' ? 'kubernetes.io' : o.domain;
    // a probe result that changes syncs the pod (readiness into its status, a liveness failure into a restart)
    let onProbeChange = (_uid: string) => {};
    const probes = new ProbeManager({ clock, runtime, events: events ?? noEvents, onChange: (uid) => onProbeChange(uid) });
    cleanups.push(() => probes.stop());
    const syncer = new PodSyncer({
      runtime, runtimeName: () => runtimeName, rootDir, hostIP: facts.internalIP!, clock, log, envReader, volumeReader, labelDomain, allocatable, events, probes,
      volumeResyncMs: c.syncFrequency, crashLoopBackOffMaxMs: c.crashLoopBackOff.maxContainerRestartPeriod, clusterDomain: c.clusterDomain,
    });
    // what admission knows of the node: the Node as last read (before registration, what the agent would
    // register), its allocatable and pressure as the agent measures them (kubelet's getNodeAnyWay)
    // kubelet's sysctl allowlist, built once at start: the safe set of this kernel and allowedUnsafeSysctls
    const sysctls = sysctlAllowlist([...safeSysctls(goos(platform()), release()), ...c.allowedUnsafeSysctls]);
    const admissionNode = (): AdmissionNode => ({
      node: node ?? { metadata: { name: nodeName, labels: nodeLabels(facts) }, spec: { taints: facts.taints } },
      allocatable: readings ? allocatable() : { pods: String(c.maxPods) },
      pressure: conditions.list().filter((x) => x.type.endsWith('Pressure') && x.status === 'True').map((x) => x.type),
      os: goos(platform()),
      memoryPressureTaint: `node.${labelDomain}/memory-pressure`,
      sysctls,
    });
    const admission = {
      node: admissionNode,
      refresh: async () => {
        if (!api) return undefined;
        node = await api.get<KubeObject>(`/api/v1/nodes/${nodeName}`);
        return admissionNode();
      },
    };
    const pods = new PodManager({ api, syncer, nodeName, nodeUid: () => node?.metadata.uid, domain: o.domain, staticPodPath: c.staticPodPath, relistMs: c.runtimeRelistPeriod, clock, log, admission, events });
    onProbeChange = (uid) => pods.schedule(uid);

    let statusTimer: unknown;
    let ticking: Promise<void> | undefined;
    let registerFailures = 0;
    const observe = async () => {
      readings = await sampleHost(rootDir, c.hostReadingsFile, log);
      const p = pressures(readings, c.evictionHard);
      conditions.observe('MemoryPressure', p.memory, p.memory ? 'NodeHasInsufficientMemory' : 'NodeHasSufficientMemory', `node has ${p.memory ? 'insufficient' : 'sufficient'} memory available`);
      conditions.observe('DiskPressure', p.disk, p.disk ? 'NodeHasDiskPressure' : 'NodeHasNoDiskPressure', `node has ${p.disk ? '' : 'no '}disk pressure`);
      conditions.observe('PIDPressure', p.pid, p.pid ? 'NodeHasInsufficientPID' : 'NodeHasSufficientPID', `node has ${p.pid ? 'insufficient' : 'sufficient'} PID available`);
      conditions.observe('NetworkUnavailable', !readings.networkReady, readings.networkReady ? 'NodeNetworkReady' : 'NodeNetworkUnavailable', readings.networkReady ? 'node network is configured' : 'node network is not configured');
      // kubelet's wording under --api-domain k8s.io (src/core/product-names.ts)
      const wording = nodeReadyWording(o.domain);
      let reason = wording.readyReason;
      let message = wording.readyMessage;
      try {
        if (!facts.runtime) {
          const v = await runtime.version();
          facts.runtime = { name: v.runtimeName, version: v.runtimeVersion };
          runtimeName = v.runtimeName;
        }
        const st = await runtime.status();
        const bad = (st.status?.conditions ?? []).filter((x) => !x.status);
        runtimeHealthy = bad.length === 0;
        if (!runtimeHealthy) {
          reason = wording.notReadyReason;
          message = `container runtime not ready: ${bad.map((b) => `${b.type}=false reason:${b.reason} message:${b.message}`).join(', ')}`;
        }
      } catch (e) {
        runtimeHealthy = false;
        reason = wording.notReadyReason;
        message = `container runtime is down: ${(e as Error).message}`;
      }
      if (runtimeHealthy !== wasHealthy) log(runtimeHealthy ? 'container runtime is ready' : `${reason}: ${message}`);
      wasHealthy = runtimeHealthy;
      conditions.observe('Ready', !runtimeHealthy, reason, message);
      if (runtimeHealthy && !readyFired) {
        readyFired = true;
        for (const f of readyListeners) f();
      }
    };
    // what changed since the last write, heartbeat times aside (spec 002 §8: status on change, else every report period)
    let lastKey = '';
    const changeKey = (status: Record<string, unknown>) =>
      JSON.stringify({ ...status, conditions: (status.conditions as Record<string, unknown>[]).map(({ lastHeartbeatTime: _h, ...rest }) => rest) });
    const report = async (force: boolean) => {
      if (!api || !readings) return;
      const status = await nodeStatus(facts, readings, conditions.list());
      const key = changeKey(status);
      if (!force && node && key === lastKey) return;
      if (!node) {
        node = await registerNode(api, facts, status, c.registerNode, (prev) => {
          lastReady = prev;
          readyEvent(conditions.list().find((x) => x.type === 'Ready')!.status);
        });
        log(`registered node ${nodeName}`);
      } else node = await patchNodeStatus(api, nodeName, status);
      // kubelet's RecordNodeSchedulableEvent, from the Node each status write returns
      if (!!node.spec?.unschedulable !== unschedulable) {
        unschedulable = !unschedulable;
        nodeEvent(unschedulable ? 'NodeNotSchedulable' : 'NodeSchedulable');
      }
      statusDirty = false;
      lastKey = key;
      lastReport = clock.now();
    };
    const tickStatus = (): Promise<void> => {
      if (ticking) return ticking;
      ticking = (async () => {
        try {
          await observe();
          await report(statusDirty || !node || clock.now() - lastReport >= c.nodeStatusReportFrequency);
          registerFailures = 0;
        } catch (e) {
          registerFailures += 1;
          log(`node status: ${(e as Error).message}`);
        } finally {
          ticking = undefined;
        }
      })();
      return ticking;
    };
    let stopped = false;
    const loop = async () => {
      await tickStatus();
      if (stopped) return;
      // unregistered: retry with back-off (200 ms .. 7 s) rather than waiting a whole period
      const delay = api && !node && registerFailures > 0 ? Math.min(7_000, 200 * 2 ** (registerFailures - 1)) : c.nodeStatusUpdateFrequency;
      statusTimer = clock.setTimeout(() => void loop(), delay);
    };
    cleanups.push(() => {
      stopped = true;
      clock.clearTimeout(statusTimer);
    });

    const server: AgentServer = await startAgentServer({ config: c, clusterCaPem: credentials?.caPem, rootDir, certDir, nodeName, domain: o.domain, api, runtime, healthy: () => runtimeHealthy, pods: () => pods.knownPods(), log, clock });
    facts.port = server.port;
    cleanups.push(() => server.close());

    await loop();
    pods.start();
    cleanups.push(async () => {
      pods.stop();
      await pods.drain();
    });
    if (api) {
      const lease = new LeaseHeartbeat({ api, clock, domain: o.domain, nodeName, nodeUid: () => node?.metadata.uid, durationSeconds: c.nodeLeaseDurationSeconds, intervalMs: c.nodeLeaseRenewInterval, log });
      lease.start();
      cleanups.push(() => lease.stop());
    }
    log(`node agent for node ${nodeName} is running (HTTPS port ${server.port}, runtime ${endpoint})`);
    return {
      nodeName,
      port: server.port,
      runtimeEndpoint: endpoint,
      healthy: () => runtimeHealthy,
      onReady(fn) {
        if (readyFired) fn();
        else readyListeners.push(fn);
      },
      stop: stopAll,
    };
  } catch (e) {
    await stopAll();
    throw e;
  }
}
