// apiextensions/v1 JSONSchemaProps in protobuf (a CRD version's
// `schema.openAPIV3Schema`), laid out by hand: the message is recursive, its
// JSON keys are not identifiers (`$ref`, `x-kubernetes-list-type`), and four
// of its fields are unions whose JSON form depends on the value (docs/protobuf.md
// "CustomResourceDefinition"). Field numbers: Kubernetes'
// apiextensions-apiserver/pkg/apis/apiextensions/v1/generated.proto.
//
//   JSON                        { bytes raw = 1 }  -- any JSON value (default, example, enum items)
//   JSONSchemaPropsOrArray      { JSONSchemaProps schema = 1; repeated JSONSchemaProps jSONSchemas = 2 }
//   JSONSchemaPropsOrBool       { bool allows = 1; JSONSchemaProps schema = 2 }   -- a schema: allows = true
//   JSONSchemaPropsOrStringArray{ JSONSchemaProps schema = 1; repeated string property = 2 }
//   ExternalDocumentation       { description = 1; url = 2 }
//   ValidationRule              { rule = 1; message = 2; messageExpression = 3; reason = 4; fieldPath = 5; bool optionalOldSelf = 6 }

import protobuf from 'protobufjs/minimal.js';
import { ProtobufError } from './errors.js';
import { WT_FIXED64, WT_LEN, WT_VARINT, longToNumber, readRawJson, tag, writeScalar } from './wire.js';

const { Reader } = protobuf;
type WriterT = InstanceType<typeof protobuf.Writer>;
type ReaderT = InstanceType<typeof Reader>;
type J = Record<string, unknown>;

type Kind =
  | 'string'
  | 'json'
  | 'double'
  /** *bool in Go: false is kept */
  | 'bool'
  /** non-pointer bool with omitempty: Go always writes it, a false means absent */
  | 'flag'
  | 'int64'
  | 'jsonList'
  | 'strings'
  | 'schema'
  | 'schemas'
  | 'schemaMap'
  | 'orArray'
  | 'orBool'
  | 'orStringArrayMap'
  | 'externalDocs'
  | 'rules';

interface Field {
  /** the JSON key; for markers the name after `x-<prefix>-` */
  key: string;
  n: number;
  kind: Kind;
  marker?: true;
}

const FIELDS: Field[] = [
  { key: 'id', n: 1, kind: 'string' },
  { key: '$schema', n: 2, kind: 'string' },
  { key: '$ref', n: 3, kind: 'string' },
  { key: 'description', n: 4, kind: 'string' },
  { key: 'type', n: 5, kind: 'string' },
  { key: 'format', n: 6, kind: 'string' },
  { key: 'title', n: 7, kind: 'string' },
  { key: 'default', n: 8, kind: 'json' },
  { key: 'maximum', n: 9, kind: 'double' },
  { key: 'exclusiveMaximum', n: 10, kind: 'flag' },
  { key: 'minimum', n: 11, kind: 'double' },
  { key: 'exclusiveMinimum', n: 12, kind: 'flag' },
  { key: 'maxLength', n: 13, kind: 'int64' },
  { key: 'minLength', n: 14, kind: 'int64' },
  { key: 'pattern', n: 15, kind: 'string' },
  { key: 'maxItems', n: 16, kind: 'int64' },
  { key: 'minItems', n: 17, kind: 'int64' },
  { key: 'uniqueItems', n: 18, kind: 'flag' },
  { key: 'multipleOf', n: 19, kind: 'double' },
  { key: 'enum', n: 20, kind: 'jsonList' },
  { key: 'maxProperties', n: 21, kind: 'int64' },
  { key: 'minProperties', n: 22, kind: 'int64' },
  { key: 'required', n: 23, kind: 'strings' },
  { key: 'items', n: 24, kind: 'orArray' },
  { key: 'allOf', n: 25, kind: 'schemas' },
  { key: 'oneOf', n: 26, kind: 'schemas' },
  { key: 'anyOf', n: 27, kind: 'schemas' },
  { key: 'not', n: 28, kind: 'schema' },
  { key: 'properties', n: 29, kind: 'schemaMap' },
  { key: 'additionalProperties', n: 30, kind: 'orBool' },
  { key: 'patternProperties', n: 31, kind: 'schemaMap' },
  { key: 'dependencies', n: 32, kind: 'orStringArrayMap' },
  { key: 'additionalItems', n: 33, kind: 'orBool' },
  { key: 'definitions', n: 34, kind: 'schemaMap' },
  { key: 'externalDocs', n: 35, kind: 'externalDocs' },
  { key: 'example', n: 36, kind: 'json' },
  { key: 'nullable', n: 37, kind: 'flag' },
  { key: 'preserve-unknown-fields', n: 38, kind: 'bool', marker: true },
  { key: 'embedded-resource', n: 39, kind: 'flag', marker: true },
  { key: 'int-or-string', n: 40, kind: 'flag', marker: true },
  { key: 'list-map-keys', n: 41, kind: 'strings', marker: true },
  { key: 'list-type', n: 42, kind: 'string', marker: true },
  { key: 'map-type', n: 43, kind: 'string', marker: true },
  { key: 'validations', n: 44, kind: 'rules', marker: true },
];
const BY_NUMBER = new Map(FIELDS.map((f) => [f.n, f]));

