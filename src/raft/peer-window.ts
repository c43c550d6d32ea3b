// The receive window of a member's peer server (docs/raft.md "Transport").
//
// Raft messages travel on client streams into the receiving member's gRPC
// server, so what a leader may send a follower before that follower's event
// loop has read it is the server's HTTP/2 window: Node's default, 65,535
// bytes per stream and per connection. A batch of 64 1 KiB creates is an
// ~84 KiB append: the leader wrote 64 KiB, then waited for the follower's
// WINDOW_UPDATE and for its own event loop to be free again to write the rest
// (measured: a follower got the append 3.4–4.0 ms after the leader's Ready,
// 2.5 ms with this window; docs/performance.md "The peers' receive window").
//
// grpc-js (pinned, package-lock.json) takes no option for its server's HTTP/2
// settings, only for its client sessions ('grpc-node.flow_control_window').
// So the window is set on its server's own HTTP/2 options and sessions; the
// fields are checked, and `receiveWindowOf` reports what a session really has
// (test/raft/transport.test.ts fails if an upgrade moves them).

import type { EventEmitter } from 'node:events';
import type { Http2Session } from 'node:http2';
import type * as grpc from '@grpc/grpc-js';

/** bytes a peer may send per stream and per connection before this member reads them */
export const PEER_RECEIVE_WINDOW = 4 * 1024 * 1024;

interface GrpcServerInternals {
  commonServerOptions?: { settings?: Record<string, unknown> };
  http2Servers?: Map<EventEmitter, unknown>;
  sessions?: Map<Http2Session, unknown>;
}

const internals = (server: grpc.Server): GrpcServerInternals => server as unknown as GrpcServerInternals;

/** before bindAsync: streams the server opens advertise the window (SETTINGS_INITIAL_WINDOW_SIZE) */
export function widenStreamWindow(server: grpc.Server, bytes = PEER_RECEIVE_WINDOW): boolean {
  const o = internals(server).commonServerOptions;
  if (!o) return false;
  o.settings = { ...(o.settings ?? {}), initialWindowSize: bytes };
  return true;
}

/** after bindAsync: each new connection's window grows to `bytes` once its settings are sent */
export function widenConnectionWindow(server: grpc.Server, bytes = PEER_RECEIVE_WINDOW): boolean {
  const servers = internals(server).http2Servers;
  if (!(servers instanceof Map)) return false;
  for (const h of servers.keys()) {
    h.on('session', (session: Http2Session) => {
      session.once('localSettings', () => {
        try {
          session.setLocalWindowSize(bytes);
        } catch {
          // the connection is already gone
        }
      });
    });
  }
  return true;
}

/** the smallest receive window among the server's open peer connections (undefined: none open) */
export function receiveWindowOf(server: grpc.Server): number | undefined {
  const sessions = internals(server).sessions;
  if (!(sessions instanceof Map)) return undefined;
  let min: number | undefined;
  for (const s of sessions.keys()) {
    // the connection's window and the one each new stream starts with
    const w = Math.min(s.state.effectiveLocalWindowSize ?? 0, s.localSettings.initialWindowSize ?? 0);
    min = min === undefined ? w : Math.min(min, w);
  }
  return min;
}
