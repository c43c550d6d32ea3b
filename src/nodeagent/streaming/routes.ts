// The agent's streaming endpoints (the kubelet's paths, which the API server
// proxies `pods/log`, `pods/exec`, `pods/attach` and `pods/portforward` to):
//   GET  /containerLogs/{namespace}/{pod}/{container}   plain HTTP (logs.ts)
//   GET|POST /exec/{namespace}/{pod}/{container}?command=…   WebSocket (remotecommand.ts) or SPDY/3.1 (remotecommand-spdy.ts)
//   GET|POST /attach/{namespace}/{pod}/{container}          WebSocket or SPDY/3.1
//   GET|POST /portForward/{namespace}/{pod}?port=…          WebSocket (portforward.ts) or SPDY/3.1 (portforward-spdy.ts)
// As the kubelet does, every one of them is authorized as the node
// subresource `proxy` (docs/nodeagent.md "Streams").

import type { Clock } from '../clock.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { WebSocket } from 'ws';
import type { KubeObject } from '../api-client.js';
import type { RuntimeClient } from '../runtime/client.js';
import { parseLogOptions, serveLogs } from './logs.js';
import { bridgePortForward, parsePorts, PORT_FORWARD_PROTOCOLS } from './portforward.js';
import { bridgeSpdyPortForward, SPDY_PORT_FORWARD_PROTOCOL, SPDY_TUNNEL_PROTOCOL } from './portforward-spdy.js';
import { bridgeRemoteCommand, REMOTE_COMMAND_PROTOCOLS } from './remotecommand.js';
import { bridgeSpdyRemoteCommand, SPDY_REMOTE_COMMAND_PROTOCOLS } from './remotecommand-spdy.js';
import { type ByteConn, webSocketBytes } from './byte-conn.js';
import { checkName, findContainer, findPod, HttpError, sandboxesOf } from './target.js';

export const STREAM_PATHS = new Set(['containerLogs', 'exec', 'attach', 'portForward']);

export interface StreamContext {
  runtime: RuntimeClient;
  nodeName: string;
  pods: () => KubeObject[];
  log: (m: string) => void;
  /** the agent's clock port (../clock.ts): `sinceSeconds` of a log request counts back from it */
  clock: Clock;
}

export interface StreamTarget {
  kind: 'containerLogs' | 'exec' | 'attach' | 'portForward';
  namespace: string;
  pod: string;
  container: string;
}

/** `/{kind}/{ns}/{pod}[/{container}]` → the target, or an HttpError */
export function parseStreamPath(pathname: string): StreamTarget {
  const parts = pathname.split('/').slice(1).map(decodeURIComponent);
  const kind = parts[0] as StreamTarget['kind'];
  const want = kind === 'portForward' ? 3 : 4;
  if (parts.length !== want || parts.some((p) => p === '')) {
    throw new HttpError(404, `expected /${kind}/{namespace}/{pod}${kind === 'portForward' ? '' : '/{container}'}, got ${pathname}`);
  }
  checkName('namespace', parts[1]!);
  checkName('pod', parts[2]!);
  if (want === 4) checkName('container', parts[3]!);
  return { kind, namespace: parts[1]!, pod: parts[2]!, container: parts[3] ?? '' };
}

/** plain HTTP: only the log is served without an upgrade */
export async function serveStreamHttp(sc: StreamContext, t: StreamTarget, url: URL, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (t.kind !== 'containerLogs') throw new HttpError(400, `${t.kind} needs a WebSocket upgrade (protocols ${(t.kind === 'portForward' ? PORT_FORWARD_PROTOCOLS : REMOTE_COMMAND_PROTOCOLS).join(', ')})`);
  if (req.method !== 'GET' && req.method !== 'HEAD') throw new HttpError(405, `method ${req.method} is not allowed on /containerLogs; use GET`);
  const opts = parseLogOptions(url.searchParams, sc.clock.now());
  const pod = findPod(sc.pods(), t.namespace, t.pod, sc.nodeName);
  const c = await findContainer(sc.runtime, pod, t.container, opts.previous);
  await serveLogs(sc.runtime, c.id, opts, res);
}

const flag = (q: URLSearchParams, k: string) => {
  const v = q.get(k);
  return v === '1' || v === 'true';
};

/** the subprotocols the agent speaks for this target: WebSocket's, or SPDY's `X-Stream-Protocol-Version` values */
export function protocolsFor(t: StreamTarget, spdy = false): string[] {
  if (spdy) return t.kind === 'portForward' ? [SPDY_PORT_FORWARD_PROTOCOL] : SPDY_REMOTE_COMMAND_PROTOCOLS;
  return t.kind === 'portForward' ? PORT_FORWARD_PROTOCOLS : REMOTE_COMMAND_PROTOCOLS;
}

/** what runs once the upgrade is done, on a WebSocket or on a SPDY/3.1 connection speaking `protocol` */
export interface PreparedStream {
  webSocket(ws: WebSocket): void;
  spdy(conn: ByteConn, protocol: string): void;
}

/**
 * Checks an upgrade before the handshake (errors are answered as HTTP) and
 * returns what runs on the connection once it is upgraded.
 */
export async function prepareStream(sc: StreamContext, t: StreamTarget, url: URL): Promise<PreparedStream> {
  const q = url.searchParams;
  const pod = findPod(sc.pods(), t.namespace, t.pod, sc.nodeName);
  if (t.kind === 'portForward') {
    const ports = parsePorts(q, false);
    const sb = (await sandboxesOf(sc.runtime, pod)).find((s) => s.state === 'SANDBOX_READY');
    if (!sb) throw new HttpError(404, `pod ${t.namespace}/${t.pod} has no running sandbox`);
    return {
      webSocket(ws) {
        if (ws.protocol === SPDY_TUNNEL_PROTOCOL) return bridgeSpdyPortForward(webSocketBytes(ws), sc.runtime, sb.id, sc.log);
        if (ports.length === 0) return ws.close(1008, 'query parameter "port" is required');
        bridgePortForward(ws, sc.runtime, sb.id, ports, sc.log);
      },
      spdy: (conn) => bridgeSpdyPortForward(conn, sc.runtime, sb.id, sc.log),
    };
  }
  if (t.kind === 'containerLogs') throw new HttpError(400, 'containerLogs is plain HTTP, not a WebSocket');
  const cmd = t.kind === 'exec' ? q.getAll('command') : [];
  if (t.kind === 'exec' && cmd.length === 0) throw new HttpError(400, 'you must specify at least one command for the container');
  const io = { stdin: flag(q, 'stdin'), stdout: flag(q, 'stdout'), stderr: flag(q, 'stderr'), tty: flag(q, 'tty') };
  // kube: "you must specify at least 1 of stdin, stdout, stderr"
  if (!io.stdin && !io.stdout && !io.stderr) throw new HttpError(400, 'you must specify at least 1 of stdin, stdout, stderr');
  const c = await findContainer(sc.runtime, pod, t.container);
  if (c.state !== 'CONTAINER_RUNNING') throw new HttpError(400, `container ${t.container} is not running (${c.state.replace('CONTAINER_', '').toLowerCase()})`);
  const start = () => {
    const call = t.kind === 'exec' ? sc.runtime.execStream() : sc.runtime.attachStream();
    call.write({ start: { containerId: c.id, cmd, ...io } });
    return call;
  };
  return {
    webSocket: (ws) => bridgeRemoteCommand(ws, start(), cmd, sc.log),
    spdy: (conn, protocol) => bridgeSpdyRemoteCommand(conn, protocol, io, start, cmd, sc.log),
  };
}
