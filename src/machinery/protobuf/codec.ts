// Protobuf encoding of API objects driven by the schemas' field numbers
// (spec 000 §2.7, §4.3). The wire format is Kubernetes' generated.proto:
// proto2 messages, maps as repeated {key = 1, value = 2} entries, and the
// well-known messages Time/MicroTime {seconds = 1, nanos = 2}, IntOrString
// {type = 1, intVal = 2, strVal = 3}, Quantity {string = 1}, FieldsV1 and
// RawExtension {raw = 1: JSON bytes}. Properties without a field number are
// not encodable (reported, skipped); unknown fields are skipped on decode.

import protobuf from 'protobufjs/minimal.js';
import type { Definitions, Schema } from '../schema/types.js';
import { ProtobufError } from './errors.js';
import { readJsonSchemaProps, writeJsonSchemaProps } from './json-schema-props.js';
import { WT_FIXED64, WT_LEN, WT_VARINT, longToNumber, readRawJson, tag, writeScalar } from './wire.js';
import { type FieldPlan, type Leaf, type MessagePlan, type ValuePlan, messagePlan } from './plan.js';

const { Reader, Writer } = protobuf;
type ReaderT = InstanceType<typeof Reader>;
type WriterT = InstanceType<typeof Writer>;

export type JsonObject = Record<string, unknown>;

/** a kind's definition or directly its schema */
/** a bare schema, or a kind's (structurally a `ResourceDefinition`: the codec knows no registry) */
export type SchemaSource = Schema | { schema: Schema; kind: string };

const TOP_LEVEL_TYPE_META = new Set(['apiVersion', 'kind']);

function schemaOf(def: SchemaSource): Schema {
  return 'schema' in def && 'kind' in def ? def.schema : (def as Schema);
}

export interface EncodeReport {
  bytes: Uint8Array;
  /** JSON paths of present values that protobuf could not carry (no field number, wrong type) */
  skipped: string[];
}

/** Encodes an object (its apiVersion/kind go in the envelope, not here). */
export function encodeProtobufObject(obj: JsonObject, def: SchemaSource, defs: Definitions): Uint8Array {
  return encodeProtobufObjectReport(obj, def, defs).bytes;
}

/** Like encodeProtobufObject, and says what could not be encoded (callers may fall back to JSON). */
export function encodeProtobufObjectReport(obj: JsonObject, def: SchemaSource, defs: Definitions): EncodeReport {
  const plan = messagePlan(schemaOf(def), defs);
  const w = Writer.create();
  const skipped: string[] = [];
  writeMessage(w, plan, obj, '', skipped, true);
  return { bytes: w.finish(), skipped };
}

/** Decodes a protobuf-serialised object (without apiVersion/kind; the envelope carries them). */
export function decodeProtobufObject(bytes: Uint8Array, def: SchemaSource, defs: Definitions): JsonObject {
  const plan = messagePlan(schemaOf(def), defs);
  try {
    return readMessage(bytes, plan, '');
  } catch (e) {
    throw asProtobufError(e);
  }
}

export function asProtobufError(e: unknown): ProtobufError {
  if (e instanceof ProtobufError) return e;
  if (e instanceof RangeError || /index out of range/.test(String((e as Error)?.message))) {
    return new ProtobufError('Truncated', `protobuf data is truncated: ${(e as Error).message}`);
  }
  return new ProtobufError('WireType', `malformed protobuf data: ${(e as Error)?.message ?? String(e)}`);
}

// ---------------------------------------------------------------- encoding

function join(path: string, name: string): string {
  return path === '' ? name : `${path}.${name}`;
}

function writeMessage(w: WriterT, plan: MessagePlan, obj: JsonObject, path: string, skipped: string[], top = false, embedded = false): void {
  // fields and embedded (inlined) messages interleave by field number
  const parts: [number, () => void][] = [];
  for (const f of plan.fields) {
    const v = obj[f.name];
    if (v === undefined || v === null) continue;
    parts.push([f.number, () => writeField(w, f, v, join(path, f.name), skipped)]);
  }
  for (const [n, sub] of plan.embedded) {
    if (!hasValue(sub, obj)) continue;
    parts.push([
      n,
      () => {
        w.uint32(tag(n, WT_LEN)).fork();
        writeMessage(w, sub, obj, path, skipped, false, true);
        w.ldelim();
      },
    ]);
  }
  parts.sort((a, b) => a[0] - b[0]);
  for (const [, emit] of parts) emit();
  // an inlined message holds only some of the object's properties; its parent reports the rest
  if (embedded) return;
  for (const k of Object.keys(obj)) {
    if (obj[k] === undefined || obj[k] === null) continue;
    if (top && TOP_LEVEL_TYPE_META.has(k)) continue;
    if (!hasField(plan, k)) skipped.push(join(path, k));
  }
}

