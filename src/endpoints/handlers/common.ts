// Request decoding shared by the write verbs: body formats (spec 000 §4.3),
// type meta checks, dry run (§4.7) and field validation levels (§4.8).

import { parse as parseYaml } from 'yaml';
import { StatusError, badRequest, invalid, unsupportedMediaType } from '../../core/errors.js';
import { throwAsStatus } from '../../registry/status-table.js';
import { isProtobufMediaType } from '../../machinery/protobuf/envelope.js';
import { apiVersionOf } from '../../registry/registry.js';
import type { ApiRequest, AuditAnnotator } from '../request.js';
import { duplicateKeyLinesYaml, findDuplicateKeys } from '../../machinery/schema/duplicates.js';
import { type BodyFindings, duplicateFieldText, strictDecodingErrors } from '../../machinery/schema/strict-decoding.js';
import type { ApiObject, JSONObject, ObjectMeta } from '../../registry/types.js';
import type { FieldError } from '../../core/object.js';
import { EPHEMERAL_SUBRESOURCE } from '../../registry/kinds/pod-ephemeral.js';
import { statusApplyMetadataFields, statusWriteMeta, statusWriteMetadata } from '../../registry/status-write-metadata.js';
import { undecodableBodyMessage } from '../undecodable-body.js';
import { dryRunError } from '../../registry/deletion/delete-options.js';
import { decodeError } from '../../registry/write-validation.js';
import { isDateTime } from '../../machinery/schema/formats.js';

export type FieldValidation = 'Ignore' | 'Warn' | 'Strict';

const decoder = new TextDecoder('utf-8', { fatal: true });

export function mediaType(contentType: string): string {
  const semi = contentType.indexOf(';');
  return (semi >= 0 ? contentType.slice(0, semi) : contentType).trim().toLowerCase();
}

export function bodyText(req: ApiRequest): string {
  if (!req.body || req.body.length === 0) throw badRequest('the request body is empty; an object was expected');
  try {
    return decoder.decode(req.body);
  } catch {
    throw badRequest('the request body is not valid UTF-8');
  }
}

const TOKEN = "[!#$%&'*+\\-.^_`|~0-9A-Za-z]+";
const MEDIA_PARAM = new RegExp(`^\\s*${TOKEN}\\s*=\\s*(?:${TOKEN}|"(?:[^"\\\\]|\\\\.)*")\\s*$`);

/**
 * Whether a Content-Type's parameters parse as Go's mime.ParseMediaType reads them (kube's
 * NegotiateInputSerializer): `;` separated `name=value` pairs, each name once, a trailing `;`
 * allowed. Another is kube's 415, whatever the type before it.
 */
export function mediaParamsValid(contentType: string): boolean {
  const semi = contentType.indexOf(';');
  if (semi < 0) return true;
  const names = new Set<string>();
  const params = contentType.slice(semi + 1).split(';');
  for (let i = 0; i < params.length; i++) {
    const p = params[i]!;
    if (p.trim() === '' && i === params.length - 1) break;
    if (!MEDIA_PARAM.test(p)) return false;
    const name = p.slice(0, p.indexOf('=')).trim().toLowerCase();
    if (names.has(name)) return false;
    names.add(name);
  }
  return true;
}

/** Parses a JSON or YAML body to a plain value and reports duplicate keys. */
export function parseBody(req: ApiRequest, allowed: string[] = ['application/json', 'application/yaml'], kind = req.def.kind): {
  value: unknown;
  findings: BodyFindings | undefined;
} {
  const type = mediaType(req.contentType || 'application/json');
  // object bodies may also come in the protobuf envelope (spec 000 §2.7, §4.3)
  if (isProtobufMediaType(type) && allowed.includes('application/json')) return { value: decodeProtobufBody(req), findings: undefined };
  if (!allowed.includes(type) || !mediaParamsValid(req.contentType)) {
    // kube lists its serializer's media types: protobuf too where the kind has a protobuf form
    const accepted = req.protobuf && !req.def.customResource && allowed.includes('application/json') ? [...allowed, req.protobuf.mediaType] : allowed;
    throw unsupportedMediaType(`the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`);
  }
  const text = bodyText(req);
  if (type === 'application/yaml') {
    let value: unknown;
    try {
      // merge keys (`<<: *base`) as yaml.v2, which kube's YAML decoder is, reads them
      value = parseYaml(text, { uniqueKeys: false, maxAliasCount: 100, merge: true });
    } catch (e) {
      throw badRequest(`error converting YAML to JSON: ${(e as Error).message.split('\n')[0]}`);
    }
    // yaml.v2's duplicate keys come before the unknown fields of the JSON kube converts the YAML to
    return { value, findings: { kind: 'first', problems: duplicateKeyLinesYaml(text), yaml: true, sortUnknown: !req.def.customResource } };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw badRequest(undecodableBodyMessage(kind, req.body!, text, (e as Error).message));
  }
  return { value, findings: jsonBodyFindings(req.def.customResource === true, text) };
}

