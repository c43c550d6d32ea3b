// Entry of a TLS worker process (started by src/gateway/tls-workers.ts).
//
// Runs one TLS front on the listening socket the parent sends with `init`,
// registers every connection's identity with the parent before forwarding
// its first byte to the parent's uWS socket, and exits when told to close or
// when the parent goes away (IPC `disconnect`), so no worker outlives it.
import { type TimerHandle, systemClock } from '../core/clock.js';
import type { SendHandle } from 'node:child_process';
import type { Socket } from 'node:net';
import { startTlsFront, type TlsConnectionInfo, type TlsFront } from './tls-front.js';
import type { ParentToWorker, WorkerToParent } from './tls-worker-protocol.js';
import { SnapshotHolder } from './health-snapshot.js';
import { h2ProbeAnswerer, probeAnswerer } from './health-probe.js';

/** at most this often a changed handshake-error count is reported */
const STATS_INTERVAL_MS = 250;
/** descriptors per client connection here: the TLS socket and this end of the unix-socket pair */
const FDS_PER_CONNECTION = 2;
/** closed connections are reported together at most this often (the parent keeps entries 1 s after anyway) */
const UNREGISTER_BATCH_MS = 100;

function send(msg: WorkerToParent): void {
  if (process.connected) process.send!(msg);
}

if (!process.send) {
  process.stderr.write('tls-worker-main: must be started by the API server (no IPC channel)\n');
  process.exit(1);
}

/** connections registered with the parent and not acknowledged yet */
const pendingAcks = new Map<string, { acked: Promise<void>; resolve: () => void }>();
// IPC messages are batched: each one costs a serialization and a write that
// wakes the parent, which showed as ≈ 10 % of a worker's CPU per new
// connection in a profile (bench/tls-front.ts, docs/tls.md "CPU figures").
// Registrations of one event-loop turn go in one message (setImmediate: the
// handshakes finished in the same poll phase), closes every 100 ms.
let registerBatch: { id: string; info: TlsConnectionInfo }[] = [];
let unregisterBatch: string[] = [];
const flushRegisters = (): void => {
  const items = registerBatch;
  registerBatch = [];
  send({ t: 'register', items });
};
const flushUnregisters = (): void => {
  const ids = unregisterBatch;
  unregisterBatch = [];
  send({ t: 'unregister', ids });
};
let front: TlsFront | undefined;
/** the listening socket as received with `init` (the front listens on it); sent back when the parent asks */
let listenHandle: object | undefined;
let handshakeErrors = 0;
let refusedConnections = 0;
let backendRefusals = 0;
let reported = { handshakeErrors: 0, refusedConnections: 0, backendRefusals: 0 };
let statsTimer: TimerHandle | undefined;
/** the parent's latest health snapshot: probes are answered from it here (src/gateway/health-probe.ts) */
const health = new SnapshotHolder(systemClock);

// The parent ends us (graceful close, or it died); Ctrl-C in a terminal
// reaches the whole process group, and the parent decides for us.
process.on('disconnect', () => process.exit(0));
process.on('SIGINT', () => undefined);

const reportStats = (): void => {
  statsTimer = undefined;
  if (handshakeErrors === reported.handshakeErrors && refusedConnections === reported.refusedConnections && backendRefusals === reported.backendRefusals) return;
  reported = { handshakeErrors, refusedConnections, backendRefusals };
  send({ t: 'stats', handshakeErrors, refusedConnections, backendRefusals });
};

