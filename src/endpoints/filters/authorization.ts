// May they (spec 001 §5, kube's WithAuthorization): the request's attributes
// through the authorizer chain. Allowed goes on (an error with an allow does
// not matter); otherwise an authorizer error is a 500 (§5.16: a webhook that
// could not be asked), and anything else is 403.

import { aggregateErrors } from '../../auth/authz/errors.js';
import { forbiddenRequest } from '../../core/errors.js';
import type { Authorizer } from '../../auth/authz/types.js';
import type { HttpRequest, PlainResponse } from '../http.js';
import { authorizationAttributes } from './authz-attributes.js';
import { type Filter, infoOf, userOf } from './state.js';

export function authorizationFilter(authz: Authorizer): Filter {
  return async (s, next) => {
    const attrs = authorizationAttributes(userOf(s), infoOf(s), s.http.path, s.http.query);
    const decision = await authz.authorize(attrs);
    if (decision.decision === 'allow') {
      s.audit?.authorized(true, decision.reason);
      return next(s);
    }
    const error = aggregateErrors(decision.errors);
    if (error !== undefined) {
      s.audit?.authorizationFailed();
      return internalError(s.http, error);
    }
    s.audit?.authorized(false, decision.reason);
    throw forbiddenRequest(attrs, decision.reason);
  };
}

/**
 * kube's responsewriters.InternalError: a plain-text 500 (Go's http.Error),
 * `Internal Server Error: "<request URI>": <error>`, not a Status object.
 */
export function internalError(req: HttpRequest, error: string): PlainResponse {
  const query = req.query.toString();
  const uri = query ? `${req.path}?${query}` : req.path;
  // Go's %q of the URI, then kube's sanitizer (no text that looks like HTML)
  const text = `Internal Server Error: ${JSON.stringify(uri)}: ${error}`.replace(/[&<>]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' })[c]!);
  return {
    status: 500,
    headers: [
      ['Content-Type', 'text/plain; charset=utf-8'],
      ['X-Content-Type-Options', 'nosniff'],
    ],
    body: `${text}\n`,
  };
}
