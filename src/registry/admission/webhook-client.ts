// The HTTPS call to one admission webhook: POST an AdmissionReview (v1) to
// its URL, or to a Service reference resolved by the injected resolver,
// trusting only `caBundle` (else the host's roots), bounded by the webhook's
// timeout (as `?timeout=Ns`, like kube) and by a response size cap. Every
// failure is a WebhookCallError naming what went wrong, in kube's wording
// ("failed to call webhook: Post \"…\": …"), for the failure policy to act on.

import type { ClientRequest } from 'node:http';
import { Agent, request } from 'node:https';
import type { PeerCertificate } from 'node:tls';
import type { ClientConfig } from './webhook-config.js';
import type { Clock } from '../../core/clock.js';
import { closedReusedConnection } from '../../core/reused-connection.js';

export const MAX_RESPONSE_BYTES = 3 * 1024 * 1024;

/** where a Service reference leads: an address to connect to and the name its certificate carries */
export interface ResolvedService {
  host: string;
  port: number;
  /** TLS server name (kube verifies `<service>.<namespace>.svc`) */
  serverName: string;
}

/** resolves a Service reference; throws Error with a clear message (no such service, no endpoints) */
export type ServiceResolver = (namespace: string, name: string, port: number) => ResolvedService;

export class WebhookCallError extends Error {}

/**
 * Why a Service reference did not resolve, as kube-aggregator's availability
 * controller names it (ServiceNotFound, ServicePortError, EndpointsNotFound,
 * MissingEndpoints); the message is the webhook client's wording.
 */
export class ServiceResolutionError extends Error {
  constructor(
    readonly reason: 'ServiceNotFound' | 'ServicePortError' | 'EndpointsNotFound' | 'MissingEndpoints',
    message: string,
    /** the Service port's name (MissingEndpoints names it) */
    readonly portName = '',
  ) {
    super(message);
  }
}

/** keep-alive agents per endpoint and CA, so a busy webhook does not pay a TLS handshake per call */
export class WebhookAgents {
  private readonly agents = new Map<string, Agent>();

  get(key: string): Agent {
    let a = this.agents.get(key);
    if (!a) {
      a = new Agent({ keepAlive: true, maxSockets: 64, maxFreeSockets: 16, timeout: 60_000 });
      this.agents.set(key, a);
    }
    return a;
  }

  /** drops agents whose key is not in `keep` (after a configuration change) */
  retain(keep: Set<string>): void {
    for (const [k, a] of this.agents) {
      if (!keep.has(k)) {
        a.destroy();
        this.agents.delete(k);
      }
    }
  }

  close(): void {
    this.retain(new Set());
  }
}

/** the target of a client config: URL text (for messages), connect address and TLS name */
export function resolveTarget(cc: ClientConfig, resolver: ServiceResolver, timeoutMs: number): { url: string; host: string; port: number; path: string; serverName?: string } {
  const timeoutQuery = `timeout=${Math.ceil(timeoutMs / 1000)}s`;
  if (cc.url) {
    const u = new URL(cc.url);
    const path = `${u.pathname || '/'}${u.search ? `${u.search}&` : '?'}${timeoutQuery}`;
    const host = u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname;
    return { url: `${u.origin}${path}`, host, port: u.port ? Number(u.port) : 443, path };
  }
  const s = cc.service!;
  // an empty path is the root, as in kube (webhookutil's service URL)
  const path = `${s.path || '/'}?${timeoutQuery}`;
  const url = `https://${s.name}.${s.namespace}.svc:${s.port}${path}`;
  let r: ResolvedService;
  try {
    r = resolver(s.namespace, s.name, s.port);
  } catch (e) {
    throw new WebhookCallError(`failed to call webhook: Post "${url}": ${(e as Error).message}`);
  }
  return { url, host: r.host, port: r.port, path, serverName: r.serverName };
}

