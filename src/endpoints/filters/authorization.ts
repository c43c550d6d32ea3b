// May they (spec 001 §5, kube's WithAuthorization): the request's attributes
// through the authorizer chain; anything but allow is 403.

import { forbiddenRequest } from '../../core/errors.js';
import type { Authorizer } from '../../auth/authz/types.js';
import { authorizationAttributes } from './authz-attributes.js';
import { type Filter, infoOf, userOf } from './state.js';

export function authorizationFilter(authz: Authorizer): Filter {
  return async (s, next) => {
    const attrs = authorizationAttributes(userOf(s), infoOf(s), s.http.path, s.http.query);
    const decision = await authz.authorize(attrs);
    s.audit?.authorized(decision.decision === 'allow', decision.reason);
    if (decision.decision !== 'allow') throw forbiddenRequest(attrs, decision.reason);
    return next(s);
  };
}
