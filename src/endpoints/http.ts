// The neutral request and response the filter chain works on. The transport
// (src/gateway/http-server.ts, uWebSockets.js) produces and consumes these;
// tests drive the chain with them directly, with no socket
// (test/unit/endpoints-chain.test.ts).

import type { StreamSink } from '../core/stream.js';
import type { ByteTunnel, RequestInfo, UpgradeSession } from './request.js';

export interface HttpRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  /** lower-case header names; repeated headers joined with ", " */
  headers: Map<string, string>;
  /** the PROXY-protocol source address the TLS terminator stamped on this connection ('' when none) */
  proxiedAddress: string;
  body: Uint8Array;
  signal: AbortSignal;
  /** the RequestInfo of method, path and query when the transport already parsed it (the early shedder), so the chain does not parse it again */
  info?: RequestInfo;
}

export interface PlainResponse {
  stream?: false;
  status: number;
  headers: [string, string][];
  body: Uint8Array | string;
  /** compress when the client accepts gzip and the body is large */
  compressible?: boolean;
}

export interface StreamingResponse {
  stream: true;
  status: number;
  headers: [string, string][];
  start(sink: StreamSink): void;
  stop(): void;
}

/** the request becomes a WebSocket speaking `session.protocol` (only for requests that asked for one) */
export interface UpgradeResponse {
  stream?: false;
  upgrade: UpgradeSession;
  status: 101;
  headers: [string, string][];
}

/**
 * The connection becomes `tunnel`'s (a SPDY/3.1 upgrade). uWS cannot hand a
 * connection over, so the transport gives it a one-time token and the TLS
 * front brings the client's connection to the tunnel (docs/tls.md "SPDY upgrades").
 */
export interface TunnelResponse {
  stream?: false;
  tunnel: ByteTunnel;
  status: 101;
  headers: [string, string][];
}

export type HttpResponse = PlainResponse | StreamingResponse | UpgradeResponse | TunnelResponse;
