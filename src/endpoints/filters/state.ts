// The filter chain's shapes (kube-apiserver's handler chain, docs/architecture.md
// "Request pipeline"): a filter sees the request state, may answer itself,
// and otherwise calls `next`; what a filter learns (the RequestInfo, the
// negotiated representation, the user, the audit recorder) it records on the
// state for the filters further in.

import type { RequestAudit } from '../../audit/auditor.js';
import type { Negotiated, RequestInfo } from '../request.js';
import type { UserInfo } from '../../auth/types.js';
import type { HttpRequest, HttpResponse } from '../http.js';

export interface RequestState {
  /** the request as the transport gave it (the timeout filter swaps in one with its own signal) */
  http: HttpRequest;
  /** what the URL says; undefined when it is malformed (`infoError` then holds the 400) */
  info?: RequestInfo;
  infoError?: unknown;
  /** the response representation (JSON until negotiation has run, so early errors are JSON) */
  accept: Negotiated;
  /** the authenticated user, after impersonation */
  user?: UserInfo;
  /** the request's audit recorder, when the policy records it */
  audit?: RequestAudit;
}

export type Next = (s: RequestState) => Promise<HttpResponse>;
export type Filter = (s: RequestState, next: Next) => Promise<HttpResponse>;

/** filters[0] is the outermost; `last` answers what every filter passed on */
export function compose(filters: Filter[], last: Next): Next {
  return filters.reduceRight<Next>((inner, f) => (s) => f(s, inner), last);
}

/** the state after the request-info filter (the filters further in run only with a parsed RequestInfo) */
export function infoOf(s: RequestState): RequestInfo {
  if (!s.info) throw s.infoError ?? new Error('request info not parsed');
  return s.info;
}

export function userOf(s: RequestState): UserInfo {
  if (!s.user) throw new Error('the request was not authenticated');
  return s.user;
}
