// The order in which a pod's containers stop (kubelet 1.32's
// terminationOrdering, pkg/kubelet/kuberuntime/kuberuntime_termination_order.go):
// every container's stop starts at once (its preStop hook runs then), but a
// sidecar's StopContainer waits until every main container has exited and the
// sidecars after it in spec.initContainers have exited — sidecars stop in
// reverse init order — or until its grace period runs out; the stop then gets
// what is left of the grace period.

import type { Clock } from './clock.js';
import { isSidecar, type PodSpec } from './pod-spec.js';

export class TerminationOrder {
  private readonly exited = new Map<string, { done: Promise<void>; resolve: () => void }>();
  private readonly prereqs = new Map<string, string[]>();

  /** `running`: the names of the containers being stopped; the others count as exited */
  constructor(spec: PodSpec, running: ReadonlySet<string>, private readonly clock: Clock) {
    const track = (name: string) => {
      let resolve!: () => void;
      const done = new Promise<void>((r) => (resolve = r));
      this.exited.set(name, { done, resolve });
      if (!running.has(name)) resolve();
    };
    for (const c of spec.containers) track(c.name);
    let later: string | undefined;
    for (const c of [...(spec.initContainers ?? [])].reverse()) {
      track(c.name);
      if (!isSidecar(c)) continue;
      this.prereqs.set(c.name, [...spec.containers.map((m) => m.name), ...(later ? [later] : [])]);
      later = c.name;
    }
  }

  /** waits for the container's turn, at most `graceSeconds`; answers the seconds waited */
  async waitForTurn(name: string, graceSeconds: number): Promise<number> {
    const waits = (this.prereqs.get(name) ?? []).map((n) => this.exited.get(n)!.done);
    if (graceSeconds <= 0 || waits.length === 0) return 0;
    const began = this.clock.now();
    let timer: unknown;
    const expired = new Promise<void>((r) => (timer = this.clock.setTimeout(() => r(), graceSeconds * 1000)));
    await Promise.race([Promise.all(waits), expired]);
    this.clock.clearTimeout(timer);
    return (this.clock.now() - began) / 1000;
  }

  /** the container has exited: those waiting on it may go on */
  terminated(name: string): void {
    this.exited.get(name)?.resolve();
  }
}
