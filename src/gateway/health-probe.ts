// Health probes a TLS worker answers itself, from the main process's latest
// health snapshot (src/gateway/health-snapshot.ts), without the main event
// loop (issue #15, docs/reliability.md "Health that the main loop cannot
// delay"). Pure: the HTTP/1.1 connection of the TLS front
// (src/gateway/tls-h1-connection.ts) calls `answerProbe` with each complete
// request head it sees while no forwarded request is outstanding, and writes
// the answer itself, or forwards the request to uWS when there is none. The
// HTTP/2 bridge (src/gateway/h2-bridge.ts) asks `h2ProbeAnswerer` for each
// stream that ended with its headers: streams are independent, so an answer
// here never overtakes another stream's response on the wire in a way a
// client could rely on (RFC 9113 §5: no order across streams).
//
// A request is answered here only when it is a GET of a health path whose
// requester the snapshot says may read it: no credential and anonymous
// access; or a client certificate that verified, and nothing else that could
// change who the request is from (`Authorization`, `Impersonate-*`,
// request-header authentication's `X-Remote-*`, a WebSocket sub-protocol
// token, an upgrade). Anything else goes to the main process.

import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http2';
import type { Clock } from '../core/clock.js';
import type { PeerCertificate } from '../auth/types.js';
import { type ProbeIdentity, answerFromSnapshot, type HealthSnapshot } from './health-snapshot.js';
import { parseHealthPath } from './health.js';

/** a request head larger than this is not a probe's: pass it on */
export const MAX_PROBE_HEAD_BYTES = 8 * 1024;
/** headers that may change who a request is from, or carry a credential */
const IDENTITY_HEADER = /^(authorization|impersonate-.*|x-remote-.*|sec-websocket-.*|upgrade|x-orch-hn-.*)$/;

/** a locally answered probe: the bytes of the whole response, and whether the connection closes after it */
export interface ProbeReply {
  bytes: Buffer;
  close: boolean;
}

/** answers a complete request head (without its final CRLFCRLF), or undefined: forward it */
export type ProbeAnswerer = (head: string, peer: PeerCertificate | undefined) => Promise<ProbeReply | undefined>;

/** who a connection's requests are from, as far as a worker can tell; null = only the main process can */
export function probeIdentity(peer: PeerCertificate | undefined): ProbeIdentity | null {
  if (peer === undefined) return 'anonymous';
  return peer.verified && peer.commonName !== '' ? 'authenticated' : null;
}

export interface ProbeAnswererOptions {
  snapshot(): { snapshot: HealthSnapshot | undefined; ageMs: number };
  clock: Clock;
  maxAgeMs?: number;
}

/** answers from the latest snapshot, in the main process's response format (src/gateway/health.ts) */
export function probeAnswerer(o: ProbeAnswererOptions): ProbeAnswerer {
  return async (head, peer) => {
    const who = probeIdentity(peer);
    if (!who) return undefined;
    const probe = parseProbeHead(head);
    if (!probe) return undefined;
    const { snapshot, ageMs } = o.snapshot();
    const answer = await answerFromSnapshot(snapshot, ageMs, { method: 'GET', path: probe.path, query: probe.query, who }, o.maxAgeMs);
    if (!answer) return undefined;
    const body = Buffer.from(answer.body);
    const reason = answer.status === 200 ? 'OK' : answer.status === 404 ? 'Not Found' : 'Internal Server Error';
    const responseHead =
      `HTTP/1.1 ${answer.status} ${reason}\r\n` +
      'Content-Type: text/plain; charset=utf-8\r\nX-Content-Type-Options: nosniff\r\n' +
      `Audit-Id: ${randomUUID()}\r\nDate: ${new Date(o.clock.now()).toUTCString()}\r\nContent-Length: ${body.length}\r\n${probe.close ? 'Connection: close\r\n' : ''}\r\n`;
    return { bytes: Buffer.concat([Buffer.from(responseHead, 'latin1'), body]), close: probe.close };
  };
}

/** a probe answered on an HTTP/2 stream: the response headers and body */
export interface H2ProbeReply {
  headers: OutgoingHttpHeaders;
  body: Buffer;
}

/**
 * Answers an HTTP/2 stream's request headers (of a stream that ended with
 * them, so without a body), or undefined at once (not a probe a worker may
 * answer), or a promise of undefined (the snapshot cannot: forward it).
 */
export type H2ProbeAnswerer = (headers: IncomingHttpHeaders, peer: PeerCertificate | undefined) => Promise<H2ProbeReply | undefined> | undefined;

/** the same eligibility and answers as `probeAnswerer`, for HTTP/2 streams */
export function h2ProbeAnswerer(o: ProbeAnswererOptions): H2ProbeAnswerer {
  return (headers, peer) => {
    const who = probeIdentity(peer);
    if (!who) return undefined;
    const probe = parseH2ProbeHeaders(headers);
    if (!probe) return undefined;
    const { snapshot, ageMs } = o.snapshot();
    return answerFromSnapshot(snapshot, ageMs, { method: 'GET', path: probe.path, query: probe.query, who }, o.maxAgeMs).then((answer) => {
      if (!answer) return undefined;
      const body = Buffer.from(answer.body);
      return {
        headers: {
          ':status': answer.status,
          'content-type': 'text/plain; charset=utf-8',
          'x-content-type-options': 'nosniff',
          'audit-id': randomUUID(),
          date: new Date(o.clock.now()).toUTCString(),
          'content-length': body.length,
        },
        body,
      };
    });
  };
}

/** an HTTP/2 request a worker may answer: a GET of a health path without any header that bears on who is asking */
export function parseH2ProbeHeaders(headers: IncomingHttpHeaders): { path: string; query: URLSearchParams } | undefined {
  if (headers[':method'] !== 'GET') return undefined;
  const m = /^(\/[^ ?#]*)(?:\?([^ #]*))?$/.exec(String(headers[':path'] ?? ''));
  if (!m || !parseHealthPath(m[1]!)) return undefined;
  for (const [name, value] of Object.entries(headers)) {
    if (name.startsWith(':')) continue;
    if (IDENTITY_HEADER.test(name)) return undefined;
    if (name === 'content-length' && value !== '0') return undefined;
  }
  const path = plainPath(m[1]!);
  return path === undefined ? undefined : { path, query: new URLSearchParams(m[2] ?? '') };
}

/** the path if it has no percent-encoding (uWS hands such a path over undecoded: left to the main process) */
function plainPath(raw: string): string | undefined {
  try {
    return decodeURIComponent(raw) === raw ? raw : undefined;
  } catch {
    return undefined;
  }
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
  const path = plainPath(m[1]!);
  if (path === undefined) return undefined;
  return { path, query: new URLSearchParams(m[2] ?? ''), close };
}