/** a JSON body's duplicates: in document order among a typed object's unknown fields, before a custom resource's */
export function jsonBodyFindings(customResource: boolean, text: string): BodyFindings {
  const duplicates = findDuplicateKeys(text);
  // custom resources decode unstructured (every duplicate), then pruning finds the unknown fields
  return customResource ? { kind: 'first', problems: duplicates.map((d) => duplicateFieldText(d.path)), sortUnknown: false } : { kind: 'typed-json', text, duplicates };
}

/**
 * Decodes a protobuf envelope body with the gateway's catalog: the endpoint's
 * kind, or the message the envelope names (`expectedKind` restricts it).
 * 415 for kinds without field numbers (custom resources), 400 for malformed data.
 */
export function decodeProtobufBody(req: ApiRequest, expectedKind?: string): Record<string, unknown> {
  // custom resources have no protobuf form at all (spec 000 §4.3), whatever the body holds
  if (!req.protobuf || req.def.customResource) throw unsupportedMediaType(`protobuf is not supported for ${req.def.kind}: use application/json`);
  try {
    return req.protobuf.decodeBody(req.body ?? new Uint8Array(0), req.def, expectedKind);
  } catch (e) {
    throwAsStatus(e);
  }
}

/** Decodes the body as an object of the endpoint's kind (type meta checked, then defaulted). */
export function decodeObjectBody(req: ApiRequest): { obj: ApiObject; findings: BodyFindings | undefined } {
  const { value, findings } = parseBody(req);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw badRequest(`the body of the request must be a single ${req.def.kind} object`);
  }
  const obj = value as ApiObject;
  const expectedApiVersion = apiVersionOf(req.def);
  if (obj.apiVersion !== undefined && obj.apiVersion !== '' && obj.apiVersion !== expectedApiVersion) {
    throw badRequest(
      `the API version in the data (${String(obj.apiVersion)}) does not match the expected API version (${expectedApiVersion})`,
    );
  }
  if (obj.kind !== undefined && obj.kind !== '' && obj.kind !== req.def.kind) {
    throw badRequest(`the kind in the data (${String(obj.kind)}) does not match the expected kind (${req.def.kind})`);
  }
  if (obj.metadata !== undefined && (obj.metadata === null || typeof obj.metadata !== 'object' || Array.isArray(obj.metadata))) {
    throw badRequest(`${req.def.kind} in version "${req.def.version}" cannot be handled as a ${req.def.kind}: metadata must be an object`);
  }
  checkBodyTimestamps(req, obj.metadata as Record<string, unknown> | undefined);
  // type meta first, as Kubernetes serialises objects
  const { apiVersion: _a, kind: _k, ...rest } = obj;
  return { obj: { apiVersion: expectedApiVersion, kind: req.def.kind, ...rest }, findings };
}

/**
 * The server sets `creationTimestamp` and `deletionTimestamp`, but kube decodes the body into its Go
 * type first: a value that is not an RFC 3339 time is its 400 before anything is written (a time
 * the server replaces would otherwise pass unseen).
 */
function checkBodyTimestamps(req: ApiRequest, meta: Record<string, unknown> | undefined): void {
  for (const f of ['creationTimestamp', 'deletionTimestamp']) {
    const v = meta?.[f];
    if (v === undefined || v === null || (typeof v === 'string' && isDateTime(v))) continue;
    const field = `metadata.${f}`;
    const [shown, type] = typeof v === 'string' ? [v, 'date-time'] : [Array.isArray(v) ? 'array' : typeof v === 'number' ? (Number.isInteger(v) ? 'integer' : 'number') : typeof v, 'string'];
    throw decodeError(req.def, { field, type: 'FieldValueTypeInvalid', message: `Invalid value: "${shown}": ${field} in body must be of type ${type}: "${shown}"` });
  }
}

