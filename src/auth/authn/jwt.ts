// JWT / OpenID Connect authentication (spec 001 §5.6). One authenticator per
// issuer: keys come from OIDC discovery (`<issuer>/.well-known/openid-
// configuration` → `jwks_uri`), fetched once and refreshed when a token names
// an unknown key; the identity provider is not contacted per request. The
// same engine serves the `--oidc-*` flags and each `jwt[]` entry of the
// structured AuthenticationConfiguration (claim rules, mappings with claims
// or CEL expressions, user validation rules).

import { type JSONWebKeySet, type JWTPayload, createLocalJWKSet, decodeJwt, jwtVerify } from 'jose';
import type { UserInfo } from '../types.js';
import type { CompiledExpression } from './cel.js';
import { httpJson } from './http-client.js';
import { describeJoseError } from './serviceaccount.js';
import type { TokenAuthenticator, TokenResult } from './token.js';

export type ClaimOrExpression = { claim: string; prefix?: string } | { expression: CompiledExpression };

export interface JwtAuthenticatorConfig {
  issuer: {
    url: string;
    discoveryURL?: string;
    /** PEM CA bundle for discovery and JWKS; default host roots */
    certificateAuthority?: string;
    audiences: string[];
  };
  claimValidationRules: ({ claim: string; requiredValue: string } | { expression: CompiledExpression; message: string })[];
  claimMappings: {
    username: ClaimOrExpression;
    groups?: ClaimOrExpression;
    uid?: { claim: string } | { expression: CompiledExpression };
    extra: { key: string; valueExpression: CompiledExpression }[];
  };
  userValidationRules: { expression: CompiledExpression; message: string }[];
  /** accepted JWS algorithms (`--oidc-signing-algs`, default RS256) */
  signingAlgs: string[];
  /** flag mode: `email` as username requires `email_verified` to be true when present */
  checkEmailVerified?: boolean;
}

const REFRESH_MIN_INTERVAL_MS = 10_000;

export class JwtAuthenticator implements TokenAuthenticator {
  readonly name: string;
  private jwks: ReturnType<typeof createLocalJWKSet> | undefined;
  private lastFetch = 0;
  private fetching: Promise<void> | undefined;
  private lastError = '';

  constructor(
    readonly config: JwtAuthenticatorConfig,
    private readonly log: (msg: string) => void,
    private readonly now: () => number,
  ) {
    this.name = `jwt(${config.issuer.url})`;
  }

  /** discovery + JWKS; errors are kept and retried on the next token */
  refresh(): Promise<void> {
    this.fetching ??= (async () => {
      this.lastFetch = this.now();
      try {
        const discovery = this.config.issuer.discoveryURL ?? `${this.config.issuer.url.replace(/\/$/, '')}/.well-known/openid-configuration`;
        const tls = this.config.issuer.certificateAuthority ? { ca: this.config.issuer.certificateAuthority } : {};
        const d = await httpJson('GET', discovery, undefined, tls);
        if (d.status !== 200) throw new Error(`discovery ${discovery}: status ${d.status}`);
        const doc = d.json as { issuer?: unknown; jwks_uri?: unknown };
        if (doc.issuer !== this.config.issuer.url) throw new Error(`discovery ${discovery}: issuer ${JSON.stringify(doc.issuer)} does not match ${this.config.issuer.url}`);
        if (typeof doc.jwks_uri !== 'string') throw new Error(`discovery ${discovery}: no jwks_uri`);
        const k = await httpJson('GET', doc.jwks_uri, undefined, tls);
        if (k.status !== 200) throw new Error(`jwks ${doc.jwks_uri}: status ${k.status}`);
        this.jwks = createLocalJWKSet(k.json as JSONWebKeySet);
        this.lastError = '';
      } catch (e) {
        this.lastError = (e as Error).message;
        this.log(`${this.name}: ${this.lastError}`);
      } finally {
        this.fetching = undefined;
      }
    })();
    return this.fetching;
  }

  async authenticateToken(token: string): Promise<TokenResult> {
    let unverified: JWTPayload;
    try {
      unverified = decodeJwt(token);
    } catch {
      return { result: 'none' };
    }
    if (unverified.iss !== this.config.issuer.url) return { result: 'none' };
    if (!this.jwks) await this.refresh();
    if (!this.jwks) return { result: 'error', message: `${this.name}: keys not available: ${this.lastError}` };
    let payload: JWTPayload;
    try {
      payload = await this.verify(token);
    } catch (e) {
      // a key rotation: refetch (rate-limited) and try once more
      if ((e as { code?: string }).code === 'ERR_JWKS_NO_MATCHING_KEY' && this.now() - this.lastFetch > REFRESH_MIN_INTERVAL_MS) {
        await this.refresh();
        try {
          payload = await this.verify(token);
        } catch (e2) {
          return { result: 'error', message: `${this.name}: ${describeJoseError(e2)}` };
        }
      } else return { result: 'error', message: `${this.name}: ${describeJoseError(e)}` };
    }
    try {
      return { result: 'ok', user: this.mapUser(payload as Record<string, unknown>) };
    } catch (e) {
      return { result: 'error', message: `${this.name}: ${(e as Error).message}` };
    }
  }

  private async verify(token: string): Promise<JWTPayload> {
    const r = await jwtVerify(token, this.jwks!, {
      issuer: this.config.issuer.url,
      algorithms: this.config.signingAlgs,
      currentDate: new Date(this.now()),
      requiredClaims: ['exp'],
    });
    const aud = typeof r.payload.aud === 'string' ? [r.payload.aud] : (r.payload.aud ?? []);
    if (!this.config.issuer.audiences.some((a) => aud.includes(a))) {
      throw new Error(`audience ${JSON.stringify(aud)} does not match ${JSON.stringify(this.config.issuer.audiences)}`);
    }
    return r.payload;
  }

