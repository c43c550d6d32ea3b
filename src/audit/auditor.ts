// The per-request audit recorder (issue 16 item 3). The gateway starts one per
// request (audit ID and receive time), reports what it learns as the request
// passes authentication, impersonation and authorization, and reports the
// response; this turns that into the events of each stage, as kube-apiserver's
// audit filter does:
//
// * the policy is matched once the user is authenticated (the real user, not
//   an impersonated one), and RequestReceived is emitted then;
// * long-running requests (watches, streaming sub-resources) emit
//   ResponseStarted when their headers go out and ResponseComplete when the
//   stream ends; other requests emit ResponseComplete only;
// * a failed authentication emits a single ResponseStarted event with
//   kube's "Authentication failed, attempted: …" message;
// * an unexpected error (kube's panic) emits Panic instead of ResponseComplete.
//
// Events are handed to the sinks, which only buffer (buffer.ts).

import type { UserInfo } from '../auth/types.js';
import { type AuditMetricsSink, noAuditMetrics } from './metrics.js';
import { PolicyEvaluator } from './policy.js';
import { auditUser, decodeBody, isRecord, microTime, responseStatusOf, sourceIPs, systemMicros, userAgent, withoutManagedFields } from './event.js';
import { type AuditAttributes, type AuditEvent, type AuditSink, type AuditUser, type ObjectReference, type Policy, type RequestAuditConfig, type ResponseStatus, type Stage, levelAtLeast } from './types.js';

export interface AuditorOptions {
  policy: Policy;
  sinks: AuditSink[];
  apiDomain: string;
  metrics?: AuditMetricsSink;
  /** wall-clock microseconds (a port, so tests can fix time) */
  nowMicros?: () => number;
}

/** What the gateway knows when a request arrives. */
export interface RequestStart {
  auditID: string;
  method: string;
  path: string;
  query: URLSearchParams;
  headers: Map<string, string>;
  /** the client's address as the TLS front saw it */
  remoteAddress?: string;
  /** the parsed request (undefined when the URL did not parse: such requests are not audited) */
  info: Omit<AuditAttributes, 'user'> | undefined;
  longRunning: boolean;
}

/** What the gateway knows when the response is decided. */
export interface RequestEnd {
  code: number;
  /** the response body as an object, when the gateway encoded one */
  responseObject?: unknown;
  /** the encoded response size (for the buffer's byte cap) */
  responseBytes?: number;
  /** the request body and its content type */
  body?: Uint8Array;
  contentType?: string;
}

export class Auditor {
  readonly apiVersion: string;
  readonly evaluator: PolicyEvaluator;
  readonly metrics: AuditMetricsSink;
  readonly nowMicros: () => number;

  constructor(readonly o: AuditorOptions) {
    this.apiVersion = `audit.${o.apiDomain}/v1`;
    this.evaluator = new PolicyEvaluator(o.policy);
    this.metrics = o.metrics ?? noAuditMetrics;
    this.nowMicros = o.nowMicros ?? systemMicros;
  }

  begin(start: RequestStart): RequestAudit {
    return new RequestAudit(this, start, this.nowMicros());
  }

  emit(ev: AuditEvent, bodyBytes: number): void {
    this.metrics.event();
    for (const s of this.o.sinks) s.push(ev, bodyBytes);
  }

  async flush(): Promise<void> {
    await Promise.all(this.o.sinks.map((s) => s.flush()));
  }

  async close(): Promise<void> {
    await Promise.all(this.o.sinks.map((s) => s.close()));
  }
}

export class RequestAudit {
  private config: RequestAuditConfig | undefined;
  private user: AuditUser = {};
  private impersonatedUser: AuditUser | undefined;
  private objectRef: ObjectReference | undefined;
  private readonly annotations: Record<string, string> = {};
  private annotated = false;
  private authnFailure: string | undefined;
  private panic: string | undefined;
  private startedSent = false;
  private done = false;
  /** formatted on the first event: a request the policy does not record never formats it */
  private receivedText: string | undefined;
  /** request facts shared by every stage's event, computed on the first */
  private facts: { uri: string; ips: string[]; ua: string | undefined } | undefined;
  private protobufDecoder: (() => unknown) | undefined;