export function postReview(
  cc: ClientConfig,
  review: unknown,
  /** `maxResponseBytes`: the answer's cap (default MAX_RESPONSE_BYTES; a conversion webhook answers whole lists) */
  o: { resolver: ServiceResolver; timeoutMs: number; agents: WebhookAgents; clock: Clock; maxResponseBytes?: number },
): Promise<unknown> {
  return new Promise((resolve, reject) => {
    let target: ReturnType<typeof resolveTarget>;
    try {
      target = resolveTarget(cc, o.resolver, o.timeoutMs);
    } catch (e) {
      reject(e);
      return;
    }
    const fail = (why: string) => reject(new WebhookCallError(`failed to call webhook: Post "${target.url}": ${why}`));
    const body = JSON.stringify(review);
    const maxBytes = o.maxResponseBytes ?? MAX_RESPONSE_BYTES;
    const agentKey = `${target.host}:${target.port}|${target.serverName ?? ''}|${cc.caPem ?? ''}`;
    let settled = false;
    let answered = false;
    let req: ClientRequest;
    const send = (mayRetry: boolean) => {
      req = request(
        {
          host: target.host,
          port: target.port,
          path: target.path,
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Accept: 'application/json', 'Content-Length': Buffer.byteLength(body) },
          ca: cc.caPem,
          servername: target.serverName ?? (isIp(target.host) ? undefined : target.host),
          ...(target.serverName ? { checkServerIdentity: checkName(target.serverName) } : {}),
          agent: o.agents.get(agentKey),
        },
        (res) => {
          answered = true;
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (c: Buffer) => {
            size += c.length;
            if (size > maxBytes) {
              settled = true;
              req.destroy();
              fail(`the response is larger than ${maxBytes} bytes`);
              return;
            }
            chunks.push(c);
          });
          res.on('end', () => {
            if (settled) return;
            settled = true;
            deadline.cancel();
            const text = Buffer.concat(chunks).toString('utf8');
            if (res.statusCode !== 200) {
              reject(new WebhookCallError(`failed to call webhook: the server responded with the status code ${res.statusCode ?? 0}${text ? `: ${text.slice(0, 200)}` : ' but did not return more information'}`));
              return;
            }
            try {
              resolve(JSON.parse(text));
            } catch (e) {
              reject(new WebhookCallError(`received invalid webhook response: ${(e as Error).message}`));
            }
          });
          res.on('error', (e) => {
            if (settled) return;
            settled = true;
            fail(e.message);
          });
        },
      );
      req.on('error', (e: NodeJS.ErrnoException) => {
        if (settled) return;
        // the webhook closed the kept-alive connection as this went out on it (its idle timeout): once more on a
        // new connection, as Go's transport does; a review asks the webhook to decide, so a second ask is harmless
        if (mayRetry && !answered && closedReusedConnection(req, e)) {
          send(false);
          return;
        }
        settled = true;
        deadline.cancel();
        fail(describeSocketError(e, target));
      });
      req.end(body);
    };
    // the webhook's timeoutSeconds, on the server's clock
    const deadline = o.clock.setTimeout(() => {
      if (settled) return;
      settled = true;
      req.destroy();
      fail('context deadline exceeded');
    }, o.timeoutMs);
    send(true);
  });
}

export function isIp(h: string): boolean {
  return /^\d+\.\d+\.\d+\.\d+$/.test(h) || h.includes(':');
}

/** Service references: the certificate must name `<service>.<namespace>.svc` whatever address we dialled */
export function checkName(serverName: string) {
  return (_host: string, cert: PeerCertificate): Error | undefined => {
    const sans = (cert.subjectaltname ?? '').split(',').map((s) => s.trim());
    if (sans.includes(`DNS:${serverName}`)) return undefined;
    return new Error(`x509: certificate is valid for ${sans.map((s) => s.replace(/^(DNS|IP Address):/, '')).join(', ') || 'no names'}, not ${serverName}`);
  };
}

export function describeSocketError(e: NodeJS.ErrnoException, t: { host: string; port: number }): string {
  if (e.code === 'ECONNREFUSED') return `dial tcp ${t.host}:${t.port}: connect: connection refused`;
  if (e.code === 'ENOTFOUND' || e.code === 'EAI_AGAIN') return `dial tcp: lookup ${t.host}: no such host`;
  if (e.code === 'ECONNRESET') return `read tcp ${t.host}:${t.port}: connection reset by peer`;
  if (e.code && /CERT|SELF_SIGNED|UNABLE_TO|ERR_TLS/.test(e.code)) return `tls: failed to verify certificate: ${e.message}`;
  return e.message;
}
