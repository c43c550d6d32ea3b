// gRPC transport between control-plane members (docs/raft.md "Transport";
// schema proto/raft.proto).
//
// Every member listens on its peer port and keeps one client stream open to
// each other member; Raft messages travel as msgpackr bytes inside a proto
// `Envelope`, all the messages of one send() call (one Ready) for a member in
// one envelope, so a Ready costs one gRPC frame per peer, not one per message. A broken stream is re-opened with exponential backoff and
// jitter. Messages to a peer whose stream is down are dropped (Raft tolerates
// loss: heartbeats and appends are retried by the protocol) and the host is
// told the peer is unreachable so the leader probes it again.
//
// Fault injection is not part of the transport: src/raft/faults.ts wraps any
// Transport (and its receive callback) for tests and chaos runs.

import { type Clock, type TimerHandle, systemClock } from '../core/clock.js';
import { type Random, systemRandom } from '../core/random.js';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import type { PeerCertificate } from 'node:tls';
import protobuf from 'protobufjs';
import { decodeMsgpack, decodeMsgpackView, encodeMsgpack } from './codec.js';
import { receiveWindowOf, widenConnectionWindow, widenStreamWindow } from './peer-window.js';
import type { Message, NodeId } from './types.js';

// ---------------------------------------------------------------- schema

interface Envelope {
  from: string;
  to: string;
  /** msgpackr(Message) each */
  payloads: Uint8Array[];
}
interface StreamAck {
  received: number;
}

function loadSchema(): protobuf.Root {
  // src/raft/transport.ts and dist/src/raft/transport.js both find ../../proto or ../../../proto
  for (const rel of ['../../proto/raft.proto', '../../../proto/raft.proto']) {
    const p = fileURLToPath(new URL(rel, import.meta.url));
    if (existsSync(p)) return protobuf.parse(readFileSync(p, 'utf8'), { keepCase: true }).root;
  }
  throw new Error('transport: proto/raft.proto not found');
}

const root = loadSchema();
const EnvelopeType = root.lookupType('orch.raft.v1.Envelope');
const StreamAckType = root.lookupType('orch.raft.v1.StreamAck');
const STREAM_PATH = '/orch.raft.v1.RaftTransport/Stream';

const asBuffer = (u: Uint8Array): Buffer => Buffer.from(u.buffer, u.byteOffset, u.byteLength);
const serializeEnvelope = (e: Envelope): Buffer => asBuffer(EnvelopeType.encode(e).finish());
const deserializeEnvelope = (b: Buffer): Envelope => {
  const o = EnvelopeType.decode(b) as unknown as Partial<Envelope>;
  return { from: o.from ?? '', to: o.to ?? '', payloads: o.payloads ?? [] };
};
const serializeAck = (a: StreamAck): Buffer => Buffer.from(StreamAckType.encode(StreamAckType.create(a)).finish());
const deserializeAck = (b: Buffer): StreamAck => {
  const o = StreamAckType.toObject(StreamAckType.decode(b), { longs: Number, defaults: true }) as { received: number };
  return { received: o.received };
};

const serviceDefinition: grpc.ServiceDefinition = {
  Stream: {
    path: STREAM_PATH,
    requestStream: true,
    responseStream: false,
    requestSerialize: serializeEnvelope,
    requestDeserialize: deserializeEnvelope,
    responseSerialize: serializeAck,
    responseDeserialize: deserializeAck,
  },
};

const CHANNEL_OPTIONS: grpc.ChannelOptions = {
  // snapshots can be large; Raft messages are bounded by maxSizePerMsg otherwise
  'grpc.max_receive_message_length': -1,
  'grpc.max_send_message_length': -1,
  'grpc.keepalive_time_ms': 10_000,
  'grpc.keepalive_timeout_ms': 5_000,
  'grpc.keepalive_permit_without_calls': 1,
  'grpc.initial_reconnect_backoff_ms': 100,
  'grpc.max_reconnect_backoff_ms': 2_000,
};

// ---------------------------------------------------------------- transport

export interface TransportTls {
  caPem: string;
  /** presented by the peer server (SANs must cover the peer addresses) */
  serverCertPem: string;
  serverKeyPem: string;
  /** presented by the client side of a peer stream */
  clientCertPem: string;
  clientKeyPem: string;
  /**
   * Whether a verified client certificate is a member's: the CA alone does not say so when it
   * also signs other identities (nodes, users' approved CSRs), and a stream from such a client
   * could carry forged Raft messages. Unset: any certificate of the CA (a CA for peers only).
   */
  authorizePeer?(cert: PeerCertificate): boolean;
}