  constructor(
    private readonly auditor: Auditor,
    private readonly start: RequestStart,
    private readonly receivedMicros: number,
  ) {}

  private get receivedAt(): string {
    return (this.receivedText ??= microTime(this.receivedMicros));
  }

  get auditID(): string {
    return this.start.auditID;
  }

  /** the level decided for this request (None until authenticated) */
  get level(): string {
    return this.config?.level ?? 'None';
  }

  /** whether this request's events are still being recorded (the policy level is not None) */
  get recording(): boolean {
    return this.active;
  }

  private get active(): boolean {
    return !this.done && this.config !== undefined && this.config.level !== 'None';
  }

  /** authentication succeeded: match the policy, emit RequestReceived */
  authenticated(user: UserInfo): void {
    const info = this.start.info;
    if (this.config || !info) return;
    this.config = this.auditor.evaluator.evaluate({ ...info, user });
    this.auditor.metrics.level(this.config.level);
    if (this.config.level === 'None') return;
    this.user = auditUser(user);
    if (info.isResourceRequest) {
      this.objectRef = reorderRef({
        resource: info.resource,
        namespace: info.namespace,
        name: info.name,
        apiGroup: info.group,
        apiVersion: info.version,
        subresource: info.subresource,
      });
    }
    this.emit('RequestReceived');
  }

  /** authentication failed: one event, at ResponseStarted, once the 401 is known */
  unauthenticated(message: string): void {
    const info = this.start.info;
    if (this.config || !info) return;
    this.config = this.auditor.evaluator.evaluate({ ...info, user: undefined });
    this.auditor.metrics.level(this.config.level);
    this.authnFailure = message;
  }

  /** how to decode a protobuf body: the gateway knows the endpoint's kind (kubectl sends protobuf) */
  protobufBody(decode: () => unknown): void {
    if (this.active) this.protobufDecoder = decode;
  }

  impersonated(user: UserInfo): void {
    if (this.active) this.impersonatedUser = auditUser(user);
  }

  annotate(key: string, value: string): void {
    if (!this.active) return;
    this.annotations[key] = value;
    this.annotated = true;
  }

  /** kube's authorization.<domain>/decision and /reason annotations */
  authorized(allowed: boolean, reason: string | undefined): void {
    if (!this.active) return;
    this.annotate(`authorization.${this.auditor.o.apiDomain}/decision`, allowed ? 'allow' : 'forbid');
    this.annotate(`authorization.${this.auditor.o.apiDomain}/reason`, reason ?? '');
  }

  /** an authorizer error answered with 500: kube records only the reason "internal error", no decision */
  authorizationFailed(): void {
    if (!this.active) return;
    this.annotate(`authorization.${this.auditor.o.apiDomain}/reason`, 'internal error');
  }

  /** an unexpected error answered with 500 (kube's panic) */
  panicked(message: string): void {
    this.panic = message;
  }

  /** the headers of a long-running response went out */
  responseStarted(code: number): void {
    if (!this.active || this.startedSent || !this.start.longRunning) return;
    this.startedSent = true;
    this.emit('ResponseStarted', { metadata: {}, code });
  }