/** a decoded marker is spelled the Kubernetes way, the spelling every client knows */
const DECODED_PREFIX = 'x-kubernetes-';

const EXTERNAL_DOCS: [string, number][] = [['description', 1], ['url', 2]];
const RULE_STRINGS: [string, number][] = [['rule', 1], ['message', 2], ['messageExpression', 3], ['reason', 4], ['fieldPath', 5]];

const isObj = (v: unknown): v is J => v !== null && typeof v === 'object' && !Array.isArray(v);

// ---------------------------------------------------------------- encoding

/**
 * Writes the fields of one JSONSchemaProps (the caller frames the message).
 * Keys it cannot carry (unknown keys, a marker also written with a less
 * preferred prefix, values of the wrong type) go to `skipped`.
 */
export function writeJsonSchemaProps(w: WriterT, j: J, prefixes: string[], path: string, skipped: string[]): void {
  const used = new Set<string>();
  for (const f of FIELDS) {
    const key = f.marker ? prefixes.map((p) => p + f.key).find((k) => j[k] !== undefined && j[k] !== null) : f.key;
    if (key === undefined || j[key] === undefined || j[key] === null) continue;
    used.add(key);
    if (!writeField(w, f, j[key], prefixes, `${path}.${key}`, skipped)) skipped.push(`${path}.${key}`);
  }
  for (const k of Object.keys(j)) if (!used.has(k) && j[k] !== undefined && j[k] !== null) skipped.push(`${path}.${k}`);
}

function message(w: WriterT, n: number, body: () => void): void {
  w.uint32(tag(n, WT_LEN)).fork();
  body();
  w.ldelim();
}

function schema(w: WriterT, n: number, v: unknown, prefixes: string[], path: string, skipped: string[]): boolean {
  if (!isObj(v)) return false;
  message(w, n, () => writeJsonSchemaProps(w, v, prefixes, path, skipped));
  return true;
}

function json(w: WriterT, n: number, v: unknown): void {
  message(w, n, () => w.uint32(tag(1, WT_LEN)).bytes(Buffer.from(JSON.stringify(v), 'utf8')));
}