export interface TransportOptions {
  self: NodeId;
  /** address to listen on, host:port (port 0 = ephemeral) */
  listen: string;
  /** peer name -> host:port (self may be included; it is skipped) */
  peers: Record<NodeId, string>;
  onMessage(m: Message): void;
  /** a message to `peer` could not be sent (stream down) */
  onUnreachable?(peer: NodeId): void;
  tls?: TransportTls;
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /** reconnect backoff timers (default the system clock) */
  clock?: Clock;
  /** reconnect backoff jitter */
  random?: Random;
  log?: (msg: string) => void;
}

export interface TransportStats {
  /** messages written / received / dropped because the stream was down */
  sent: number;
  received: number;
  droppedDisconnected: number;
  /** incoming streams refused: their client certificate is not a member's (TransportTls.authorizePeer) */
  refusedPeers: number;
  /** envelopes (gRPC frames) written: one per peer per send() */
  frames: number;
  reconnects: number;
  connected: Record<NodeId, boolean>;
}

class PeerStream {
  private call: grpc.ClientWritableStream<Envelope> | undefined;
  private retryTimer: TimerHandle | undefined;
  private backoffMs: number;
  private openedAt = 0;
  private closed = false;
  reconnects = 0;

  constructor(
    readonly name: NodeId,
    private readonly client: grpc.Client,
    private readonly initialBackoffMs: number,
    private readonly maxBackoffMs: number,
    private readonly clock: Clock,
    private readonly random: Random,
  ) {
    this.backoffMs = initialBackoffMs;
  }

  get up(): boolean {
    return this.call !== undefined;
  }

  /** true when written (the stream may still fail later: Raft copes with loss) */
  write(env: Envelope): boolean {
    if (this.closed) return false;
    if (!this.call) {
      if (this.retryTimer) return false; // backing off
      this.open();
    }
    this.call!.write(env);
    return true;
  }

  private open(): void {
    this.openedAt = this.clock.now();
    const call = this.client.makeClientStreamRequest<Envelope, StreamAck>(
      STREAM_PATH,
      serializeEnvelope,
      deserializeAck,
      new grpc.Metadata(),
      { deadline: Infinity },
      () => this.broken(call),
    );
    call.on('error', () => this.broken(call));
    this.call = call;
  }

  private broken(call: grpc.ClientWritableStream<Envelope>): void {
    if (this.call !== call) return;
    this.call = undefined;
    if (this.closed) return;
    // a stream that lived a while was healthy: start the backoff afresh
    if (this.clock.now() - this.openedAt > 2 * this.maxBackoffMs) this.backoffMs = this.initialBackoffMs;
    const wait = Math.round(this.backoffMs * (0.5 + this.random() * 0.5));
    this.backoffMs = Math.min(this.maxBackoffMs, this.backoffMs * 2);
    this.reconnects += 1;
    this.retryTimer = this.clock.setTimeout(() => {
      this.retryTimer = undefined;
    }, wait);
  }

  close(): void {
    this.closed = true;
    this.retryTimer?.cancel();
    const call = this.call;
    this.call = undefined;
    try {
      call?.cancel();
    } catch {
      // already finished
    }
    this.client.close();
  }
}

export class PeerTransport {
  private readonly streams = new Map<NodeId, PeerStream>();
  private readonly counters = { sent: 0, received: 0, droppedDisconnected: 0, frames: 0 };
  private closed = false;

  private constructor(
    private readonly opts: TransportOptions,
    private readonly server: grpc.Server,
    readonly port: number,
    private readonly refusals: { count: number },
  ) {
    const creds = opts.tls
      ? grpc.credentials.createSsl(
          Buffer.from(opts.tls.caPem),
          Buffer.from(opts.tls.clientKeyPem),
          Buffer.from(opts.tls.clientCertPem),
        )
      : grpc.credentials.createInsecure();
    for (const [name, addr] of Object.entries(opts.peers)) {
      if (name === opts.self) continue;
      const client = new grpc.Client(addr, creds, CHANNEL_OPTIONS);
      this.streams.set(name, new PeerStream(name, client, opts.initialBackoffMs ?? 100, opts.maxBackoffMs ?? 2000, opts.clock ?? systemClock, opts.random ?? systemRandom));
    }
  }

