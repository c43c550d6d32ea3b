// What the pod sync does with init containers, sidecars among them (kubelet
// 1.32's computeInitContainerActions and the KillPod rule of computePodActions,
// pkg/kubelet/kuberuntime/kuberuntime_manager.go; KEP-753). Pure: it reads the
// runtime's latest attempt of each container and what the prober says.
//
// A regular init container runs to completion (exit 0) before the next one
// starts. A sidecar (an init container with restartPolicy Always) lets the next
// one start once it has *started*: it is running and its startup probe
// succeeded (or it has none; its postStart hook ran inside the start). It is
// restarted whenever it exits, whatever the pod's restartPolicy, and killed
// and restarted when its startup or liveness probe fails. Init containers are
// read from the last one that has a status backwards (kubelet does so because
// finished ones may have been removed from the runtime): once the pod has
// initialized, only sidecars are kept running.

import { isSidecar, type ContainerSpec } from './pod-spec.js';
import type { ContainerStatus } from './runtime/types.js';

export interface InitActions {
  /** indices into spec.initContainers to start (or restart), in spec order */
  start: number[];
  /** running sidecars to kill first (their probe failed); each is also in `start` */
  kill: { index: number; why: 'liveness' | 'startup' }[];
  /** every init container has done its part: the main containers may run */
  initialized: boolean;
  /** a regular init container failed and the pod does not restart: the pod fails */
  failed: boolean;
}

/** what the prober says of a running container (ProbeManager.containerState/killReason) */
export interface ProbeView {
  started: boolean;
  kill?: 'liveness' | 'startup';
}

export function initActions(inits: readonly ContainerSpec[], mains: readonly ContainerSpec[], latest: ReadonlyMap<string, ContainerStatus>, policy: string, probe: (name: string, id: string) => ProbeView): InitActions {
  const out: InitActions = { start: [], kill: [], initialized: inits.length === 0, failed: false };
  if (inits.length === 0) return out;
  // a main container created or running: the pod initialized before (its init containers may be gone)
  let initialized = mains.some((c) => ['CONTAINER_CREATED', 'CONTAINER_RUNNING'].includes(latest.get(c.name)?.state ?? ''));
  let previously = initialized;
  const last = inits.length - 1;
  for (let i = last; i >= 0; i--) {
    const c = inits[i]!;
    const s = latest.get(c.name);
    const sidecar = isSidecar(c);
    if (!s) {
      // a sidecar of an initialized pod whose container is gone is started again
      if (previously && sidecar) out.start.push(i);
      continue;
    }
    if (previously && !sidecar) continue;
    if (s.state === 'CONTAINER_CREATED') out.start.push(i); // created but never started: start it again
    else if (s.state === 'CONTAINER_RUNNING' && sidecar) {
      const p = probe(c.name, s.id);
      if (p.kill === 'startup') {
        out.kill.push({ index: i, why: 'startup' });
        out.start.push(i);
      } else if (p.started) {
        if (i === last) initialized = true;
        else if (!previously) out.start.push(i + 1); // started for the first time: the next init container may start
        if (p.kill === 'liveness') {
          out.kill.push({ index: i, why: 'liveness' });
          out.start.push(i);
        }
      }
    } else if (s.state === 'CONTAINER_EXITED') {
      if (sidecar) out.start.push(i);
      else if (s.exitCode !== 0) {
        if (policy === 'Never') return { start: [], kill: [], initialized: false, failed: true };
        out.start.push(i);
      } else if (i === last) initialized = true;
      else out.start.push(i + 1);
    }
    previously = true;
  }
  if (!previously) out.start.push(0);
  out.start.reverse();
  out.initialized = initialized;
  return out;
}

/**
 * kubelet's KillPod rule (computePodActions: no main container kept running
 * and none to start): every main container has exited and none will be
 * restarted by the pod's restartPolicy. The pod is then done and its sidecars
 * are stopped, not restarted — which is what lets a Job's pod with a sidecar complete.
 */
export function mainsFinished(mains: readonly ContainerSpec[], latest: ReadonlyMap<string, ContainerStatus>, policy: string): boolean {
  return mains.every((c) => {
    const s = latest.get(c.name);
    return s?.state === 'CONTAINER_EXITED' && (policy === 'Never' || (policy === 'OnFailure' && s.exitCode === 0));
  });
}
