// One container's status as the API shows it, from the runtime's latest
// attempt and the one before it (kubelet's convertToAPIContainerStatuses).

import { rfc3339 } from './clock.js';
import type { ContainerStatus } from './runtime/types.js';

type Status = Record<string, unknown>;

export interface ContainerStatusInput {
  spec: { name: string; image: string };
  /** the runtime's latest attempt, none when it has not been created (or the runtime forgot it) */
  latest?: ContainerStatus;
  /** the attempt before it */
  previous?: ContainerStatus;
  /** why its last start failed (kubelet's reason cache): CrashLoopBackOff, PostStartHookError, ErrImagePull… */
  waiting?: { reason: string; message: string };
  /** an exited attempt's termination message, by container id */
  message: (id: string) => string | undefined;
  runtimeName: string;
  /** the waiting reason of a container not created yet (PodInitializing / ContainerCreating) */
  defaultWaiting: string;
  /** what was reported before, standing in for a container the runtime no longer knows */
  reported?: Status;
  /** the container will be restarted once exited (a sidecar, or by the pod's restartPolicy) */
  restarts: boolean;
  /** the pod has a deletionTimestamp */
  deleting?: boolean;
}

/** kubelet's lastState of a Running container the runtime lost (convertToAPIContainerStatuses, kube 1.32's text) */
export const LOST_CONTAINER = {
  exitCode: 137,
  reason: 'ContainerStatusUnknown',
  message: 'The container could not be located when the pod was deleted.  The container used to be Running',
};

/**
 * kubelet's container status: `state` from the latest attempt, `lastState`
 * (always present, `{}` when none, as kube's struct field) the termination
 * of the attempt before it — or of the latest one while it waits to be
 * restarted (CrashLoopBackOff, PostStartHookError). A container the runtime
 * does not know keeps a terminated state reported before; otherwise it waits,
 * keeping its restart count and lastState (convertToAPIContainerStatuses defaults).
 */
export function apiContainerStatus(i: ContainerStatusInput): Status {
  const { latest: s, waiting: w, reported } = i;
  const time = (ns: number) => rfc3339(Math.floor(ns / 1_000_000));
  const id = (x: ContainerStatus) => `${i.runtimeName}://${x.id}`;
  const terminated = (x: ContainerStatus) => {
    const message = i.message(x.id);
    return {
      exitCode: x.exitCode, reason: x.reason || (x.exitCode === 0 ? 'Completed' : 'Error'), ...(message ? { message } : {}), startedAt: x.startedAt ? time(x.startedAt) : null, finishedAt: time(x.finishedAt),
      containerID: id(x),
    };
  };
  const lastState = i.previous?.state === 'CONTAINER_EXITED' ? { terminated: terminated(i.previous) } : {};
  // kubelet reports the image the container was created from (the runtime's), the spec's before there is one
  const base = { name: i.spec.name, image: s?.image?.image || i.spec.image, imageID: s?.imageRef ?? '', restartCount: s?.metadata.attempt ?? 0, lastState };
  // an exited container that will be restarted waits with the reason its last start failed
  if (s && s.state === 'CONTAINER_EXITED' && (w?.reason === 'CrashLoopBackOff' || (w?.reason === 'PostStartHookError' && i.restarts))) {
    return { ...base, containerID: id(s), ready: false, started: false, state: { waiting: w }, lastState: { terminated: terminated(s) } };
  }
  if (!s) {
    const was = reported?.state as Status | undefined;
    if (was?.terminated) return reported!;
    const kept = reported ? { restartCount: (reported.restartCount as number | undefined) ?? 0, lastState: (reported.lastState as Status | undefined) ?? {} } : {};
    const waiting = w ?? { reason: i.defaultWaiting };
    // kubelet: it was Running, now unknown to the runtime and waiting by default: it ended (137), and
    // unless the pod is being deleted, counts as a restart
    if (was?.running && waiting.reason === i.defaultWaiting && kept.lastState && !kept.lastState.terminated) {
      return { ...base, restartCount: kept.restartCount! + (i.deleting ? 0 : 1), lastState: { terminated: { ...LOST_CONTAINER } }, ready: false, started: false, state: { waiting } };
    }
    return { ...base, ...kept, ready: false, started: false, state: { waiting } };
  }
  const containerID = id(s);
  if (s.state === 'CONTAINER_RUNNING') return { ...base, containerID, ready: true, started: true, state: { running: { startedAt: time(s.startedAt) } } };
  if (s.state === 'CONTAINER_EXITED') return { ...base, containerID, ready: false, started: false, state: { terminated: terminated(s) } };
  return { ...base, containerID, ready: false, started: false, state: { waiting: w ?? { reason: 'ContainerCreating' } } };
}