/** whether an inlined message (or one inlined in it) has a value to write */
function hasValue(plan: MessagePlan, obj: JsonObject): boolean {
  if (plan.fields.some((f) => obj[f.name] !== undefined && obj[f.name] !== null)) return true;
  for (const sub of plan.embedded.values()) if (hasValue(sub, obj)) return true;
  return false;
}

function hasField(plan: MessagePlan, name: string): boolean {
  if (plan.fields.some((f) => f.name === name)) return true;
  for (const sub of plan.embedded.values()) if (hasField(sub, name)) return true;
  return false;
}

function writeField(w: WriterT, f: FieldPlan, v: unknown, path: string, skipped: string[]): void {
  if (f.repeated) {
    if (!Array.isArray(v)) {
      skipped.push(path);
      return;
    }
    v.forEach((item, i) => {
      if (item !== null && item !== undefined) writeValue(w, f.number, f.value, item, `${path}[${i}]`, skipped);
    });
    return;
  }
  writeValue(w, f.number, f.value, v, path, skipped);
}

function writeValue(w: WriterT, n: number, plan: ValuePlan, v: unknown, path: string, skipped: string[]): void {
  switch (plan.kind) {
    case 'leaf':
      if (!writeLeaf(w, n, plan.leaf, v)) skipped.push(path);
      return;
    case 'message':
      if (!isObject(v)) {
        skipped.push(path);
        return;
      }
      w.uint32(tag(n, WT_LEN)).fork();
      writeMessage(w, plan.message, v, path, skipped);
      w.ldelim();
      return;
    case 'map': {
      if (!isObject(v)) {
        skipped.push(path);
        return;
      }
      // sorted keys: the same object always encodes to the same bytes
      for (const key of Object.keys(v).sort()) {
        const val = v[key];
        if (val === undefined || val === null) continue;
        w.uint32(tag(n, WT_LEN)).fork();
        w.uint32(tag(1, WT_LEN)).string(key);
        writeValue(w, 2, plan.value, val, `${path}[${key}]`, skipped);
        w.ldelim();
      }
      return;
    }
    case 'wrappedList':
      if (!Array.isArray(v)) {
        skipped.push(path);
        return;
      }
      w.uint32(tag(n, WT_LEN)).fork();
      v.forEach((item, i) => writeValue(w, 1, plan.item, item, `${path}[${i}]`, skipped));
      w.ldelim();
      return;
    case 'jsonSchemaProps':
      if (!isObject(v)) {
        skipped.push(path);
        return;
      }
      w.uint32(tag(n, WT_LEN)).fork();
      writeJsonSchemaProps(w, v, plan.prefixes, path, skipped);
      w.ldelim();
      return;
  }
}

/** false when the JSON value does not fit the leaf type */
function writeLeaf(w: WriterT, n: number, l: Leaf, v: unknown): boolean {
  switch (l) {
    case 'string':
    case 'int32':
    case 'int64':
    case 'double':
    case 'bool':
      return writeScalar(w, n, l, v);
    case 'bytes': {
      if (typeof v !== 'string') return false;
      w.uint32(tag(n, WT_LEN)).bytes(Buffer.from(v, 'base64'));
      return true;
    }
    case 'Time':
    case 'MicroTime': {
      if (typeof v !== 'string') return false;
      const t = parseTimestamp(v);
      if (!t) return false;
      w.uint32(tag(n, WT_LEN)).fork();
      w.uint32(tag(1, WT_VARINT)).int64(t.seconds);
      if (t.nanos !== 0) w.uint32(tag(2, WT_VARINT)).int32(t.nanos);
      w.ldelim();
      return true;
    }
    case 'IntOrString': {
      // Kubernetes writes all three fields (none is a pointer)
      if (typeof v === 'number' && Number.isInteger(v)) {
        w.uint32(tag(n, WT_LEN)).fork();
        w.uint32(tag(1, WT_VARINT)).int64(0);
        w.uint32(tag(2, WT_VARINT)).int32(v);
        w.uint32(tag(3, WT_LEN)).string('');
        w.ldelim();
        return true;
      }
      if (typeof v !== 'string') return false;
      w.uint32(tag(n, WT_LEN)).fork();
      w.uint32(tag(1, WT_VARINT)).int64(1);
      w.uint32(tag(2, WT_VARINT)).int32(0);
      w.uint32(tag(3, WT_LEN)).string(v);
      w.ldelim();
      return true;
    }
    case 'Quantity':
      if (typeof v !== 'string' && typeof v !== 'number') return false;
      w.uint32(tag(n, WT_LEN)).fork();
      w.uint32(tag(1, WT_LEN)).string(String(v));
      w.ldelim();
      return true;
    case 'FieldsV1':
    case 'RawExtension':
      w.uint32(tag(n, WT_LEN)).fork();
      w.uint32(tag(1, WT_LEN)).bytes(Buffer.from(JSON.stringify(v), 'utf8'));
      w.ldelim();
      return true;
  }
}

