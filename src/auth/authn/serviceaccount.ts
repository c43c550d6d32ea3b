// Service-account tokens (spec 001 §5.5): JWTs signed with the server's key
// (`jose`), issued by the TokenRequest sub-resource, authenticated as
// `system:serviceaccount:<ns>:<name>` in `system:serviceaccounts` and
// `system:serviceaccounts:<ns>`. With `--service-account-lookup` (default on)
// a token whose account (or bound Pod/Secret/Node) was deleted, or recreated
// with another uid, is revoked. Long-lived tokens kept in Secrets (the legacy
// issuer) are checked against their Secret (legacy-sa-token.ts).

import { randomUUID } from 'node:crypto';
import { SignJWT, decodeJwt, decodeProtectedHeader, errors as joseErrors, jwtVerify } from 'jose';
import type { UserInfo } from '../types.js';
import { legacyClaimsOf, legacyIssuer, privateClaimName } from './legacy-sa-token.js';
import type { ObjectGetter } from './objects.js';
import type { ServiceAccountKeys } from './sa-keys.js';
import type { TokenAuthenticator, TokenResult } from './token.js';

export const SA_USER_PREFIX = 'system:serviceaccount:';
export const SA_GROUP = 'system:serviceaccounts';

export interface ObjectRef {
  name: string;
  uid: string;
}

export interface BoundObject extends ObjectRef {
  kind: 'Pod' | 'Secret' | 'Node';
  /** a Pod's node (kube's ServiceAccountTokenPodNodeInfo); uid '' when that Node does not exist */
  node?: ObjectRef;
}

export interface TokenIssueRequest {
  namespace: string;
  name: string;
  uid: string;
  audiences: string[];
  expirationSeconds: number;
  boundObject?: BoundObject;
}

type ClaimRef = { name?: string; uid?: string };
export interface PrivateClaim {
  namespace?: string;
  serviceaccount?: ClaimRef;
  pod?: ClaimRef;
  secret?: ClaimRef;
  node?: ClaimRef;
}

/** the private claim of a bound token (kube's pkg/serviceaccount Claims): the account, and the bound object; a Pod's node beside the pod */
export function privateClaim(r: TokenIssueRequest): PrivateClaim {
  const priv: PrivateClaim = { namespace: r.namespace, serviceaccount: { name: r.name, uid: r.uid } };
  const b = r.boundObject;
  const ref = (o: ObjectRef): ClaimRef => ({ name: o.name, ...(o.uid !== '' ? { uid: o.uid } : {}) });
  if (b?.kind === 'Pod') {
    priv.pod = ref(b);
    if (b.node) priv.node = ref(b.node);
  }
  if (b?.kind === 'Secret') priv.secret = ref(b);
  if (b?.kind === 'Node') priv.node = ref(b);
  return priv;
}

export class ServiceAccountTokenIssuer {
  constructor(
    private readonly keys: ServiceAccountKeys,
    /** the first issuer signs; all are accepted */
    readonly issuer: string,
    private readonly apiDomain: string,
    private readonly now: () => number,
  ) {}

  async issue(r: TokenIssueRequest): Promise<{ token: string; expiresAt: Date }> {
    const signing = this.keys.signing;
    if (!signing) throw new Error('no service-account signing key is configured');
    const nowS = Math.floor(this.now() / 1000);
    const exp = nowS + r.expirationSeconds;
    const token = await new SignJWT({ [privateClaimName(this.apiDomain)]: privateClaim(r) as Record<string, unknown> })
      .setProtectedHeader({ alg: signing.alg, kid: signing.kid })
      .setIssuer(this.issuer)
      .setSubject(`${SA_USER_PREFIX}${r.namespace}:${r.name}`)
      .setAudience(r.audiences)
      .setIssuedAt(nowS)
      .setNotBefore(nowS)
      .setExpirationTime(exp)
      .setJti(randomUUID())
      .sign(signing.key);
    return { token, expiresAt: new Date(exp * 1000) };
  }
}

export interface ServiceAccountAuthenticatorOptions {
  keys: ServiceAccountKeys;
  issuers: string[];
  apiDomain: string;
  lookup: boolean;
  objects: ObjectGetter;
  /** the API server's own audiences (--api-audiences): the only ones a legacy token, which names none, is good for */
  apiAudiences?: string[];
  /** records on a legacy token's Secret the day (UTC, by its clock) it was last used (kube's legacy-token-last-used label); a write, not awaited */
  markLegacyTokenUsed?: { now: () => number; record: (namespace: string, secretName: string, label: string, day: string) => void };
  now?: () => number;
}

