// Who is asking (spec 001 §3, kube's WithAuthentication): the chain of
// authenticators; a request no authenticator accepts is 401.

import { StatusError } from '../../core/errors.js';
import type { AuthenticationChain } from '../../auth/authn/chain.js';
import type { PeerCertificate } from '../../auth/types.js';
import { authFailureMessage } from '../../audit/event.js';
import type { Encoder } from '../encode.js';
import type { Filter } from './state.js';

export function authenticationFilter(
  authn: Pick<AuthenticationChain, 'authenticate'>,
  peerFor: (proxiedAddress: string) => PeerCertificate | undefined,
  respond: Encoder,
): Filter {
  return async (s, next) => {
    const http = s.http;
    const peer = peerFor(http.proxiedAddress);
    const result = await authn.authenticate({ headers: http.headers, peer, path: http.path });
    if ('error' in result) {
      s.audit?.unauthenticated(authFailureMessage(http.headers, peer !== undefined, http.query));
      return respond(401, new StatusError(401, 'Unauthorized', result.error).toStatus(), s.accept);
    }
    // the audit policy is matched against the authenticated user, before impersonation (as kube's filter order)
    s.audit?.authenticated(result.user);
    s.user = result.user;
    return next(s);
  };
}