/** false when the value does not fit the field */
function writeField(w: WriterT, f: Field, v: unknown, prefixes: string[], path: string, skipped: string[]): boolean {
  const n = f.n;
  switch (f.kind) {
    case 'string':
    case 'double':
    case 'int64':
      return writeScalar(w, n, f.kind, v);
    case 'bool':
    case 'flag':
      return writeScalar(w, n, 'bool', v);
    case 'json':
      json(w, n, v);
      return true;
    case 'jsonList':
      // null is a legitimate enum member (a nullable enum): written as JSON null
      if (!Array.isArray(v)) return false;
      for (const item of v) json(w, n, item);
      return true;
    case 'strings':
      if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) return false;
      for (const x of v) w.uint32(tag(n, WT_LEN)).string(x);
      return true;
    case 'schema':
      return schema(w, n, v, prefixes, path, skipped);
    case 'schemas':
      if (!Array.isArray(v) || !v.every(isObj)) return false;
      v.forEach((x, i) => schema(w, n, x, prefixes, `${path}[${i}]`, skipped));
      return true;
    case 'schemaMap':
      if (!isObj(v) || !Object.values(v).every(isObj)) return false;
      // sorted keys, as Go writes maps: the same schema always encodes to the same bytes
      for (const k of Object.keys(v).sort()) {
        message(w, n, () => {
          w.uint32(tag(1, WT_LEN)).string(k);
          schema(w, 2, v[k], prefixes, `${path}[${k}]`, skipped);
        });
      }
      return true;
    case 'orArray':
      if (isObj(v)) {
        message(w, n, () => schema(w, 1, v, prefixes, path, skipped));
        return true;
      }
      if (!Array.isArray(v) || !v.every(isObj)) return false;
      message(w, n, () => v.forEach((x, i) => schema(w, 2, x, prefixes, `${path}[${i}]`, skipped)));
      return true;
    case 'orBool':
      if (typeof v === 'boolean') {
        message(w, n, () => w.uint32(tag(1, WT_VARINT)).bool(v));
        return true;
      }
      if (!isObj(v)) return false;
      message(w, n, () => {
        w.uint32(tag(1, WT_VARINT)).bool(true);
        schema(w, 2, v, prefixes, path, skipped);
      });
      return true;
    case 'orStringArrayMap':
      if (!isObj(v) || !Object.values(v).every((x) => isObj(x) || (Array.isArray(x) && x.every((s) => typeof s === 'string')))) return false;
      for (const k of Object.keys(v).sort()) {
        const x = v[k];
        message(w, n, () => {
          w.uint32(tag(1, WT_LEN)).string(k);
          message(w, 2, () => {
            if (Array.isArray(x)) for (const s of x as string[]) w.uint32(tag(2, WT_LEN)).string(s);
            else schema(w, 1, x, prefixes, `${path}[${k}]`, skipped);
          });
        });
      }
      return true;
    case 'externalDocs':
      return flat(w, n, v, EXTERNAL_DOCS, undefined, path, skipped);
    case 'rules':
      if (!Array.isArray(v) || !v.every(isObj)) return false;
      v.forEach((x, i) => flat(w, n, x, RULE_STRINGS, ['optionalOldSelf', 6], `${path}[${i}]`, skipped));
      return true;
  }
}

/** a small message of string fields (and one bool): ExternalDocumentation, ValidationRule */
function flat(w: WriterT, n: number, v: unknown, strings: [string, number][], flag: [string, number] | undefined, path: string, skipped: string[]): boolean {
  if (!isObj(v)) return false;
  message(w, n, () => {
    for (const [k, fn] of strings) {
      if (typeof v[k] === 'string') w.uint32(tag(fn, WT_LEN)).string(v[k]);
    }
    if (flag && typeof v[flag[0]] === 'boolean') w.uint32(tag(flag[1], WT_VARINT)).bool(v[flag[0]] as boolean);
  });
  const known = new Set([...strings.map(([k]) => k), ...(flag ? [flag[0]] : [])]);
  for (const [k, x] of Object.entries(v)) {
    if (x === undefined || x === null) continue;
    if (!known.has(k) || (k === flag?.[0] ? typeof x !== 'boolean' : typeof x !== 'string')) skipped.push(`${path}.${k}`);
  }
  return true;
}

// ---------------------------------------------------------------- decoding

/** one JSONSchemaProps message as its JSON form */
export function readJsonSchemaProps(bytes: Uint8Array, path: string): J {
  const r = Reader.create(bytes);
  const out: J = {};
  while (r.pos < r.len) {
    const t = r.uint32();
    const f = BY_NUMBER.get(t >>> 3);
    if (!f) {
      r.skipType(t & 7);
      continue;
    }
    const key = f.marker ? DECODED_PREFIX + f.key : f.key;
    const at = `${path}.${key}`;
    expectWire(t, f, at);
    readField(r, f, key, out, at);
  }
  return out;
}

function expectWire(t: number, f: Field, path: string): void {
  const wt = t & 7;
  const want = f.kind === 'double' ? WT_FIXED64 : f.kind === 'bool' || f.kind === 'flag' || f.kind === 'int64' ? WT_VARINT : WT_LEN;
  if (wt !== want) throw new ProtobufError('WireType', `field ${f.n} (${path}) has wire type ${wt}, expected ${want}`);
}

function push(out: J, key: string, v: unknown): void {
  ((Array.isArray(out[key]) ? out[key] : (out[key] = [])) as unknown[]).push(v);
}

function entry(out: J, key: string): J {
  return (isObj(out[key]) ? out[key] : (out[key] = {})) as J;
}

/** a key such as `__proto__` must become an own property, not the prototype */
function setOwn(m: J, k: string, v: unknown): void {
  Object.defineProperty(m, k, { value: v, enumerable: true, writable: true, configurable: true });
}