  /** the response is complete (for streams: the stream ended) */
  complete(end: RequestEnd): void {
    if (this.done || !this.config || this.config.level === 'None') {
      this.done = true;
      return;
    }
    if (this.authnFailure !== undefined) {
      this.emit('ResponseStarted', { metadata: {}, message: this.authnFailure, code: end.code });
      this.done = true;
      return;
    }
    // a long-running request that ended before its headers went out still gets its ResponseStarted
    this.responseStarted(end.code);
    const level = this.config.level;
    const info = this.start.info;
    let requestObject: unknown;
    let bodyBytes = 0;
    if (info?.isResourceRequest && end.body && end.body.length > 0) {
      const needObject = levelAtLeast(level, 'Request');
      // kube completes objectRef from the decoded request object (a create's name and namespace)
      const needRef = info.verb === 'create' && this.objectRef && (!this.objectRef.name || !this.objectRef.namespace);
      if (needObject || needRef) {
        const decoded = decodeBody(end.body, end.contentType ?? '') ?? this.decodeProtobuf(end.contentType ?? '');
        if (needRef && isRecord(decoded) && isRecord(decoded.metadata)) {
          const m = decoded.metadata;
          const ref = this.objectRef!;
          if (!ref.namespace && typeof m.namespace === 'string' && m.namespace !== '') ref.namespace = m.namespace;
          if (!ref.name && typeof m.name === 'string' && m.name !== '') ref.name = m.name;
          if (!ref.uid && typeof m.uid === 'string' && m.uid !== '') ref.uid = m.uid;
          if (!ref.resourceVersion && typeof m.resourceVersion === 'string' && m.resourceVersion !== '') ref.resourceVersion = m.resourceVersion;
          this.objectRef = reorderRef(ref);
        }
        if (needObject && decoded !== undefined) {
          requestObject = this.config.omitManagedFields ? withoutManagedFields(decoded) : decoded;
          bodyBytes += end.body.length;
        }
      }
    }
    let responseObject: unknown;
    // kube records no response body for non-resource requests, and none for watch streams
    if (levelAtLeast(level, 'RequestResponse') && info?.isResourceRequest && end.responseObject !== undefined) {
      responseObject = this.config.omitManagedFields ? withoutManagedFields(end.responseObject) : end.responseObject;
      bodyBytes += end.responseBytes ?? 0;
    }
    if (this.panic !== undefined) {
      this.emit('Panic', { metadata: {}, status: 'Failure', message: this.panic, reason: 'InternalError', code: 500 }, requestObject, responseObject, bodyBytes);
    } else {
      this.emit('ResponseComplete', responseStatusOf(end.code, end.responseObject), requestObject, responseObject, bodyBytes);
    }
    this.done = true;
  }

  private decodeProtobuf(contentType: string): unknown {
    if (!this.protobufDecoder || !contentType.toLowerCase().includes('protobuf')) return undefined;
    try {
      return this.protobufDecoder();
    } catch {
      return undefined;
    }
  }

  private emit(stage: Stage, responseStatus?: ResponseStatus, requestObject?: unknown, responseObject?: unknown, bodyBytes = 0): void {
    const config = this.config!;
    if (config.omitStages.has(stage)) return;
    const s = this.start;
    this.facts ??= { uri: requestURI(s.path, s.query), ips: sourceIPs(s.headers, s.remoteAddress), ua: userAgent(s.headers) };
    const { uri, ips, ua } = this.facts;
    // a fresh object per stage, in kube's field order; later changes do not reach an event already emitted
    const ev: AuditEvent = {
      kind: 'Event',
      apiVersion: this.auditor.apiVersion,
      level: config.level,
      auditID: s.auditID,
      stage,
      requestURI: uri,
      verb: s.info?.verb ?? s.method.toLowerCase(),
      user: this.user,
      ...(this.impersonatedUser ? { impersonatedUser: this.impersonatedUser } : {}),
      ...(ips.length > 0 ? { sourceIPs: ips } : {}),
      ...(ua !== undefined ? { userAgent: ua } : {}),
      ...(this.objectRef ? { objectRef: { ...this.objectRef } } : {}),
      ...(responseStatus ? { responseStatus } : {}),
      ...(requestObject !== undefined ? { requestObject } : {}),
      ...(responseObject !== undefined ? { responseObject } : {}),
      requestReceivedTimestamp: this.receivedAt,
      stageTimestamp: stage === 'RequestReceived' ? this.receivedAt : microTime(this.auditor.nowMicros()),
      ...(this.annotated ? { annotations: { ...this.annotations } } : {}),
    };
    this.auditor.emit(ev, bodyBytes);
  }
}

function requestURI(path: string, query: URLSearchParams): string {
  const q = query.toString();
  return q === '' ? path : `${path}?${q}`;
}

/** kube's ObjectReference key order, empty fields left out */
function reorderRef(ref: ObjectReference): ObjectReference {
  const out: ObjectReference = {};
  for (const k of ['resource', 'namespace', 'name', 'uid', 'apiGroup', 'apiVersion', 'resourceVersion', 'subresource'] as const) {
    const v = ref[k];
    if (v !== undefined && v !== '') out[k] = v;
  }
  return out;
}
