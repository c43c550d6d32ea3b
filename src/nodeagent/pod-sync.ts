// Runs one pod through the container runtime and reads its status back:
// a sandbox, then the init containers one at a time (each must succeed
// before the next; a sidecar — restartPolicy Always — need only have started,
// and keeps running: sidecars.ts), then the containers in order; restarts by
// restartPolicy with a crash-loop back-off; graceful stop, sidecars last
// (termination-order.ts). The pod's status (phase,
// conditions, containerStatuses) is computed from what the runtime reports.
// Ephemeral containers (kubectl debug) start once each in the pod's sandbox,
// never restarted, never probed, and count for neither phase nor readiness.
// Each step records kubelet's Event on the container (events/kubelet-events.ts).
// Probes (probes/manager.ts) decide containers' started/ready and which
// running containers are killed (a failed liveness or startup probe).
// Lifecycle hooks run after a start and before a stop (container-hooks.ts);
// termination messages are read from a file the agent mounts
// (termination-message.ts); activeDeadlineSeconds fails the pod (active-deadline.ts).

import { normalizeSysctlName } from '../core/sysctl.js';
import { DEADLINE_MESSAGE, DEADLINE_REASON, pastActiveDeadline } from './active-deadline.js';
import type { KubeObject } from './api-client.js';
import { type Clock, rfc3339 } from './clock.js';
import type { EnvReader } from './env-reader.js';
import { EtcHosts, type HostsPod, podHostnameAndDomain } from './etc-hosts.js';
import { type ContainerKind, containerRef, msg, podRef } from './events/kubelet-events.js';
import { type EventSink, noEvents } from './events/recorder.js';
import { ContainerHooks } from './container-hooks.js';
import { containerConfig, type ContainerConfigDeps, podIPOf } from './container-config.js';
import { apiContainerStatus } from './container-status.js';
import { ImagePuller } from './images.js';
import { defaultWaitingReason, initContainerReady, initializedCondition } from './init-status.js';
import { othersConditions, readinessGatesUnready } from './pod-conditions.js';
import { podPhase } from './pod-phase.js';
import { initActions, mainsFinished, type ProbeView } from './sidecars.js';
import { TerminationOrder } from './termination-order.js';
import { RuntimeCallError, type RuntimeClient } from './runtime/client.js';
import type { Container, ContainerStatus, PodSandboxConfig } from './runtime/types.js';
import type { ProbeManager } from './probes/manager.js';
import { bytesPerStatus, TerminationMessages } from './termination-message.js';
import { VolumeManager, type VolumeReader } from './volumes.js';
import { CrashLoopBackOff } from './crash-loop-backoff.js';
import { CONTAINER_HASH_ANNOTATION, containerHash, type ContainerSpec, isSidecar, kindOf, LABEL_CONTAINER, LABEL_POD_NAME, LABEL_POD_NAMESPACE, LABEL_POD_UID, type PodSpec } from './pod-spec.js';

type Status = Record<string, unknown>;
/**
 * kubelet's pod worker waits this long after a sync that failed (a container
 * that could not be created, or still backing off) before it syncs the pod
 * again; the agent relists every second, so it keeps the same pace per
 * container: a failing start is tried, and a BackOff recorded, at most this often.
 */
export const SYNC_ERROR_RETRY_MS = 10_000;

export interface PodSyncOptions {
  runtime: RuntimeClient;
  runtimeName: () => string;
  rootDir: string;
  hostIP: string;
  clock: Clock;
  log: (m: string) => void;
  /** reads ConfigMaps, Secrets and Services for container environments; none when standalone */
  envReader?: EnvReader;
  /** the node's allocatable (the default of resourceFieldRef limits) */
  allocatable?: () => Record<string, string>;
  /** kubelet's Events (none when standalone) */
  events?: EventSink;
  /** reads ConfigMaps and Secrets and requests tokens for volumes; none when standalone */
  volumeReader?: VolumeReader;
  /** kubelet's syncFrequency: API-backed volumes' refresh period */
  volumeResyncMs?: number;
  /** the label domain: volume plugin directories are `<domain>~configmap`, … (volumes.ts) */
  labelDomain?: string;
  /** the prober; without it containers are started and ready once running */
  probes?: ProbeManager;
  /** the cap of a crash-looping container's back-off (kubelet's crashLoopBackOff.maxContainerRestartPeriod; default 300 s) */
  crashLoopBackOffMaxMs?: number;
  /** kubelet's clusterDomain: the pod's FQDN in its /etc/hosts (etc-hosts.ts; default cluster.local) */
  clusterDomain?: string;
}