  static async start(opts: TransportOptions): Promise<PeerTransport> {
    const server = new grpc.Server(CHANNEL_OPTIONS);
    let transport: PeerTransport | undefined;
    const pending: Message[] = [];
    const refusals = { count: 0 };
    server.addService(serviceDefinition, {
      Stream: (call: grpc.ServerReadableStream<Envelope, StreamAck>, callback: grpc.sendUnaryData<StreamAck>) => {
        const authorize = opts.tls?.authorizePeer;
        if (authorize) {
          const cert = call.getAuthContext().sslPeerCertificate;
          if (!cert || !authorize(cert)) {
            refusals.count += 1;
            opts.log?.(`transport: refused a peer stream from ${call.getPeer()}: its certificate (${subjectOf(cert)}) is not a member's`);
            callback({ code: grpc.status.PERMISSION_DENIED, details: 'the client certificate is not a cluster member\'s' });
            return;
          }
        }
        let received = 0;
        call.on('data', (env: Envelope) => {
          received += 1;
          if (transport) transport.receive(env);
          else if (env.to === opts.self) for (const p of env.payloads) pending.push(decodeMsgpack(p) as Message);
        });
        call.on('end', () => callback(null, { received }));
        call.on('error', () => {
          // the sender went away; it reconnects on its own
        });
      },
    });
    const creds = opts.tls
      ? grpc.ServerCredentials.createSsl(
          Buffer.from(opts.tls.caPem),
          [{ private_key: Buffer.from(opts.tls.serverKeyPem), cert_chain: Buffer.from(opts.tls.serverCertPem) }],
          true,
        )
      : grpc.ServerCredentials.createInsecure();
    const widened = widenStreamWindow(server);
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync(opts.listen, creds, (err, p) => (err ? reject(err) : resolve(p))),
    );
    if (!widened || !widenConnectionWindow(server)) opts.log?.('transport: the peer receive window stays at HTTP/2\'s default (grpc-js internals moved)');
    transport = new PeerTransport(opts, server, port, refusals);
    for (const m of pending) opts.onMessage(m);
    return transport;
  }

  /** Sends each message to its `to` member: one envelope per member, messages in order. */
  send(messages: Message[]): void {
    if (this.closed) return;
    const batches = new Map<NodeId, Envelope>();
    for (const m of messages) {
      if (!this.streams.has(m.to)) continue;
      let env = batches.get(m.to);
      if (!env) batches.set(m.to, (env = { from: this.opts.self, to: m.to, payloads: [] }));
      env.payloads.push(encodeMsgpack(m));
    }
    for (const [to, env] of batches) this.write(this.streams.get(to)!, env);
  }

  private write(stream: PeerStream, env: Envelope): void {
    if (this.closed) return;
    if (stream.write(env)) {
      this.counters.sent += env.payloads.length;
      this.counters.frames += 1;
    } else {
      this.counters.droppedDisconnected += env.payloads.length;
      this.opts.onUnreachable?.(stream.name);
    }
  }

  private receive(env: Envelope): void {
    if (this.closed || env.to !== this.opts.self) return;
    for (const payload of env.payloads) {
      if (this.closed) return;
      let m: Message;
      try {
        // entries' data stay views into this envelope (the log keeps them; no copy per entry)
        m = decodeMsgpackView(payload) as Message;
      } catch (err) {
        this.opts.log?.(`transport: undecodable message from ${env.from}: ${(err as Error).message}`);
        continue;
      }
      // the envelope names the sender; a message claiming someone else is dropped
      if (m.from !== env.from) continue;
      this.counters.received += 1;
      this.opts.onMessage(m);
    }
  }

  /** the smallest receive window among the open inbound peer connections (bytes; undefined: none) */
  receiveWindow(): number | undefined {
    return receiveWindowOf(this.server);
  }

  stats(): TransportStats {
    const connected: Record<NodeId, boolean> = {};
    let reconnects = 0;
    for (const [name, s] of this.streams) {
      connected[name] = s.up;
      reconnects += s.reconnects;
    }
    return { ...this.counters, refusedPeers: this.refusals.count, reconnects, connected };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const s of this.streams.values()) s.close();
    // peers' inbound streams never end on their own: do not wait for them
    this.server.forceShutdown();
  }
}

/** a certificate's subject for a log line (Node gives repeated attributes as arrays) */
function subjectOf(cert: PeerCertificate | undefined): string {
  if (!cert?.subject) return 'none';
  return Object.entries(cert.subject)
    .map(([k, v]) => `${k}=${([] as string[]).concat(v as string | string[]).join('+')}`)
    .join(', ');
}

/** "127.0.0.1:2380", "http://127.0.0.1:2380" or "https://host:2380" -> "host:port" */
export function peerAddress(url: string): string {
  const hostPort = /^(?:[a-z]+:\/\/)?([^/]+?)\/?$/i.exec(url.trim())?.[1];
  if (hostPort === undefined || !/:\d+$/.test(hostPort)) throw new Error(`invalid peer address "${url}" (expected host:port)`);
  return hostPort;
}