export class ServiceAccountTokenAuthenticator implements TokenAuthenticator {
  readonly name = 'service-account';
  constructor(private readonly o: ServiceAccountAuthenticatorOptions) {}

  async authenticateToken(token: string, audiences: string[]): Promise<TokenResult> {
    // Not a JWT, or not from one of our issuers: another method's token.
    let iss: string | undefined;
    let kid: string | undefined;
    try {
      iss = decodeJwt(token).iss;
      kid = decodeProtectedHeader(token).kid;
    } catch {
      return { result: 'none' };
    }
    if (iss !== undefined && iss === legacyIssuer(this.o.apiDomain)) return this.authenticateLegacy(token, kid, audiences);
    if (iss === undefined || !this.o.issuers.includes(iss)) return { result: 'none' };
    const verified = await this.verify(token, kid, this.o.issuers, ['exp', 'sub']);
    if ('error' in verified) return { result: 'error', message: `service account token: ${verified.error}` };
    const payload = verified.payload;
    const aud = typeof payload.aud === 'string' ? [payload.aud] : Array.isArray(payload.aud) ? (payload.aud as string[]) : [];
    const granted = audiences.filter((a) => aud.includes(a));
    if (granted.length === 0) return { result: 'error', message: 'service account token: token audiences do not match' };
    const sub = String(payload.sub);
    const m = /^system:serviceaccount:([^:]+):([^:]+)$/.exec(sub);
    if (!m) return { result: 'error', message: 'service account token: malformed subject' };
    const [, ns, name] = m as unknown as [string, string, string];
    const priv = (payload[privateClaimName(this.o.apiDomain)] ?? {}) as PrivateClaim;
    if (priv.namespace !== ns || priv.serviceaccount?.name !== name) {
      return { result: 'error', message: 'service account token: private claims do not match the subject' };
    }
    const uid = priv.serviceaccount?.uid ?? '';
    if (this.o.lookup) {
      const sa = this.o.objects('serviceaccounts', ns, name);
      if (!sa || sa.metadata?.deletionTimestamp) return { result: 'error', message: `service account token has been invalidated: serviceaccount ${ns}/${name} not found` };
      if (uid !== '' && sa.metadata?.uid !== uid) return { result: 'error', message: `service account token has been invalidated: serviceaccount ${ns}/${name} uid changed` };
      // a pod-bound token's node claim is only reported, never checked (kube's ServiceAccountTokenNodeBindingValidation
      // checks the Node of node-bound tokens only: a Node's pods go with it)
      const bound = [['pods', ns, priv.pod], ['secrets', ns, priv.secret], ['nodes', '', priv.pod ? undefined : priv.node]] as const;
      for (const [res, objNs, ref] of bound) {
        if (!ref?.name) continue;
        const o = this.o.objects(res, objNs, ref.name);
        if (!o || o.metadata?.deletionTimestamp || (ref.uid && o.metadata?.uid !== ref.uid)) {
          return { result: 'error', message: `service account token has been invalidated: bound ${res} ${objNs === '' ? '' : `${objNs}/`}${ref.name} not found` };
        }
      }
    }
    const extra: Record<string, string[]> = {};
    const authGroup = `authentication.${this.o.apiDomain === 'k8s.io' ? 'kubernetes.io' : this.o.apiDomain}`;
    if (typeof payload.jti === 'string') extra[`${authGroup}/credential-id`] = [`JTI=${payload.jti}`];
    for (const [kind, ref] of [['pod', priv.pod], ['node', priv.node]] as const) {
      if (!ref?.name) continue;
      extra[`${authGroup}/${kind}-name`] = [ref.name];
      if (ref.uid) extra[`${authGroup}/${kind}-uid`] = [ref.uid];
    }
    const user: UserInfo = {
      username: sub,
      ...(uid !== '' ? { uid } : {}),
      groups: [SA_GROUP, `${SA_GROUP}:${ns}`],
      ...(Object.keys(extra).length > 0 ? { extra } : {}),
    };
    return { result: 'ok', user, audiences: granted };
  }

