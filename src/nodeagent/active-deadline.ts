// spec.activeDeadlineSeconds (kubelet 1.32's activeDeadlineHandler,
// pkg/kubelet/active_deadline.go): a pod that has been active on the node —
// since its status.startTime — for at least that many seconds is failed:
// phase Failed, reason DeadlineExceeded, kubelet's message, a Normal Event of
// the same reason, and its containers are stopped. The field may be set or
// lowered on a running pod, so it is read at every sync.

export const DEADLINE_REASON = 'DeadlineExceeded';
export const DEADLINE_MESSAGE = 'Pod was active on the node longer than the specified deadline';

interface DeadlinePod {
  spec?: unknown;
  status?: Record<string, unknown>;
}

/** true once the pod has run for its activeDeadlineSeconds (a pod not started yet has not) */
export function pastActiveDeadline(pod: DeadlinePod, nowMs: number): boolean {
  const seconds = (pod.spec as { activeDeadlineSeconds?: number } | undefined)?.activeDeadlineSeconds;
  const start = pod.status?.startTime;
  if (typeof seconds !== 'number' || typeof start !== 'string') return false;
  return nowMs - Date.parse(start) >= seconds * 1000;
}