export class PodSyncer {
  /** why a container could not be created: uid/name → waiting reason and message */
  private readonly waiting = new Map<string, { reason: string; message: string }>();
  /** uid/name → the crash-loop back-off (kubelet's) */
  private readonly backoff: CrashLoopBackOff;
  /** uid/name → not before: a failed start is retried no sooner (SYNC_ERROR_RETRY_MS) */
  private readonly retryAt = new Map<string, number>();
  /** uid/name → not before: the next BackOff Event of a crash-looping container */
  private readonly backOffEventAt = new Map<string, number>();
  /** terminal pods seen with nothing left running (settle) */
  private readonly settled = new Set<string>();
  /** pods whose DeadlineExceeded Event was recorded */
  private readonly deadlineNoted = new Set<string>();
  private readonly events: EventSink;
  private readonly images: ImagePuller;
  readonly volumes: VolumeManager;
  private readonly messages: TerminationMessages;
  private readonly hooks: ContainerHooks;
  private readonly etcHosts: EtcHosts;
  private readonly configDeps: ContainerConfigDeps;

  constructor(private readonly o: PodSyncOptions) {
    this.events = o.events ?? noEvents;
    this.backoff = new CrashLoopBackOff(o.crashLoopBackOffMaxMs);
    this.messages = new TerminationMessages(o.rootDir, o.runtime);
    this.hooks = new ContainerHooks({ runtime: o.runtime, clock: o.clock, events: this.events, log: o.log });
    this.images = new ImagePuller(o.runtime, o.clock, this.events);
    this.etcHosts = new EtcHosts({ rootDir: o.rootDir, clusterDomain: o.clusterDomain ?? 'cluster.local' });
    this.volumes = new VolumeManager({ rootDir: o.rootDir, labelDomain: o.labelDomain ?? 'orch.io', reader: o.volumeReader, allocatable: o.allocatable, clock: o.clock, events: this.events, log: o.log, resyncMs: o.volumeResyncMs });
    this.configDeps = { ...o, images: this.images, volumes: this.volumes, etcHosts: this.etcHosts, messages: this.messages };
  }

  private sandboxConfig(pod: KubeObject): PodSandboxConfig {
    const m = pod.metadata;
    // kubelet's generatePodSandboxLinuxConfig, the names made dotted first (ConvertPodSysctlsVariableToDotsSeparator)
    const sysctls = (pod.spec as unknown as PodSpec).securityContext?.sysctls ?? [];
    return {
      metadata: { name: m.name, uid: m.uid!, namespace: m.namespace ?? 'default', attempt: 0 },
      hostname: podHostnameAndDomain(pod as unknown as HostsPod, '').hostname,
      labels: { [LABEL_POD_UID]: m.uid!, [LABEL_POD_NAME]: m.name, [LABEL_POD_NAMESPACE]: m.namespace ?? 'default' },
      annotations: {},
      ...(sysctls.length > 0 ? { linux: { sysctls: Object.fromEntries(sysctls.map((s) => [normalizeSysctlName(s.name), s.value])) } } : {}),
    };
  }

  private async sandboxFor(uid: string): Promise<string | undefined> {
    const items = await this.o.runtime.listPodSandbox({ [LABEL_POD_UID]: uid });
    return items.find((s) => s.state === 'SANDBOX_READY')?.id;
  }

