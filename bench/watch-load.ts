// The load process of bench/watch-fanout.ts (a separate process, so the
// watchers' client work does not share the server's event loop): holds N
// watch streams on loopback, writes at a steady rate, and measures delivery.
//
//   npx tsx bench/watch-load.ts '<json config>'   (spawned by watch-fanout.ts)
//
// Protocol on stdio: prints {"ready":N,"failed":M} once the watchers are open,
// waits for "go\n" on stdin (the parent samples server memory in between),
// then prints one JSON result line and exits.
//
// Latency is measured from the write's acknowledgement (the HTTP response of
// the write) to each watcher's receipt of the event, matched by revision: the
// orch event's metadata.resourceVersion or the etcd event's kv.mod_revision.
// An event that arrives before its write's acknowledgement counts as 0 ms.

import { readFileSync } from 'node:fs';
import { Agent as HttpAgent, type IncomingMessage, request as httpRequest } from 'node:http';
import { type ClientHttp2Session, connect as h2Connect } from 'node:http2';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { type Socket, connect as netConnect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { Etcd3 } from 'etcd3';

export interface LoadConfig {
  /** etcd: its JSON gateway, one HTTP connection per watch; etcd-grpc: the native gRPC API
   * (etcd3 client), every watch on one gRPC stream of one HTTP/2 connection */
  mode: 'orch' | 'orch-h2' | 'etcd' | 'etcd-grpc';
  host: string;
  port: number;
  watchers: number;
  /** writes per second */
  rate: number;
  durationMs: number;
  /** orch: admin credentials (PEM file paths) */
  caFile?: string;
  certFile?: string;
  keyFile?: string;
  /** orch: namespace to write in and watch; etcd: key prefix */
  namespace: string;
  /** orch: resourceVersion to start watches at (no initial events) */
  startRevision?: number;
  /** bytes of payload per written object */
  valueSize: number;
  /**
   * orch-h2: the most watch streams on one connection (the server's
   * `--http2-max-streams-per-connection`, default 1000); more watchers open
   * further connections, as Go's HTTP/2 transport does when a connection's
   * stream limit is reached
   */
  streamsPerConnection?: number;
}

const cfg = JSON.parse(process.argv[2] ?? '{}') as LoadConfig;
// orch-h2: every watch is a stream of one HTTP/2 connection (as client-go multiplexes an informer set);
// writes go over a second HTTP/2 connection (as the etcd-grpc mode writes on a second client)
const isOrch = cfg.mode === 'orch' || cfg.mode === 'orch-h2';
const tlsOpts =
  isOrch
    ? { ca: readFileSync(cfg.caFile!), cert: readFileSync(cfg.certFile!), key: readFileSync(cfg.keyFile!) }
    : undefined;
const b64 = (s: string): string => Buffer.from(s).toString('base64');
const prefix = `/bench/${cfg.namespace}/`;
const prefixEnd = `/bench/${cfg.namespace}0`;
const marker = isOrch ? /"resourceVersion":"(\d+)"/g : /"mod_revision":"(\d+)"/g;

/** ack time and send time (performance.now) by revision */
const acked = new Map<number, number>();
const sentAt = new Map<number, number>();
/** receipts that arrived before their write was acknowledged: revision -> receipt times */
const early = new Map<number, number[]>();
/** from the write's acknowledgement (0 when the event came first) */
const latencies: number[] = [];
/** each write's own latency, request sent → response received (does the answer queue behind fan-out?) */
const writeLatencies: number[] = [];
/** from the moment the write was sent */
const fromSend: number[] = [];
let eventsReceived = 0;
let lastEventAt = 0;
let measuring = false;

function onEvent(rev: number, at: number): void {
  if (!measuring) return;
  eventsReceived++;
  lastEventAt = at;
  const ack = acked.get(rev);
  if (ack !== undefined) {
    latencies.push(Math.max(0, at - ack));
    fromSend.push(at - sentAt.get(rev)!);
  } else {
    let list = early.get(rev);
    if (!list) early.set(rev, (list = []));
    list.push(at);
  }
}

function watchPath(): string {
  const rv = cfg.startRevision ? `&resourceVersion=${cfg.startRevision}` : '';
  return `/api/v1/namespaces/${cfg.namespace}/configmaps?watch=1${rv}`;
}

function watchRequest(): string {
  if (isOrch) {
    return `GET ${watchPath()} HTTP/1.1\r\nHost: ${cfg.host}\r\nAccept: application/json\r\n\r\n`;
  }
  const body = JSON.stringify({ create_request: { key: b64(prefix), range_end: b64(prefixEnd) } });
  return `POST /v3/watch HTTP/1.1\r\nHost: ${cfg.host}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

/** opens one watch; resolves once the stream is established (orch: response head; etcd: the `created` message) */
function openWatcher(sockets: Socket[]): Promise<boolean> {
  return new Promise((resolve) => {
    const sock: Socket =
      cfg.mode === 'orch'
        ? tlsConnect({ host: cfg.host, port: cfg.port, ...tlsOpts, servername: 'localhost' }, () => sock.write(watchRequest()))
        : netConnect({ host: cfg.host, port: cfg.port }, () => sock.write(watchRequest()));
    let carry = '';
    let ready = false;
    // a server out of file descriptors accepts nothing and says nothing: give up on this watcher
    const timer = setTimeout(() => {
      if (ready) return;
      sock.destroy();
      resolve(false);
    }, 15_000);
    sock.setEncoding('latin1');
    sock.on('data', (chunk: string) => {
      const at = performance.now();
      const text = carry + chunk;
      if (!ready) {
        const established = cfg.mode === 'orch' ? text.includes('\r\n\r\n') : text.includes('"created":true');
        if (/^HTTP\/1\.1 [^2]/.test(text)) {
          sock.destroy();
          resolve(false);
          return;
        }
        if (established) {
          clearTimeout(timer);
          ready = true;
          sockets.push(sock);
          resolve(true);
        }
      }
      const nl = text.lastIndexOf('\n');
      if (nl < 0) {
        carry = text;
        return;
      }
      carry = text.slice(nl + 1);
      const complete = text.slice(0, nl);
      marker.lastIndex = 0;
      let m: RegExpExecArray | null;
      while ((m = marker.exec(complete))) onEvent(Number(m[1]), at);
    });
    sock.on('error', () => {
      if (!ready) resolve(false);
    });
  });
}

/** one HTTP/2 session to the orch server, with Go client-go's receive windows (4 MiB per stream, 1 GiB per connection) */
function h2Session(): Promise<ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const s = h2Connect(`https://${cfg.host}:${cfg.port}`, { ...tlsOpts, servername: 'localhost', settings: { initialWindowSize: 4 * 1024 * 1024 } });
    s.once('connect', () => {
      s.setLocalWindowSize(1024 * 1024 * 1024);
      resolve(s);
    });
    s.once('error', reject);
  });
}
const streamsPerConnection = cfg.streamsPerConnection ?? 1000;
const h2WatchSessions =
  cfg.mode === 'orch-h2' ? Array.from({ length: Math.max(1, Math.ceil(cfg.watchers / streamsPerConnection)) }, () => h2Session()) : undefined;