/** the options object a write's query is read into (`CreateOptions` in `meta.<domain>`), named by its 422s */
export interface OptionsRef {
  kind: 'CreateOptions' | 'UpdateOptions' | 'PatchOptions' | 'DeleteOptions';
  group: string;
}

export function optionsRef(apiDomain: string, kind: OptionsRef['kind']): OptionsRef {
  return { kind, group: `meta.${apiDomain}` };
}

/**
 * `dryRun` query (spec 000 §4.7): absent/empty or `All`. Anything else is kube's
 * ValidateDryRun answer: 422 Invalid on the options kind, the values printed as a Go
 * slice (`Unsupported value: []string{"Foo"}: supported values: "All"`).
 */
export function parseDryRun(q: URLSearchParams, options: OptionsRef, fromBody?: unknown): boolean {
  const { dryRun, error } = dryRunOf(q, fromBody);
  if (error) throw invalid(options.kind, options.group, '', [error]);
  return dryRun;
}

/** the `dryRun` values of the query and a body, and kube's ValidateDryRun error for them */
export function dryRunOf(q: URLSearchParams, fromBody?: unknown): { dryRun: boolean; error?: FieldError } {
  const values = [...q.getAll('dryRun'), ...(Array.isArray(fromBody) ? fromBody.map(String) : [])];
  const error = dryRunError(values, true);
  return error ? { dryRun: false, error } : { dryRun: values.includes('All') };
}

/** `fieldValidation` query (spec 000 §4.8): default Warn; another value is kube's 422 (its sorted set, "" first). */
export function parseFieldValidation(q: URLSearchParams, options: OptionsRef): FieldValidation {
  const v = q.get('fieldValidation');
  if (v === null || v === '') return 'Warn';
  if (v === 'Ignore' || v === 'Warn' || v === 'Strict') return v;
  throw invalid(options.kind, options.group, '', [
    { field: 'fieldValidation', type: 'FieldValueNotSupported', message: `Unsupported value: ${JSON.stringify(v)}: supported values: "", "Ignore", "Strict", "Warn"` },
  ]);
}

/** the Warning header texts for the Warn level, in kube's order (machinery/schema/strict-decoding.ts) */
export function fieldWarnings(level: FieldValidation, unknown: string[], findings: BodyFindings | undefined): string[] {
  if (level !== 'Warn') return [];
  return strictDecodingErrors(findings, unknown, false);
}

