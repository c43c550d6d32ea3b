// spec 001 §5.10: Impersonate-* headers, each checked through the authorizer
// (kube's WithImpersonation); the request goes on as the impersonated user.

import { applyImpersonation, wantsImpersonation } from '../../auth/authn/impersonation.js';
import type { Authorizer } from '../../auth/authz/types.js';
import { type Filter, userOf } from './state.js';

export function impersonationFilter(authz: Authorizer, apiDomain: string): Filter {
  const impersonate: Filter = async (s, next) => {
    const authenticated = userOf(s);
    const user = await applyImpersonation(authenticated, s.http.headers, authz, apiDomain);
    if (user !== authenticated) s.audit?.impersonated(user);
    s.user = user;
    return next(s);
  };
  // most requests impersonate nobody: they go on without an async step of this filter
  return (s, next) => {
    if (wantsImpersonation(s.http.headers) || !s.user) return impersonate(s, next);
    return next(s);
  };
}
