// One probe of one container (kubelet's prober worker, pkg/kubelet/prober/worker.go):
// probes at once, then every periodSeconds on the agent's clock, and turns
// runs into a result with the thresholds. A small class, not an XState
// machine: like kubelet's doProbe, every tick is one decision over the
// container's current view and two counters (the last result and its run
// length); the only lasting mode, "on hold" after a liveness or startup
// failure until the container is replaced, is a flag. Startup gating is not
// a state of this worker either: the view says whether the container has
// started (the startup worker's result, manager.ts).

import type { Clock } from '../clock.js';
import type { Outcome, ProbeKind, Timing } from './types.js';

export type ProbeResult = 'success' | 'failure' | 'unknown';

/** what the worker reads of its container at each tick */
export interface ContainerView {
  /** the runtime's container id ('' = not created yet) */
  id: string;
  running: boolean;
  exited: boolean;
  /** ms on the agent's clock */
  startedAtMs: number;
  /** the startup probe succeeded, or there is none */
  started: boolean;
  /** the pod's restartPolicy is not Never */
  restartable: boolean;
  /** the pod is being deleted */
  deleting: boolean;
  /** the pod has succeeded or failed */
  terminal: boolean;
}

export interface WorkerOptions {
  kind: ProbeKind;
  timing: Timing;
  clock: Clock;
  view: () => ContainerView | undefined;
  /** runs the probe once on the container (and records its events) */
  run: (containerId: string) => Promise<Outcome>;
  /** the worker's result for the container changed */
  onResult: (containerId: string, result: ProbeResult) => void;
}

/** kubelet's initial results: not ready until proven, live until proven otherwise, not started */
const INITIAL: Record<ProbeKind, ProbeResult> = { readiness: 'failure', liveness: 'success', startup: 'unknown' };

export class ProbeWorker {
  private containerId = '';
  private result: ProbeResult = 'unknown';
  private lastResult?: 'success' | 'failure';
  private resultRun = 0;
  private onHold = false;
  /** probes run on the current container (the manager triggers the first readiness probe) */
  private runs = 0;
  private timer: unknown;
  private inFlight = false;
  private stopped = false;

  constructor(private readonly o: WorkerOptions) {}

  start(): void {
    void this.tick();
  }

  stop(): void {
    this.stopped = true;
    this.o.clock.clearTimeout(this.timer);
  }

  get done(): boolean {
    return this.stopped;
  }

  /** probe now rather than at the next period (kubelet's manualTriggerCh); ignored while a probe runs */
  trigger(): void {
    if (this.inFlight || this.stopped) return;
    this.o.clock.clearTimeout(this.timer);
    void this.tick();
  }

  /** the result for this container, undefined when the worker has not seen it */
  resultFor(containerId: string): ProbeResult | undefined {
    return containerId && containerId === this.containerId ? this.result : undefined;
  }

  /** probes have run on this container */
  probed(containerId: string): boolean {
    return containerId === this.containerId && this.runs > 0;
  }

  private set(r: ProbeResult): void {
    if (r === this.result) return;
    this.result = r;
    this.o.onResult(this.containerId, r);
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    this.inFlight = true;
    let again = true;
    try {
      again = await this.doProbe();
    } finally {
      this.inFlight = false;
    }
    if (!again) this.stop();
    else if (!this.stopped) this.timer = this.o.clock.setTimeout(() => void this.tick(), this.o.timing.periodMs);
  }

  /** kubelet's doProbe; false = stop probing for good */
  private async doProbe(): Promise<boolean> {
    const c = this.o.view();
    if (!c) return true; // no status yet
    if (c.terminal) return false;
    if (!c.id) return true;
    if (c.id !== this.containerId) {
      // a new container: its own result, probing resumes
      this.containerId = c.id;
      this.result = INITIAL[this.o.kind];
      this.o.onResult(c.id, this.result);
      this.onHold = false;
      this.runs = 0;
    }
    if (!c.running) {
      this.set('failure');
      // nothing more to probe when the container will not be restarted
      return !c.exited || c.restartable;
    }
    if (c.deleting && this.o.kind !== 'readiness') {
      // a quiet shutdown: liveness and startup stop, so no kill races the deletion
      this.set('success');
      return false;
    }
    if (this.onHold) return true;
    if (this.o.clock.now() - c.startedAtMs < this.o.timing.initialDelayMs) return true;
    // startup gates the others; once started, the startup probe rests
    if (c.started !== (this.o.kind !== 'startup')) return true;

    const id = c.id;
    const out = await this.o.run(id);
    if (this.stopped || id !== this.containerId) return true;
    this.runs += 1;
    if (out.result === 'error') return true; // kubelet throws an errored run away
    const r = out.result === 'failure' ? 'failure' : 'success';
    if (r === this.lastResult) this.resultRun += 1;
    else {
      this.lastResult = r;
      this.resultRun = 1;
    }
    const { failureThreshold, successThreshold } = this.o.timing;
    if ((r === 'failure' && this.resultRun < failureThreshold) || (r === 'success' && this.resultRun < successThreshold)) return true;
    this.set(r);
    if (r === 'failure' && this.o.kind !== 'readiness') {
      // the container is killed and replaced: nothing to probe until then
      this.onHold = true;
      this.resultRun = 0;
    }
    return true;
  }
}