  /**
   * latest attempt of each container of the pod's ready sandbox; `previous`,
   * when given, receives the attempt before it (kubelet's lastTerminationState)
   */
  private async latest(sandboxId: string, previous?: Map<string, ContainerStatus>): Promise<Map<string, ContainerStatus>> {
    const newest = new Map<string, Container>();
    const before = new Map<string, Container>();
    for (const c of await this.o.runtime.listContainers({ podSandboxId: sandboxId })) {
      const name = c.labels[LABEL_CONTAINER] ?? c.metadata.name;
      const top = newest.get(name);
      if (!top || top.metadata.attempt < c.metadata.attempt) {
        if (top) before.set(name, top);
        newest.set(name, c);
      } else if (!before.has(name) || before.get(name)!.metadata.attempt < c.metadata.attempt) before.set(name, c);
    }
    const out = new Map<string, ContainerStatus>();
    for (const [name, c] of newest) out.set(name, await this.o.runtime.containerStatus(c.id));
    if (previous) for (const [name, c] of before) previous.set(name, await this.o.runtime.containerStatus(c.id));
    return out;
  }

  /** bring the pod towards its spec; returns nothing: status() reads the result */
  async sync(pod: KubeObject): Promise<void> {
    const spec = pod.spec as unknown as PodSpec;
    const uid = pod.metadata.uid!;
    const phase = (pod.status?.phase as string | undefined) ?? 'Pending';
    if (phase === 'Succeeded' || phase === 'Failed') return this.settle(pod);
    if (pastActiveDeadline(pod, this.o.clock.now())) {
      this.deadlineEvent(pod);
      return this.kill(uid, spec.terminationGracePeriodSeconds ?? 30, pod);
    }
    // as kubelet: the volumes first; a pod whose volumes cannot be set up waits (ContainerCreating)
    const volumes = await this.volumes.mount(pod);
    if (!volumes) return;
    const sbConfig = this.sandboxConfig(pod);
    let sandbox = await this.sandboxFor(uid);
    if (!sandbox) {
      if (await this.ranToEnd(uid, spec)) return;
      try {
        sandbox = await this.o.runtime.runPodSandbox(sbConfig);
      } catch (e) {
        this.events.event(podRef(pod), 'Warning', 'FailedCreatePodSandBox', msg.sandboxFailed(e instanceof RuntimeCallError ? e.goError : (e as Error).message));
        throw e;
      }
    }
    const latest = await this.latest(sandbox);
    // as kubelet: ephemeral containers start even while the pod initializes, and only once
    for (const c of spec.ephemeralContainers ?? []) if (!latest.has(c.name)) await this.start(pod, sandbox, sbConfig, c, 0, 'ephemeralContainers');
    const policy = spec.restartPolicy ?? 'Always';
    const inits = spec.initContainers ?? [];
    const probe = (name: string, id: string): ProbeView => ({ started: this.o.probes?.containerState(uid, name, id).started ?? true, kill: this.o.probes?.killReason(uid, name, id) });
    const init = initActions(inits, spec.containers, latest, policy, probe);
    if (init.failed || (init.initialized && mainsFinished(spec.containers, latest, policy))) {
      // kubelet's KillPod: the pod is done (an init container failed under Never, or the main containers
      // finished); its sidecars still running stop (after the main containers, in reverse order) and are
      // not restarted, and the phase follows from the others (pod-phase.ts)
      if ([...latest.values()].some((s) => s.state === 'CONTAINER_RUNNING')) await this.kill(uid, spec.terminationGracePeriodSeconds ?? 30, pod);
      return;
    }
    for (const k of init.kill) {
      const c = inits[k.index]!;
      latest.set(c.name, await this.killUnhealthy(pod, sandbox, c, latest.get(c.name)!, k.why, policy));
    }
    for (const i of init.start) {
      const c = inits[i]!;
      const s = latest.get(c.name);
      if (!s) await this.start(pod, sandbox, sbConfig, c, 0, 'initContainers');
      else await this.restart(pod, sandbox, sbConfig, c, s, 'initContainers');
    }
    if (!init.initialized) return;
    for (const c of spec.containers) {
      let s = latest.get(c.name);
      if (s?.state === 'CONTAINER_RUNNING' && definitionChanged(c, s)) {
        await this.replaceChanged(pod, sandbox, sbConfig, c, s, 'containers');
        continue;
      }
      const unhealthy = s?.state === 'CONTAINER_RUNNING' ? this.o.probes?.killReason(uid, c.name, s.id) : undefined;
      if (s && unhealthy) s = await this.killUnhealthy(pod, sandbox, c, s, unhealthy, policy);
      if (!s) await this.start(pod, sandbox, sbConfig, c, 0, 'containers');
      else if (s.state === 'CONTAINER_EXITED' && (policy === 'Always' || (policy === 'OnFailure' && s.exitCode !== 0))) {
        await this.restart(pod, sandbox, sbConfig, c, s, 'containers');
      }
    }
  }

