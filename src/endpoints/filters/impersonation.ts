// spec 001 §5.10: Impersonate-* headers, each checked through the authorizer
// (kube's WithImpersonation); the request goes on as the impersonated user.

import { applyImpersonation } from '../../auth/authn/impersonation.js';
import type { Authorizer } from '../../auth/authz/types.js';
import { type Filter, userOf } from './state.js';

export function impersonationFilter(authz: Authorizer, apiDomain: string): Filter {
  return async (s, next) => {
    const authenticated = userOf(s);
    const user = await applyImpersonation(authenticated, s.http.headers, authz, apiDomain);
    if (user !== authenticated) s.audit?.impersonated(user);
    s.user = user;
    return next(s);
  };
}
