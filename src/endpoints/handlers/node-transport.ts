// How the API server reaches a node agent's HTTPS server (docs/nodeagent.md
// "Streams"). The registry only declares the shape; the composition root
// provides it (src/server/node-transport.ts: HTTPS and WebSocket clients with
// the apiserver-kubelet-client certificate).

import type { Duplex, Readable } from 'node:stream';

/** where a node's agent serves: the node's address and `status.daemonEndpoints.kubeletEndpoint.Port` */
export interface NodeEndpoint {
  nodeName: string;
  host: string;
  port: number;
}

export interface NodeHttpResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Readable;
}

/** the agent's end of a WebSocket the API server opened */
export interface NodeWebSocket {
  /** the subprotocol the agent chose */
  readonly protocol: string;
  send(data: Uint8Array): void;
  bufferedAmount(): number;
  /** stop / restart reading the agent's messages (back-pressure from the client's side) */
  pause(): void;
  resume(): void;
  close(code?: number): void;
  onMessage(fn: (data: Buffer) => void): void;
  onClose(fn: () => void): void;
}

/** a connection the agent upgraded (SPDY/3.1): its 101's header fields and the raw connection */
export interface NodeUpgrade {
  headers: Record<string, string | string[] | undefined>;
  socket: Duplex;
  /** bytes the agent sent after its 101 head */
  head: Buffer;
}

/** the agent refused the request or the handshake: its status and body (a Status, usually) */
export class NodeRefusal extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(`the node agent answered ${status}`);
  }
}

/** the agent could not be reached at all */
export class NodeUnreachable extends Error {}

export interface NodeTransport {
  request(ep: NodeEndpoint, method: string, pathAndQuery: string, opts: { headers?: Record<string, string>; body?: Uint8Array; signal?: AbortSignal }): Promise<NodeHttpResponse>;
  /** rejects with NodeRefusal or NodeUnreachable */
  websocket(ep: NodeEndpoint, pathAndQuery: string, protocols: string[]): Promise<NodeWebSocket>;
  /** an HTTP/1.1 upgrade (`headers` carry Connection, Upgrade and the protocol's own); rejects with NodeRefusal or NodeUnreachable */
  upgrade(ep: NodeEndpoint, method: string, pathAndQuery: string, headers: Record<string, string | string[]>): Promise<NodeUpgrade>;
  /**
   * An HTTP request to `port` of a pod, carried by a port-forward through the pod's agent (pods/proxy,
   * services/proxy: pod addresses are not reachable from the API server here).
   */
  podRequest(
    ep: NodeEndpoint,
    pod: { namespace: string; name: string; port: number },
    method: string,
    pathAndQuery: string,
    opts: { headers?: Record<string, string>; body?: Uint8Array; signal?: AbortSignal },
  ): Promise<NodeHttpResponse>;
}