  /**
   * kubelet's computePodActions before it creates a sandbox: a pod whose sandbox was stopped after its
   * containers ran gets no new one when they would not run again — restartPolicy Never, or every main
   * container finished — so a pod stopped on completion (its sidecars killed) is not started over when a
   * sync still sees it Running (a watch event older than the status just written)
   */
  private async ranToEnd(uid: string, spec: PodSpec): Promise<boolean> {
    const old = (await this.o.runtime.listPodSandbox({ [LABEL_POD_UID]: uid })).sort((a, b) => b.createdAt - a.createdAt)[0];
    if (!old) return false;
    const ran = await this.latest(old.id);
    if (ran.size === 0) return false;
    const policy = spec.restartPolicy ?? 'Always';
    return policy === 'Never' || mainsFinished(spec.containers, ran, policy);
  }

  /**
   * a terminal pod keeps nothing running: a sidecar may still run when the status said Failed first (an init
   * container failed under Never between a sync and the status read); kubelet's pod worker then terminates
   * the pod. Looked at once per pod, not at every relist.
   */
  /** the pod's DeadlineExceeded Event, once (a sync or the status read, whichever sees the deadline first) */
  private deadlineEvent(pod: KubeObject): void {
    const uid = pod.metadata.uid!;
    if (this.deadlineNoted.has(uid)) return;
    this.deadlineNoted.add(uid);
    this.events.event(podRef(pod), 'Normal', DEADLINE_REASON, DEADLINE_MESSAGE);
  }

  private async settle(pod: KubeObject): Promise<void> {
    const uid = pod.metadata.uid!;
    if (this.settled.has(uid)) return;
    const sandbox = await this.sandboxFor(uid);
    const running = sandbox ? (await this.o.runtime.listContainers({ podSandboxId: sandbox })).some((c) => c.state === 'CONTAINER_RUNNING') : false;
    if (running) await this.kill(uid, (pod.spec as unknown as PodSpec).terminationGracePeriodSeconds ?? 30, pod);
    this.settled.add(uid);
  }

  /**
   * kubelet's computePodActions for a container that failed its liveness or
   * startup probe: Killing `Container c failed liveness probe, will be
   * restarted` (without the tail under restartPolicy Never; a sidecar's is
   * computeInitContainerActions' `Init container c failed liveness probe`),
   * stopped with the probe's terminationGracePeriodSeconds, else the pod's;
   * the restart then goes through the usual back-off. Returns the stopped
   * container's status.
   */
  private async killUnhealthy(pod: KubeObject, sandbox: string, c: ContainerSpec, s: ContainerStatus, why: 'liveness' | 'startup', policy: string): Promise<ContainerStatus> {
    const spec = pod.spec as unknown as PodSpec;
    const probe = why === 'liveness' ? c.livenessProbe : c.startupProbe;
    const grace = probe?.terminationGracePeriodSeconds ?? spec.terminationGracePeriodSeconds ?? 30;
    const kind = kindOf(spec, c.name);
    const message = kind === 'initContainers' ? `Init container ${c.name} failed ${why} probe` : `${msg.probeKilling(c.name, why)}${policy === 'Never' ? '' : ', will be restarted'}`;
    this.events.event(containerRef(pod, kind, c.name), 'Normal', 'Killing', message);
    await this.stopContainer(pod, sandbox, c.name, s.id, grace);
    return this.o.runtime.containerStatus(s.id);
  }

