// A small HTTPS client for authenticators that call out (OIDC discovery and
// JWKS §5.6, token webhooks §5.7): custom CA bundle, optional client
// certificate, a timeout and a response size cap so a misbehaving remote
// cannot stall or flood the server.

import { type Clock, systemClock } from '../../core/clock.js';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

export interface TlsClientOptions {
  /** PEM CA bundle; default the host's roots */
  ca?: string;
  cert?: string;
  key?: string;
  /** bearer token sent as Authorization */
  token?: string;
}

export const MAX_RESPONSE_BYTES = 1024 * 1024;

export function httpJson(
  method: 'GET' | 'POST',
  url: string,
  body: unknown,
  tls: TlsClientOptions = {},
  timeoutMs = 10_000,
  clock: Clock = systemClock,
): Promise<{ status: number; json: unknown }> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const data = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (data !== undefined) {
      headers['Content-Type'] = 'application/json';
      headers['Content-Length'] = String(Buffer.byteLength(data));
    }
    if (tls.token) headers.Authorization = `Bearer ${tls.token}`;
    const fn = u.protocol === 'http:' ? httpRequest : httpsRequest;
    const req = fn(
      u,
      { method, headers, ca: tls.ca, cert: tls.cert, key: tls.key, agent: false, timeout: timeoutMs },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_RESPONSE_BYTES) {
            req.destroy(new Error(`response from ${u.origin} larger than ${MAX_RESPONSE_BYTES} bytes`));
            return;
          }
          chunks.push(c);
        });
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = text === '' ? undefined : JSON.parse(text);
          } catch {
            reject(new Error(`${method} ${url}: response is not JSON (status ${res.statusCode})`));
            return;
          }
          resolve({ status: res.statusCode ?? 0, json });
        });
        res.on('error', reject);
      },
    );
    // `timeout` above is an idle timeout; this bounds the whole exchange, so a
    // remote that trickles bytes cannot hold a request past the deadline either
    const timedOut = () => req.destroy(new Error(`${method} ${url}: timed out after ${timeoutMs} ms`));
    const deadline = clock.setTimeout(timedOut, timeoutMs);
    req.on('close', () => deadline.cancel());
    req.on('timeout', timedOut);
    req.on('error', reject);
    if (data !== undefined) req.write(data);
    req.end();
  });
}