process.on('message', (msg: ParentToWorker, handle?: object | Socket) => {
  switch (msg.t) {
    case 'init':
      listenHandle = handle;
      startTlsFront({
        host: '',
        port: 0,
        key: msg.init.key,
        cert: msg.init.cert,
        ...(msg.init.clientCA !== undefined ? { clientCA: msg.init.clientCA } : {}),
        backendSocketPath: msg.init.backendSocketPath,
        ...(msg.init.muxSocketPath !== undefined ? { muxSocketPath: msg.init.muxSocketPath } : {}),
        ...(msg.init.http1OverMux !== undefined ? { http1OverMux: msg.init.http1OverMux } : {}),
        ...(msg.init.requestBodyTimeoutMs !== undefined ? { requestBodyTimeoutMs: msg.init.requestBodyTimeoutMs } : {}),
        // health probes answered here from the parent's snapshot, the rest forwarded (src/gateway/tls-h1-connection.ts)
        ...(msg.init.healthProbes
          ? { answerProbe: probeAnswerer({ snapshot: () => health.current(), clock: systemClock }), answerH2Probe: h2ProbeAnswerer({ snapshot: () => health.current(), clock: systemClock }) }
          : {}),
        maxConnections: msg.init.maxConnections,
        ...(msg.init.handshakeTimeoutMs !== undefined ? { handshakeTimeoutMs: msg.init.handshakeTimeoutMs } : {}),
        ...(msg.init.http2 !== undefined ? { http2: msg.init.http2 } : {}),
        ...(msg.init.http2MaxStreams !== undefined ? { http2MaxStreams: msg.init.http2MaxStreams } : {}),
        fdsPerConnection: FDS_PER_CONNECTION,
        // the parent's keys: a ticket from any worker resumes here
        ticketKeys: Buffer.from(msg.init.ticketKeys),
        // the raw listening handle: nothing accepts on it before the front listens
        ...(handle ? { listenHandle: handle } : {}),
        register: (id, info) => {
          if (!process.connected) return Promise.reject(new Error('parent gone'));
          let resolve!: () => void;
          const acked = new Promise<void>((r) => (resolve = r));
          pendingAcks.set(id, { acked, resolve });
          if (registerBatch.push({ id, info }) === 1) setImmediate(flushRegisters);
          // with answerProbe the front reads at once and holds only what goes to uWS until this resolves
          return acked;
        },
        unregister: (id) => {
          pendingAcks.get(id)?.resolve();
          pendingAcks.delete(id);
          if (unregisterBatch.push(id) === 1) systemClock.setTimeout(flushUnregisters, UNREGISTER_BATCH_MS);
        },
        onHandshakeError: () => {
          handshakeErrors++;
          // this file is the worker process's composition root: it owns the system clock
          statsTimer ??= systemClock.setTimeout(reportStats, STATS_INTERVAL_MS);
        },
        onConnectionRefused: () => {
          refusedConnections++;
          statsTimer ??= systemClock.setTimeout(reportStats, STATS_INTERVAL_MS);
        },
        onBackendRefused: () => {
          backendRefusals++;
          statsTimer ??= systemClock.setTimeout(reportStats, STATS_INTERVAL_MS);
        },
      }).then(
        (f) => {
          front = f;
          send({ t: 'ready' });
        },
        (err: Error) => {
          send({ t: 'fatal', message: err.message });
          process.exit(1);
        },
      );
      break;
    case 'ack':
      for (const id of msg.ids) {
        const pending = pendingAcks.get(id);
        pendingAcks.delete(id);
        pending?.resolve();
      }
      break;
    case 'socket':
      // a connection the parent accepted on the shared listening socket; the
      // parent keeps its copy until told this process has it
      if (handle && front) front.adopt(handle as Socket);
      else (handle as Socket | undefined)?.destroy();
      // served or refused here: either way the parent's copy may go
      send({ t: 'adopted', id: msg.id });
      break;
    case 'give-listen-handle':
      // the parent keeps this copy and stops accepting on its own (src/gateway/tls-workers.ts)
      if (process.connected) process.send!({ t: 'listen-handle' } satisfies WorkerToParent, listenHandle as SendHandle | undefined);
      break;
    case 'health':
      health.update(msg.snapshot);
      break;
    case 'close':
      void (front?.close({ graceful: msg.graceful, ...(msg.timeoutMs !== undefined ? { timeoutMs: msg.timeoutMs } : {}) }) ?? Promise.resolve()).then(() => process.exit(0));
      break;
  }
});