  /**
   * kubelet's computePodActions for a running container whose definition changed (its image, updated
   * on the pod): Killing `Container c definition changed, will be restarted`, stopped with the pod's
   * grace period, and started again whatever the restart policy
   */
  private async replaceChanged(pod: KubeObject, sandbox: string, sb: PodSandboxConfig, c: ContainerSpec, s: ContainerStatus, kind: ContainerKind): Promise<void> {
    this.events.event(containerRef(pod, kind, c.name), 'Normal', 'Killing', `Container ${c.name} definition changed, will be restarted`);
    await this.stopContainer(pod, sandbox, c.name, s.id, (pod.spec as unknown as PodSpec).terminationGracePeriodSeconds ?? 30);
    this.backoff.forget(`${pod.metadata.uid}/${c.name}`);
    await this.start(pod, sandbox, sb, c, s.metadata.attempt + 1, kind);
  }

  private async restart(pod: KubeObject, sandbox: string, sb: PodSandboxConfig, c: ContainerSpec, s: ContainerStatus, kind: ContainerKind): Promise<void> {
    const key = `${pod.metadata.uid}/${c.name}`;
    // kubelet's back-off is keyed by the container's hash: a changed definition starts without waiting
    if (definitionChanged(c, s)) this.backoff.forget(key);
    const now = this.o.clock.now();
    const waitMs = this.backoff.backingOff(key, s.metadata.attempt, now);
    if (waitMs !== undefined) {
      // kuberuntime's doBackOff: a Warning on every sync that finds the container still backing off
      if (now >= (this.backOffEventAt.get(key) ?? 0)) {
        this.backOffEventAt.set(key, now + SYNC_ERROR_RETRY_MS);
        this.events.event(containerRef(pod, kind, c.name), 'Warning', 'BackOff', msg.backOff(c.name, pod));
      }
      this.waiting.set(key, { reason: 'CrashLoopBackOff', message: msg.backOffWaiting(waitMs, c.name, pod) });
      return;
    }
    this.backoff.restarted(key, s.metadata.attempt, now);
    await this.start(pod, sandbox, sb, c, s.metadata.attempt + 1, kind);
  }

  private async start(pod: KubeObject, sandbox: string, sb: PodSandboxConfig, c: ContainerSpec, attempt: number, kind: ContainerKind): Promise<void> {
    const key = `${pod.metadata.uid}/${c.name}`;
    const spec = pod.spec as unknown as PodSpec;
    const ref = containerRef(pod, kind, c.name);
    if (this.o.clock.now() < (this.retryAt.get(key) ?? 0)) return;
    // kuberuntime's startContainer: each failure is also a Warning `Failed` with `Error: <message>`
    const fail = (reason: string, message: string, eventMessage = message) => {
      this.waiting.set(key, { reason, message });
      this.retryAt.set(key, this.o.clock.now() + SYNC_ERROR_RETRY_MS);
      this.events.event(ref, 'Warning', 'Failed', msg.error(eventMessage));
    };
    const made = await containerConfig(this.configDeps, pod, sandbox, sb, c, attempt, ref);
    if ('failure' in made) return fail(made.failure.reason, made.failure.message, made.failure.eventMessage);
    const { config } = made;
    let id: string;
    try {
      id = await this.o.runtime.createContainer(sandbox, config, sb);
    } catch (e) {
      if (!(e instanceof RuntimeCallError)) throw e;
      // kubelet keeps the gRPC status message (grpcstatus.FromError(err).Message())
      return fail('CreateContainerError', e.details);
    }
    this.events.event(ref, 'Normal', 'Created', msg.created(c.name));
    try {
      await this.o.runtime.startContainer(id);
    } catch (e) {
      if (!(e instanceof RuntimeCallError)) throw e;
      return fail('RunContainerError', e.details);
    }
    this.events.event(ref, 'Normal', 'Started', msg.started(c.name));
    this.waiting.delete(key);
    this.retryAt.delete(key);
    const hookError = await this.hooks.postStart(pod, sandbox, c, id, spec.terminationGracePeriodSeconds ?? 30);
    // kuberuntime's startContainer fails with ErrPostStartHook: the container (killed by the hook's failure)
    // waits with reason PostStartHookError and the hook's message until it is restarted (convertToAPIContainerStatuses)
    if (hookError) this.waiting.set(key, { reason: 'PostStartHookError', message: hookError });
  }