  /** the signature and the registered claims, against each key the header's `kid` allows */
  private async verify(token: string, kid: string | undefined, issuers: string[], requiredClaims: string[]): Promise<{ payload: Record<string, unknown> } | { error: string }> {
    const candidates = this.o.keys.verify.filter((k) => kid === undefined || k.kid === kid);
    if (candidates.length === 0) return { error: 'unknown signing key' };
    let lastError = 'invalid signature';
    for (const k of candidates) {
      try {
        const r = await jwtVerify(token, k.key, { issuer: issuers, algorithms: [k.alg], currentDate: this.o.now ? new Date(this.o.now()) : undefined, requiredClaims });
        return { payload: r.payload as Record<string, unknown> };
      } catch (e) {
        lastError = describeJoseError(e);
        if (!(e instanceof joseErrors.JWSSignatureVerificationFailed)) break;
      }
    }
    return { error: lastError };
  }

  /**
   * A long-lived token from a service-account token Secret: good for the API server's audiences only, and (with
   * lookup, as kube's legacy validator) only while its Secret holds this very token and its account is the one
   * it names.
   */
  private async authenticateLegacy(token: string, kid: string | undefined, audiences: string[]): Promise<TokenResult> {
    const verified = await this.verify(token, kid, [legacyIssuer(this.o.apiDomain)], ['sub']);
    if ('error' in verified) return { result: 'error', message: `service account token: ${verified.error}` };
    const c = legacyClaimsOf(verified.payload, this.o.apiDomain);
    const sub = String(verified.payload.sub);
    if (!c || sub !== `${SA_USER_PREFIX}${c.namespace}:${c.serviceAccountName}`) return { result: 'error', message: 'service account token: private claims do not match the subject' };
    const own = this.o.apiAudiences ?? [];
    const granted = audiences.filter((a) => own.includes(a));
    if (granted.length === 0) return { result: 'error', message: `service account token: token audiences ${JSON.stringify(own)} is invalid for the target audiences ${JSON.stringify(audiences)}` };
    if (this.o.lookup) {
      const secret = this.o.objects('secrets', c.namespace, c.secretName);
      if (!secret || secret.metadata?.deletionTimestamp) return { result: 'error', message: `service account token has been invalidated: secret ${c.namespace}/${c.secretName} not found` };
      const held = ((secret.data ?? {}) as Record<string, unknown>).token;
      if (typeof held !== 'string' || Buffer.from(held, 'base64').toString('utf8') !== token) return { result: 'error', message: 'service account token: token does not match server\'s copy' };
      const sa = this.o.objects('serviceaccounts', c.namespace, c.serviceAccountName);
      if (!sa || sa.metadata?.deletionTimestamp) return { result: 'error', message: `service account token has been invalidated: serviceaccount ${c.namespace}/${c.serviceAccountName} not found` };
      if (c.serviceAccountUid !== '' && sa.metadata?.uid !== c.serviceAccountUid) return { result: 'error', message: `service account token has been invalidated: serviceaccount ${c.namespace}/${c.serviceAccountName} uid changed` };
      const labels = (secret.metadata?.labels ?? {}) as Record<string, string>;
      const prefix = privateClaimName(this.o.apiDomain);
      const invalid = `${prefix}/legacy-token-invalid-since`;
      if (labels[invalid] !== undefined) {
        return { result: 'error', message: `service account token has been invalidated: the token in secret ${c.namespace}/${c.secretName} for service account ${c.namespace}/${c.serviceAccountName} has been marked invalid; remove the '${invalid}' label from the secret to allow its use` };
      }
      const lastUsed = `${prefix}/legacy-token-last-used`;
      const mark = this.o.markLegacyTokenUsed;
      const today = mark && new Date(mark.now()).toISOString().slice(0, 10);
      if (mark && today && labels[lastUsed] !== today) mark.record(c.namespace, c.secretName, lastUsed, today);
    }
    const user: UserInfo = {
      username: sub,
      ...(c.serviceAccountUid !== '' ? { uid: c.serviceAccountUid } : {}),
      groups: [SA_GROUP, `${SA_GROUP}:${c.namespace}`],
    };
    return { result: 'ok', user, audiences: granted };
  }
}

export function describeJoseError(e: unknown): string {
  if (e instanceof joseErrors.JWTExpired) return 'token is expired';
  if (e instanceof joseErrors.JWSSignatureVerificationFailed) return 'invalid signature';
  if (e instanceof joseErrors.JWTClaimValidationFailed) return `invalid claim ${e.claim}: ${e.message}`;
  if (e instanceof joseErrors.JOSEAlgNotAllowed) return 'signing algorithm not allowed';
  return (e as Error)?.message ?? String(e);
}
