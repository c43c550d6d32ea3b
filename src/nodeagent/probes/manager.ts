// The agent's prober (kubelet's prober manager, pkg/kubelet/prober): one
// worker per probe of every container of the pod spec, created when the pod
// is first synced and dropped with it. What they decide flows back into the
// pod sync (pod-sync.ts): containerStatuses[].started/ready and the pod's
// Ready/ContainersReady conditions (readiness, gated by startup), and the
// containers to kill (a liveness or startup failure). Every failed run is an
// `Unhealthy` Warning with kubelet's message (`Readiness probe failed: HTTP
// probe failed with statuscode: 500`). A changed result asks for a pod sync.
// Sidecars (init containers with restartPolicy Always) are probed like main
// containers (kubelet 1.32's prober manager adds their workers too): their
// startup decides when the next init container starts (sidecars.ts), their
// readiness counts for the pod's, and they restart whatever the pod's policy.

import type { KubeObject } from '../api-client.js';
import type { Clock } from '../clock.js';
import { containerRef } from '../events/kubelet-events.js';
import type { EventSink } from '../events/recorder.js';
import { isSidecar, kindOf, type PodSpec } from '../pod-spec.js';
import type { ContainerStatus } from '../runtime/types.js';
import { type ExecRuntime, runProbe } from './run.js';
import { handlerOf, kindName, type Outcome, type ProbeKind, type ProbedContainer, type ProbeSpec, timing } from './types.js';
import { type ContainerView, ProbeWorker } from './worker.js';

const KINDS: ProbeKind[] = ['startup', 'liveness', 'readiness'];
const field = { startup: 'startupProbe', liveness: 'livenessProbe', readiness: 'readinessProbe' } as const;

interface PodEntry {
  pod: KubeObject;
  address: string;
  statuses: Map<string, ContainerStatus>;
  /** container name → its workers by kind */
  workers: Map<string, Map<ProbeKind, ProbeWorker>>;
}

export interface ProbeManagerOptions {
  clock: Clock;
  runtime: ExecRuntime;
  events: EventSink;
  /** a probe result changed: sync the pod */
  onChange: (uid: string) => void;
  /** one probe run (tests replace it); default: run.ts against the runtime and the network */
  run?: (p: ProbeSpec, c: ProbedContainer, containerId: string, address: string, timeoutMs: number) => Promise<Outcome>;
}

export class ProbeManager {
  private readonly pods = new Map<string, PodEntry>();

  constructor(private readonly o: ProbeManagerOptions) {}

  /**
   * the pod as last synced: its spec, the runtime's latest attempt of each
   * container and the address probes connect to; makes the pod's workers the
   * first time
   */
  update(pod: KubeObject, statuses: Map<string, ContainerStatus>, address: string): void {
    const uid = pod.metadata.uid!;
    let e = this.pods.get(uid);
    if (!e) {
      e = { pod, address, statuses, workers: new Map() };
      this.pods.set(uid, e);
      this.addWorkers(uid, e);
    }
    e.pod = pod;
    e.address = address;
    e.statuses = statuses;
  }

  private addWorkers(uid: string, e: PodEntry): void {
    const spec = e.pod.spec as { containers?: ProbedContainer[]; initContainers?: (ProbedContainer & { restartPolicy?: string })[] } | undefined;
    const containers = [...(spec?.initContainers ?? []).filter(isSidecar), ...(spec?.containers ?? [])];
    for (const c of containers) {
      const byKind = new Map<ProbeKind, ProbeWorker>();
      for (const kind of KINDS) {
        const spec = c[field[kind]];
        if (!spec || !handlerOf(spec)) continue;
        const t = timing(spec, kind);
        const w = new ProbeWorker({
          kind,
          timing: t,
          clock: this.o.clock,
          view: () => this.view(uid, c.name),
          run: (id) => this.runOnce(uid, c, kind, spec, id, t.timeoutMs),
          onResult: () => this.o.onChange(uid),
        });
        byKind.set(kind, w);
      }
      if (byKind.size) e.workers.set(c.name, byKind);
    }
    for (const byKind of e.workers.values()) for (const w of byKind.values()) w.start();
  }

