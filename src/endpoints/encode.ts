// Response encoding in the negotiated representation (spec 000 §4.3):
// JSON (optionally pretty), YAML, or the protobuf envelope for kinds with
// field numbers; Warning headers (spec 000 §4.8); deprecation warnings (§6).

import { randomUUID } from 'node:crypto';
import { stringify as toYaml } from 'yaml';
import { requestEntityTooLarge } from '../core/errors.js';
import type { ProtobufCatalog } from '../registry/protobuf-catalog.js';
import type { Negotiated } from './request.js';
import type { ResourceDefinition } from '../registry/types.js';
import type { PlainResponse } from './http.js';

export type Encoder = (
  status: number,
  body: unknown,
  accept: Negotiated,
  warnings?: string[],
  compressible?: boolean,
  extra?: Record<string, string>,
  /** `body` already as compact JSON (ApiResponse.bodyJson) */
  json?: string,
) => PlainResponse;

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
  // answered before the chain sees the request, so no audit event; the Audit-Id header as on every response
  return { status: 413, headers: [['Content-Type', 'application/json'], ['Audit-Id', randomUUID()]], body: JSON.stringify(e.toStatus()) };
}

/** C0 and C1 controls and DEL: kube refuses warning texts holding any (NewWarningHeader) */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const NON_ASCII = /[^\u0000-\u007f]/;

/**
 * Appends one `Warning: 299 - "<text>"` header per text (RFC 7234 §5.5), as kube's
 * warning recorder does: quotes and backslashes escaped, a text holding control
 * characters dropped. Header values travel as byte strings (one char per byte,
 * as requests' are read), so a text's UTF-8 bytes are spelt out: Go's HTTP/2 client
 * refuses a value whose UTF-16 code units were cut to their low byte (’ → 0x19).
 */
export function pushWarnings(headers: [string, string][], warnings: readonly string[]): void {
  for (const w of warnings) {
    if (CONTROL.test(w)) continue;
    const value = `299 - "${w.replace(/["\\]/g, (c) => `\\${c}`)}"`;
    headers.push(['Warning', NON_ASCII.test(value) ? Buffer.from(value, 'utf8').toString('latin1') : value]);
  }
}

/**
 * protobuf responses (spec 000 §2.7): the envelope, with the media type name
 * the client asked for; bodies without a protobuf form, or that protobuf would
 * carry only in part, go out in the next acceptable format
 */
export function encoderWith(catalog: ProtobufCatalog): Encoder {
  return (status, body, accept, warnings = [], compressible = false, extra = {}, json) => {
    if (accept.format !== 'protobuf') return encode(status, body, accept, warnings, compressible, extra, json);
    const pb = catalog.encodeBody(body);
    if (pb && (pb.skipped.length === 0 || !accept.fallback)) {
      const headers: [string, string][] = [['Content-Type', accept.mediaType ?? 'application/vnd.orch.protobuf']];
      pushWarnings(headers, warnings);
      for (const [k, v] of Object.entries(extra)) headers.push([k, v]);
      return { status, headers, body: pb.bytes, compressible };
    }
    return encode(status, body, accept.fallback ?? { format: 'json', pretty: false }, warnings, compressible, extra, json);
  };
}

export function encode(
  status: number,
  body: unknown,
  accept: Negotiated,
  warnings: string[] = [],
  compressible = false,
  extra: Record<string, string> = {},
  json?: string,
): PlainResponse {
  const headers: [string, string][] = [];
  let text: string;
  if (accept.format === 'yaml') {
    headers.push(['Content-Type', 'application/yaml']);
    text = toYaml(body);
  } else {
    headers.push(['Content-Type', 'application/json']);
    text = accept.pretty ? JSON.stringify(body, null, 2) + '\n' : (json ?? JSON.stringify(body));
    // kube-apiserver's JSON encoder ends every body with a newline, and clients compare Status bodies
    // whole (the Python client's tests); objects and lists are left as they are, so that their
    // text is not copied once more to append it
    if (!accept.pretty && isStatusBody(body)) text += '\n';
  }
  pushWarnings(headers, warnings);
  for (const [k, v] of Object.entries(extra)) headers.push([k, v]);
  return { status, headers, body: text, compressible };
}

function isStatusBody(body: unknown): boolean {
  return typeof body === 'object' && body !== null && (body as { kind?: unknown }).kind === 'Status';
}