function readField(r: ReaderT, f: Field, key: string, out: J, path: string): void {
  switch (f.kind) {
    case 'string': {
      const s = r.string();
      // "" is Go's zero value, which the JSON form omits
      if (s === '') delete out[key];
      else out[key] = s;
      return;
    }
    case 'json': {
      const v = readRawJson(r.bytes(), path, 'JSON');
      if (v !== undefined) out[key] = v;
      return;
    }
    case 'double':
      out[key] = r.double();
      return;
    case 'bool':
      out[key] = r.bool();
      return;
    case 'flag':
      if (r.bool()) out[key] = true;
      else delete out[key];
      return;
    case 'int64':
      out[key] = longToNumber(r.int64());
      return;
    case 'jsonList': {
      const v = readRawJson(r.bytes(), path, 'JSON');
      push(out, key, v === undefined ? null : v);
      return;
    }
    case 'strings':
      push(out, key, r.string());
      return;
    case 'schema':
      out[key] = readJsonSchemaProps(r.bytes(), path);
      return;
    case 'schemas':
      push(out, key, readJsonSchemaProps(r.bytes(), path));
      return;
    case 'schemaMap': {
      const [k, v] = readEntry(r.bytes(), path, (b, p) => readJsonSchemaProps(b, p));
      setOwn(entry(out, key), k, v ?? {});
      return;
    }
    case 'orArray': {
      const v = readUnion(r.bytes(), path, 1, 2);
      if (v !== undefined) out[key] = v;
      return;
    }
    case 'orBool': {
      const v = readOrBool(r.bytes(), path);
      out[key] = v;
      return;
    }
    case 'orStringArrayMap': {
      const [k, v] = readEntry(r.bytes(), path, (b, p) => readUnion(b, p, 1, 2, true) ?? []);
      setOwn(entry(out, key), k, v ?? []);
      return;
    }
    case 'externalDocs':
      out[key] = readFlat(r.bytes(), EXTERNAL_DOCS, undefined);
      return;
    case 'rules':
      push(out, key, readFlat(r.bytes(), RULE_STRINGS, ['optionalOldSelf', 6]));
      return;
  }
}

/** a map entry { key = 1; value = 2 } */
function readEntry<V>(bytes: Uint8Array, path: string, value: (b: Uint8Array, p: string) => V): [string, V | undefined] {
  const r = Reader.create(bytes);
  let k = '';
  let v: V | undefined;
  while (r.pos < r.len) {
    const t = r.uint32();
    if (t >>> 3 === 1 && (t & 7) === WT_LEN) k = r.string();
    else if (t >>> 3 === 2 && (t & 7) === WT_LEN) v = value(r.bytes(), `${path}[${k}]`);
    else r.skipType(t & 7);
  }
  return [k, v];
}

/**
 * JSONSchemaPropsOrArray / OrStringArray: `schema` at one field, the list at
 * another; the list wins when not empty (Go's MarshalJSON does the same).
 */
function readUnion(bytes: Uint8Array, path: string, schemaField: number, listField: number, strings = false): unknown {
  const r = Reader.create(bytes);
  let one: J | undefined;
  const list: unknown[] = [];
  while (r.pos < r.len) {
    const t = r.uint32();
    const n = t >>> 3;
    if (n === schemaField && (t & 7) === WT_LEN) one = readJsonSchemaProps(r.bytes(), path);
    else if (n === listField && (t & 7) === WT_LEN) list.push(strings ? r.string() : readJsonSchemaProps(r.bytes(), `${path}[${list.length}]`));
    else r.skipType(t & 7);
  }
  return list.length > 0 ? list : one;
}

/** JSONSchemaPropsOrBool: the schema when present, else `allows` */
function readOrBool(bytes: Uint8Array, path: string): unknown {
  const r = Reader.create(bytes);
  let allows = false;
  let s: J | undefined;
  while (r.pos < r.len) {
    const t = r.uint32();
    const n = t >>> 3;
    if (n === 1 && (t & 7) === WT_VARINT) allows = r.bool();
    else if (n === 2 && (t & 7) === WT_LEN) s = readJsonSchemaProps(r.bytes(), path);
    else r.skipType(t & 7);
  }
  return s ?? allows;
}

function readFlat(bytes: Uint8Array, strings: [string, number][], flag: [string, number] | undefined): J {
  const r = Reader.create(bytes);
  const out: J = {};
  while (r.pos < r.len) {
    const t = r.uint32();
    const n = t >>> 3;
    const s = strings.find(([, fn]) => fn === n);
    if (s && (t & 7) === WT_LEN) {
      const v = r.string();
      if (v === '') delete out[s[0]];
      else out[s[0]] = v;
    } else if (flag && n === flag[1] && (t & 7) === WT_VARINT) out[flag[0]] = r.bool();
    else r.skipType(t & 7);
  }
  return out;
}
