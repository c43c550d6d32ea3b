// The TLS terminator (src/gateway/tls-front.ts) run in N worker processes.
//
// Why: in-process, every client connection costs the API server three file
// descriptors (TLS socket + both ends of the unix-socket pair to uWS), which
// caps one process at ~6,500 watchers under a 20,000 open-files limit, and
// all TLS crypto shares the API server's one event loop. With workers the
// parent holds one descriptor per connection (its end of the unix socket),
// each worker two, and the crypto runs on the other cores. See docs/tls.md.
//
// How:
// - The parent binds the TCP port and hands the listening socket to every
//   worker (`child.send(msg, handle)`); the kernel gives each accepted
//   connection to whichever process accepts it first. Once workers serve, the
//   parent stops accepting: it keeps only an unwatched copy of the socket (a
//   worker sends its copy back), so new connections never wait for the
//   parent's busy loop (issue #15). It accepts again (and passes connections
//   on untouched) only while no worker is ready.
// - A worker runs `startTlsFront` with `register`: after the handshake it
//   sends the parent `{id → who}` for the connection's PROXY-v2 id and
//   forwards nothing to uWS before the parent acknowledges (one round trip
//   per connection, never per request). The parent's `peerFor` reads that
//   map, so the gateway and the identity rules (spec 001 §5.3) are unchanged.
// - A worker that exits unexpectedly is started again; a worker whose parent
//   dies exits by itself (IPC `disconnect`).
import { type Clock, systemClock } from '../core/clock.js';
import { type WorkerSlot, superviseWorkerSlot } from '../lifecycles/tls-worker.js';
import { type ChildProcess, type SendHandle, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { PeerCertificate } from '../auth/types.js';
import type { HealthSnapshot } from './health-snapshot.js';
import { defaultMaxConnections, LISTEN_BACKLOG, parseProxiedAddress, proxiedAddressFor, type TlsCloseOptions, type TlsConnectionInfo, type TlsFront, type TlsFrontOptions } from './tls-front.js';

// the parent/worker messages (re-exported: importers keep this entry point)
export type { ParentToWorker, TlsWorkerInit, WorkerToParent } from './tls-worker-protocol.js';
import type { ParentToWorker, TlsWorkerInit, WorkerToParent } from './tls-worker-protocol.js';

export interface TlsWorkersOptions extends Omit<TlsFrontOptions, 'listenHandle' | 'register' | 'unregister' | 'onHandshakeError' | 'onConnectionRefused' | 'fdsPerConnection'> {
  /** worker processes (at least 1) */
  workers: number;
  log?: (msg: string) => void;
  /** start timeouts, restart backoff, kill grace (default the system clock) */
  clock?: Clock;
  /** workers answer HTTP/1.1 health probes from `publishHealth` snapshots (src/gateway/health-probe.ts) */
  healthInWorkers?: boolean;
  /**
   * `--max-connections-per-tls-worker`: client connections one worker holds
   * at once, below what its descriptors allow (0 or absent: that limit only);
   * more are closed at accept (docs/reliability.md "Connections per TLS worker").
   */
  maxConnectionsPerWorker?: number;
}

export interface TlsWorkerPool extends TlsFront {
  /** process ids of the running workers */
  workerPids(): number[];
  /** worker processes asked for */
  readonly configured: number;
  /** workers that hold the listening socket and serve now (readiness, src/server/readiness.ts) */
  readyWorkers(): number;
  /** send the main loop's health snapshot to every worker (a new worker gets the next one) */
  publishHealth(snapshot: HealthSnapshot): void;
  /** whether this (parent) process accepts on the listening socket now: only while no worker is ready */
  parentAccepting(): boolean;
  /** connections this process accepted and handed to a worker since start */
  readonly parentAccepted: number;
}

/** descriptors per client connection in the parent: its end of the unix-socket pair */
const PARENT_FDS_PER_CONNECTION = 1;
/** in a worker: the TLS socket and its end of the unix-socket pair */
const WORKER_FDS_PER_CONNECTION = 2;
/** how long a worker gets to start before the start fails */
const START_TIMEOUT_MS = 20_000;
/** how long a closing worker gets beyond the graceful timeout before SIGKILL */
const KILL_GRACE_MS = 3000;
/** a closed connection's entry is kept this long, for requests uWS read before the close but handles after it */
const UNREGISTER_DELAY_MS = 1000;

interface Entry {
  info: TlsConnectionInfo;
  worker: Worker;
}

interface Worker {
  child: ChildProcess;
  ready: boolean;
  handshakeErrors: number;
  refusedConnections: number;
  backendRefusals: number;
  /** ids this worker registered, so its entries go when it dies */
  ids: Set<string>;
}

/** how to start the worker entry: the TypeScript source through tsx under tests, the compiled file otherwise */
function workerEntry(): { path: string; execArgv: string[] } {
  const self = import.meta.url;
  // profiling knob (bench/tls-front.ts): e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"; NODE_OPTIONS refuses --cpu-prof
  const extra = (process.env.ORCH_TLS_WORKER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  if (self.endsWith('.ts')) {
    const tsx = pathToFileURL(createRequire(self).resolve('tsx')).href;
    return { path: fileURLToPath(new URL('./tls-worker-main.ts', self)), execArgv: [...extra, '--import', tsx] };
  }
  return { path: fileURLToPath(new URL('./tls-worker-main.js', self)), execArgv: extra };
}

export async function startTlsWorkers(opts: TlsWorkersOptions): Promise<TlsWorkerPool> {
  const n = Math.max(1, Math.floor(opts.workers));
  const log = opts.log ?? (() => undefined);
  const clock = opts.clock ?? systemClock;
  const entry = workerEntry();
  // Per worker: what its own descriptors allow, and together no more than
  // the parent's descriptors allow (one each), so that the parent's unix
  // socket never has to refuse a connection a worker accepted.
  const byDescriptors =
    opts.maxConnections !== undefined
      ? Math.max(1, Math.ceil(opts.maxConnections / n))
      : Math.min(defaultMaxConnections(WORKER_FDS_PER_CONNECTION), Math.floor(defaultMaxConnections(PARENT_FDS_PER_CONNECTION) / n));
  const perWorker = opts.maxConnectionsPerWorker ? Math.min(byDescriptors, opts.maxConnectionsPerWorker) : byDescriptors;
  const init: TlsWorkerInit = {
    key: String(opts.key),
    cert: String(opts.cert),
    ...(opts.clientCA !== undefined ? { clientCA: String(opts.clientCA) } : {}),
    backendSocketPath: opts.backendSocketPath,
    ...(opts.muxSocketPath !== undefined ? { muxSocketPath: opts.muxSocketPath } : {}),
    ...(opts.http1OverMux !== undefined ? { http1OverMux: opts.http1OverMux } : {}),
    ...(opts.requestBodyTimeoutMs !== undefined ? { requestBodyTimeoutMs: opts.requestBodyTimeoutMs } : {}),
    maxConnections: perWorker,
    ...(opts.handshakeTimeoutMs !== undefined ? { handshakeTimeoutMs: opts.handshakeTimeoutMs } : {}),
    ...(opts.http2 !== undefined ? { http2: opts.http2 } : {}),
    ...(opts.http2MaxStreams !== undefined ? { http2MaxStreams: opts.http2MaxStreams } : {}),
    ...(opts.healthInWorkers ? { healthProbes: true } : {}),
    // One set for all workers, so that a ticket resumes whichever worker the
    // kernel hands the reconnect to; a secret, hence node:crypto (src/core/random.ts).
    ticketKeys: opts.ticketKeys ?? randomBytes(48),
  };

  const entries = new Map<string, Entry>();
  const workers = new Set<Worker>();
  /** handshake errors and refused connections of workers that have exited */
  let pastHandshakeErrors = 0;
  let pastRefused = 0;
  let pastBackendRefusals = 0;
  let closing = false;
  let nextWorker = 0;
  let parentAccepted = 0;

  // The parent's copy of the listening socket. It accepts too (every process
  // holding a listening socket does); what it gets goes to a worker unread.
  // The parent keeps its copy of such a connection until the worker says it
  // has adopted it: a worker that dies first never acknowledges, and the
  // connection is handed to another worker instead of hanging (issue #15).
  const handoffs = new Map<number, { socket: Socket; worker: Worker }>();
  /** connections accepted while no worker was ready; served once one is */
  const waiting = new Set<Socket>();
  let nextHandoff = 0;
  const dispatch = (socket: Socket): void => {
    if (socket.destroyed) return;
    const ready = [...workers].filter((w) => w.ready && w.child.connected);
    if (closing) {
      socket.destroy();
      return;
    }
    if (ready.length === 0) {
      waiting.add(socket);
      socket.once('close', () => waiting.delete(socket));
      // refused, not left hanging, if no worker comes up in time
      clock.setTimeout(() => waiting.delete(socket) && socket.destroy(), START_TIMEOUT_MS);
      return;
    }
    const w = ready[nextWorker++ % ready.length]!;
    const id = nextHandoff++;
    handoffs.set(id, { socket, worker: w });
    w.child.send({ t: 'socket', id } satisfies ParentToWorker, socket, { keepOpen: true }, (err) => {
      if (!err) return;
      handoffs.delete(id);
      socket.destroy();
    });
  };
  const flushWaiting = (): void => {
    for (const socket of waiting) {
      waiting.delete(socket);
      dispatch(socket);
    }
  };
  // The parent's copy of the listening socket is either a net.Server that
  // accepts (at start, and while no worker is ready) or `kept`: a copy that
  // a worker sent back, which nobody watches, so the kernel gives every
  // connection to a worker. A fresh-connection probe accepted by the parent
  // waited for the parent's loop under overload (1.23 s, docs/reliability.md).
  // `kept` keeps the socket open for a restarted worker even when every
  // worker is gone: connections then wait in the backlog, or are accepted
  // here again (below), never refused for lack of a socket.
  const newListener = (): NetServer => {
    const l = createNetServer({ pauseOnConnect: true });
    l.on('connection', (socket: Socket) => {
      parentAccepted++;
      dispatch(socket);
    });
    l.on('error', () => undefined);
    return l;
  };
  let listener: NetServer | undefined = newListener();
  let kept: SendHandle | undefined;
  /** the worker asked for its copy of the socket, while one is asked */
  let handleAskedOf: Worker | undefined;
  await new Promise<void>((resolve, reject) => {
    listener!.once('error', reject);
    listener!.listen(opts.port, opts.host, LISTEN_BACKLOG, () => {
      listener!.off('error', reject);
      resolve();
    });
  });
  // The listening socket goes to workers as its raw handle, not as the
  // net.Server: a net.Server handle is listened on by Node in the child as
  // soon as it arrives, before the worker's TLS front exists, and whatever
  // that interim server accepts is never answered (clients hung in the TLS
  // handshake after a worker restart or at start-up, issue #15).
  const rawListenHandle = (): SendHandle => kept ?? (listener as unknown as { _handle: SendHandle })._handle;
  const address = listener.address();
  const port = typeof address === 'object' && address !== null ? address.port : opts.port;
  const closeHandle = (h: SendHandle): void => (h as unknown as { close(): void }).close();

  /**
   * Stop accepting here once workers serve: ask a ready worker for its copy
   * of the socket, keep that, close the accepting server. Only when every
   * worker is ready, so no `init` still carries the server's own handle.
   */
  const stopAccepting = (): void => {
    if (closing || !listener || handleAskedOf) return;
    const all = [...workers];
    const ready = all.filter((w) => w.ready && w.child.connected);
    if (ready.length === 0 || ready.length !== all.length) return;
    handleAskedOf = ready[0]!;
    handleAskedOf.child.send({ t: 'give-listen-handle' } satisfies ParentToWorker);
  };
  const gotListenHandle = (w: Worker, handle: SendHandle | undefined): void => {
    if (handleAskedOf === w) handleAskedOf = undefined;
    if (!handle) return;
    if (closing || !listener || kept) {
      closeHandle(handle);
      return;
    }
    kept = handle;
    // connections already accepted here were dispatched; the rest wait in the kernel for a worker
    listener.close();
    listener = undefined;
  };
  /** no worker is ready: accept here again (held at most the start timeout, see `dispatch`) */
  const startAccepting = (): void => {
    if (closing || listener || !kept) return;
    if ([...workers].some((w) => w.ready && w.child.connected)) return;
    const l = newListener();
    const h = kept;
    kept = undefined;
    listener = l;
    l.listen(h, LISTEN_BACKLOG);
  };

  const forget = (id: string): void => {
    const e = entries.get(id);
    if (!e) return;
    entries.delete(id);
    e.worker.ids.delete(id);
  };

  // one supervised slot per worker: the restart rules are src/lifecycles/tls-worker.ts
  const slots: WorkerSlot[] = [];
  const spawnWorker = (slot: () => WorkerSlot | undefined): Promise<Worker> => {
    const child = fork(entry.path, [], {
      execArgv: entry.execArgv,
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const w: Worker = { child, ready: false, handshakeErrors: 0, refusedConnections: 0, backendRefusals: 0, ids: new Set() };
    workers.add(w);
    return new Promise<Worker>((resolve, reject) => {
      const timer = clock.setTimeout(() => {
        reject(new Error(`TLS worker ${child.pid} did not start within ${START_TIMEOUT_MS} ms`));
        child.kill('SIGKILL');
      }, START_TIMEOUT_MS);
      child.on('message', (msg: WorkerToParent, handle?: SendHandle) => {
        switch (msg.t) {
          case 'listen-handle':
            gotListenHandle(w, handle);
            break;
          case 'register':
            // A worker only names connections it holds; ids are random per connection.
            for (const { id, info } of msg.items) {
              entries.set(id, { info, worker: w });
              w.ids.add(id);
            }
            child.send({ t: 'ack', ids: msg.items.map((i) => i.id) } satisfies ParentToWorker);
            break;
          case 'unregister': {
            const mine = msg.ids.filter((id) => entries.get(id)?.worker === w);
            if (mine.length > 0) clock.setTimeout(() => mine.forEach(forget), UNREGISTER_DELAY_MS);
            break;
          }
          case 'stats':
            w.handshakeErrors = msg.handshakeErrors;
            w.refusedConnections = msg.refusedConnections;
            w.backendRefusals = msg.backendRefusals;
            break;
          case 'adopted': {
            // the worker holds its own descriptor now; close the parent's
            const h = handoffs.get(msg.id);
            handoffs.delete(msg.id);
            h?.socket.destroy();
            break;
          }
          case 'ready':
            w.ready = true;
            setImmediate(flushWaiting);
            timer.cancel();
            resolve(w);
            stopAccepting();
            break;
          case 'fatal':
            timer.cancel();
            reject(new Error(`TLS worker ${child.pid}: ${msg.message}`));
            break;
        }
      });
      child.on('error', (err) => log(`TLS worker ${child.pid ?? '?'}: ${err.message}`));
      child.once('exit', (code, signal) => {
        timer.cancel();
        workers.delete(w);
        pastHandshakeErrors += w.handshakeErrors;
        pastRefused += w.refusedConnections;
        pastBackendRefusals += w.backendRefusals;
        // Its connections died with it; those it had not adopted yet go to another worker.
        for (const id of w.ids) entries.delete(id);
        for (const [id, h] of handoffs) {
          if (h.worker !== w) continue;
          handoffs.delete(id);
          dispatch(h.socket);
        }
        w.ids.clear();
        if (handleAskedOf === w) handleAskedOf = undefined;
        if (!w.ready) reject(new Error(`TLS worker exited during start (code ${code}, signal ${signal})`));
        if (closing) return;
        // the last ready worker gone: accept here until one is back, else ask a survivor again
        startAccepting();
        stopAccepting();
        log(`TLS worker ${child.pid} exited (code ${code}, signal ${signal}); starting another`);
        // a worker that dies young is restarted with growing delays (the slot's machine)
        slot()?.exited();
      });
      child.send({ t: 'init', init } satisfies ParentToWorker, rawListenHandle());
    });
  };

  try {
    const starts: Promise<Worker>[] = [];
    for (let i = 0; i < n; i++) {
      let slot: WorkerSlot | undefined;
      slot = superviseWorkerSlot(clock, () => {
        const started = spawnWorker(() => slot);
        // the first start of each slot is awaited below; a restart that fails is logged (its exit restarts it again)
        if (!slot) starts.push(started);
        else started.catch((err: Error) => log(err.message));
      });
      slots.push(slot);
    }
    await Promise.all(starts);
  } catch (err) {
    closing = true;
    for (const s of slots) s.close();
    for (const w of workers) w.child.kill('SIGKILL');
    listener?.close();
    throw err;
  }

  const lookup = (text: string): Entry | undefined => {
    const direct = entries.get(text);
    if (direct) return direct;
    const id = parseProxiedAddress(text);
    return id ? entries.get(proxiedAddressFor(id)) : undefined;
  };

  let closed: Promise<void> | undefined;
  return {
    port,
    get connections() {
      return entries.size;
    },
    get handshakeErrors() {
      let sum = pastHandshakeErrors;
      for (const w of workers) sum += w.handshakeErrors;
      return sum;
    },
    get refusedConnections() {
      let sum = pastRefused;
      for (const w of workers) sum += w.refusedConnections;
      return sum;
    },
    get backendRefusals() {
      let sum = pastBackendRefusals;
      for (const w of workers) sum += w.backendRefusals;
      return sum;
    },
    workerPids() {
      return [...workers].map((w) => w.child.pid).filter((p): p is number => p !== undefined);
    },
    configured: n,
    readyWorkers() {
      let ready = 0;
      for (const w of workers) if (w.ready && w.child.connected) ready++;
      return closing ? 0 : ready;
    },
    peerFor(text): PeerCertificate | undefined {
      return lookup(text)?.info.peer;
    },
    connectionFor(text) {
      return lookup(text)?.info;
    },
    adopt(socket) {
      dispatch(socket);
    },
    parentAccepting() {
      return listener !== undefined;
    },
    get parentAccepted() {
      return parentAccepted;
    },
    publishHealth(snapshot) {
      for (const w of workers) if (w.ready && w.child.connected) w.child.send({ t: 'health', snapshot } satisfies ParentToWorker);
    },
    close(closeOpts: TlsCloseOptions = {}) {
      closed ??= (async () => {
        closing = true;
        for (const s of slots) s.close();
        if (kept) closeHandle(kept);
        kept = undefined;
        // Stop accepting, but do not wait for the listener's callback before the
        // workers are told: it waits for every connection the listener ever
        // accepted, and an idle HTTP/2 client keeps its connection until the
        // worker's GOAWAY, which only the 'close' below sends (a graceful close
        // waited forever with an open session; test/integration/http2-mux.test.ts).
        const l = listener;
        listener = undefined;
        l?.close();
        for (const socket of waiting) socket.destroy();
        waiting.clear();
        const graceful = closeOpts.graceful ?? false;
        await Promise.all(
          [...workers].map(
            (w) =>
              new Promise<void>((resolve) => {
                if (w.child.exitCode !== null || w.child.signalCode !== null) return resolve();
                w.child.once('exit', () => resolve());
                const kill = clock.setTimeout(() => w.child.kill('SIGKILL'), (graceful ? (closeOpts.timeoutMs ?? 10_000) : 0) + KILL_GRACE_MS);
                w.child.once('exit', () => kill.cancel());
                if (w.child.connected) w.child.send({ t: 'close', graceful, ...(closeOpts.timeoutMs !== undefined ? { timeoutMs: closeOpts.timeoutMs } : {}) } satisfies ParentToWorker);
                else w.child.kill('SIGTERM');
              }),
          ),
        );
        entries.clear();
      })();
      return closed;
    },
  };
}
