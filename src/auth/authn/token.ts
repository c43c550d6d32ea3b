// Bearer-token authentication (spec 001 §5.2): the token methods (static file,
// bootstrap, service account, OIDC/JWT, webhook) share one interface so that
// both the request chain and TokenReview (§2.3) can run them.

import type { UserInfo } from '../types.js';
import { type Authenticator, type AuthnRequest, type AuthnResult, bearerToken } from './chain.js';

export type TokenResult =
  | { result: 'none' }
  /** `audiences`: the audiences the token is valid for, when the method knows them (service accounts) */
  | { result: 'ok'; user: UserInfo; audiences?: string[] }
  | { result: 'error'; message: string };

export interface TokenAuthenticator {
  readonly name: string;
  /**
   * `audiences` are those the caller needs the token to be valid for (the API
   * server's own audiences for requests, `spec.audiences` for TokenReview).
   * Return `none` when the token is not of this method's shape, `error` when
   * it is but is invalid.
   */
  authenticateToken(token: string, audiences: string[]): TokenResult | Promise<TokenResult>;
}

/** tokens longer than this are refused outright: no method issues them, and parsing them costs */
export const MAX_TOKEN_BYTES = 64 * 1024;

/**
 * Runs token methods in order; the first success decides. A method that
 * does not know the audiences it was issued for is taken to be valid for the
 * API server's audiences only (as Kubernetes' audience-agnostic wrapper).
 */
export class TokenUnion implements TokenAuthenticator {
  readonly name = 'token';
  constructor(
    private readonly methods: () => TokenAuthenticator[],
    private readonly apiAudiences: string[],
  ) {}

  async authenticateToken(token: string, audiences: string[]): Promise<TokenResult> {
    if (token.length > MAX_TOKEN_BYTES) return { result: 'error', message: 'token too large' };
    const wanted = audiences.length > 0 ? audiences : this.apiAudiences;
    const errors: string[] = [];
    for (const m of this.methods()) {
      let r: TokenResult;
      try {
        r = await m.authenticateToken(token, wanted);
      } catch (e) {
        r = { result: 'error', message: `${m.name}: ${(e as Error)?.message ?? String(e)}` };
      }
      if (r.result === 'error') errors.push(r.message);
      if (r.result !== 'ok') continue;
      if (r.audiences !== undefined) return r;
      // audience-agnostic method: valid only where the API server's audiences are wanted
      const granted = wanted.filter((a) => this.apiAudiences.includes(a));
      if (this.apiAudiences.length > 0 && granted.length === 0) {
        errors.push(`${m.name}: token audiences ${JSON.stringify(this.apiAudiences)} is invalid for the target audiences ${JSON.stringify(wanted)}`);
        continue;
      }
      return { ...r, audiences: granted };
    }
    if (errors.length > 0) return { result: 'error', message: errors.length === 1 ? errors[0]! : `[${errors.join(', ')}]` };
    return { result: 'none' };
  }
}

/** the chain member for `Authorization: Bearer` */
export class BearerTokenAuthenticator implements Authenticator {
  readonly name = 'bearer-token';
  constructor(
    private readonly tokens: TokenAuthenticator,
    private readonly apiAudiences: string[],
  ) {}

  async authenticate(req: AuthnRequest): Promise<AuthnResult> {
    const token = bearerToken(req.headers);
    if (token === undefined) return { result: 'none' };
    const r = await this.tokens.authenticateToken(token, this.apiAudiences);
    if (r.result === 'ok') return { result: 'ok', user: r.user };
    if (r.result === 'error') return { result: 'error', message: 'Unauthorized' };
    return { result: 'none' };
  }
}
