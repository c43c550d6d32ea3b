// Bootstrap tokens (spec 001 §5.4, §3): `<id>.<secret>` tokens backed by
// Secrets `bootstrap-token-<id>` of type `bootstrap.<domain>/token` in
// `orch-system` (`kube-system` with --api-domain k8s.io). A token authenticates as `system:bootstrap:<id>` in
// `system:bootstrappers` plus its `auth-extra-groups`, while it is valid and
// allows `usage-bootstrap-authentication`.
//
// The token lifecycle (valid → expired → deleted) is an XState machine
// (src/lifecycles/bootstrap-token.ts) shared by the authenticator, the token
// cleaner and the bootstrap signer, so that all three agree on when a token
// stops counting.

import { timingSafeEqual } from 'node:crypto';
import { systemNamespacesOf } from '../../core/product-names.js';
import { lifecycleState } from '../../lifecycles/bootstrap-token.js';
import type { ApiObject } from '../../registry/types.js';
import type { UserInfo } from '../types.js';
import type { ObjectGetter } from './objects.js';
import type { TokenAuthenticator, TokenResult } from './token.js';

/** where the token Secrets live: the system namespace */
export function bootstrapNamespaceOf(apiDomain: string): string {
  return systemNamespacesOf(apiDomain).system;
}
export const BOOTSTRAP_SECRET_PREFIX = 'bootstrap-token-';
export const BOOTSTRAP_USER_PREFIX = 'system:bootstrap:';
export const BOOTSTRAPPERS_GROUP = 'system:bootstrappers';
export const TOKEN_PATTERN = /^([a-z0-9]{6})\.([a-z0-9]{16})$/;
const EXTRA_GROUP_PATTERN = /^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]$/;

/** `bootstrap.orch.io/token`; Kubernetes' spelling with `--api-domain k8s.io` */
export function bootstrapSecretType(apiDomain: string): string {
  return `bootstrap.${apiDomain === 'k8s.io' ? 'kubernetes.io' : apiDomain}/token`;
}

export interface BootstrapToken {
  id: string;
  secret: string;
  description?: string;
  /** ms since epoch; undefined = never expires */
  expiresAt?: number;
  usageAuthentication: boolean;
  usageSigning: boolean;
  extraGroups: string[];
  deleting: boolean;
}

// the lifecycle (valid → expired → deleted) is src/lifecycles/bootstrap-token.ts;
// re-exported for the token cleaner and the bootstrap signer
export { bootstrapTokenMachine, lifecycleState, type TokenLifecycleState } from '../../lifecycles/bootstrap-token.js';

function dataString(data: Record<string, unknown>, key: string): string | undefined {
  const v = data[key];
  if (typeof v !== 'string') return undefined;
  return Buffer.from(v, 'base64').toString('utf8');
}

/** a Secret → token, or the reason it is not a well-formed bootstrap token */
export function parseBootstrapSecret(secret: ApiObject, apiDomain: string): BootstrapToken | { invalid: string } {
  if (secret.type !== bootstrapSecretType(apiDomain)) return { invalid: `type is not ${bootstrapSecretType(apiDomain)}` };
  const name = secret.metadata?.name ?? '';
  const data = (secret.data ?? {}) as Record<string, unknown>;
  const id = dataString(data, 'token-id');
  const sec = dataString(data, 'token-secret');
  if (!id || !/^[a-z0-9]{6}$/.test(id)) return { invalid: 'token-id missing or malformed' };
  if (!sec || !/^[a-z0-9]{16}$/.test(sec)) return { invalid: 'token-secret missing or malformed' };
  if (name !== `${BOOTSTRAP_SECRET_PREFIX}${id}`) return { invalid: `name must be ${BOOTSTRAP_SECRET_PREFIX}${id}` };
  let expiresAt: number | undefined;
  const exp = dataString(data, 'expiration');
  if (exp !== undefined && exp !== '') {
    // RFC 3339 (§5.4); an unparseable expiration counts as expired
    expiresAt = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(exp) ? Date.parse(exp) : 0;
    if (Number.isNaN(expiresAt)) expiresAt = 0;
  }
  const extraGroups = (dataString(data, 'auth-extra-groups') ?? '')
    .split(',')
    .map((g) => g.trim())
    .filter((g) => g !== '');
  for (const g of extraGroups) if (!EXTRA_GROUP_PATTERN.test(g)) return { invalid: `auth-extra-groups: ${JSON.stringify(g)} must begin with system:bootstrappers:` };
  const description = dataString(data, 'description');
  return {
    id,
    secret: sec,
    ...(description !== undefined ? { description } : {}),
    ...(expiresAt !== undefined ? { expiresAt } : {}),
    usageAuthentication: dataString(data, 'usage-bootstrap-authentication') === 'true',
    usageSigning: dataString(data, 'usage-bootstrap-signing') === 'true',
    extraGroups,
    deleting: Boolean(secret.metadata?.deletionTimestamp),
  };
}

export class BootstrapTokenAuthenticator implements TokenAuthenticator {
  readonly name = 'bootstrap-token';
  constructor(
    private readonly objects: ObjectGetter,
    private readonly apiDomain: string,
    private readonly now: () => number,
    private readonly log: (msg: string) => void = () => {},
  ) {
    this.namespace = bootstrapNamespaceOf(apiDomain);
  }

  private readonly namespace: string;

  authenticateToken(token: string): TokenResult {
    const m = TOKEN_PATTERN.exec(token);
    if (!m) return { result: 'none' };
    const [, id, secret] = m as unknown as [string, string, string];
    // As Kubernetes: a token of bootstrap shape that does not check out is
    // "not mine" (the request then fails 401 because nobody accepted it).
    const s = this.objects('secrets', this.namespace, `${BOOTSTRAP_SECRET_PREFIX}${id}`);
    if (!s) return { result: 'none' };
    const t = parseBootstrapSecret(s, this.apiDomain);
    if ('invalid' in t) {
      this.log(`bootstrap token ${id}: ${t.invalid}`);
      return { result: 'none' };
    }
    const a = Buffer.from(t.secret);
    const b = Buffer.from(secret);
    if (a.length !== b.length || !timingSafeEqual(a, b)) return { result: 'none' };
    if (lifecycleState(t, this.now()) !== 'valid') return { result: 'none' };
    if (!t.usageAuthentication) return { result: 'none' };
    const user: UserInfo = { username: `${BOOTSTRAP_USER_PREFIX}${id}`, groups: [BOOTSTRAPPERS_GROUP, ...t.extraGroups.filter((g) => g !== BOOTSTRAPPERS_GROUP)] };
    return { result: 'ok', user };
  }
}
