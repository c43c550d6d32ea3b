// A pod's phase from its container statuses as the API shows them: kubelet
// 1.32's getPhase (pkg/kubelet/kubelet_pods.go), which counts sidecars
// (restartable init containers, KEP-753) apart: a sidecar that has not started
// keeps the pod Pending, a running one counts as running, and a terminated one
// is ignored, so a pod whose main containers all finished is Succeeded or
// Failed by those alone once its sidecars have been stopped.

import { isSidecar, type PodSpec } from './pod-spec.js';

/** the API's container status, as far as the phase reads it */
export interface PhaseStatus {
  name?: unknown;
  started?: unknown;
  state?: { running?: unknown; terminated?: { exitCode?: number }; waiting?: unknown };
  lastState?: { terminated?: { exitCode?: number } };
}

export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed';

export function podPhase(spec: PodSpec, initStatuses: readonly PhaseStatus[], statuses: readonly PhaseStatus[]): PodPhase {
  const find = (list: readonly PhaseStatus[], name: string) => list.find((s) => s.name === name);
  let pendingInit = 0;
  let pendingSidecars = 0;
  let failedInit = 0;
  let unknown = 0;
  let running = 0;
  let waiting = 0;
  let stopped = 0;
  let succeeded = 0;
  for (const c of spec.initContainers ?? []) {
    const s = find(initStatuses, c.name);
    const st = s?.state ?? {};
    if (isSidecar(c)) {
      if (!s) unknown++;
      else if (st.running !== undefined) {
        if (s.started !== true) pendingSidecars++;
        running++;
      } else if (st.terminated === undefined && !s.lastState?.terminated) {
        // waiting (or no state) and never ran: not started yet
        pendingSidecars++;
        if (st.waiting !== undefined) waiting++;
        else unknown++;
      }
      continue;
    }
    if (!s || st.running !== undefined) pendingInit++;
    else if (st.terminated) {
      if (st.terminated.exitCode !== 0) failedInit++;
    } else if (st.waiting !== undefined && s.lastState?.terminated) {
      if (s.lastState.terminated.exitCode !== 0) failedInit++;
    } else pendingInit++;
  }
  for (const c of spec.containers) {
    const s = find(statuses, c.name);
    const st = s?.state ?? {};
    if (!s) unknown++;
    else if (st.running !== undefined) running++;
    else if (st.terminated) {
      stopped++;
      if (st.terminated.exitCode === 0) succeeded++;
    } else if (st.waiting !== undefined) {
      if (s.lastState?.terminated) stopped++;
      else waiting++;
    } else unknown++;
  }
  const policy = spec.restartPolicy ?? 'Always';
  if (failedInit > 0 && policy === 'Never') return 'Failed';
  // a sidecar not started keeps the pod Pending, unless every main container already stopped (a node reboot)
  if (pendingInit > 0 || (pendingSidecars > 0 && stopped !== spec.containers.length) || waiting > 0) return 'Pending';
  if (running > 0 && unknown === 0) return 'Running';
  if (running === 0 && stopped > 0 && unknown === 0) {
    if (policy === 'Always') return 'Running'; // restarting
    if (stopped === succeeded) return 'Succeeded';
    return policy === 'Never' ? 'Failed' : 'Running';
  }
  return 'Pending';
}
