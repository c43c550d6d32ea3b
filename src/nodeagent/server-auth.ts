// Authentication and authorization of the agent's HTTPS endpoints (spec 002
// §4.1 "access is controlled by the agent's own authentication and
// authorization settings"): a client certificate signed by
// `authentication.x509.clientCAFile` (else the kubeconfig's cluster CA), or a bearer token checked with a
// TokenReview against the control plane; then, in mode Webhook, a
// SubjectAccessReview for the node subresource (`nodes/checkpoint`, `nodes/proxy`,
// `nodes/metrics`, `nodes/stats`).

import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { ApiClient } from './api-client.js';
import type { NodeAgentConfig } from './config/load.js';

export interface Caller {
  username: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

/** TokenReview answers kept for `authentication.webhook.cacheTTL` (by token) */
const tokenCache = new Map<string, { result: AuthnResult; expires: number }>();

export type AuthnResult = { ok: true; user: Caller } | { ok: false; message: string };

/** `now`: ms since the epoch on the agent's clock (clock.ts), for the TokenReview cache */
export async function authenticate(req: IncomingMessage, c: NodeAgentConfig, api: ApiClient | undefined, domain: string, now: number): Promise<AuthnResult> {
  const sock = req.socket as TLSSocket;
  // `authorized` only when the server asked for a certificate (a client CA is in effect) and it verified
  if (sock.authorized) {
    const cert = sock.getPeerCertificate();
    if (cert?.subject?.CN) {
      const o = cert.subject.O;
      return { ok: true, user: { username: String(cert.subject.CN), groups: [...(Array.isArray(o) ? o : o ? [o] : []), 'system:authenticated'] } };
    }
  }
  const auth = req.headers.authorization;
  const m = auth ? /^Bearer\s+(\S+)$/i.exec(auth) : null;
  if (m) {
    if (!c.authentication.webhook.enabled || !api) return { ok: false, message: 'bearer tokens are not accepted: webhook authentication is off or the agent is standalone' };
    const cached = tokenCache.get(m[1]!);
    if (cached && cached.expires > now) return cached.result;
    const result = await reviewToken(api, m[1]!, domain);
    if (tokenCache.size > 1000) tokenCache.clear();
    // failures of the review itself are not cached: the next request asks again
    if (result.ok || !result.message.startsWith('token review failed')) tokenCache.set(m[1]!, { result, expires: now + c.authentication.webhook.cacheTTL });
    return result;
  }
  if (c.authentication.anonymous.enabled) return { ok: true, user: { username: 'system:anonymous', groups: ['system:unauthenticated'] } };
  return { ok: false, message: 'no client certificate or bearer token' };
}

async function reviewToken(api: ApiClient, token: string, domain: string): Promise<AuthnResult> {
  try {
    const review = await api.create<{ status?: { authenticated?: boolean; user?: Caller; error?: string } }>(`/apis/authentication.${domain}/v1/tokenreviews`, {
      apiVersion: `authentication.${domain}/v1`,
      kind: 'TokenReview',
      spec: { token },
    });
    if (review.status?.authenticated && review.status.user) return { ok: true, user: { ...review.status.user, groups: review.status.user.groups ?? [] } };
    return { ok: false, message: `token not accepted${review.status?.error ? `: ${review.status.error}` : ''}` };
  } catch (e) {
    return { ok: false, message: `token review failed: ${(e as Error).message}` };
  }
}

export async function authorize(
  user: Caller,
  attrs: { verb: string; subresource: string; nodeName: string },
  c: NodeAgentConfig,
  api: ApiClient | undefined,
  domain: string,
): Promise<{ allowed: boolean; reason: string }> {
  if (c.authorization.mode === 'AlwaysAllow') return { allowed: true, reason: '' };
  if (!api) return { allowed: false, reason: 'authorization mode Webhook needs a control plane (the agent is standalone)' };
  try {
    const sar = await api.create<{ status?: { allowed?: boolean; reason?: string } }>(`/apis/authorization.${domain}/v1/subjectaccessreviews`, {
      apiVersion: `authorization.${domain}/v1`,
      kind: 'SubjectAccessReview',
      spec: {
        user: user.username,
        groups: user.groups,
        ...(user.uid ? { uid: user.uid } : {}),
        ...(user.extra ? { extra: user.extra } : {}),
        resourceAttributes: { verb: attrs.verb, group: '', version: 'v1', resource: 'nodes', subresource: attrs.subresource, name: attrs.nodeName },
      },
    });
    return { allowed: sar.status?.allowed === true, reason: sar.status?.reason ?? '' };
  } catch (e) {
    return { allowed: false, reason: `subject access review failed: ${(e as Error).message}` };
  }
}
