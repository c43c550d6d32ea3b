// When the TLS front's dial of the uWS backend may be repeated (docs/tls.md
// "A full backend accept queue").
//
// uWS listens on its unix socket with a backlog of 512 (fixed in uSockets).
// While the API server's event loop is behind (a GC pause, a state
// snapshot, a burst) it accepts nothing, and the front keeps dialing: every
// kept-alive client connection whose backend was retired idle opens a new
// one for its next request (5,000 nodes renewing every 10 s dial 500 per
// second). Past 512 waiting connections the kernel refuses a non-blocking
// connect at once with EAGAIN. Nothing has reached uWS then, so dialing
// again is safe for any request, whatever its method; failing instead ended
// the client's connection under its request ("socket hang up",
// docs/scale.md). An ECONNREFUSED (nobody listens) still fails at once.

/** first wait before dialing again; doubled per refusal up to BACKEND_DIAL_MAX_WAIT_MS */
const FIRST_WAIT_MS = 5;
const BACKEND_DIAL_MAX_WAIT_MS = 200;
/**
 * How long a request waits for uWS to accept its connection before it fails
 * (kube-apiserver's default request timeout is 60 s; a server that has not
 * accepted a connection for this long is not behind but stuck).
 */
export const BACKEND_DIAL_PATIENCE_MS = 30_000;

/** the backend's accept queue was full: the connection was refused before anything was sent */
export function isBacklogFull(err: unknown): boolean {
  const e = err as NodeJS.ErrnoException | undefined;
  return e?.code === 'EAGAIN' && e.syscall === 'connect';
}

/** the wait before dial number `refusals + 1`, after `refusals` refused dials */
export function redialWaitMs(refusals: number): number {
  return Math.min(BACKEND_DIAL_MAX_WAIT_MS, FIRST_WAIT_MS * 2 ** Math.max(0, refusals - 1));
}
