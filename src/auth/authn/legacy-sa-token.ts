// Long-lived service-account tokens kept in Secrets, as Kubernetes still
// serves them (its "Manually create a long-lived API token for a
// ServiceAccount"): a Secret of type `<prefix>/service-account-token` naming
// its account in `<prefix>/service-account.name` is filled by the
// serviceaccount-token controller (src/controllers/sa-token-secrets.ts) with
// `token`, `ca.crt` and `namespace`. The token is a JWT of the legacy issuer
// (`kubernetes/serviceaccount` with --api-domain k8s.io, else
// `<product>/serviceaccount`) with no expiry and no audience; it is accepted
// for the API server's own audiences only, while its Secret still holds it
// and its account is the one it names (docs/authentication.md).
import { SignJWT } from 'jose';
import { wellKnownSecretType } from '../../registry/kinds/secret.js';
import type { ApiObject } from '../../registry/types.js';
import type { ServiceAccountKeys } from './sa-keys.js';

/** the private claim that carries the account (Kubernetes' `kubernetes.io`); the legacy claims' prefix too */
export function privateClaimName(apiDomain: string): string {
  return apiDomain === 'k8s.io' ? 'kubernetes.io' : apiDomain;
}

export interface LegacyTokenClaims {
  namespace: string;
  secretName: string;
  serviceAccountName: string;
  serviceAccountUid: string;
}

/** the legacy tokens' `iss` */
export function legacyIssuer(apiDomain: string): string {
  return `${apiDomain === 'k8s.io' ? 'kubernetes' : apiDomain.split('.')[0]}/serviceaccount`;
}

const claimPrefix = (apiDomain: string): string => `${privateClaimName(apiDomain)}/serviceaccount/`;

export async function issueLegacyToken(keys: ServiceAccountKeys, apiDomain: string, c: LegacyTokenClaims): Promise<string> {
  const signing = keys.signing;
  if (!signing) throw new Error('no service-account signing key is configured');
  const p = claimPrefix(apiDomain);
  return new SignJWT({
    [`${p}namespace`]: c.namespace,
    [`${p}secret.name`]: c.secretName,
    [`${p}service-account.name`]: c.serviceAccountName,
    [`${p}service-account.uid`]: c.serviceAccountUid,
  })
    .setProtectedHeader({ alg: signing.alg, kid: signing.kid })
    .setIssuer(legacyIssuer(apiDomain))
    .setSubject(`system:serviceaccount:${c.namespace}:${c.serviceAccountName}`)
    .sign(signing.key);
}

/** the legacy claims of a verified payload; undefined when one is missing */
export function legacyClaimsOf(payload: Record<string, unknown>, apiDomain: string): LegacyTokenClaims | undefined {
  const p = claimPrefix(apiDomain);
  const get = (k: string): string | undefined => (typeof payload[`${p}${k}`] === 'string' ? (payload[`${p}${k}`] as string) : undefined);
  const namespace = get('namespace');
  const secretName = get('secret.name');
  const serviceAccountName = get('service-account.name');
  if (!namespace || !secretName || !serviceAccountName) return undefined;
  return { namespace, secretName, serviceAccountName, serviceAccountUid: get('service-account.uid') ?? '' };
}

/**
 * The annotation prefix of a service-account token Secret's type (`kubernetes.io`, the API domain or its first
 * label, as the Secret's validation accepts them); undefined for any other type.
 */
export function tokenSecretPrefix(secret: ApiObject, apiDomain: string): string | undefined {
  const t = wellKnownSecretType(typeof secret.type === 'string' ? secret.type : '', apiDomain);
  return t?.suffix === 'service-account-token' ? t.prefix : undefined;
}

/** the account a token Secret names: `<prefix>/service-account.name` and `.uid` */
export function tokenSecretAccount(secret: ApiObject, prefix: string): { name: string; uid: string } | undefined {
  const a = (secret.metadata?.annotations ?? {}) as Record<string, unknown>;
  const name = a[`${prefix}/service-account.name`];
  if (typeof name !== 'string' || name === '') return undefined;
  const uid = a[`${prefix}/service-account.uid`];
  return { name, uid: typeof uid === 'string' ? uid : '' };
}
