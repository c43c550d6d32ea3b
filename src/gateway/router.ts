// The request pipeline (docs/architecture.md): HTTP parsing and content
// negotiation here, then authentication → authorization → the verb handler of
// the registry (or the watch service) → encoding of the response.

import { randomUUID } from 'node:crypto';
import { stringify as toYaml } from 'yaml';
import { StatusError, forbiddenRequest, toStatusError, internalError, methodNotAllowed, notFoundPath, requestEntityTooLarge } from '../core/errors.js';
import type { HandlerContext } from '../api/handlers/context.js';
import { handleCreate } from '../api/handlers/create.js';
import { handleDelete } from '../api/handlers/delete.js';
import { handleDeleteCollection } from '../api/handlers/deletecollection.js';
import { handleGet } from '../api/handlers/get.js';
import { handleList } from '../api/handlers/list.js';
import { handlePatch } from '../api/handlers/patch.js';
import { handleUpdate } from '../api/handlers/update.js';
import { NODE_STREAM_SUBRESOURCES, handleNodeStream } from '../api/handlers/node-streams.js';
import { SCALE_HANDLERS } from '../api/handlers/scale.js';
import type { ResourceDefinition } from '../registry/types.js';
import type { ApiRequest, ApiResponse, Negotiated, RequestInfo, StreamResponse } from '../api/request.js';
import type { AuthenticationChain } from '../auth/authn/chain.js';
import { applyImpersonation } from '../auth/authn/impersonation.js';
import type { Authorizer } from '../auth/authz/types.js';
import { authorizationAttributes } from './authz-attributes.js';
import type { PeerCertificate } from '../auth/types.js';
import type { WatchService } from '../watch/service.js';
import type { HealthChecks } from './health.js';
import type { IncomingRequest, OutgoingResponse, PlainResponse } from './http-server.js';
import { negotiate } from './negotiate.js';
import { ProtobufCatalog } from '../registry/protobuf-catalog.js';
import { parseRequestInfo } from './request-info.js';
import type { FlowControl } from './flowcontrol/flow-control.js';
import { type Clock, systemClock } from '../core/clock.js';
import { isLongRunning, requestTimeoutMs, timeoutResponse } from './timeouts.js';
import { type GatewayAudit, auditOf, beginAudit, bindAudit, finishAudit, rememberResponseObject, requestAuditId } from './audit-filter.js';
import { authFailureMessage } from '../audit/event.js';

export const MAX_BODY_BYTES = 3 * 1024 * 1024;

const HEALTH_PATH = /^\/(livez|readyz|healthz)(\/|$)/;

/** discovery, OpenAPI, version and other documents that are not resources */
export type NonResourceHandler = (
  path: string,
  query: URLSearchParams,
  accept: Negotiated,
  /** request headers (OpenAPI: Accept for its protobuf form, If-None-Match) */
  headers?: Map<string, string>,
) => Promise<NonResourceDoc | undefined> | NonResourceDoc | undefined;

/** `raw` is sent as is (pre-serialised documents such as OpenAPI, with their own headers); `body` is encoded as negotiated */
export type NonResourceDoc = { status: number; body: unknown; raw?: { contentType: string; text: string | Uint8Array; headers?: [string, string][] } };

export interface RouterOptions {
  ctx: HandlerContext;
  apiDomain: string;
  authn: AuthenticationChain;
  authz: Authorizer;
  health: HealthChecks;
  watch: WatchService;
  nonResource: NonResourceHandler;
  peerFor(proxiedAddress: string): PeerCertificate | undefined;
  /** server logging of unexpected errors */
  log?: (msg: string) => void;
  /** a request used a deprecated endpoint (spec 000 §6: metric `apiserver_requested_deprecated_apis`) */
  onDeprecated?: (def: ResourceDefinition, info: RequestInfo) => void;
  /** called once per request with its outcome (metrics) */
  observe?: (info: RequestInfo, code: number, seconds: number) => void;
  /** overload protection (issue #15); absent = no limits */
  flowControl?: FlowControl;
  /** `--request-timeout` for requests that are not long-running (default 60 s; 0 = none) */
  requestTimeoutMs?: number;
  clock?: Clock;
  /** audit logging (issue 16 item 3, src/gateway/audit-filter.ts); absent = only the Audit-Id header */
  audit?: GatewayAudit;
}

type Handler = (ctx: HandlerContext, req: ApiRequest) => Promise<ApiResponse>;

const HANDLERS: Record<string, Handler> = {
  get: handleGet,
  list: handleList,
  create: handleCreate,
  update: handleUpdate,
  patch: handlePatch,
  delete: handleDelete,
  deletecollection: handleDeleteCollection,
};

/** request info the route already parsed, so observing a request does not parse it again */
const parsedInfo = new WeakMap<IncomingRequest, RequestInfo>();

