// Where kubelet runs lifecycle hooks around a container (kuberuntime's
// startContainer and killContainer; the handlers in lifecycle-hooks.ts):
// postStart right after the start — on failure the hook's message goes to the
// log only (an Event must not carry what a hook printed, it may hold
// secrets), a Warning `FailedPostStartHook` `PostStartHook failed`, and the
// container is killed (`Killing` `FailedPostStartHook`); preStop before every
// stop, for at most the grace period, the stop then getting what is left of
// it, at least 2 s (minimumGracePeriodInSeconds). Stopping a whole pod, a
// sidecar's StopContainer also waits for its turn after the hook
// (termination-order.ts), as kuberuntime's killContainer does.

import type { KubeObject } from './api-client.js';
import type { Clock } from './clock.js';
import { containerRef, formatPod, msg } from './events/kubelet-events.js';
import type { EventSink } from './events/recorder.js';
import { type Lifecycle, type LifecycleHandler, runHook } from './lifecycle-hooks.js';
import { kindOf, type PodSpec } from './pod-spec.js';
import type { ProbedContainer } from './probes/types.js';
import type { RuntimeClient } from './runtime/client.js';
import type { TerminationOrder } from './termination-order.js';

export type HookedContainer = ProbedContainer & { lifecycle?: Lifecycle };

export interface ContainerHooksOptions {
  runtime: Pick<RuntimeClient, 'execSync' | 'podSandboxStatus' | 'stopContainer'>;
  clock: Clock;
  events: EventSink;
  log: (m: string) => void;
}

export class ContainerHooks {
  constructor(private readonly o: ContainerHooksOptions) {}

  private run(pod: KubeObject, sandbox: string | undefined, c: HookedContainer, id: string, h: LifecycleHandler): Promise<string | undefined> {
    // httpGet without `host`: where the node reaches the pod, as probes do
    const address = async () => {
      const network = sandbox ? (await this.o.runtime.podSandboxStatus(sandbox)).network : null;
      return network?.hostReachableIp || network?.ip || '';
    };
    return runHook(h, { pod, container: c, containerId: id, address }, this.o.runtime, this.o.clock);
  }

  /**
   * runs the container's postStart hook; a failure stops the container (with
   * `grace`) and answers kubelet's message, which becomes the container's
   * waiting message (reason PostStartHookError) while it waits to be restarted
   */
  async postStart(pod: KubeObject, sandbox: string, c: HookedContainer, id: string, grace: number): Promise<string | undefined> {
    const hook = c.lifecycle?.postStart;
    const failed = hook && (await this.run(pod, sandbox, c, id, hook));
    if (!failed) return undefined;
    const ref = containerRef(pod, kindOf(pod.spec as unknown as PodSpec, c.name), c.name);
    this.o.log(`pod ${formatPod(pod)}: ${failed}`);
    this.o.events.event(ref, 'Warning', 'FailedPostStartHook', msg.postStartFailed());
    this.o.events.event(ref, 'Normal', 'Killing', 'FailedPostStartHook');
    await this.stop(pod, sandbox, c, id, grace);
    return failed;
  }

  /**
   * kuberuntime's killContainer: the preStop hook (when the spec is known), the
   * container's turn when the pod stops in order, then StopContainer with what
   * is left of the grace period (at least 2 s)
   */
  async stop(pod: KubeObject | undefined, sandbox: string | undefined, c: HookedContainer | undefined, id: string, grace: number, order?: TerminationOrder): Promise<void> {
    const hook = c?.lifecycle?.preStop;
    // a grace period cut by the hook or the wait keeps kubelet's minimum; an unhooked stop passes it on as given (0: at once)
    let cut = false;
    if (pod && c && hook && grace > 0) {
      cut = true;
      const began = this.o.clock.now();
      let timer: unknown;
      const limit = new Promise<undefined>((r) => (timer = this.o.clock.setTimeout(() => r(undefined), grace * 1000)));
      const failed = await Promise.race([this.run(pod, sandbox, c, id, hook), limit]);
      this.o.clock.clearTimeout(timer);
      if (failed) {
        this.o.log(`pod ${formatPod(pod)}: ${failed}`);
        this.o.events.event(containerRef(pod, kindOf(pod.spec as unknown as PodSpec, c.name), c.name), 'Warning', 'FailedPreStopHook', msg.preStopFailed());
      }
      grace -= Math.floor((this.o.clock.now() - began) / 1000);
    }
    if (order && c && grace > 0) {
      cut = true;
      grace -= Math.floor(await order.waitForTurn(c.name, grace));
    }
    try {
      await this.o.runtime.stopContainer(id, cut ? Math.max(2, grace) : grace);
    } finally {
      if (c) order?.terminated(c.name);
    }
  }
}