const RFC3339 = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$/i;

export function parseTimestamp(s: string): { seconds: number; nanos: number } | undefined {
  const m = RFC3339.exec(s);
  if (!m) return undefined;
  const ms = Date.parse(`${m[1]}${m[3]!.toUpperCase()}`); // groups 1 and 3 are not optional
  if (Number.isNaN(ms)) return undefined;
  return { seconds: Math.floor(ms / 1000), nanos: m[2] ? Number(m[2].padEnd(9, '0')) : 0 };
}

/** RFC 3339 as Kubernetes prints Time (seconds) and MicroTime (microseconds), always UTC */
export function formatTimestamp(seconds: number, nanos: number, micro: boolean): string {
  const base = new Date(seconds * 1000).toISOString().slice(0, 19);
  if (!micro) return `${base}Z`;
  return `${base}.${String(Math.floor(nanos / 1000)).padStart(6, '0')}Z`;
}

// ---------------------------------------------------------------- decoding

function expectedWireType(plan: ValuePlan): number {
  if (plan.kind !== 'leaf') return WT_LEN;
  switch (plan.leaf) {
    case 'int32':
    case 'int64':
    case 'bool':
      return WT_VARINT;
    case 'double':
      return WT_FIXED64;
    default:
      return WT_LEN;
  }
}

function readMessage(bytes: Uint8Array, plan: MessagePlan, path: string, into: JsonObject = {}): JsonObject {
  const r = Reader.create(bytes);
  while (r.pos < r.len) {
    const t = r.uint32();
    const n = t >>> 3;
    const wt = t & 7;
    if (n === 0) throw new ProtobufError('WireType', `invalid field number 0 at ${path || 'top level'}`);
    const f = plan.byNumber.get(n);
    if (f) {
      readField(r, wt, f, join(path, f.name), into);
      continue;
    }
    const emb = plan.embedded.get(n);
    if (emb) {
      if (wt !== WT_LEN) throw wireTypeError(path, n, wt, WT_LEN);
      readMessage(r.bytes(), emb, path, into);
      continue;
    }
    r.skipType(wt);
  }
  return into;
}

function wireTypeError(path: string, n: number, wt: number, expected: number): ProtobufError {
  return new ProtobufError('WireType', `field ${n}${path ? ` (${path})` : ''} has wire type ${wt}, expected ${expected}`);
}

function readField(r: ReaderT, wt: number, f: FieldPlan, path: string, into: JsonObject): void {
  const expected = expectedWireType(f.value);
  if (f.repeated) {
    const list = (Array.isArray(into[f.name]) ? into[f.name] : (into[f.name] = [])) as unknown[];
    if (wt === WT_LEN && expected !== WT_LEN) {
      // packed repeated scalars: one length-delimited run of values
      const end = r.uint32() + r.pos;
      if (end > r.len) throw new ProtobufError('Truncated', `packed field ${path} runs past the end of the data`);
      while (r.pos < end) list.push(readLeafScalar(r, f.value as { kind: 'leaf'; leaf: Leaf }));
      return;
    }
    if (wt !== expected) throw wireTypeError(path, f.number, wt, expected);
    const v = readValue(r, f.value, path);
    if (v !== undefined) list.push(v);
    return;
  }
  if (wt !== expected) throw wireTypeError(path, f.number, wt, expected);
  if (f.value.kind === 'map') {
    const m = (isObject(into[f.name]) ? into[f.name] : (into[f.name] = {})) as JsonObject;
    const [k, v] = readMapEntry(r.bytes(), f.value.value, path);
    // a key such as `__proto__` must become an own property, not the prototype
    Object.defineProperty(m, k, { value: v, enumerable: true, writable: true, configurable: true });
    return;
  }
  const v = readValue(r, f.value, path);
  // "" is Go's zero value: the JSON form omits it, so does the decoded object
  if (v === undefined || (v === '' && f.value.kind === 'leaf' && f.value.leaf === 'string') || ((v === 0 || v === false) && f.omitZero)) {
    delete into[f.name];
    return;
  }
  into[f.name] = v;
}

