// Impersonation (spec 001 §5.10): after the caller is authenticated, the
// `Impersonate-*` headers replace the user info, provided the caller holds the
// `impersonate` verb on every requested attribute: `users` / `serviceaccounts`
// / `groups` (core group), `uids` and `userextras/<key>` (group
// `authentication.<domain>`). The request is then evaluated as the
// impersonated user.

import { badRequest, forbiddenRequest } from '../../core/errors.js';
import type { Authorizer, RequestAttributes } from '../authz/types.js';
import type { UserInfo } from '../types.js';
import { ANONYMOUS, AUTHENTICATED_GROUP, UNAUTHENTICATED_GROUP } from './chain.js';
import { SA_GROUP, SA_USER_PREFIX } from './serviceaccount.js';
import { FIELD_LINE_SEPARATOR } from '../../core/header-join.js';

const USER = 'impersonate-user';
const GROUP = 'impersonate-group';
const UID = 'impersonate-uid';
const EXTRA_PREFIX = 'impersonate-extra-';

/** whether the request asks for impersonation at all (cheap check for the router) */
export function wantsImpersonation(headers: Map<string, string>): boolean {
  for (const k of headers.keys()) if (k.startsWith('impersonate-')) return true;
  return false;
}

/** every field line of the header is one value, as kube reads them (the gateway keeps the lines apart) */
function values(v: string | undefined): string[] {
  if (v === undefined) return [];
  return v.split(FIELD_LINE_SEPARATOR).filter((s) => s !== '');
}

interface Wanted {
  attrs: Pick<RequestAttributes, 'apiGroup' | 'resource' | 'subresource' | 'namespace' | 'name'>;
}

export async function applyImpersonation(caller: UserInfo, headers: Map<string, string>, authz: Authorizer, apiDomain: string): Promise<UserInfo> {
  if (!wantsImpersonation(headers)) return caller;
  const authGroup = `authentication.${apiDomain}`;
  const username = headers.get(USER)?.trim();
  const groups = values(headers.get(GROUP));
  const uid = headers.get(UID);
  const extra: Record<string, string[]> = {};
  for (const [k, v] of headers) {
    if (!k.startsWith(EXTRA_PREFIX)) continue;
    let key: string;
    try {
      key = decodeURIComponent(k.slice(EXTRA_PREFIX.length)).toLowerCase();
    } catch {
      throw badRequest(`invalid impersonation extra header name ${JSON.stringify(k)}: bad percent-encoding`);
    }
    if (key === '') throw badRequest('impersonation extra header with an empty key');
    extra[key] = values(v);
  }
  const other = groups.length > 0 || uid !== undefined || Object.keys(extra).length > 0;
  if (username === undefined || username === '') {
    if (other || headers.has(USER)) {
      throw badRequest('requested impersonation of groups, uid or extra without impersonating a user: set Impersonate-User');
    }
    return caller;
  }
  const checks: Wanted[] = [];
  let saNamespace: string | undefined;
  if (username.startsWith(SA_USER_PREFIX)) {
    const rest = username.slice(SA_USER_PREFIX.length).split(':');
    if (rest.length !== 2 || rest[0] === '' || rest[1] === '') throw badRequest(`invalid service account user name ${JSON.stringify(username)}`);
    saNamespace = rest[0]!;
    checks.push({ attrs: { apiGroup: '', resource: 'serviceaccounts', subresource: '', namespace: rest[0]!, name: rest[1]! } });
  } else {
    checks.push({ attrs: { apiGroup: '', resource: 'users', subresource: '', namespace: '', name: username } });
  }
  for (const g of groups) checks.push({ attrs: { apiGroup: '', resource: 'groups', subresource: '', namespace: '', name: g } });
  if (uid !== undefined) checks.push({ attrs: { apiGroup: authGroup, resource: 'uids', subresource: '', namespace: '', name: uid } });
  for (const [k, vs] of Object.entries(extra)) {
    for (const v of vs) checks.push({ attrs: { apiGroup: authGroup, resource: 'userextras', subresource: k, namespace: '', name: v } });
  }
  for (const c of checks) {
    const attrs = { user: caller, verb: 'impersonate', isResourceRequest: true, path: '', apiVersion: '', ...c.attrs };
    const d = await authz.authorize(attrs);
    // kube's impersonation filter: an authorizer error is a 403 too (with the reason, not the error)
    if (d.decision !== 'allow' || (d.errors?.length ?? 0) > 0) throw forbiddenRequest(attrs, d.reason);
  }
  const out = [...groups];
  if (saNamespace !== undefined && groups.length === 0) out.push(SA_GROUP, `${SA_GROUP}:${saNamespace}`);
  // the impersonated user is authenticated, unless it is the anonymous user or was given
  // system:unauthenticated (kube's impersonation filter: it never holds both groups)
  if (username === ANONYMOUS.username) {
    if (!out.includes(UNAUTHENTICATED_GROUP)) out.push(UNAUTHENTICATED_GROUP);
  } else if (!out.includes(AUTHENTICATED_GROUP) && !out.includes(UNAUTHENTICATED_GROUP)) out.push(AUTHENTICATED_GROUP);
  return {
    username,
    ...(uid !== undefined && uid !== '' ? { uid } : {}),
    groups: out,
    ...(Object.keys(extra).length > 0 ? { extra } : {}),
  };
}