  /** claim rules, mappings and user rules; throws with the reason on failure (401) */
  mapUser(claims: Record<string, unknown>): UserInfo {
    const c = this.config;
    for (const rule of c.claimValidationRules) {
      if ('claim' in rule) {
        const v = claims[rule.claim];
        if (v !== rule.requiredValue) throw new Error(`required claim ${rule.claim} not found or does not match`);
      } else if (rule.expression.evaluate({ claims }) !== true) throw new Error(rule.message || `claim validation expression ${JSON.stringify(rule.expression.source)} failed`);
    }
    const m = c.claimMappings;
    let username: string;
    if ('claim' in m.username) {
      const v = claims[m.username.claim];
      if (typeof v !== 'string' || v === '') throw new Error(`claim ${m.username.claim} not present or not a non-empty string`);
      if (c.checkEmailVerified && m.username.claim === 'email' && 'email_verified' in claims && claims.email_verified !== true) {
        throw new Error('email not verified');
      }
      username = (m.username.prefix ?? '') + v;
    } else {
      const v = m.username.expression.evaluate({ claims });
      if (typeof v !== 'string') throw new Error('username expression must return a string');
      username = v;
    }
    if (username === '') throw new Error('username is empty');
    let groups: string[] = [];
    if (m.groups) {
      const raw = 'claim' in m.groups ? claims[m.groups.claim] : m.groups.expression.evaluate({ claims });
      const list = raw === undefined || raw === null ? [] : typeof raw === 'string' ? [raw] : raw;
      if (!Array.isArray(list) || list.some((g) => typeof g !== 'string')) throw new Error('groups must be a string or a list of strings');
      const prefix = 'claim' in m.groups ? (m.groups.prefix ?? '') : '';
      groups = (list as string[]).filter((g) => g !== '').map((g) => prefix + g);
    }
    let uid: string | undefined;
    if (m.uid) {
      const v = 'claim' in m.uid ? claims[m.uid.claim] : m.uid.expression.evaluate({ claims });
      if (v !== undefined && v !== null) {
        if (typeof v !== 'string') throw new Error('uid must be a string');
        if (v !== '') uid = v;
      }
    }
    const extra: Record<string, string[]> = {};
    for (const e of m.extra) {
      const v = e.valueExpression.evaluate({ claims });
      const list = v === null || v === undefined ? [] : typeof v === 'string' ? [v] : v;
      if (!Array.isArray(list) || list.some((x) => typeof x !== 'string')) throw new Error(`extra ${e.key}: must be a string or a list of strings`);
      const vals = (list as string[]).filter((x) => x !== '');
      if (vals.length > 0) extra[e.key] = vals;
    }
    const user: UserInfo = { username, ...(uid ? { uid } : {}), groups, ...(Object.keys(extra).length > 0 ? { extra } : {}) };
    for (const rule of c.userValidationRules) {
      const u = { username: user.username, uid: user.uid ?? '', groups: user.groups, extra: user.extra ?? {} };
      if (rule.expression.evaluate({ user: u }) !== true) throw new Error(rule.message || `user validation expression ${JSON.stringify(rule.expression.source)} failed`);
    }
    return user;
  }
}

/** the `--oidc-*` flags (§5.6) */
export interface OidcFlags {
  issuerURL: string;
  clientID: string;
  usernameClaim?: string;
  usernamePrefix?: string;
  groupsClaim?: string;
  groupsPrefix?: string;
  requiredClaims?: Record<string, string>;
  caFile?: string;
  signingAlgs?: string[];
}

/** flags → the engine's configuration, with the defaults and prefix rules of §5.6 */
export function configFromOidcFlags(f: OidcFlags, caPem: string | undefined): JwtAuthenticatorConfig {
  if (!f.issuerURL) throw new Error('--oidc-issuer-url is required when OIDC authentication is configured');
  let u: URL;
  try {
    u = new URL(f.issuerURL);
  } catch {
    throw new Error(`--oidc-issuer-url: ${JSON.stringify(f.issuerURL)} is not a URL`);
  }
  if (u.protocol !== 'https:') throw new Error('--oidc-issuer-url: must use https://');
  if (f.issuerURL.includes('/.well-known/')) throw new Error('--oidc-issuer-url: give the issuer, without the discovery path');
  if (!f.clientID) throw new Error('--oidc-client-id is required when --oidc-issuer-url is set');
  const claim = f.usernameClaim || 'sub';
  // unset prefix: claims other than email get "<issuer>#"; "-" disables prefixing
  let prefix: string;
  if (f.usernamePrefix === '-') prefix = '';
  else if (f.usernamePrefix !== undefined && f.usernamePrefix !== '') prefix = f.usernamePrefix;
  else prefix = claim === 'email' ? '' : `${f.issuerURL}#`;
  return {
    issuer: { url: f.issuerURL, audiences: [f.clientID], ...(caPem ? { certificateAuthority: caPem } : {}) },
    claimValidationRules: Object.entries(f.requiredClaims ?? {}).map(([k, v]) => ({ claim: k, requiredValue: v })),
    claimMappings: {
      username: { claim, prefix },
      ...(f.groupsClaim ? { groups: { claim: f.groupsClaim, prefix: f.groupsPrefix ?? '' } } : {}),
      extra: [],
    },
    userValidationRules: [],
    signingAlgs: f.signingAlgs && f.signingAlgs.length > 0 ? f.signingAlgs : ['RS256'],
    checkEmailVerified: true,
  };
}