  private async runOnce(uid: string, c: ProbedContainer, kind: ProbeKind, spec: ProbeSpec, id: string, timeoutMs: number): Promise<Outcome> {
    const e = this.pods.get(uid);
    if (!e) return { result: 'error', output: 'pod is gone' };
    const run = this.o.run ?? ((p, cc, cid, address, t) => runProbe(p, { container: cc, containerId: cid, address }, this.o.runtime, t));
    const out = await run(spec, c, id, e.address, timeoutMs);
    // kubelet's prober.probe: every failed run is an event; a warning is one of its own
    const ref = containerRef(e.pod, kindOf(e.pod.spec as unknown as PodSpec, c.name), c.name);
    if (out.result === 'failure') this.o.events.event(ref, 'Warning', 'Unhealthy', `${kindName(kind)} probe failed: ${out.output}`);
    else if (out.result === 'error') this.o.events.event(ref, 'Warning', 'Unhealthy', `${kindName(kind)} probe errored: ${out.output}`);
    else if (out.result === 'warning') this.o.events.event(ref, 'Warning', 'ProbeWarning', `${kindName(kind)} probe warning: ${out.output}`);
    return out;
  }

  private view(uid: string, name: string): ContainerView | undefined {
    const e = this.pods.get(uid);
    const s = e?.statuses.get(name);
    if (!e || !s) return undefined;
    const spec = e.pod.spec as { restartPolicy?: string; initContainers?: { name: string; restartPolicy?: string }[] };
    const sidecar = spec.initContainers?.some((c) => c.name === name && isSidecar(c)) ?? false;
    const phase = (e.pod.status as { phase?: string } | undefined)?.phase;
    return {
      id: s.id,
      running: s.state === 'CONTAINER_RUNNING',
      exited: s.state === 'CONTAINER_EXITED',
      startedAtMs: Math.floor(s.startedAt / 1_000_000),
      started: this.started(e, name, s.id),
      // a sidecar is restarted whatever the pod's restartPolicy
      restartable: sidecar || spec.restartPolicy !== 'Never',
      deleting: !!e.pod.metadata.deletionTimestamp,
      terminal: phase === 'Succeeded' || phase === 'Failed',
    };
  }

  private started(e: PodEntry, name: string, id: string): boolean {
    const w = e.workers.get(name)?.get('startup');
    return !w || w.resultFor(id) === 'success';
  }

  /**
   * kubelet's UpdatePodStatus for a running container: started when its
   * startup probe succeeded (or it has none); ready when started and its
   * readiness probe succeeded (or it has none). A started container whose
   * readiness was never probed gets a probe at once, not a period later.
   */
  containerState(uid: string, name: string, containerId: string): { started: boolean; ready: boolean } {
    const e = this.pods.get(uid);
    if (!e) return { started: true, ready: true };
    if (!this.started(e, name, containerId)) return { started: false, ready: false };
    const w = e.workers.get(name)?.get('readiness');
    if (!w) return { started: true, ready: true };
    const ready = w.resultFor(containerId) === 'success';
    if (!ready && !w.probed(containerId)) w.trigger();
    return { started: true, ready };
  }

  /** why a running container must be killed (kubelet's computePodActions), if it must */
  killReason(uid: string, name: string, containerId: string): 'liveness' | 'startup' | undefined {
    const byKind = this.pods.get(uid)?.workers.get(name);
    if (byKind?.get('liveness')?.resultFor(containerId) === 'failure') return 'liveness';
    if (byKind?.get('startup')?.resultFor(containerId) === 'failure') return 'startup';
    return undefined;
  }

  /** the pod is gone: its workers stop */
  remove(uid: string): void {
    const e = this.pods.get(uid);
    if (!e) return;
    for (const byKind of e.workers.values()) for (const w of byKind.values()) w.stop();
    this.pods.delete(uid);
  }

  stop(): void {
    for (const uid of [...this.pods.keys()]) this.remove(uid);
  }
}
