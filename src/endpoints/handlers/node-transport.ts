// How the API server reaches a node agent's HTTPS server (docs/nodeagent.md
// "Streams"). The registry only declares the shape; the composition root
// provides it (src/server/node-transport.ts: HTTPS and WebSocket clients with
// the apiserver-kubelet-client certificate).

import type { Readable } from 'node:stream';

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
