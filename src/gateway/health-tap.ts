// In a TLS worker process: answers health probes from the main process's
// latest health snapshot (src/gateway/health-snapshot.ts) without the main
// event loop, and passes every other connection through to uWS unchanged.
//
// The worker's TLS front (src/gateway/tls-front.ts) opens one backend
// connection per client connection and writes the PROXY v2 header together
// with the first complete request head. The tap is that backend: it listens
// on a unix socket of its own, reads the header and the first request head,
// and
// - answers a GET of a health path itself when the requester is one the
//   snapshot says may read it (no credential but anonymous access; or a
//   client certificate that verified, and nothing else that could change who
//   the request is from: `Authorization`, `Impersonate-*`, request-header
//   authentication's `X-Remote-*`, a WebSocket sub-protocol token), and
//   keeps doing so for the next requests of that connection while they are
//   such probes;
// - otherwise opens the connection to uWS, sends it the header and everything
//   read so far, and from then on copies bytes both ways (a connection is
//   switched once and never back: request boundaries are not followed past
//   the first non-probe request).
//
// So a kubelet-style probe (a fresh connection per probe) and a client that
// keeps a connection for probes only are answered here; a health request on
// a connection that carried other requests before goes to the main process.
// Connections answered here are closed after 10 s idle, as uWS closes its own,
// so the front's idle handling (a fresh backend connection for the next
// request) is the same as for uWS.

import { randomUUID } from 'node:crypto';
import { type Server, type Socket, connect as netConnect, createServer } from 'node:net';
import type { Clock, TimerHandle } from '../core/clock.js';
import type { PeerCertificate } from '../auth/types.js';
import { type ProbeIdentity, answerFromSnapshot, type HealthSnapshot } from './health-snapshot.js';
import { parseHealthPath } from './health.js';
import { PROXY_V2_TCP6_HEADER_LENGTH, proxiedAddressFor } from './tls-front.js';

const PROXY_V2_SIGNATURE = Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a]);
const HEAD_END = Buffer.from('\r\n\r\n');
/** a first request head larger than this is not a probe's: pass it on */
const MAX_PROBE_HEAD_BYTES = 8 * 1024;
/** uWS closes an idle HTTP connection after 10 s; so does the tap */
const IDLE_CLOSE_MS = 10_000;
/** a tap connection without a first byte is closed after this long */
const FIRST_BYTES_MS = 30_000;
/** headers that may change who a request is from, or carry a credential */
const IDENTITY_HEADER = /^(authorization|impersonate-.*|x-remote-.*|sec-websocket-.*|upgrade|x-orch-hn-.*)$/;

export interface HealthTapOptions {
  /** the unix socket uWS listens on */
  upstreamPath: string;
  /** the unix socket the tap listens on (the front's `backendSocketPath`) */
  listenPath: string;
  snapshot(): { snapshot: HealthSnapshot | undefined; ageMs: number };
  /** the client certificate of the connection a PROXY id names (the front's `peerFor`) */
  peerFor(proxiedAddress: string): PeerCertificate | undefined;
  /**
   * Resolves when uWS may be sent the connection's bytes (the parent has
   * learnt who the connection is from); undefined = now.
   */
  upstreamReady?(proxiedAddress: string): Promise<void> | undefined;
  clock: Clock;
  maxAgeMs?: number;
}

export interface HealthTap {
  readonly path: string;
  /** health requests answered here */
  readonly answered: number;
  close(): Promise<void>;
}