  private stopContainer(pod: KubeObject | undefined, sandbox: string | undefined, name: string, id: string, grace: number, order?: TerminationOrder): Promise<void> {
    const spec = pod?.spec as unknown as PodSpec | undefined;
    const c = [...(spec?.containers ?? []), ...(spec?.initContainers ?? []), ...(spec?.ephemeralContainers ?? [])].find((x) => x.name === name);
    return this.hooks.stop(pod, sandbox, c, id, grace, order);
  }

  /**
   * stop every container (grace seconds each) and the sandbox; the sandbox
   * stays until remove(). `pod` names the containers in the Killing events
   * (without it, as for a pod force-deleted from the API, the runtime's labels
   * do) and orders the stops: sidecars after the main containers, in reverse
   * init order (kuberuntime's killContainersWithSyncResult).
   */
  async kill(uid: string, graceSeconds: number, pod?: KubeObject): Promise<void> {
    for (const sb of await this.o.runtime.listPodSandbox({ [LABEL_POD_UID]: uid })) {
      const running = (await this.o.runtime.listContainers({ podSandboxId: sb.id })).filter((c) => c.state === 'CONTAINER_RUNNING');
      const owner = pod ?? { metadata: { name: sb.labels[LABEL_POD_NAME] ?? sb.metadata.name, namespace: sb.labels[LABEL_POD_NAMESPACE] ?? sb.metadata.namespace, uid } };
      for (const c of running) {
        const name = c.labels[LABEL_CONTAINER] ?? c.metadata.name;
        this.events.event(containerRef(owner, kindOf(pod?.spec as unknown as PodSpec | undefined, name), name), 'Normal', 'Killing', msg.stopping(name));
      }
      const nameOf = (c: Container) => c.labels[LABEL_CONTAINER] ?? c.metadata.name;
      const order = pod ? new TerminationOrder(pod.spec as unknown as PodSpec, new Set(running.map(nameOf)), this.o.clock) : undefined;
      await Promise.all(running.map((c) => this.stopContainer(pod, sb.id, nameOf(c), c.id, graceSeconds, order)));
      await this.o.runtime.stopPodSandbox(sb.id);
    }
  }

  async remove(uid: string): Promise<void> {
    for (const sb of await this.o.runtime.listPodSandbox({ [LABEL_POD_UID]: uid })) await this.o.runtime.removePodSandbox(sb.id);
    this.images.forget(uid);
    await this.volumes.remove(uid);
    this.messages.forget(uid);
    this.o.probes?.remove(uid);
    this.settled.delete(uid);
    this.deadlineNoted.delete(uid);
    for (const k of [...this.waiting.keys(), ...this.backoff.keys()]) {
      if (k.startsWith(`${uid}/`)) {
        this.waiting.delete(k);
        this.backoff.forget(k);
        this.retryAt.delete(k);
        this.backOffEventAt.delete(k);
      }
    }
  }

  /** pod uids that have sandboxes in the runtime */
  async runtimePods(): Promise<Set<string>> {
    return new Set((await this.o.runtime.listPodSandbox()).map((s) => s.labels[LABEL_POD_UID]).filter((u): u is string => !!u));
  }

