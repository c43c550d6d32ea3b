// The Swagger 2.0 document as gnostic's `openapi.v2.Document` protobuf, which
// kubectl asks for (`application/com.github.proto-openapi.spec.v2@v1.0+protobuf`)
// to validate objects of kinds it does not know and `kind: List` documents
// (issue #11 item 5). Field numbers are those of gnostic's OpenAPIv2.proto
// (docs/protobuf.md). Values of `default`, `enum`, `example` and vendor
// extensions travel as YAML text in `Any.yaml`, as gnostic writes them.

import protobuf from 'protobufjs/minimal.js';
import { stringify as toYaml } from 'yaml';

/** what kube-openapi answers (a `.` where the request has `@`, which Go's mime parser refuses) */
export const OPENAPI_V2_PROTOBUF = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';

type Json = Record<string, unknown>;
type Writer = protobuf.Writer;

const LEN = 2;
const VARINT = 0;
const DOUBLE = 1;

function str(w: Writer, field: number, v: unknown): void {
  if (typeof v === 'string' && v !== '') w.uint32((field << 3) | LEN).string(v);
}
function int(w: Writer, field: number, v: unknown): void {
  if (typeof v === 'number' && Number.isInteger(v)) w.uint32((field << 3) | VARINT).int64(v);
}
function dbl(w: Writer, field: number, v: unknown): void {
  if (typeof v === 'number') w.uint32((field << 3) | DOUBLE).double(v);
}
function flag(w: Writer, field: number, v: unknown): void {
  if (v === true) w.uint32((field << 3) | VARINT).bool(true);
}
function msg(w: Writer, field: number, write: (w: Writer) => void): void {
  w.uint32((field << 3) | LEN).fork();
  write(w);
  w.ldelim();
}

/** Any { string yaml = 2 } */
function any(w: Writer, field: number, value: unknown): void {
  msg(w, field, (m) => str(m, 2, toYaml(value, { lineWidth: 0 }).replace(/\n$/, '')));
}

/** NamedAny { name = 1; Any value = 2 } for every `x-` key */
function vendorExtensions(w: Writer, field: number, o: Json): void {
  for (const [k, v] of Object.entries(o)) {
    if (!k.startsWith('x-')) continue;
    msg(w, field, (m) => {
      str(m, 1, k);
      any(m, 2, v);
    });
  }
}

function schema(w: Writer, s: Json): void {
  str(w, 1, s.$ref);
  str(w, 2, s.format);
  str(w, 3, s.title);
  str(w, 4, s.description);
  if (s.default !== undefined) any(w, 5, s.default);
  dbl(w, 6, s.multipleOf);
  dbl(w, 7, s.maximum);
  flag(w, 8, s.exclusiveMaximum);
  dbl(w, 9, s.minimum);
  flag(w, 10, s.exclusiveMinimum);
  int(w, 11, s.maxLength);
  int(w, 12, s.minLength);
  str(w, 13, s.pattern);
  int(w, 14, s.maxItems);
  int(w, 15, s.minItems);
  flag(w, 16, s.uniqueItems);
  int(w, 17, s.maxProperties);
  int(w, 18, s.minProperties);
  for (const r of Array.isArray(s.required) ? s.required : []) str(w, 19, r);
  for (const e of Array.isArray(s.enum) ? s.enum : []) any(w, 20, e);
  const ap = s.additionalProperties;
  if (ap !== undefined) {
    // AdditionalPropertiesItem { Schema schema = 1; bool boolean = 2 }
    msg(w, 21, (m) => {
      if (typeof ap === 'boolean') m.uint32((2 << 3) | VARINT).bool(ap);
      else if (ap && typeof ap === 'object') msg(m, 1, (x) => schema(x, ap as Json));
    });
  }
  // TypeItem { repeated string value = 1 }
  if (s.type !== undefined) msg(w, 22, (m) => (Array.isArray(s.type) ? s.type : [s.type]).forEach((t) => str(m, 1, t)));
  // ItemsItem { repeated Schema schema = 1 }
  if (s.items && typeof s.items === 'object') msg(w, 23, (m) => (Array.isArray(s.items) ? s.items : [s.items]).forEach((i) => msg(m, 1, (x) => schema(x, i as Json))));
  for (const a of Array.isArray(s.allOf) ? s.allOf : []) msg(w, 24, (m) => schema(m, a as Json));
  if (s.properties && typeof s.properties === 'object') {
    // Properties { repeated NamedSchema additional_properties = 1 }
    msg(w, 25, (m) => {
      for (const [name, p] of Object.entries(s.properties as Json)) {
        msg(m, 1, (ns) => {
          str(ns, 1, name);
          msg(ns, 2, (x) => schema(x, p as Json));
        });
      }
    });
  }
  str(w, 26, s.discriminator);
  flag(w, 27, s.readOnly);
  if (s.example !== undefined) any(w, 30, s.example);
  vendorExtensions(w, 31, s);
}

/**
 * Document: swagger (1), info (2), definitions (9) and vendor extensions; the
 * paths are left out: kubectl's validation and explain read the definitions
 * and their `x-kubernetes-group-version-kind`, and the JSON form has them all.
 */
export function encodeOpenAPIV2Protobuf(doc: Json): Uint8Array {
  const w = protobuf.Writer.create();
  str(w, 1, doc.swagger);
  const info = (doc.info ?? {}) as Json;
  msg(w, 2, (m) => {
    str(m, 1, info.title);
    str(m, 2, info.version);
    str(m, 3, info.description);
  });
  const defs = (doc.definitions ?? {}) as Json;
  // Definitions { repeated NamedSchema additional_properties = 1 }
  msg(w, 9, (m) => {
    for (const [name, s] of Object.entries(defs)) {
      msg(m, 1, (ns) => {
        str(ns, 1, name);
        msg(ns, 2, (x) => schema(x, s as Json));
      });
    }
  });
  vendorExtensions(w, 16, doc);
  return w.finish();
}
