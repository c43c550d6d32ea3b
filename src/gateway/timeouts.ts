// Watch durations (kube's --min-request-timeout). The request deadline filter
// is src/endpoints/filters/timeout.ts; it is re-exported here for callers of the transport.

export { isLongRunning, requestTimeoutMs, timeoutResponse } from '../endpoints/filters/timeout.js';
export { parseGoDuration } from '../core/duration.js';

/** a watch without timeoutSeconds lasts a random time in [min, 2·min) (kube), so load spreads after restarts */
export function watchTimeoutMs(minRequestTimeoutMs: number, random: () => number): number {
  return minRequestTimeoutMs * (1 + random());
}
