// The audit filter (issue 16 item 3): every response carries an
// `Audit-Id` header (the client's `Audit-ID` if it sent one, else a new UUID,
// as kube's WithAuditInit); with an audit policy, a RequestAudit (src/audit/)
// is started per request, the filters report authentication, impersonation and
// authorization to it (`RequestState.audit`), and the response, or for streams their start
// and end, completes it.

import { randomUUID } from 'node:crypto';
import type { Auditor, RequestAudit } from '../../audit/auditor.js';
import type { RequestInfo } from '../request.js';
import type { StreamSink } from '../../core/stream.js';
import type { HttpRequest as IncomingRequest, HttpResponse as OutgoingResponse, PlainResponse, TunnelResponse } from '../http.js';
import type { Filter } from './state.js';
import { isLongRunning } from './timeout.js';

export interface GatewayAudit {
  auditor: Auditor;
  /** the client's own address for a connection (the TLS front knows it) */
  remoteAddressFor?(proxiedAddress: string): string | undefined;
}

const responseObjects = new WeakMap<PlainResponse, unknown>();

/**
 * The outermost part of auditing (kube's WithAuditInit and WithAudit): the
 * Audit-Id, the event begun with what the URL says, completed with the
 * response; the filters further in report to `state.audit`.
 */
export function auditFilter(a: GatewayAudit | undefined): Filter {
  return async (s, next) => {
    const auditID = requestAuditId(s.http.headers);
    const incoming = s.http;
    s.audit = beginAudit(a, incoming, s.info, auditID);
    const out = await next(s);
    return finishAudit(out, s.audit, auditID, incoming);
  };
}

/** the object a response was encoded from (responseObject at level RequestResponse) */
export function rememberResponseObject(res: PlainResponse, body: unknown): PlainResponse {
  responseObjects.set(res, body);
  return res;
}

const isCacheControl = ([name]: readonly [string, string]): boolean => name.length === 13 && name.toLowerCase() === 'cache-control';

export function requestAuditId(headers: Map<string, string>): string {
  const given = headers.get('audit-id');
  return given !== undefined && given !== '' ? given : randomUUID();
}

export function beginAudit(a: GatewayAudit | undefined, req: IncomingRequest, info: RequestInfo | undefined, auditID: string): RequestAudit | undefined {
  if (!a) return undefined;
  const audit = a.auditor.begin({
    auditID,
    method: req.method,
    path: req.path,
    query: req.query,
    headers: req.headers,
    remoteAddress: a.remoteAddressFor?.(req.proxiedAddress),
    info,
    longRunning: info !== undefined && isLongRunning(info),
  });
  return audit;
}

/** adds the Audit-Id header; completes the audit now, or when the stream ends */
export function finishAudit(out: OutgoingResponse, audit: RequestAudit | undefined, auditID: string, req: IncomingRequest): OutgoingResponse {
  const headers: [string, string][] = [...out.headers, ['Audit-Id', auditID]];
  // kube's WithCacheControl: no response of the API is cached by an intermediary (Secrets among them) unless
  // its handler says otherwise (the OpenAPI documents' `public, immutable`)
  if (!out.headers.some(isCacheControl)) headers.push(['Cache-Control', 'no-cache, private']);
  if ('tunnel' in out) return auditTunnel(out, headers, audit, req);
  if ('upgrade' in out) {
    // exec, attach, port-forward: long-running like a watch (ResponseStarted at the 101, ResponseComplete when the session ends)
    if (!audit) return { ...out, headers };
    const session = out.upgrade;
    let ended = false;
    return {
      ...out,
      headers,
      upgrade: {
        protocol: session.protocol,
        open(peer) {
          audit.responseStarted(101);
          session.open(peer);
        },
        message: (data) => session.message(data),
        drain: () => session.drain(),
        close() {
          session.close();
          if (ended) return;
          ended = true;
          audit.complete({ code: 101, body: req.body, contentType: req.headers.get('content-type') });
        },
      },
    };
  }
  if (!out.stream) {
    if (audit) {
      // the response object (a Status parsed back for a failure) only for a request whose events are recorded
      audit.complete(
        audit.recording
          ? {
              code: out.status,
              responseObject: responseObjects.get(out) ?? failureBody(out),
              responseBytes: typeof out.body === 'string' ? out.body.length : out.body.byteLength,
              body: req.body,
              contentType: req.headers.get('content-type'),
            }
          : { code: out.status, body: req.body, contentType: req.headers.get('content-type') },
      );
    }
    return { ...out, headers };
  }
  if (!audit) return { ...out, headers };
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    audit.complete({ code: out.status, body: req.body, contentType: req.headers.get('content-type') });
  };
  return {
    stream: true,
    status: out.status,
    headers,
    start(sink: StreamSink) {
      audit.responseStarted(out.status);
      out.start({
        write: (chunk) => sink.write(chunk),
        backlog: () => sink.backlog(),
        end() {
          sink.end();
          end();
        },
      });
    },
    stop() {
      out.stop();
      end();
    },
  };
}

/** a failure answered without an encoded object (timeouts): its Status, if the body is one */
function failureBody(out: PlainResponse): unknown {
  if (out.status < 400 || typeof out.body !== 'string' || out.body.length > 65536) return undefined;
  try {
    return JSON.parse(out.body);
  } catch {
    return undefined;
  }
}

/** a SPDY/3.1 exec, attach or port-forward: as a WebSocket, ResponseComplete when the connection ends */
function auditTunnel(out: TunnelResponse, headers: [string, string][], audit: RequestAudit | undefined, req: IncomingRequest): OutgoingResponse {
  if (!audit) return { ...out, headers };
  const tunnel = out.tunnel;
  let ended = false;
  const complete = () => {
    if (ended) return;
    ended = true;
    audit.complete({ code: 101, body: req.body, contentType: req.headers.get('content-type') });
  };
  return {
    ...out,
    headers,
    tunnel: {
      open(client) {
        audit.responseStarted(101);
        client.once('close', complete);
        tunnel.open(client);
      },
      close() {
        tunnel.close();
        complete();
      },
    },
  };
}