/** checks the namespace in the body against the URL (400 on mismatch) */
export function checkNamespace(req: ApiRequest, obj: ApiObject): void {
  const ns = obj.metadata?.namespace;
  if (req.def.scope === 'Namespaced') {
    if (ns !== undefined && ns !== '' && ns !== req.info.namespace) {
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
  }
}

/**
 * kube's checkName (endpoints/handlers/rest.go) of an object a PUT or PATCH produced: its name
 * must be the URL's, and be there (ObjectName's errEmptyName), 400 BadRequest. Its namespace
 * check never fires in kube 1.32: the handlers run EnsureObjectNamespaceMatchesRequestNamespace
 * (checkNamespace here) first, which refuses another namespace and clears a cluster-scoped one.
 */
export function checkName(req: ApiRequest, meta: ObjectMeta | undefined): void {
  const urlName = req.info.name;
  const name = meta?.name;
  if (name === undefined || name === '') throw badRequest(`the name of the object (${urlName} based on URL) was undeterminable: name must be provided`);
  if (name !== urlName) throw badRequest(`the name of the object (${String(name)}) does not match the name on the URL (${urlName})`);
}

/**
 * Runs a write with a sink for admission warnings (webhook `warnings`,
 * policy `Warn` actions): they go out as `Warning` headers with the answer,
 * and also with an error, since a later plugin may deny after earlier ones warned.
 */
export async function withAdmissionWarnings<T>(
  audit: AuditAnnotator | undefined,
  fn: (sink: string[], auditAnnotations: Record<string, string>) => Promise<T>,
): Promise<{ result: T; warnings: string[] }> {
  const sink: string[] = [];
  const annotations: Record<string, string> = {};
  try {
    return { result: await fn(sink, annotations), warnings: sink };
  } catch (e) {
    if (e instanceof StatusError && sink.length > 0) e.warnings.push(...sink);
    throw e;
  } finally {
    // admission's audit annotations (policy `Audit` actions, fail-open webhooks) land on the request's audit event
    for (const [k, v] of Object.entries(annotations)) audit?.annotate(k, v);
  }
}

/** true for a write to the `status` sub-resource */
export function isStatusWrite(req: ApiRequest): boolean {
  // a CertificateSigningRequest's `approval` writes its status (the conditions), as `status` does
  return req.info.subresource === 'status' || req.info.subresource === 'approval';
}

/** the kind has a status sub-resource: writes are confined to their part (confineWrite) */
export function hasStatusSubresource(req: ApiRequest): boolean {
  return (req.def.subresources ?? []).includes('status');
}

/** true for a write to a sub-resource that only changes part of a stored object (`/status`, `/ephemeralcontainers`): an absent object is 404, not a create */
export function isPartialWrite(req: ApiRequest): boolean {
  return isStatusWrite(req) || req.info.subresource === EPHEMERAL_SUBRESOURCE;
}

/**
 * Confines a write to its part of the object, as Kubernetes' status
 * strategies do: on a kind with a `status` sub-resource, a write to the main
 * resource keeps the stored status, and a write to `/status` changes only the
 * status (metadata and spec stay as stored), except the metadata the kind's
 * status strategy lets through (registry/status-write-metadata.ts). A write to a pod's
 * `/ephemeralcontainers` changes only spec.ephemeralContainers (kube's
 * podEphemeralContainersStrategy). `managedFields` and a `resourceVersion`
 * precondition come from the write.
 */
export function confineWrite(req: ApiRequest, next: ApiObject, current: ApiObject | undefined): ApiObject {
  if (!current || !hasStatusSubresource(req)) return next;
  if (isPartialWrite(req)) {
    const out: ApiObject = { ...current, metadata: { ...current.metadata } };
    if (isStatusWrite(req)) {
      out.metadata = statusWriteMeta(statusWriteMetadata(req.def), current.metadata ?? {}, next.metadata ?? {});
      if (next.status === undefined) delete out.status;
      else out.status = next.status;
    } else {
      out.spec = withEphemeralContainers(current.spec, next.spec);
    }
    const meta = out.metadata!;
    const rv = next.metadata?.resourceVersion;
    if (rv === undefined) delete meta.resourceVersion;
    else meta.resourceVersion = rv;
    const mf = next.metadata?.managedFields;
    if (mf === undefined) delete meta.managedFields;
    else meta.managedFields = mf;
    return out;
  }
  if (current.status === undefined) delete next.status;
  else next.status = current.status;
  return next;
}

/** the stored spec with the written spec's ephemeralContainers */
function withEphemeralContainers(stored: unknown, written: unknown): JSONObject {
  const spec: JSONObject = { ...(isObject(stored) ? stored : {}) };
  const ec = isObject(written) ? written.ephemeralContainers : undefined;
  if (ec === undefined) delete spec.ephemeralContainers;
  else spec.ephemeralContainers = ec;
  return spec;
}

function isObject(v: unknown): v is JSONObject {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** the part of an apply configuration the endpoint may set (see confineWrite) */
export function confineApplyConfig(req: ApiRequest, cfg: ApiObject): ApiObject {
  if (!(req.def.subresources ?? []).includes('status')) return cfg;
  if (isPartialWrite(req)) {
    const meta = cfg.metadata ?? {};
    const keep: ObjectMeta = {};
    for (const k of ['name', 'namespace', 'resourceVersion'] as const) if (meta[k] !== undefined) keep[k] = meta[k];
    const out: ApiObject = { apiVersion: cfg.apiVersion, kind: cfg.kind, metadata: keep };
    if (isStatusWrite(req)) {
      // what a /status apply may own of the metadata (its labels and annotations, as statusWriteMetadata allows)
      for (const f of statusApplyMetadataFields(statusWriteMetadata(req.def))) if (meta[f] !== undefined) keep[f] = meta[f];
      if (cfg.status !== undefined) out.status = cfg.status;
    } else {
      const ec = isObject(cfg.spec) ? cfg.spec.ephemeralContainers : undefined;
      if (ec !== undefined) out.spec = { ephemeralContainers: ec };
    }
    return out;
  }
  const { status: _s, ...rest } = cfg;
  return rest as ApiObject;
}
