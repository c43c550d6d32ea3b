// The messages between the TLS-worker parent (tls-workers.ts) and its worker
// processes (tls-worker-main.ts), over the child-process IPC channel
// (docs/tls.md "TLS in worker processes").

import type { HealthSnapshot } from './health-snapshot.js';
import type { TlsConnectionInfo } from './tls-front.js';

/** what a worker needs to start its front (the listening socket travels with it as the IPC handle) */
export interface TlsWorkerInit {
  key: string;
  cert: string;
  clientCA?: string;
  backendSocketPath: string;
  /** the main process's HTTP/2 channel (TlsFrontOptions.muxSocketPath) */
  muxSocketPath?: string;
  /** see TlsFrontOptions.http1OverMux / requestBodyTimeoutMs */
  http1OverMux?: boolean;
  requestBodyTimeoutMs?: number;
  maxConnections: number;
  handshakeTimeoutMs?: number;
  /** see TlsFrontOptions.http2 / http2MaxStreams */
  http2?: boolean;
  http2MaxStreams?: number;
  /** answer health probes in the worker from the parent's snapshots (src/gateway/health-probe.ts) */
  healthProbes?: boolean;
  /** the session ticket keys every worker shares (TlsFrontOptions.ticketKeys) */
  ticketKeys: Uint8Array;
}

export type ParentToWorker =
  | { t: 'init'; init: TlsWorkerInit }
  /** the registrations of one `register` message are recorded */
  | { t: 'ack'; ids: string[] }
  /** a connection the parent accepted; the worker answers `adopted` with the same id */
  | { t: 'socket'; id: number }
  /** send the listening socket back (`listen-handle`): the parent keeps that copy and stops accepting */
  | { t: 'give-listen-handle' }
  | { t: 'close'; graceful: boolean; timeoutMs?: number }
  /** the main loop's latest health check results (src/gateway/health-snapshot.ts) */
  | { t: 'health'; snapshot: HealthSnapshot };

export type WorkerToParent =
  | { t: 'ready' }
  | { t: 'adopted'; id: number }
  /** the listening socket, as the IPC handle: a copy nobody accepts on */
  | { t: 'listen-handle' }
  | { t: 'fatal'; message: string }
  /** connections that finished their handshake in one event-loop turn (one message, one ack, however many) */
  | { t: 'register'; items: { id: string; info: TlsConnectionInfo }[] }
  /** connections closed in the last moment (batched: the parent keeps entries 1 s longer anyway) */
  | { t: 'unregister'; ids: string[] }
  | { t: 'stats'; handshakeErrors: number; refusedConnections: number; backendRefusals: number };
