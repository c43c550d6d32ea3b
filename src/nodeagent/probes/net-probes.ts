// kubelet's httpGet and tcpSocket probers (pkg/probe/http, pkg/probe/tcp) on
// Node's sockets, with Go's error texts, since they reach users verbatim in
// Unhealthy events (`Liveness probe failed: dial tcp 127.4.5.6:8080: connect:
// connection refused`). I/O deadlines are real time (they bound real sockets);
// the prober's schedule runs on the agent's clock (worker.ts).

import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import { systemClock } from '../clock.js';
import type { Outcome } from './types.js';

/** kubelet's User-Agent: kube-probe/<major>.<minor> */
export const PROBE_USER_AGENT = 'kube-probe/1.32';
/** pkg/probe/http: at most this much of a body is read */
const MAX_BODY = 10 * 1024;
/** Go's default redirect limit, which kubelet's RedirectChecker keeps */
const MAX_REQUESTS = 10;

/** Go's net.OpError text of a failed dial or read: `connect: connection refused`, `i/o timeout` */
export function goSocketError(e: NodeJS.ErrnoException): string {
  switch (e.code) {
    case 'ECONNREFUSED':
      return 'connect: connection refused';
    case 'EHOSTUNREACH':
      return 'connect: no route to host';
    case 'ENETUNREACH':
      return 'connect: network is unreachable';
    case 'ETIMEDOUT':
      return 'i/o timeout';
    case 'ECONNRESET':
      return 'read: connection reset by peer';
    case 'EADDRNOTAVAIL':
      return 'connect: cannot assign requested address';
    default:
      return e.message;
  }
}

/** pkg/probe/tcp DoTCPProbe: a connection made (and closed) is success */
export function tcpProbe(host: string, port: number, timeoutMs: number): Promise<Outcome> {
  const addr = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  return new Promise((resolve) => {
    const sock = connect({ host, port });
    // a real socket's deadline: real time, whatever clock schedules the prober
    const timer = systemClock.setTimeout(() => {
      sock.destroy();
      resolve({ result: 'failure', output: `dial tcp ${addr}: i/o timeout` });
    }, timeoutMs);
    sock.once('connect', () => {
      systemClock.clearTimeout(timer);
      sock.destroy();
      resolve({ result: 'success', output: '' });
    });
    sock.once('error', (e: NodeJS.ErrnoException) => {
      systemClock.clearTimeout(timer);
      resolve({ result: 'failure', output: e.code === 'ENOTFOUND' ? `dial tcp: lookup ${host}: no such host` : `dial tcp ${addr}: ${goSocketError(e)}` });
    });
  });
}

interface Answer {
  status: number;
  location?: string;
  body: string;
}

class Timeout extends Error {}

/** host:port with the scheme's port written out, as kubelet's URLs always carry one (Node's URL drops 80/443) */
const hostPort = (u: URL) => u.host.replace(/^(.*?)(:\d+)?$/, (_m, h: string, p?: string) => `${h}${p ?? (u.protocol === 'https:' ? ':443' : ':80')}`);
/** the URL as Go prints it in `Get "…"` */
const goHref = (u: URL) => `${u.protocol}//${hostPort(u)}${u.pathname}${u.search}`;

function once(url: URL, headers: Record<string, string>, signal: AbortSignal): Promise<Answer> {
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    // kubelet: no keep-alive, and certificates are not verified (pkg/probe/http NewProber)
    const req = send(url, { method: 'GET', headers: { ...headers, Connection: 'close' }, signal, agent: false, rejectUnauthorized: false });
    req.on('error', reject);
    req.on('response', (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (d: Buffer) => {
        if (size < MAX_BODY) chunks.push(d.subarray(0, MAX_BODY - size));
        size += d.length;
        // past the limit the rest is not read (utilio.ReadAtMost): a truncated body is not an error
        if (size >= MAX_BODY) res.destroy();
      });
      const done = () => resolve({ status: res.statusCode ?? 0, location: res.headers.location, body: Buffer.concat(chunks).toString() });
      res.on('end', done);
      res.on('close', done);
      res.on('error', reject);
    });
    req.end();
  });
}

/**
 * pkg/probe/http DoHTTPProbe with kubelet's client: 200–399 is success, but
 * a redirect it did not follow is a warning; redirects are followed while
 * they stay on the same host (RedirectChecker(false)), at most 10 requests;
 * anything else is `HTTP probe failed with statuscode: N` (never the body,
 * issue 99425). `headers` are the probe's httpHeaders (kubelet adds
 * User-Agent and Accept when they are missing).
 */
export async function httpProbe(url: URL, probeHeaders: { name: string; value: string }[], timeoutMs: number): Promise<Outcome> {
  const headers: Record<string, string> = {};
  for (const h of probeHeaders) headers[h.name] = h.value;
  const has = (n: string) => Object.keys(headers).some((k) => k.toLowerCase() === n);
  if (!has('user-agent')) headers['User-Agent'] = PROBE_USER_AGENT;
  if (!has('accept')) headers['Accept'] = '*/*';
  const controller = new AbortController();
  const timer = systemClock.setTimeout(() => controller.abort(new Timeout()), timeoutMs);
  let current = url;
  let requests = 0;
  try {
    for (;;) {
      requests += 1;
      let a: Answer;
      try {
        a = await once(current, headers, controller.signal);
      } catch (e) {
        const msg = controller.signal.aborted
          ? 'context deadline exceeded (Client.Timeout exceeded while awaiting headers)'
          : (e as NodeJS.ErrnoException).code === 'ENOTFOUND'
            ? `dial tcp: lookup ${current.hostname}: no such host`
            : (e as NodeJS.ErrnoException).code === 'ECONNRESET' || (e as Error).message === 'socket hang up'
              ? 'EOF'
              : `dial tcp ${hostPort(current)}: ${goSocketError(e as NodeJS.ErrnoException)}`;
        return { result: 'failure', output: `Get ${JSON.stringify(goHref(current))}: ${msg}` };
      }
      const redirect = [301, 302, 303, 307, 308].includes(a.status) && a.location;
      if (redirect) {
        const next = new URL(a.location!, current);
        if (next.hostname === url.hostname) {
          if (requests >= MAX_REQUESTS) return { result: 'failure', output: `Get ${JSON.stringify(goHref(next))}: stopped after 10 redirects` };
          // a Host header the probe set names the first host; a redirect elsewhere on it keeps it
          current = next;
          continue;
        }
      }
      if (a.status >= 200 && a.status < 400) {
        if (a.status >= 300) return { result: 'warning', output: `Probe terminated redirects, Response body: ${a.body}` };
        return { result: 'success', output: a.body };
      }
      return { result: 'failure', output: `HTTP probe failed with statuscode: ${a.status}` };
    }
  } finally {
    systemClock.clearTimeout(timer);
  }
}
