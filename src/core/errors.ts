// Every error the API returns is a `Status` object (spec 000 §7). The body
// structure is "not shown" by the specification; we use the Kubernetes shape
// that real clients decode (kind Status, apiVersion v1, status Failure,
// message, reason, details, code) — documented in docs/errors.md.

import { StoreUnavailableError } from './store-unavailable.js';
import type { FieldError } from './object.js';

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  /** ListMeta: empty but for the inconsistent continue token of a 410 paged list (kube's handleCompactedErrorForPaging) */
  metadata: { continue?: string };
  status: 'Failure' | 'Success';
  message: string;
  /** omitted when empty (kube's StatusReasonUnknown, omitempty) */
  reason?: string;
  details?: StatusDetails;
  code: number;
}

export class StatusError extends Error {
  readonly headers: Record<string, string> = {};
  /** `Warning` headers sent with the error (admission warnings gathered before a denial) */
  warnings: string[] = [];
  /** a token to go on with a list whose continue token expired, at the newest revision (Status.metadata.continue) */
  continueToken?: string;
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: StatusDetails,
  ) {
    super(message);
    this.name = 'StatusError';
  }

  /** keys in kube-apiserver's order: some client test suites compare the text (issue #11) */
  toStatus(): Status {
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: this.continueToken ? { continue: this.continueToken } : {},
      status: 'Failure',
      message: this.message,
      ...(this.reason ? { reason: this.reason } : {}),
      ...(this.details ? { details: this.details } : {}),
      code: this.code,
    };
  }
}

/** `configmaps` or `leases.coordination.orch.io` as Kubernetes prints a group resource. */
export function qualifiedResource(resource: string, group: string): string {
  return group ? `${resource}.${group}` : resource;
}

export function notFound(resource: string, group: string, name: string): StatusError {
  return new StatusError(404, 'NotFound', `${qualifiedResource(resource, group)} "${name}" not found`, {
    name,
    group: group || undefined,
    kind: resource,
  });
}

export function alreadyExists(resource: string, group: string, name: string): StatusError {
  return new StatusError(409, 'AlreadyExists', `${qualifiedResource(resource, group)} "${name}" already exists`, {
    name,
    group: group || undefined,
    kind: resource,
  });
}

