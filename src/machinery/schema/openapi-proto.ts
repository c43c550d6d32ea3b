// /openapi/v2 as the gnostic `openapi.v2.Document` protobuf, which kubectl and
// client-go ask for first (`Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf`).
// Kubernetes answers it; a 406 makes kubectl fail on unknown kinds and on
// every `kind: List` document (issue #11 item 5). The message subset is
// proto/openapi-v2.proto; values (defaults, enums, vendor extensions) travel
// as YAML text in `Any.yaml`, as gnostic does (JSON is YAML).

import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';

/** the media types clients ask for; the response names the dotted one (Go's mime parser rejects `@`), as kube-openapi does */
export const OPENAPI_V2_PROTOBUF_ACCEPT = ['application/com.github.proto-openapi.spec.v2@v1.0+protobuf', 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf'];
export const OPENAPI_V2_PROTOBUF = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';

type Json = { [k: string]: unknown };

function loadDocumentType(): protobuf.Type {
  // src/machinery/schema and dist/src/machinery/schema both find the repository's proto/
  for (const rel of ['../../../proto/openapi-v2.proto', '../../../../proto/openapi-v2.proto']) {
    const p = fileURLToPath(new URL(rel, import.meta.url));
    if (existsSync(p)) return protobuf.parse(readFileSync(p, 'utf8'), { keepCase: true }).root.lookupType('openapi.v2.Document');
  }
  throw new Error('openapi: proto/openapi-v2.proto not found');
}

let documentType: protobuf.Type | undefined;

const anyOf = (v: unknown) => ({ yaml: `${JSON.stringify(v)}\n` });
const isObj = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

function extensions(o: Json): { name: string; value: { yaml: string } }[] {
  return Object.keys(o).filter((k) => k.startsWith('x-')).map((k) => ({ name: k, value: anyOf(o[k]) }));
}

const NUMBERS: [string, string][] = [
  ['multipleOf', 'multiple_of'], ['maximum', 'maximum'], ['minimum', 'minimum'], ['maxLength', 'max_length'], ['minLength', 'min_length'],
  ['maxItems', 'max_items'], ['minItems', 'min_items'], ['maxProperties', 'max_properties'], ['minProperties', 'min_properties'],
];
const FLAGS: [string, string][] = [['exclusiveMaximum', 'exclusive_maximum'], ['exclusiveMinimum', 'exclusive_minimum'], ['uniqueItems', 'unique_items'], ['readOnly', 'read_only']];

function schemaMessage(s: Json): Json {
  const m: Json = {};
  if (typeof s.$ref === 'string') m._ref = s.$ref;
  for (const k of ['format', 'title', 'description', 'pattern', 'discriminator'] as const) if (typeof s[k] === 'string') m[k] = s[k];
  for (const [json, pb] of NUMBERS) if (typeof s[json] === 'number') m[pb] = s[json];
  for (const [json, pb] of FLAGS) if (s[json] === true) m[pb] = true;
  if (s.default !== undefined) m.default = anyOf(s.default);
  if (s.example !== undefined) m.example = anyOf(s.example);
  if (Array.isArray(s.required)) m.required = s.required.map(String);
  if (Array.isArray(s.enum)) m.enum = s.enum.map(anyOf);
  if (typeof s.type === 'string') m.type = { value: [s.type] };
  else if (Array.isArray(s.type)) m.type = { value: s.type.map(String) };
  if (isObj(s.items)) m.items = { schema: [schemaMessage(s.items)] };
  else if (Array.isArray(s.items)) m.items = { schema: s.items.filter(isObj).map(schemaMessage) };
  if (Array.isArray(s.allOf)) m.all_of = s.allOf.filter(isObj).map(schemaMessage);
  if (isObj(s.properties)) m.properties = { additional_properties: named(s.properties) };
  if (isObj(s.additionalProperties)) m.additional_properties = { schema: schemaMessage(s.additionalProperties) };
  else if (typeof s.additionalProperties === 'boolean') m.additional_properties = { boolean: s.additionalProperties };
  const ext = extensions(s);
  if (ext.length > 0) m.vendor_extension = ext;
  return m;
}

function named(props: Json): { name: string; value: Json }[] {
  return Object.entries(props).filter(([, v]) => isObj(v)).map(([name, v]) => ({ name, value: schemaMessage(v as Json) }));
}

/** encodes a Swagger 2.0 document (as /openapi/v2 serves it in JSON) */
export function encodeOpenAPIV2(doc: Json): Uint8Array {
  documentType ??= loadDocumentType();
  const info = isObj(doc.info) ? doc.info : {};
  const message: Json = {
    swagger: typeof doc.swagger === 'string' ? doc.swagger : '2.0',
    info: { title: String(info.title ?? ''), version: String(info.version ?? ''), ...(typeof info.description === 'string' ? { description: info.description } : {}) },
    paths: { path: Object.keys(isObj(doc.paths) ? doc.paths : {}).map((name) => ({ name, value: {} })) },
    definitions: { additional_properties: named(isObj(doc.definitions) ? doc.definitions : {}) },
  };
  const ext = extensions(doc);
  if (ext.length > 0) message.vendor_extension = ext;
  return documentType.encode(documentType.fromObject(message)).finish();
}
