// The authentication chain (spec 001 §5.1, §5.9): authenticators are tried in
// order and the first that succeeds decides. A credential that is presented
// but rejected by every authenticator is a 401, never a fall-back to
// anonymous. Every authenticated user gets `system:authenticated`.

import type { PeerCertificate, UserInfo } from '../types.js';

export interface AuthnRequest {
  headers: Map<string, string>;
  peer: PeerCertificate | undefined;
  path: string;
}

export type AuthnResult = { result: 'none' } | { result: 'ok'; user: UserInfo } | { result: 'error'; message: string };

export interface Authenticator {
  readonly name: string;
  authenticate(req: AuthnRequest): AuthnResult | Promise<AuthnResult>;
}

export const UNAUTHENTICATED_GROUP = 'system:unauthenticated';
export const ANONYMOUS: UserInfo = { username: 'system:anonymous', groups: [UNAUTHENTICATED_GROUP] };
export const AUTHENTICATED_GROUP = 'system:authenticated';

/**
 * Whether a request no authenticator claimed may proceed as anonymous:
 * `true`/`false` (`--anonymous-auth`) or a predicate on the request path
 * (the `anonymous.conditions[].path` of AuthenticationConfiguration, §5.9).
 */
export type AnonymousPolicy = boolean | ((path: string) => boolean);

export class AuthenticationChain {
  constructor(
    private readonly authenticators: Authenticator[],
    private anonymous: AnonymousPolicy,
    /** told each bearer token accepted without a client certificate (for shedding's classification only: token-user-cache.ts) */
    private readonly onTokenAccepted?: (token: string, user: UserInfo) => void,
  ) {}

  /** a reloaded AuthenticationConfiguration may change the anonymous policy */
  setAnonymous(policy: AnonymousPolicy): void {
    this.anonymous = policy;
  }

  async authenticate(req: AuthnRequest): Promise<{ user: UserInfo } | { error: string }> {
    // Like Kubernetes' union authenticator, an error from one method does not
    // stop the others: a request may carry an unverifiable certificate and a
    // valid token. Errors count only when nobody succeeds.
    const errors: string[] = [];
    for (const a of this.authenticators) {
      let r: AuthnResult;
      try {
        r = await a.authenticate(req);
      } catch (e) {
        r = { result: 'error', message: `${a.name}: ${(e as Error)?.message ?? String(e)}` };
      }
      if (r.result === 'ok') {
        const user = withAuthenticatedGroup(r.user);
        // without a certificate only a token method can have decided, so the token names this user
        if (this.onTokenAccepted && req.peer === undefined) {
          const token = bearerToken(req.headers);
          if (token) this.onTokenAccepted(token, user);
        }
        return { user };
      }
      if (r.result === 'error') errors.push(r.message);
    }
    if (errors.length > 0) return { error: errors.length === 1 ? errors[0]! : `[${errors.join(', ')}]` };
    // a bearer token nobody recognised is a 401, not anonymous (§5.9)
    if (bearerToken(req.headers) !== undefined) return { error: 'Unauthorized' };
    if (!this.anonymousAllowed(req.path)) return { error: 'Unauthorized' };
    return { user: { ...ANONYMOUS, groups: [...ANONYMOUS.groups] } };
  }

  private anonymousAllowed(path: string): boolean {
    const p = this.anonymous;
    return typeof p === 'function' ? p(path) : p;
  }
}

/**
 * The token of `Authorization: Bearer <token>` (§5.2); undefined when there is
 * no Bearer header. An empty token is returned as '' so that it is refused
 * (401) rather than treated as no credential.
 */
export function bearerToken(headers: Map<string, string>): string | undefined {
  const h = headers.get('authorization');
  if (h === undefined) return undefined;
  const m = /^\s*bearer(?:\s+([\s\S]*?))?\s*$/i.exec(h);
  if (!m) return undefined;
  return m[1] ?? '';
}

export function withAuthenticatedGroup(u: UserInfo): UserInfo {
  if (u.username === ANONYMOUS.username || u.groups.includes(AUTHENTICATED_GROUP)) return u;
  return { ...u, groups: [...u.groups, AUTHENTICATED_GROUP] };
}