function readLeafScalar(r: ReaderT, plan: { kind: 'leaf'; leaf: Leaf }): unknown {
  switch (plan.leaf) {
    case 'int32':
      return r.int32();
    case 'int64':
      return longToNumber(r.int64());
    case 'bool':
      return r.bool();
    case 'double':
      return r.double();
    default:
      throw new ProtobufError('WireType', `packed encoding is not valid for ${plan.leaf}`);
  }
}

function readValue(r: ReaderT, plan: ValuePlan, path: string): unknown {
  switch (plan.kind) {
    case 'leaf':
      return readLeaf(r, plan.leaf, path);
    case 'message':
      return readMessage(r.bytes(), plan.message, path);
    case 'map':
      // a map as a list item cannot occur in the built-in schemas
      throw new ProtobufError('WireType', `unexpected map value at ${path}`);
    case 'jsonSchemaProps':
      return readJsonSchemaProps(r.bytes(), path);
    case 'wrappedList': {
      const sub = Reader.create(r.bytes());
      const out: unknown[] = [];
      while (sub.pos < sub.len) {
        const t = sub.uint32();
        if (t >>> 3 !== 1) {
          sub.skipType(t & 7);
          continue;
        }
        const v = readValue(sub, plan.item, path);
        if (v !== undefined) out.push(v);
      }
      return out;
    }
  }
}

function readMapEntry(bytes: Uint8Array, value: ValuePlan, path: string): [string, unknown] {
  const r = Reader.create(bytes);
  let key = '';
  let v: unknown;
  while (r.pos < r.len) {
    const t = r.uint32();
    const n = t >>> 3;
    const wt = t & 7;
    if (n === 1) {
      if (wt !== WT_LEN) throw wireTypeError(`${path} key`, 1, wt, WT_LEN);
      key = r.string();
    } else if (n === 2) {
      const expected = expectedWireType(value);
      if (wt !== expected) throw wireTypeError(`${path}[${key}]`, 2, wt, expected);
      v = readValue(r, value, `${path}[${key}]`);
    } else r.skipType(wt);
  }
  return [key, v === undefined ? zeroValue(value) : v];
}

/** an absent map value is the value type's zero (e.g. data: {a: ""}) */
function zeroValue(plan: ValuePlan): unknown {
  if (plan.kind === 'message' || plan.kind === 'jsonSchemaProps') return {};
  if (plan.kind === 'wrappedList') return [];
  if (plan.kind === 'map') return {};
  switch (plan.leaf) {
    case 'int32':
    case 'int64':
    case 'double':
      return 0;
    case 'bool':
      return false;
    case 'Quantity':
      return '0';
    default:
      return '';
  }
}

function readLeaf(r: ReaderT, l: Leaf, path: string): unknown {
  switch (l) {
    case 'string':
      return r.string();
    case 'bytes':
      return Buffer.from(r.bytes()).toString('base64');
    case 'int32':
    case 'int64':
    case 'bool':
    case 'double':
      return readLeafScalar(r, { kind: 'leaf', leaf: l });
    case 'Time':
    case 'MicroTime': {
      const sub = Reader.create(r.bytes());
      if (sub.len === 0) return undefined; // Go's zero time: null in JSON
      let seconds = 0;
      let nanos = 0;
      while (sub.pos < sub.len) {
        const t = sub.uint32();
        if (t >>> 3 === 1 && (t & 7) === WT_VARINT) seconds = longToNumber(sub.int64());
        else if (t >>> 3 === 2 && (t & 7) === WT_VARINT) nanos = sub.int32();
        else sub.skipType(t & 7);
      }
      if (nanos < 0 || nanos > 999_999_999) throw new ProtobufError('Invalid', `${path}: nanos out of range`);
      return formatTimestamp(seconds, nanos, l === 'MicroTime');
    }
    case 'IntOrString': {
      const sub = Reader.create(r.bytes());
      let type = 0;
      let intVal = 0;
      let strVal = '';
      while (sub.pos < sub.len) {
        const t = sub.uint32();
        const n = t >>> 3;
        if (n === 1 && (t & 7) === WT_VARINT) type = longToNumber(sub.int64());
        else if (n === 2 && (t & 7) === WT_VARINT) intVal = sub.int32();
        else if (n === 3 && (t & 7) === WT_LEN) strVal = sub.string();
        else sub.skipType(t & 7);
      }
      return type === 1 ? strVal : intVal;
    }
    case 'Quantity': {
      const sub = Reader.create(r.bytes());
      let s = '';
      while (sub.pos < sub.len) {
        const t = sub.uint32();
        if (t >>> 3 === 1 && (t & 7) === WT_LEN) s = sub.string();
        else sub.skipType(t & 7);
      }
      return s;
    }
    case 'FieldsV1':
    case 'RawExtension':
      return readRawJson(r.bytes(), path, l);
  }
}

function isObject(v: unknown): v is JsonObject {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
