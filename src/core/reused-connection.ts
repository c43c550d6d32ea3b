// A kept-alive HTTP connection that the server closes (its idle timeout) just
// as a client sends the next request on it: the request fails with a reset or
// "socket hang up" (both ECONNRESET) before any answer. Go's net/http, which
// kube's clients use, sends such a request again on a new connection when it
// is replayable; Node's http does not, and documents the `reusedSocket` test
// for callers to do it. The API server's own clients (node agents, aggregated
// API servers, webhooks) use this one rule.

import type { ClientRequest } from 'node:http';

/** methods sent again after a closed kept-alive connection (Go's `isReplayable`: no side effects) */
export const REPLAYABLE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE']);

/**
 * whether `err` (a request's 'error', before any answer) is the server closing the
 * kept-alive connection the request was sent on, so a new connection may succeed
 */
export function closedReusedConnection(req: ClientRequest, err: NodeJS.ErrnoException): boolean {
  return req.reusedSocket && err.code === 'ECONNRESET';
}