export async function startHealthTap(o: HealthTapOptions): Promise<HealthTap> {
  let answered = 0;
  const open = new Set<Socket>();
  const server: Server = createServer((s) => {
    open.add(s);
    s.once('close', () => open.delete(s));
    serve(s);
  });

  const serve = (s: Socket): void => {
    let buf: Buffer = Buffer.alloc(0);
    let header: Buffer | undefined;
    let who: ProbeIdentity | undefined | null;
    let idle: TimerHandle | undefined;
    let busy = false;
    let done = false;
    const armIdle = (): void => {
      idle?.cancel();
      idle = o.clock.setTimeout(() => s.end(), IDLE_CLOSE_MS);
    };
    const onData = (chunk: Buffer): void => {
      idle?.cancel();
      buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
      if (!busy) void step();
    };
    // A connection that sends nothing is closed too (uWS does the same after 10 s), so that
    // the front's 90 s idle bound applies; longer than uWS's, since a worker loop that lags
    // in a burst of handshakes must not close a connection whose first bytes are on the way.
    idle = o.clock.setTimeout(() => s.end(), FIRST_BYTES_MS);
    s.on('data', onData);
    s.on('error', () => s.destroy());
    s.on('close', () => {
      done = true;
      idle?.cancel();
    });

    /** from here on the connection is uWS's */
    const passThrough = (): void => {
      done = true;
      idle?.cancel();
      s.off('data', onData);
      s.pause();
      // connecting overlaps the wait for the parent's acknowledgement; only the bytes wait for it
      const up = netConnect({ path: o.upstreamPath });
      const rest = header ? Buffer.concat([header, buf]) : buf;
      const ready = header ? o.upstreamReady?.(proxiedAddressFor(header.subarray(16, 32))) : undefined;
      header = undefined;
      buf = Buffer.alloc(0);
      up.on('error', () => {
        up.destroy();
        s.destroy();
      });
      s.on('error', () => up.destroy());
      s.once('close', () => up.destroy());
      // uWS's end reaches the front after what uWS sent (pipe ends `s` once `up` has ended)
      up.once('close', () => {
        if (!s.writableEnded) s.destroy();
      });
      const go = (): void => {
        if (s.destroyed || up.destroyed) return;
        if (rest.length > 0) up.write(rest);
        s.pipe(up);
        up.pipe(s);
        s.resume();
      };
      if (ready) void ready.then(go);
      else go();
    };

    const step = async (): Promise<void> => {
      busy = true;
      try {
        while (!done) {
          if (!header) {
            if (buf.length < PROXY_V2_TCP6_HEADER_LENGTH) return;
            if (!buf.subarray(0, PROXY_V2_SIGNATURE.length).equals(PROXY_V2_SIGNATURE)) return passThrough();
            header = buf.subarray(0, PROXY_V2_TCP6_HEADER_LENGTH);
            buf = buf.subarray(PROXY_V2_TCP6_HEADER_LENGTH);
            const peer = o.peerFor(proxiedAddressFor(header.subarray(16, 32)));
            who = peer === undefined ? 'anonymous' : peer.verified && peer.commonName !== '' ? 'authenticated' : null;
          }
          if (buf.length === 0) return armIdle();
          const end = buf.indexOf(HEAD_END);
          if (end < 0) {
            if (buf.length > MAX_PROBE_HEAD_BYTES || !/^GET /.test(buf.subarray(0, 4).toString('latin1'))) return passThrough();
            return;
          }
          if (!who) return passThrough();
          const probe = parseProbeHead(buf.subarray(0, end).toString('latin1'));
          if (!probe) return passThrough();
          const { snapshot, ageMs } = o.snapshot();
          const answer = await answerFromSnapshot(snapshot, ageMs, { method: 'GET', path: probe.path, query: probe.query, who }, o.maxAgeMs);
          if (!answer || done) return passThrough();
          buf = buf.subarray(end + HEAD_END.length);
          answered++;
          idle?.cancel();
          const body = Buffer.from(answer.body);
          s.write(
            `HTTP/1.1 ${answer.status} ${answer.status === 200 ? 'OK' : answer.status === 404 ? 'Not Found' : 'Internal Server Error'}\r\n` +
              'Content-Type: text/plain; charset=utf-8\r\nX-Content-Type-Options: nosniff\r\n' +
              `Audit-Id: ${randomUUID()}\r\nDate: ${new Date(o.clock.now()).toUTCString()}\r\nContent-Length: ${body.length}\r\n${probe.close ? 'Connection: close\r\n' : ''}\r\n`,
          );
          s.write(body);
          if (probe.close) {
            done = true;
            s.end();
            return;
          }
        }
      } finally {
        busy = false;
      }
    };
  };

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.listenPath, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', () => undefined);
  return {
    path: o.listenPath,
    get answered() {
      return answered;
    },
    close() {
      for (const s of open) s.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A request head a worker may answer: an HTTP/1.1 GET of a health path
 * without a body or any header that bears on who is asking. Anything else
 * (undefined) goes to the main process.
 */
export function parseProbeHead(head: string): { path: string; query: URLSearchParams; close: boolean } | undefined {
  const lines = head.split('\r\n');
  const m = /^GET (\/[^ ?#]*)(?:\?([^ #]*))? HTTP\/1\.1$/.exec(lines[0] ?? '');
  if (!m || !parseHealthPath(m[1]!)) return undefined;
  let close = false;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    const colon = line.indexOf(':');
    if (colon <= 0) return undefined;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (IDENTITY_HEADER.test(name)) return undefined;
    if (name === 'transfer-encoding' || (name === 'content-length' && value !== '0')) return undefined;
    if (name === 'connection' && /\bclose\b/i.test(value)) close = true;
  }
  let path: string;
  try {
    path = decodeURIComponent(m[1]!);
  } catch {
    return undefined;
  }
  // a percent-encoded path is left to the main process: uWS hands it over undecoded
  if (path !== m[1]) return undefined;
  return { path, query: new URLSearchParams(m[2] ?? ''), close };
}
