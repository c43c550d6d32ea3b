// Shedding before work (issue #15 item 2): under overload, a request that
// flow control would refuse at once (its priority level's seats taken and its
// flow's queues full, or `catch-all` at its limit) is answered 429 with
// Retry-After as soon as its head is read — before its body is buffered,
// before authentication, request parsing beyond the URL, audit, or a turn of
// the filter chain. Before this, such a request cost the main event loop as
// much as an admitted one up to admission.
//
// Classification needs the requester. Only what is known without
// authenticating is used: the connection's client certificate (verified by
// the TLS front; its subject is the user and groups, spec 001 §5.3), no
// credential at all (anonymous), or a bearer token on a connection without a
// certificate that the chain accepted in the last seconds (the user it made
// of it, src/auth/authn/token-user-cache.ts: a classification, never an
// authentication; an unknown token is not shed here). A request that carries
// anything else that may decide who it is (impersonation, an authenticating
// proxy's headers) is not shed here and goes to the chain's admission as
// before, which is still the authority: this only refuses what `admit` would
// refuse at that moment, never admits. Health checks, the admin identity
// (exempt) and long-running requests are never shed.

import { ANONYMOUS, AUTHENTICATED_GROUP, bearerToken } from '../../auth/authn/chain.js';
import type { TokenUserCache } from '../../auth/authn/token-user-cache.js';
import type { PeerCertificate, UserInfo } from '../../auth/types.js';
import type { PlainResponse } from '../../endpoints/http.js';
import { HEALTH_PATH } from '../../endpoints/filters/non-resource.js';
import { isLongRunning } from '../../endpoints/filters/timeout.js';
import { parseRequestInfo } from '../../endpoints/request-info.js';
import type { RequestInfo } from '../../endpoints/request.js';
import type { FlowControl } from './flow-control.js';

/** headers that make the requester something other than the certificate's subject, the token's user or anonymous */
const IDENTITY_HEADER = /^(impersonate-.*|x-remote-.*|sec-websocket-protocol)$/;

export interface RequestHead {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: Map<string, string>;
  proxiedAddress: string;
  /** set by the shedder when it parsed the URL, so the chain does not parse it again (request-info filter) */
  info?: RequestInfo;
}

export interface EarlyShedOptions {
  flow: Pick<FlowControl, 'refusalNow'>;
  /** the connection's client certificate (the TLS front's `peerFor`) */
  peerFor(proxiedAddress: string): PeerCertificate | undefined;
  /** counted per shed request (metrics) */
  onShed?(level: string): void;
  /** who a bearer token last authenticated as (the chain fills it); without it token requests are not shed here */
  tokenUsers?: Pick<TokenUserCache, 'classifyAs'>;
}

/** a function for the uWS handler: the 429 to answer now, or undefined to go on */
export function earlyShedder(o: EarlyShedOptions): (head: RequestHead) => PlainResponse | undefined {
  return (head) => {
    if (HEALTH_PATH.test(head.path)) return undefined;
    for (const name of head.headers.keys()) if (IDENTITY_HEADER.test(name)) return undefined;
    const user = cheapUser(o.peerFor(head.proxiedAddress), head.headers, o.tokenUsers);
    if (!user) return undefined;
    let info;
    try {
      info = parseRequestInfo(head.method, head.path, head.query);
      head.info = info;
    } catch {
      // a malformed path is the chain's 400
      return undefined;
    }
    if (isLongRunning(info)) return undefined;
    const refused = o.flow.refusalNow({ user, isResourceRequest: info.isResourceRequest, verb: info.verb, apiGroup: info.group, resource: info.resource, namespace: info.namespace });
    if (!refused) return undefined;
    o.onShed?.(refused.level);
    return tooManyRequestsResponse(refused.level, refused.why);
  };
}

/** the user to classify a request with this certificate, token or neither as; undefined when unsure */
function cheapUser(peer: PeerCertificate | undefined, headers: Map<string, string>, tokenUsers: EarlyShedOptions['tokenUsers']): UserInfo | undefined {
  if (headers.has('authorization')) {
    // with a certificate too, which of the two decides is the chain's business
    if (peer) return undefined;
    const token = bearerToken(headers);
    return token ? tokenUsers?.classifyAs(token) : undefined;
  }
  if (!peer) return { username: ANONYMOUS.username, groups: [...ANONYMOUS.groups] };
  // an unverified certificate is the chain's 401
  if (!peer.verified || peer.commonName === '') return undefined;
  return { username: peer.commonName, groups: [...peer.organizations, AUTHENTICATED_GROUP] };
}

const BODY = JSON.stringify({
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message: 'Too many requests, please try again later.',
  reason: 'TooManyRequests',
  details: { retryAfterSeconds: 1 },
  code: 429,
});

/** kube's 429 (the same body and headers as flow control's `tooManyRequests`) */
export function tooManyRequestsResponse(level: string, why: string): PlainResponse {
  return {
    status: 429,
    headers: [
      ['Content-Type', 'application/json'],
      ['Retry-After', '1'],
      ['X-Orch-Pf-Priority-Level', level],
      ['X-Orch-Pf-Rejection', why],
    ],
    body: BODY,
  };
}