export function conflict(resource: string, group: string, name: string, why: string): StatusError {
  return new StatusError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${qualifiedResource(resource, group)} "${name}": ${why}`,
    { name, group: group || undefined, kind: resource },
  );
}

export const STALE_OBJECT = 'the object has been modified; please apply your changes to the latest version and try again';

export function invalid(kind: string, group: string, name: string, errors: FieldError[]): StatusError {
  // the message names each distinct error once (kube's ErrorList.ToAggregate); the causes keep them all
  const list = [...new Set(errors.map((e) => `${e.field}: ${e.message}`))];
  const summary = list.length === 1 ? list[0] : `[${list.join(', ')}]`;
  return new StatusError(422, 'Invalid', `${kind}${group ? `.${group}` : ''} "${name}" is invalid: ${summary}`, {
    // omitempty in kube's StatusDetails: ListOptions' errors name nothing
    name: name || undefined,
    group: group || undefined,
    kind,
    causes: errors.map((e) => ({ reason: e.type, message: e.message, field: e.field })),
  });
}

export function badRequest(message: string, causes?: StatusCause[]): StatusError {
  return new StatusError(400, 'BadRequest', message, causes ? { causes } : undefined);
}

export function methodNotAllowed(message: string): StatusError {
  return new StatusError(405, 'MethodNotAllowed', message);
}

export function notAcceptable(message: string): StatusError {
  return new StatusError(406, 'NotAcceptable', message);
}

export function unsupportedMediaType(message: string): StatusError {
  return new StatusError(415, 'UnsupportedMediaType', message);
}

export function requestEntityTooLarge(message: string): StatusError {
  return new StatusError(413, 'RequestEntityTooLarge', message);
}

export function gone(message: string): StatusError {
  return new StatusError(410, 'Expired', message);
}

/** kube's v1.NamespaceTerminatingCause: a create refused because its namespace is being deleted */
export const NAMESPACE_TERMINATING_CAUSE = 'NamespaceTerminating';

/** a create refused because its namespace is being deleted: retrying cannot succeed (kube's HasStatusCause) */
export function isNamespaceTerminating(e: unknown): boolean {
  return e instanceof StatusError && (e.details?.causes ?? []).some((c) => c.reason === NAMESPACE_TERMINATING_CAUSE);
}

export function forbidden(message: string, details?: StatusDetails): StatusError {
  return new StatusError(403, 'Forbidden', message, details);
}

export function unauthorized(message = 'Unauthorized'): StatusError {
  return new StatusError(401, 'Unauthorized', message);
}

export function tooLargeResourceVersion(requested: string, current: number): StatusError {
  const e = new StatusError(
    504,
    'Timeout',
    `Too large resource version: ${requested}, current: ${current}`,
    { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 },
  );
  e.headers['Retry-After'] = '1';
  return e;
}

export function serviceUnavailable(message: string): StatusError {
  return new StatusError(503, 'ServiceUnavailable', message);
}

/** kube's NewInternalError: the cause's text also in details.causes */
export function internalError(message: string): StatusError {
  return new StatusError(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] });
}

export function notFoundPath(): StatusError {
  return new StatusError(404, 'NotFound', 'the server could not find the requested resource');
}

/**
 * A Status for errors raised below the API layer, or undefined for
 * unexpected ones (500). A store that cannot serve now is 503 (certainly not
 * applied) or 504 (outcome unknown), both with Retry-After.
 */
export function toStatusError(e: unknown): StatusError | undefined {
  if (e instanceof StatusError) return e;
  if (e instanceof StoreUnavailableError) {
    const s = new StatusError(e.code, e.ambiguous ? 'Timeout' : 'ServiceUnavailable', e.message, { retryAfterSeconds: e.retryAfterSeconds });
    s.headers['Retry-After'] = String(e.retryAfterSeconds);
    return s;
  }
  return undefined;
}

/** what a 403 for a request names (a structural subset of the authorizers' RequestAttributes) */
export interface ForbiddenAttributes {
  user: { username: string };
  verb: string;
  isResourceRequest: boolean;
  path: string;
  apiGroup: string;
  namespace: string;
  resource: string;
  subresource: string;
  name: string;
}

/**
 * kube-apiserver's 403 (spec 001 §7), for requests, impersonation and the
 * unsafe-delete check alike:
 *   secrets "x" is forbidden: User "alice" cannot get resource "secrets" in API group "" in the namespace "default"
 *   secrets is forbidden: User "alice" cannot list resource "secrets" in API group "" at the cluster scope
 *   forbidden: User "alice" cannot get path "/foo"
 * with details {name, group, kind} naming the resource.
 */
export function forbiddenRequest(a: ForbiddenAttributes, reason?: string): StatusError {
  const who = `User ${JSON.stringify(a.user.username)}`;
  const why = reason ? `: ${reason}` : '';
  if (!a.isResourceRequest) return forbidden(`forbidden: ${who} cannot ${a.verb} path ${JSON.stringify(a.path)}${why}`, {});
  const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  const qualified = a.apiGroup ? `${a.resource}.${a.apiGroup}` : a.resource;
  const subject = a.name ? `${qualified} ${JSON.stringify(a.name)}` : qualified;
  const scope = a.namespace ? `in the namespace ${JSON.stringify(a.namespace)}` : 'at the cluster scope';
  return forbidden(`${subject} is forbidden: ${who} cannot ${a.verb} resource ${JSON.stringify(resource)} in API group ${JSON.stringify(a.apiGroup)} ${scope}${why}`, {
    name: a.name || undefined,
    group: a.apiGroup || undefined,
    kind: a.resource,
  });
}
