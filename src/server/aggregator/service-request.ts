// One HTTPS request to an APIService's Service, shared by the proxy, the
// upgrade tunnel and the availability probe: the Service resolved as the
// admission webhook client resolves one (src/registry/admission/lookups.ts),
// the APIService's caBundle trusted (none when insecureSkipTLSVerify), the
// front-proxy client certificate presented, and the user as X-Remote-*.

import type { OutgoingHttpHeaders } from 'node:http';
import type { AggregatedVersion, ProxiedRequest } from '../../endpoints/filters/aggregator.js';
import { type ServiceResolver, type WebhookAgents, checkName } from '../../registry/admission/webhook-client.js';
import type { UserInfo } from '../../auth/types.js';
import type { CertificateAndKey } from '../pki.js';
import type { Clock } from '../../core/clock.js';

/** headers that belong to one hop (RFC 9110 §7.6.1) or to the client's identity, never forwarded */
const DROPPED_REQUEST_HEADERS = new Set(['authorization', 'connection', 'keep-alive', 'proxy-authorization', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host', 'content-length', 'accept-encoding']);

export interface AggregatorProxyOptions {
  resolver: ServiceResolver;
  agents: WebhookAgents;
  /** the front-proxy client certificate (--proxy-client-cert-file / --proxy-client-key-file) */
  clientCert: () => CertificateAndKey;
  /** timers: the probe's deadline, a paused stream's re-checks */
  clock: Clock;
  log?: (msg: string) => void;
}

/** kube's transport.SetAuthProxyHeaders: the user, one header per group, extras with percent-encoded keys (no UID: kube 1.32 sends none by default) */
export function authProxyHeaders(user: UserInfo): OutgoingHttpHeaders {
  const h: OutgoingHttpHeaders = { 'x-remote-user': user.username };
  if (user.groups.length > 0) h['x-remote-group'] = [...user.groups];
  for (const [k, vs] of Object.entries(user.extra ?? {})) h[`x-remote-extra-${encodeURIComponent(k)}`] = [...vs];
  return h;
}

export type ServiceTarget = ReturnType<typeof serviceRequestOptions>;

/** the options of one HTTPS request to an APIService's Service (proxy and availability probe alike) */
export function serviceRequestOptions(
  target: AggregatedVersion,
  o: AggregatorProxyOptions,
  /** kube's availability probe skips verification whatever the APIService says */
  insecure = target.insecureSkipTLSVerify,
): { host: string; port: number; tls: Record<string, unknown>; agentKey: string } {
  const svc = target.service;
  const r = o.resolver(svc.namespace, svc.name, svc.port);
  const cert = o.clientCert();
  const ca = target.caBundle ? Buffer.from(target.caBundle, 'base64').toString('utf8') : undefined;
  const tls = insecure
    ? { rejectUnauthorized: false }
    : { ca, servername: r.serverName, checkServerIdentity: checkName(r.serverName) };
  return {
    host: r.host,
    port: r.port,
    tls: { ...tls, cert: cert.certPem, key: cert.keyPem },
    agentKey: `aggr|${r.host}:${r.port}|${r.serverName}|${insecure ? 'insecure' : (ca ?? '')}`,
  };
}

/** the client's headers without its credentials, hop-by-hop headers or claimed identity, and the user as X-Remote-* */
export function forwardedHeaders(r: ProxiedRequest): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = {};
  for (const [k, v] of r.http.headers) {
    if (DROPPED_REQUEST_HEADERS.has(k) || k.startsWith('x-remote-') || k.startsWith('impersonate-')) continue;
    headers[k] = v;
  }
  return Object.assign(headers, authProxyHeaders(r.user));
}
