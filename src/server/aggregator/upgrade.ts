// Upgrades (WebSocket, SPDY/3.1) to an aggregated API server pass through as
// bytes, as kube's UpgradeAwareHandler passes them: the upgrade request goes
// on with the user in X-Remote-* over a TLS connection of its own; the
// server's `101` and everything after it are relayed to the client's
// connection, which the gateway hands over (a TunnelResponse,
// docs/tls.md "SPDY upgrades"). An answer other than 101 is sent as is.

import { connect } from 'node:tls';
import type { Duplex } from 'node:stream';
import { serviceUnavailable } from '../../core/errors.js';
import type { ProxiedRequest } from '../../endpoints/filters/aggregator.js';
import type { HttpResponse } from '../../endpoints/http.js';
import { describeSocketError } from '../../registry/admission/webhook-client.js';
import { type ServiceTarget, forwardedHeaders } from './service-request.js';

/** the largest response head read before the answer is known */
const MAX_HEAD_BYTES = 64 * 1024;

export function isUpgrade(headers: Map<string, string>): boolean {
  return headers.has('upgrade') && /\bupgrade\b/i.test(headers.get('connection') ?? '');
}

/** `target`: the resolved Service (the proxy resolved it already) */
export function proxyUpgrade(r: ProxiedRequest, target: ServiceTarget): Promise<HttpResponse> {
  const headers = forwardedHeaders(r);
  headers.connection = 'Upgrade';
  headers.upgrade = r.http.headers.get('upgrade') ?? '';
  const query = r.http.query.toString();
  const lines = [`${r.http.method} ${query ? `${r.http.path}?${query}` : r.http.path} HTTP/1.1`, `host: ${target.host}:${target.port}`];
  for (const [k, v] of Object.entries(headers)) for (const one of Array.isArray(v) ? v : [v]) lines.push(`${k}: ${String(one)}`);
  const head = `${lines.join('\r\n')}\r\n\r\n`;
  return new Promise<HttpResponse>((resolve, reject) => {
    const sock = connect({ host: target.host, port: target.port, ALPNProtocols: ['http/1.1'], ...target.tls });
    // small interactive writes (exec keystrokes, SPDY frames) leave at once, not behind Nagle's wait for an ACK
    sock.setNoDelay(true);
    let got = Buffer.alloc(0);
    const fail = (e: NodeJS.ErrnoException) => {
      sock.destroy();
      reject(serviceUnavailable(`error trying to reach service: ${describeSocketError(e, target)}`));
    };
    sock.once('error', fail);
    sock.once('secureConnect', () => sock.write(head));
    const onData = (c: Buffer) => {
      got = Buffer.concat([got, c]);
      const end = got.indexOf('\r\n\r\n');
      if (end < 0) {
        if (got.length > MAX_HEAD_BYTES) fail(new Error('the response head is too large'));
        return;
      }
      sock.off('data', onData);
      sock.pause();
      sock.off('error', fail);
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(got.subarray(0, end).toString('latin1'))?.[1] ?? 502);
      if (status !== 101) {
        sock.destroy();
        resolve(plainAnswer(got, end, status));
        return;
      }
      resolve({ status: 101, headers: [], tunnel: relay(sock, got) });
    };
    sock.on('data', onData);
    r.http.signal.addEventListener('abort', () => sock.destroy(), { once: true });
  });
}

/** the server's 101 and what followed it go first, then both ways with back-pressure */
function relay(server: Duplex, first: Buffer): { open(client: Duplex): void; close(): void } {
  return {
    open(client) {
      const end = () => {
        client.destroy();
        server.destroy();
      };
      client.on('error', end).on('close', end);
      server.on('error', end).on('close', end);
      client.write(first);
      server.pipe(client);
      client.pipe(server);
      server.resume();
    },
    close() {
      server.destroy();
    },
  };
}

/** a refused upgrade: the server's status, headers and whatever body came with the head */
function plainAnswer(got: Buffer, end: number, status: number): HttpResponse {
  const headers: [string, string][] = [];
  for (const line of got.subarray(0, end).toString('latin1').split('\r\n').slice(1)) {
    const i = line.indexOf(':');
    const k = line.slice(0, i).trim().toLowerCase();
    if (i > 0 && !['connection', 'transfer-encoding', 'content-length', 'upgrade', 'keep-alive'].includes(k)) headers.push([k, line.slice(i + 1).trim()]);
  }
  return { status, headers, body: new Uint8Array(got.subarray(end + 4)) };
}