/** what to do when a request admitted by flow control is done */
const releases = new WeakMap<IncomingRequest, () => void>();

export function createRouter(opts: RouterOptions): (req: IncomingRequest) => Promise<OutgoingResponse> {
  const route = createRoute(opts);
  const clock = opts.clock ?? systemClock;
  const defaultTimeoutMs = opts.requestTimeoutMs ?? 60_000;
  return async (incoming) => {
    const t0 = performance.now();
    let info: RequestInfo | undefined;
    try {
      info = parseRequestInfo(incoming.method, incoming.path, incoming.query);
    } catch {
      // route answers the malformed request itself
    }
    const auditID = requestAuditId(incoming.headers);
    const audit = beginAudit(opts.audit, incoming, info, auditID);
    const timeoutMs = info && !isLongRunning(info) ? requestTimeoutMs(incoming.query, defaultTimeoutMs) : 0;
    let out: OutgoingResponse;
    if (timeoutMs > 0) {
      // the work is abandoned at the deadline: its signal aborts, and what it
      // answers later is dropped (a write that was already proposed may still apply, as in kube)
      let timedOut = false;
      let ctrl: AbortController | undefined;
      const http: IncomingRequest = {
        method: incoming.method,
        path: incoming.path,
        query: incoming.query,
        headers: incoming.headers,
        proxiedAddress: incoming.proxiedAddress,
        body: incoming.body,
        get signal() {
          if (!ctrl) {
            ctrl = new AbortController();
            if (timedOut) ctrl.abort();
          }
          return AbortSignal.any([incoming.signal, ctrl.signal]);
        },
      };
      if (info) parsedInfo.set(http, info);
      bindAudit(http, audit);
      let timer: { cancel(): void } | undefined;
      const work = route(http).finally(() => {
        releases.get(http)?.();
        timer?.cancel();
      });
      const deadline = new Promise<OutgoingResponse>((resolve) => {
        timer = clock.setTimeout(() => {
          timedOut = true;
          ctrl?.abort();
          resolve(timeoutResponse());
        }, timeoutMs);
      });
      out = await Promise.race([work, deadline]);
    } else {
      if (info) parsedInfo.set(incoming, info);
      try {
        out = await route(incoming);
      } finally {
        releases.get(incoming)?.();
      }
    }
    out = finishAudit(out, audit, auditID, incoming);
    if (opts.observe) {
      const observed = info ?? { isResourceRequest: false, path: incoming.path, verb: incoming.method.toLowerCase(), group: '', version: '', namespace: '', resource: '', subresource: '', name: '' };
      opts.observe(observed, out.status, (performance.now() - t0) / 1000);
    }
    return out;
  };
}

