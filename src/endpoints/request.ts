import type { Duplex } from 'node:stream';
import type { UserInfo } from '../auth/types.js';
import type { StreamSink } from '../core/stream.js';
import type { ProtobufCatalog } from '../registry/protobuf-catalog.js';
import type { ResourceDefinition } from '../registry/types.js';
import type { PartialTarget } from '../registry/partial-metadata.js';

/** What the gateway learned from the URL (spec 000 §4.1), as Kubernetes' RequestInfo. */
export interface RequestInfo {
  isResourceRequest: boolean;
  path: string;
  /** get list watch create update patch delete deletecollection (or the lower-case HTTP method for non-resource requests) */
  verb: string;
  apiPrefix?: 'api' | 'apis';
  group: string;
  version: string;
  namespace: string;
  resource: string;
  subresource: string;
  name: string;
}

/** The response representation the client negotiated (spec 000 §4.3). */
export interface Negotiated {
  format: 'json' | 'yaml' | 'cbor' | 'protobuf';
  /** set when the client asked for `as=Table` */
  table?: { group: string; version: string };
  /** set when the client asked for `as=PartialObjectMetadata` or `as=PartialObjectMetadataList` */
  partial?: PartialTarget;
  pretty: boolean;
  /** protobuf: the media type name the client used (echoed in Content-Type; spec 000 §4.3) */
  mediaType?: string;
  /** protobuf: the next acceptable representation, for bodies without a protobuf form */
  fallback?: Negotiated;
}

export interface ApiRequest {
  info: RequestInfo;
  def: ResourceDefinition;
  query: URLSearchParams;
  headers: Map<string, string>;
  /** decoded body bytes, if any */
  body?: Uint8Array;
  contentType: string;
  user: UserInfo;
  accept: Negotiated;
  /** set by the gateway when the client goes away */
  signal: AbortSignal;
  /** set by the gateway: decodes protobuf request bodies (spec 000 §2.7) */
  protobuf?: ProtobufCatalog;
  /** set by the gateway when the request is audited: annotations land on its audit event (docs/audit.md) */
  audit?: AuditAnnotator;
}

/** Adds an annotation to the request's audit event, e.g. an admission decision (issue 16 item 3). */
export interface AuditAnnotator {
  annotate(key: string, value: string): void;
}

export interface ApiResponse {
  status: number;
  /** an object to encode in the negotiated format */
  body: unknown;
  /**
   * `body` as compact JSON when the handler already has that text (a
   * create's stored encoding with its resourceVersion, src/registry/stored-json.ts);
   * used for non-pretty JSON responses instead of stringifying `body` again
   */
  bodyJson?: string;
  headers?: Record<string, string>;
  /** `Warning: 299 - "<text>"` headers (spec 000 §4.8) */
  warnings?: string[];
  /** bytes sent as they come instead of `body` (pods/log, proxies); `contentType` as given */
  raw?: RawStream;
  /** the request becomes a WebSocket (exec, attach, port-forward) */
  upgrade?: UpgradeSession;
  /** the connection is handed over as raw bytes (a SPDY/3.1 upgrade of exec, attach, port-forward) */
  tunnel?: ByteTunnel;
}

/**
 * An upgraded HTTP/1.1 connection relayed byte for byte (SPDY/3.1): the gateway
 * writes nothing of its own; the tunnel writes the `101` head and what follows.
 */
export interface ByteTunnel {
  /** the client's connection, right after its upgrade request */
  open(client: Duplex): void;
  /** the client's connection never came (the hand-over expired) or the server is closing */
  close(): void;
}

/** A response body produced over time, with its media type. */
export interface RawStream {
  contentType: string;
  start(sink: StreamSink): void;
  stop(): void;
}

/** The gateway's end of an accepted WebSocket, as the session sees it. */
export interface WebSocketPeer {
  /** false when the message is queued behind others (back-pressure) */
  send(data: Uint8Array): boolean;
  bufferedAmount(): number;
  end(code?: number, reason?: string): void;
}

/** What runs on a WebSocket the gateway accepted with `protocol`. */
export interface UpgradeSession {
  protocol: string;
  open(peer: WebSocketPeer): void;
  message(data: Buffer): void;
  /** the peer's queue drained */
  drain(): void;
  /** the client went away or the server is closing */
  close(): void;
}

/** A long-running response (watch) that pushes encoded events. */
export interface StreamResponse {
  stream: true;
  status: number;
  contentType: string;
  /** starts producing; `write` returns false when the client is not keeping up */
  start(sink: StreamSink): void;
  /** the client went away or the server is shutting down */
  stop(): void;
}

export type { StreamSink } from '../core/stream.js';

// VerbHandler takes an ApiRequest and gives an ApiResponse (see VerbHandlerTypes in ./types.ts)
declare module '../registry/types.js' {
  interface VerbHandlerTypes {
    req: ApiRequest;
    res: ApiResponse;
  }
}
