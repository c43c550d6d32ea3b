// The authentication chain (spec 001 §5): authenticators are tried in order,
// the first that succeeds decides; a credential that is presented but
// invalid is a 401, never a fall-back to anonymous. Every authenticated user
// gets `system:authenticated`.

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

export const ANONYMOUS: UserInfo = { username: 'system:anonymous', groups: ['system:unauthenticated'] };

export class AuthenticationChain {
  constructor(
    private readonly authenticators: Authenticator[],
    private readonly anonymous: boolean,
  ) {}

  async authenticate(req: AuthnRequest): Promise<{ user: UserInfo } | { error: string }> {
    for (const a of this.authenticators) {
      const r = await a.authenticate(req);
      if (r.result === 'ok') return { user: withAuthenticatedGroup(r.user) };
      if (r.result === 'error') return { error: r.message };
    }
    // a bearer token nobody recognised is a 401, not anonymous
    if (req.headers.get('authorization')) return { error: 'Unauthorized' };
    if (!this.anonymous) return { error: 'Unauthorized' };
    return { user: { ...ANONYMOUS, groups: [...ANONYMOUS.groups] } };
  }
}

function withAuthenticatedGroup(u: UserInfo): UserInfo {
  if (u.username === 'system:anonymous' || u.groups.includes('system:authenticated')) return u;
  return { ...u, groups: [...u.groups, 'system:authenticated'] };
}
