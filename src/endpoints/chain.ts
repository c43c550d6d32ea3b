// The request pipeline (docs/architecture.md "Request pipeline"), shaped as
// kube-apiserver's handler chain: small filters over a neutral request
// (src/endpoints/http.ts), composed here and nowhere else, outermost first:
//
//   request info → metrics → audit → deadline → Status errors → negotiation
//   → authentication → impersonation → flow control → authorization
//   → aggregated APIs (proxied) → non-resource paths (health, discovery, OpenAPI) → dispatch
//
// Dispatch is one lookup in the installer's (definition, verb, sub-resource)
// table (src/endpoints/installer.ts), rebuilt when the registry changes.

import type { HandlerContext } from './handlers/context.js';
import { ProtobufCatalog } from '../registry/protobuf-catalog.js';
import type { RequestInfo } from './request.js';
import type { ResourceDefinition } from '../registry/types.js';
import type { AuthenticationChain } from '../auth/authn/chain.js';
import type { Authorizer } from '../auth/authz/types.js';
import type { PeerCertificate } from '../auth/types.js';
import { type Clock, systemClock } from '../core/clock.js';
import { type Encoder, encoderWith } from './encode.js';
import { type GatewayAudit, auditFilter, rememberResponseObject } from './filters/audit.js';
import { authenticationFilter } from './filters/authentication.js';
import { type AggregatedApis, aggregatorFilter } from './filters/aggregator.js';
import { authorizationFilter } from './filters/authorization.js';
import { dispatch } from './filters/dispatch.js';
import { type FlowAdmission, flowControlFilter } from './filters/flow-control.js';
import { impersonationFilter } from './filters/impersonation.js';
import { negotiationFilter } from './filters/negotiation.js';
import { type HealthEndpoints, type NonResourceHandler, nonResourceFilter } from './filters/non-resource.js';
import { type Observer, observeFilter } from './filters/observe.js';
import { requestInfoFilter } from './filters/request-info.js';
import { type Filter, compose } from './filters/state.js';
import { statusFilter } from './filters/status.js';
import { timeoutFilter } from './filters/timeout.js';
import { type WatchCacher, watchHandler } from './handlers/watch.js';
import { RouteTable } from './installer.js';
import type { HttpRequest, HttpResponse } from './http.js';

export { deprecationWarning, tooLargeResponse } from './encode.js';
export type { NonResourceDoc, NonResourceHandler } from './filters/non-resource.js';

export const MAX_BODY_BYTES = 3 * 1024 * 1024;

export interface ChainOptions {
  ctx: HandlerContext;
  apiDomain: string;
  authn: Pick<AuthenticationChain, 'authenticate'>;
  authz: Authorizer;
  health: HealthEndpoints;
  /** the cacher watches are opened on (src/watch/service.ts) */
  watch: WatchCacher;
  nonResource: NonResourceHandler;
  peerFor(proxiedAddress: string): PeerCertificate | undefined;
  /** server logging of unexpected errors */
  log?: (msg: string) => void;
  /** a request used a deprecated endpoint (spec 000 §6: metric `apiserver_requested_deprecated_apis`) */
  onDeprecated?: (def: ResourceDefinition, info: RequestInfo) => void;
  /** called once per request with its outcome (metrics) */
  observe?: Observer;
  /** overload protection (issue #15, src/gateway/flowcontrol/); absent = no limits */
  flowControl?: FlowAdmission;
  /** `--request-timeout` for requests that are not long-running (default 60 s; 0 = none) */
  requestTimeoutMs?: number;
  clock?: Clock;
  /** audit logging (issue 16 item 3, src/endpoints/filters/audit.ts); absent = only the Audit-Id header */
  audit?: GatewayAudit;
  /** APIServices with a Service: their groups are proxied after authorization (src/endpoints/filters/aggregator.ts) */
  aggregated?: AggregatedApis;
}

export function createChain(opts: ChainOptions): (req: HttpRequest) => Promise<HttpResponse> {
  // protobuf bodies and responses for kinds with field numbers (spec 000 §2.7, §4.3)
  const protobuf = new ProtobufCatalog(opts.ctx.registry);
  const encodeAs = encoderWith(protobuf);
  const respond: Encoder = opts.audit ? (...a) => rememberResponseObject(encodeAs(...a), a[1]) : encodeAs;
  const routes = new RouteTable(opts.ctx.registry, watchHandler(opts.watch));
  const filters: Filter[] = [requestInfoFilter];
  if (opts.observe) filters.push(observeFilter(opts.observe));
  filters.push(
    auditFilter(opts.audit),
    timeoutFilter(opts.clock ?? systemClock, opts.requestTimeoutMs ?? 60_000),
    statusFilter(respond, opts.log),
    negotiationFilter(opts.apiDomain, protobuf),
    authenticationFilter(opts.authn, opts.peerFor, respond),
    impersonationFilter(opts.authz, opts.apiDomain),
  );
  if (opts.flowControl) filters.push(flowControlFilter(opts.flowControl));
  filters.push(authorizationFilter(opts.authz));
  if (opts.aggregated) filters.push(aggregatorFilter(opts.aggregated));
  filters.push(nonResourceFilter(opts.health, opts.nonResource, respond));
  const run = compose(filters, dispatch({ ctx: opts.ctx, routes, protobuf, apiDomain: opts.apiDomain, respond, onDeprecated: opts.onDeprecated }));
  return (http) => run({ http, accept: { format: 'json', pretty: false } });
}