function createRoute(opts: RouterOptions): (req: IncomingRequest) => Promise<OutgoingResponse> {
  const metaGroups = [`meta.${opts.apiDomain}`, 'meta.k8s.io'];
  // protobuf bodies and responses for kinds with field numbers (spec 000 §2.7, §4.3)
  const protobuf = new ProtobufCatalog(opts.ctx.registry);
  const respond = opts.audit
    ? (...a: Parameters<typeof encode>): PlainResponse => rememberResponseObject(encodeWith(protobuf, ...a), a[1])
    : (...a: Parameters<typeof encode>): PlainResponse => encodeWith(protobuf, ...a);
  return async (http) => {
    let accept: Negotiated = { format: 'json', pretty: false };
    try {
      const info = parsedInfo.get(http) ?? parseRequestInfo(http.method, http.path, http.query);
      const pretty = http.query.get('pretty') === 'true' || http.query.get('pretty') === '1';
      const negotiated = () => negotiate(http.headers.get('accept'), {
        metaGroups,
        allowTable: info.verb === 'get' || info.verb === 'list' || info.verb === 'watch',
        pretty,
        // watches answer length-prefixed WatchEvent frames (src/watch/protobuf-encode.ts)
        protobuf: info.isResourceRequest && protobuf.supportsResource(info.group, info.version, info.resource),
        watch: info.verb === 'watch',
      });
      // OpenAPI documents negotiate their own media types (gnostic protobuf), and health answers
      // are text whatever the probe accepts; errors there are JSON
      accept = !info.isResourceRequest && (http.path.startsWith('/openapi/') || HEALTH_PATH.test(http.path)) ? { format: 'json', pretty } : negotiated();
      const peer = opts.peerFor(http.proxiedAddress);
      const authn = await opts.authn.authenticate({ headers: http.headers, peer, path: http.path });
      const audit = auditOf(http);
      if ('error' in authn) {
        audit?.unauthenticated(authFailureMessage(http.headers, peer !== undefined, http.query));
        return respond(401, new StatusError(401, 'Unauthorized', authn.error).toStatus(), accept);
      }
      // the audit policy is matched against the authenticated user, before impersonation (as kube's filter order)
      audit?.authenticated(authn.user);
      // spec 001 §5.10: Impersonate-* headers, checked through the authorizer
      const user = await applyImpersonation(authn.user, http.headers, opts.authz, opts.apiDomain);
      if (user !== authn.user) audit?.impersonated(user);
      // overload protection before any further work (issue #15); watches and health checks are not counted
      if (opts.flowControl && !isLongRunning(info) && !HEALTH_PATH.test(http.path)) {
        const admitted = await opts.flowControl.admit({ user, isResourceRequest: info.isResourceRequest, verb: info.verb, apiGroup: info.group, resource: info.resource, namespace: info.namespace });
        releases.set(http, admitted.release);
      }
      const attrs = authorizationAttributes(user, info, http.path, http.query);
      const decision = await opts.authz.authorize(attrs);
      audit?.authorized(decision.decision === 'allow', decision.reason);
      if (decision.decision !== 'allow') throw forbiddenRequest(attrs, decision.reason);
      if (!info.isResourceRequest) {
        // health paths are authorized like every other path, as in kube: the default
        // system:public-info-viewer role lets everyone, anonymous included, read /healthz, /livez, /readyz
        const health = await opts.health.serve(http.path, http.query);
        if (health) {
          return { status: health.status, headers: [['Content-Type', 'text/plain; charset=utf-8'], ['X-Content-Type-Options', 'nosniff']], body: health.body };
        }
        if (http.method !== 'GET' && http.method !== 'HEAD') throw methodNotAllowed(`the server does not allow this method on the requested resource`);
        const doc = await opts.nonResource(http.path, http.query, accept, http.headers);
        if (!doc) throw notFoundPath();
        if (doc.raw) return { status: doc.status, headers: [['Content-Type', doc.raw.contentType], ...(doc.raw.headers ?? [])], body: doc.raw.text, compressible: true };
        if (typeof doc.body === 'string') {
          return { status: doc.status, headers: [['Content-Type', 'text/plain; charset=utf-8']], body: doc.body };
        }
        return respond(doc.status, doc.body, accept, [], true);
      }
      const def = opts.ctx.registry.lookup(info.group, info.version, info.resource);
      if (!def) throw notFoundPath();
      if (info.subresource !== '' && !(def.subresources ?? []).includes(info.subresource)) throw notFoundPath();
      if (def.scope === 'Cluster' && info.namespace !== '') throw notFoundPath();
      const verbs = def.verbs ?? ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
      if (!verbs.includes(info.verb)) {
        throw methodNotAllowed(`the server does not allow this method on the requested resource`);
      }
      if (audit && http.body.length > 0) audit.protobufBody(() => protobuf.decodeBody(http.body, def));
      const req: ApiRequest = {
        info,
        def,
        query: http.query,
        headers: http.headers,
        body: http.body,
        contentType: http.headers.get('content-type') ?? '',
        user,
        accept,
        // read lazily: the gateway makes the AbortController on first use
        get signal() {
          return http.signal;
        },
        protobuf,
        audit,
      };
      // spec 000 §6: a deprecated endpoint answers with a Warning header and is counted
      const deprecation = def.deprecated ? deprecationWarning(def) : undefined;
      if (def.deprecated) {
        opts.onDeprecated?.(def, info);
        // spec 000 §6: the audit event of a request to a deprecated endpoint is annotated
        audit?.annotate(`${opts.apiDomain}/deprecated`, 'true');
        if (def.deprecated.removedRelease) audit?.annotate(`${opts.apiDomain}/removed-release`, def.deprecated.removedRelease);
      }
      if (info.verb === 'watch') {
        const stream: StreamResponse = opts.watch.serve(req, opts.ctx.storeFor(def));
        const headers: [string, string][] = [['Content-Type', stream.contentType], ['Cache-Control', 'no-cache, private']];
        if (deprecation) headers.push(['Warning', warningHeader(deprecation)]);
        return {
          stream: true,
          status: stream.status,
          headers,
          start: (sink) => stream.start(sink),
          stop: () => stream.stop(),
        };
      }
      // POST names a collection; PUT and PATCH name an object (spec 000 §4.1)
      if ((info.verb === 'create' && info.name !== '' && info.subresource === '' && !def.handlers?.create) || ((info.verb === 'update' || info.verb === 'patch') && info.name === '')) {
        throw methodNotAllowed(`the server does not allow this method on the requested resource`);
      }
      const override = def.handlers?.[info.subresource ? `${info.subresource}/${info.verb}` : info.verb]
        ?? (info.subresource === 'scale' && def.scale ? SCALE_HANDLERS[info.verb] : undefined)
        ?? (NODE_STREAM_SUBRESOURCES.has(info.subresource) ? handleNodeStream : undefined);
      if (info.subresource && !override && info.subresource !== 'status') throw methodNotAllowed(`the server does not allow this method on the requested resource`);
      const handler = override ?? HANDLERS[info.verb];
      if (!handler) throw methodNotAllowed(`the server does not allow this method on the requested resource`);
      const res = await handler(opts.ctx, req);
      // node-agent streams (src/api/handlers/node-streams.ts): a WebSocket session or raw bytes
      if (res.upgrade) return { upgrade: res.upgrade, status: 101, headers: [] };
      if (res.raw) {
        const raw = res.raw;
        return { stream: true, status: res.status, headers: [['Content-Type', raw.contentType], ...Object.entries(res.headers ?? {})], start: (sink) => raw.start(sink), stop: () => raw.stop() };
      }
      const warnings = deprecation ? [deprecation, ...(res.warnings ?? [])] : res.warnings;
      return respond(res.status, res.body, accept, warnings, info.verb === 'get' || info.verb === 'list', res.headers);
    } catch (e) {
      const status = toStatusError(e);
      if (status) return respond(status.code, status.toStatus(), accept, status.warnings, false, status.headers);
      opts.log?.(`unexpected error serving ${http.method} ${http.path}: ${(e as Error)?.stack ?? String(e)}`);
      const err = internalError((e as Error)?.message ?? String(e));
      auditOf(http)?.panicked(err.message);
      return respond(err.code, err.toStatus(), accept);
    }
  };
}