  /** the pod's status as the runtime sees it */
  async status(pod: KubeObject): Promise<Status> {
    const spec = pod.spec as unknown as PodSpec;
    const uid = pod.metadata.uid!;
    const prev = pod.status ?? {};
    const sandboxes = await this.o.runtime.listPodSandbox({ [LABEL_POD_UID]: uid });
    const sb = sandboxes.find((s) => s.state === 'SANDBOX_READY') ?? sandboxes[0];
    const previous = new Map<string, ContainerStatus>();
    const latest = sb ? await this.latest(sb.id, previous) : new Map<string, ContainerStatus>();
    const specs = new Map([...(spec.initContainers ?? []), ...spec.containers].map((c) => [c.name, c]));
    const limit = bytesPerStatus(specs.size);
    for (const [name, s] of [...latest, ...previous]) if (specs.has(name)) await this.messages.load(uid, specs.get(name)!, s, limit);
    const network = sb ? (await this.o.runtime.podSandboxStatus(sb.id)).network : null;
    const podIP = podIPOf(spec, this.o.hostIP, network?.ip) ?? '';
    // probes connect where the node reaches the pod: the runtime's host-reachable address, else the pod IP
    this.o.probes?.update(pod, latest, network?.hostReachableIp || podIP);
    const policy = spec.restartPolicy ?? 'Always';

    const inits = spec.initContainers ?? [];
    const sidecars = new Set(inits.filter(isSidecar).map((c) => c.name));
    // what was reported before stands in for a container the runtime no longer knows (kubelet's convertToAPIContainerStatuses)
    const reported = new Map<string, Status>();
    for (const f of ['initContainerStatuses', 'containerStatuses', 'ephemeralContainerStatuses']) {
      for (const cs of (prev[f] ?? []) as Status[]) reported.set(String(cs.name), cs);
    }
    const waitingReason = defaultWaitingReason(inits.length > 0);
    // whether an exited container is restarted: a sidecar always, others by the pod's restartPolicy
    const restarts = (c: ContainerSpec, s: ContainerStatus | undefined) => isSidecar(c) || policy === 'Always' || (policy === 'OnFailure' && s?.exitCode !== 0);
    const deleting = !!pod.metadata.deletionTimestamp;
    const view = (c: ContainerSpec) => this.containerStatus(uid, c, latest.get(c.name), previous.get(c.name), waitingReason, reported.get(c.name), restarts(c, latest.get(c.name)), deleting);
    // kubelet's UpdatePodStatus: a running container (main or sidecar) is started and ready as its probes say
    const probed = (c: ContainerSpec, st: Status): Status => {
      const s = latest.get(c.name);
      if (s?.state !== 'CONTAINER_RUNNING' || !this.o.probes || !(st.state as Status | undefined)?.running) return st;
      return { ...st, ...this.o.probes.containerState(uid, c.name, s.id) };
    };
    // a regular init container is ready once it exited 0
    const initStatuses = inits.map((c): Status => (isSidecar(c) ? probed(c, view(c)) : { ...view(c), ready: initContainerReady(view(c)) }));
    const statuses = spec.containers.map((c): Status => probed(c, view(c)));
    // kubelet reports ephemeral containers never ready and without `started` (they have no probes)
    const ephemeralStatuses = (spec.ephemeralContainers ?? []).map((c) => {
      const { started: _s, ...st } = this.containerStatus(uid, c, latest.get(c.name), previous.get(c.name), 'ContainerCreating', reported.get(c.name), false);
      return { ...st, ready: false };
    });

    let phase: string = podPhase(spec, initStatuses, statuses);
    if (!sb && (prev.phase === 'Succeeded' || prev.phase === 'Failed')) phase = prev.phase as string;
    const terminal = prev.phase === 'Succeeded' || prev.phase === 'Failed';
    const deadline = terminal ? prev.reason === DEADLINE_REASON : pastActiveDeadline(pod, this.o.clock.now());
    // the deadline may pass between a sync and this read: the pod is then Failed without that sync's event
    if (deadline && !terminal) this.deadlineEvent(pod);
    if (deadline) phase = 'Failed';

    const initialized = initializedCondition(initStatuses, statuses, phase, sidecars);
    // kubelet's GenerateContainersReadyCondition: sidecars count (named first), `containers with unready status: [a b]`
    const unready = [...initStatuses.filter((s) => sidecars.has(String(s.name))), ...statuses].filter((s) => s.ready !== true).map((s) => String(s.name));
    const ready = phase === 'Running' && unready.length === 0;
    const notReadyMessage = unready.length ? `containers with unready status: [${unready.join(' ')}]` : undefined;
    const now = rfc3339(this.o.clock.now());
    const prevConds = (prev.conditions ?? []) as { type: string; status: string; lastTransitionTime?: string }[];
    // kubelet keeps the conditions it does not own (first, as it does) and gates Ready on the readiness gates' ones
    const others = othersConditions(prev);
    const gatesUnready = ready ? readinessGatesUnready(spec.readinessGates, others) : undefined;
    const cond = (type: string, ok: boolean, reason?: string, message?: string) => {
      const status = ok ? 'True' : 'False';
      const p = prevConds.find((c) => c.type === type);
      return { type, status, lastProbeTime: null, lastTransitionTime: p && p.status === status && p.lastTransitionTime ? p.lastTransitionTime : now, ...(reason && !ok ? { reason } : {}), ...(message && !ok ? { message } : {}) };
    };
    return {
      phase,
      ...(deadline ? { reason: DEADLINE_REASON, message: DEADLINE_MESSAGE } : {}),
      conditions: [
        ...others,
        cond('PodReadyToStartContainers', sb?.state === 'SANDBOX_READY'),
        { ...cond('Initialized', initialized.status === 'True', initialized.reason, initialized.message), ...(initialized.status === 'True' && initialized.reason ? { reason: initialized.reason } : {}) },
        // kubelet: a Succeeded pod is not ready because it completed, whatever its containers
        gatesUnready
          ? cond('Ready', false, 'ReadinessGatesNotReady', gatesUnready)
          : cond('Ready', ready, phase === 'Succeeded' ? 'PodCompleted' : 'ContainersNotReady', phase === 'Succeeded' ? undefined : notReadyMessage),
        cond('ContainersReady', ready, phase === 'Succeeded' ? 'PodCompleted' : 'ContainersNotReady', phase === 'Succeeded' ? undefined : notReadyMessage),
        cond('PodScheduled', true),
      ],
      hostIP: this.o.hostIP,
      hostIPs: this.o.hostIP ? [{ ip: this.o.hostIP }] : [],
      podIP: podIP || undefined,
      podIPs: podIP ? [{ ip: podIP }] : [],
      startTime: (prev.startTime as string | undefined) ?? now,
      ...(initStatuses.length ? { initContainerStatuses: initStatuses } : {}),
      containerStatuses: statuses,
      ...(ephemeralStatuses.length ? { ephemeralContainerStatuses: ephemeralStatuses } : {}),
      qosClass: prev.qosClass ?? 'BestEffort',
    };
  }

  /** the API's status of one container (container-status.ts), with why its last start failed */
  private containerStatus(uid: string, c: ContainerSpec, s: ContainerStatus | undefined, prev: ContainerStatus | undefined, defaultWaiting: string, reported: Status | undefined, restarts: boolean, deleting = false): Status {
    const waiting = this.waiting.get(`${uid}/${c.name}`);
    return apiContainerStatus({ spec: c, latest: s, previous: prev, waiting, message: (id) => this.messages.get(uid, id), runtimeName: this.o.runtimeName(), defaultWaiting, reported, restarts, deleting });
  }
}

/** the container `s` was created from another definition than `c` (one created before the hash annotation counts as unchanged) */
function definitionChanged(c: ContainerSpec, s: ContainerStatus): boolean {
  const was = s.annotations?.[CONTAINER_HASH_ANNOTATION];
  return was !== undefined && was !== containerHash(c);
}