const h2WatchSession = h2WatchSessions?.[0];
const h2WriteSession = cfg.mode === 'orch-h2' ? h2Session() : undefined;
let h2Streams = 0;
let h2Opened = 0;

async function openH2Watcher(): Promise<boolean> {
  // fill each connection up to the stream limit before using the next
  const s = await h2WatchSessions![Math.floor(h2Opened++ / streamsPerConnection)]!;
  return new Promise((resolve) => {
    const st = s.request({ ':method': 'GET', ':path': watchPath(), accept: 'application/json' });
    let carry = '';
    st.setEncoding('latin1');
    st.on('response', (h) => {
      const ok = Number(h[':status']) === 200;
      if (ok) h2Streams++;
      resolve(ok);
    });
    st.on('data', (chunk: string) => {
      const at = performance.now();
      const text = carry + chunk;
      const nl = text.lastIndexOf('\n');
      if (nl < 0) {
        carry = text;
        return;
      }
      carry = text.slice(nl + 1);
      const complete = text.slice(0, nl);
      marker.lastIndex = 0;
      let m: RegExpExecArray | null;
      while ((m = marker.exec(complete))) onEvent(Number(m[1]), at);
    });
    st.on('error', () => resolve(false));
  });
}

function h2Write(path: string, body: string): Promise<{ status: number; text: string }> {
  return h2WriteSession!.then(
    (s) =>
      new Promise((resolve, reject) => {
        const st = s.request({ ':method': 'POST', ':path': path, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
        let status = 0;
        let text = '';
        st.setEncoding('utf8');
        st.on('response', (h) => (status = Number(h[':status'])));
        st.on('data', (d: string) => (text += d));
        st.on('end', () => resolve({ status, text }));
        st.on('error', reject);
        st.end(body);
      }),
  );
}

/** native etcd: one client for the watches (one channel, one watch stream), one for the writes */
const grpcWatch = cfg.mode === 'etcd-grpc' ? new Etcd3({ hosts: `http://${cfg.host}:${cfg.port}` }) : undefined;
const grpcWrite = cfg.mode === 'etcd-grpc' ? new Etcd3({ hosts: `http://${cfg.host}:${cfg.port}` }) : undefined;

async function openGrpcWatcher(): Promise<boolean> {
  try {
    const w = await grpcWatch!.watch().prefix(prefix).create();
    w.on('put', (kv) => onEvent(Number(kv.mod_revision), performance.now()));
    return true;
  } catch {
    return false;
  }
}

/** the revision a write was acknowledged at, and the receipts that came before it */
function ackedAt(rev: number, sent: number, at: number): void {
  acked.set(rev, at);
  sentAt.set(rev, sent);
  writeLatencies.push(at - sent);
  const pending = early.get(rev);
  if (pending) {
    for (const recv of pending) {
      latencies.push(0);
      fromSend.push(recv - sent);
    }
    early.delete(rev);
  }
}

const httpsAgent = new HttpsAgent({ keepAlive: true, maxSockets: 16, ...tlsOpts });
const httpAgent = new HttpAgent({ keepAlive: true, maxSockets: 16 });

/** one write; resolves with the revision it created */
function write(seq: number, value: string): Promise<number> {
  if (grpcWrite) {
    const sent = performance.now();
    return grpcWrite
      .put(`${prefix}o-${seq}`)
      .value(value)
      .then((r) => {
        const rev = Number(r.header.revision);
        ackedAt(rev, sent, performance.now());
        return rev;
      });
  }
  if (cfg.mode === 'orch-h2') {
    const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `o-${seq}` }, data: { v: value } });
    const sent = performance.now();
    return h2Write(`/api/v1/namespaces/${cfg.namespace}/configmaps`, body).then(({ status, text }) => {
      const at = performance.now();
      if (status >= 300) throw new Error(`write: ${status} ${text.slice(0, 200)}`);
      const rev = Number((JSON.parse(text) as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion);
      ackedAt(rev, sent, at);
      return rev;
    });
  }
  return new Promise((resolve, reject) => {
    let path: string;
    let body: string;
    if (isOrch) {
      path = `/api/v1/namespaces/${cfg.namespace}/configmaps`;
      body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `o-${seq}` }, data: { v: value } });
    } else {
      path = '/v3/kv/put';
      body = JSON.stringify({ key: b64(`${prefix}o-${seq}`), value: b64(value) });
    }
    const opts = {
      host: cfg.host,
      port: cfg.port,
      method: 'POST',
      path,
      headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
    };
    const sent = performance.now();
    const onRes = (res: IncomingMessage): void => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => {
        const at = performance.now();
        if ((res.statusCode ?? 0) >= 300) return reject(new Error(`write: ${res.statusCode} ${text.slice(0, 200)}`));
        const j = JSON.parse(text) as { metadata?: { resourceVersion?: string }; header?: { revision?: string } };
        const rev = Number(isOrch ? j.metadata?.resourceVersion : j.header?.revision);
        ackedAt(rev, sent, at);
        resolve(rev);
      });
    };
    const req = isOrch ? httpsRequest({ ...opts, agent: httpsAgent }, onRes) : httpRequest({ ...opts, agent: httpAgent }, onRes);
    req.on('error', reject);
    req.end(body);
  });
}