/** Kubernetes' wording: `policy/v1beta1 PodSecurityPolicy is deprecated in v1.21+, unavailable in v1.25+; use …` */
export function deprecationWarning(def: ResourceDefinition): string {
  const d = def.deprecated!;
  if (d.warning) return d.warning;
  const gv = def.group ? `${def.group}/${def.version}` : def.version;
  let text = `${gv} ${def.kind} is deprecated`;
  if (d.deprecatedRelease) text += ` in v${d.deprecatedRelease}+`;
  if (d.removedRelease) text += `, unavailable in v${d.removedRelease}+`;
  if (d.replacement) text += `; use ${d.replacement}`;
  return text;
}

export function tooLargeResponse(limit: number): PlainResponse {
  const e = requestEntityTooLarge(`the request body is larger than the limit of ${limit} bytes`);
  // answered before the router sees the request, so no audit event; the Audit-Id header as on every response
  return { status: 413, headers: [['Content-Type', 'application/json'], ['Audit-Id', randomUUID()]], body: JSON.stringify(e.toStatus()) };
}

/** Warning header values are quoted-strings (RFC 7234 §5.5) */
function warningHeader(text: string): string {
  return `299 - "${text.replace(/["\\]/g, (c) => `\\${c}`)}"`;
}

/**
 * protobuf responses (spec 000 §2.7): the envelope, with the media type name
 * the client asked for; bodies without a protobuf form, or that protobuf would
 * carry only in part, go out in the next acceptable format
 */
function encodeWith(
  catalog: ProtobufCatalog,
  status: number,
  body: unknown,
  accept: Negotiated,
  warnings: string[] = [],
  compressible = false,
  extra: Record<string, string> = {},
): PlainResponse {
  if (accept.format !== 'protobuf') return encode(status, body, accept, warnings, compressible, extra);
  const pb = catalog.encodeBody(body);
  if (pb && (pb.skipped.length === 0 || !accept.fallback)) {
    const headers: [string, string][] = [['Content-Type', accept.mediaType ?? 'application/vnd.orch.protobuf']];
    for (const w of warnings) headers.push(['Warning', warningHeader(w)]);
    for (const [k, v] of Object.entries(extra)) headers.push([k, v]);
    return { status, headers, body: pb.bytes, compressible };
  }
  return encode(status, body, accept.fallback ?? { format: 'json', pretty: false }, warnings, compressible, extra);
}

function encode(
  status: number,
  body: unknown,
  accept: Negotiated,
  warnings: string[] = [],
  compressible = false,
  extra: Record<string, string> = {},
): PlainResponse {
  const headers: [string, string][] = [];
  let text: string;
  if (accept.format === 'yaml') {
    headers.push(['Content-Type', 'application/yaml']);
    text = toYaml(body);
  } else {
    headers.push(['Content-Type', 'application/json']);
    text = accept.pretty ? JSON.stringify(body, null, 2) + '\n' : JSON.stringify(body);
  }
  for (const w of warnings) headers.push(['Warning', warningHeader(w)]);
  for (const [k, v] of Object.entries(extra)) headers.push([k, v]);
  return { status, headers, body: text, compressible };
}