function quantile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

async function main(): Promise<void> {
  const sockets: Socket[] = [];
  let failed = 0;
  const CONNECT_BATCH = 100;
  for (let i = 0; i < cfg.watchers; i += CONNECT_BATCH) {
    const n = Math.min(CONNECT_BATCH, cfg.watchers - i);
    const ok = await Promise.all(Array.from({ length: n }, () => (grpcWatch ? openGrpcWatcher() : h2WatchSession ? openH2Watcher() : openWatcher(sockets))));
    const bad = ok.filter((x) => !x).length;
    failed += bad;
    // a whole batch refused: the server is saturated (e.g. out of file descriptors); count the rest as failed
    if (bad === n) {
      failed += cfg.watchers - i - n;
      break;
    }
  }
  const opened = grpcWatch ? cfg.watchers - failed : h2WatchSession ? h2Streams : sockets.length;
  process.stdout.write(`${JSON.stringify({ ready: opened, failed })}\n`);
  await new Promise<void>((resolve) => {
    process.stdin.setEncoding('utf8');
    process.stdin.on('data', (d: string) => {
      if (d.includes('go')) resolve();
    });
  });

  const value = 'x'.repeat(cfg.valueSize);
  measuring = true;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const interval = 1000 / cfg.rate;
  let seq = 0;
  let writeErrors = 0;
  const inflight: Promise<unknown>[] = [];
  // a steady schedule: write k is sent at t0 + k*interval (no catch-up bursts beyond the schedule)
  while (performance.now() - t0 < cfg.durationMs) {
    const due = t0 + seq * interval;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    inflight.push(write(seq++, value).catch(() => writeErrors++));
  }
  await Promise.all(inflight);
  const writesDone = seq - writeErrors;
  const expected = writesDone * opened;
  // drain: wait until every event arrived, at most 10 s
  const drainStart = performance.now();
  while (eventsReceived < expected && performance.now() - drainStart < 10_000) await new Promise((r) => setTimeout(r, 20));
  // delivery rate over the span from the first write to the last event received
  const elapsedS = (Math.max(lastEventAt, t0 + 1) - t0) / 1000;
  const sorted = Float64Array.from(latencies).sort();
  const sortedSend = Float64Array.from(fromSend).sort();
  const result = {
    mode: cfg.mode,
    watchers: opened,
    watchersFailed: failed,
    writes: writesDone,
    writeErrors,
    writeRatePerSec: +(writesDone / (cfg.durationMs / 1000)).toFixed(1),
    eventsExpected: expected,
    eventsReceived,
    eventsPerSec: Math.round(eventsReceived / elapsedS),
    latencyMs: { p50: +quantile(sorted, 0.5).toFixed(2), p99: +quantile(sorted, 0.99).toFixed(2), max: +quantile(sorted, 1).toFixed(2) },
    /** from the write request being sent (includes the write itself; never degenerate) */
    latencyFromSendMs: { p50: +quantile(sortedSend, 0.5).toFixed(2), p99: +quantile(sortedSend, 0.99).toFixed(2) },
    eventsBeforeAck: latencies.filter((l) => l === 0).length,
    /** the writes themselves, sent → answered */
    writeLatencyMs: ((w) => ({ p50: +quantile(w, 0.5).toFixed(2), p99: +quantile(w, 0.99).toFixed(2) }))(Float64Array.from(writeLatencies).sort()),
    /** CPU of this load process (the clients) from the first write to the end of the drain */
    clientCpuMs: Math.round(((c) => c.user + c.system)(process.cpuUsage(cpu0)) / 1000),
  };
  process.stdout.write(`${JSON.stringify({ result })}\n`);
  for (const s of sockets) s.destroy();
  grpcWatch?.close();
  for (const s of [...(h2WatchSessions ?? []), h2WriteSession]) void s?.then((x) => x.destroy());
  grpcWrite?.close();
  httpsAgent.destroy();
  httpAgent.destroy();
  process.exit(0);
}

void main();
