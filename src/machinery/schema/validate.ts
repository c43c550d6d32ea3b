// Structural validation of a decoded object against its kind's schema, run on
// every write (spec 000 §4.8): field types are always validated, required
// fields must be present, and unknown fields are collected and pruned (dropped)
// unless a `x-orch-preserve-unknown-fields` node stops pruning below it.
//
// One recursive walk; field paths live on a segment stack and are rendered to
// strings only when something is reported.

import type { FieldError } from '../../core/object.js';
import { type CompiledSchema, compileSchema } from './compile.js';
import { matchesFormat } from './formats.js';
import { converterMessage } from './go-decode.js';
import { goValue } from './go-values.js';
import { INT_OR_STRING, QUANTITY, badValue, base64Error, jsonType, runeCount, stableJson } from './value-text.js';
import type { Definitions, Schema } from './types.js';

export interface ValidateOptions {
  /** remove unknown fields from the object (default true, spec 000 §4.8) */
  prune?: boolean;
  /** drop `null` values of non-nullable fields, as Kubernetes decoding does (default true) */
  dropNulls?: boolean;
  /**
   * refuse duplicates in `set` and `map` lists (custom resources; built-in
   * kinds report duplicates in their strategies, with their own messages)
   */
  listUniqueness?: boolean;
  /**
   * drop an empty typed map (`additionalProperties` of a schema, no `properties`):
   * every map of Kubernetes' Go types is `omitempty`, so kube never encodes `{}`
   * for one (`data: {}`, `nodeSelector: {}`); custom resources keep what was written
   */
  dropEmptyMaps?: boolean;
  /**
   * custom resources (kube-openapi's validator): an enum is checked beside a
   * type error, as its common validator runs for every value (validate/schema.go)
   */
  enumBesideTypeError?: boolean;
  /**
   * write quantities and times back as kube's Go types encode them (go-values.ts): a built-in
   * kind's `cpu: 2` is `"2"`, its `1000m` is `"1"`, a Time is UTC with whole seconds; custom
   * resources are unstructured in kube and keep what was written
   */
  goValues?: boolean;
  /**
   * built-in kinds: an integer must fit its Go type (`format: int32`, else int64), as kube's
   * JSON decoder refuses 99999999999 for an int32 field; custom resources keep any integer
   */
  goIntRanges?: boolean;
}

/** the range of the Go integer a built-in kind's field decodes into */
const INT32 = { min: -(2 ** 31), max: 2 ** 31 - 1 };
/** doubles: 2^63 is the nearest to int64's maximum, so it passes (a parsed 9223372036854775807 reads as it) */
const INT64 = { min: -(2 ** 63), max: 2 ** 63 };

export interface ValidationResult {
  errors: FieldError[];
  /** JSON paths of the unknown fields, Kubernetes style: `spec.foo`, `spec.containers[0].bar` */
  unknownFields: string[];
  /** those of them in an embedded resource's metadata (kube finds them after pruning, crdUnknownOrder) */
  embeddedMetaUnknown?: string[];
}

/**
 * Errors of checks kube never ratchets (src/machinery/schema/ratchet.ts): list-type
 * duplicates, an embedded resource's apiVersion/kind, and allOf/anyOf/oneOf/not.
 */
export const NOT_RATCHETED = new WeakSet<FieldError>();

const SEG_PROP = 0;
const SEG_INDEX = 1;
const SEG_KEY = 2;

class Walk {
  readonly errors: FieldError[] = [];
  readonly unknownFields: string[] = [];
  embeddedMetaUnknown: string[] | undefined;
  /** > 0 inside an embedded resource's metadata */
  private embeddedMeta = 0;

  readonly segs: (string | number)[] = [];
  readonly kinds: number[] = [];

  constructor(
    private readonly prune: boolean,
    private readonly dropNulls: boolean,
    private readonly listUniqueness = false,
    private readonly dropEmptyMaps = false,
    private readonly enumBesideTypeError = false,
    private readonly goValues = false,
    private readonly goIntRanges = false,
  ) {}

  /** Kubernetes field.Path rendering: `a.b[0].c[key]` */
  fieldPath(): string {
    let out = '';
    for (let i = 0; i < this.segs.length; i++) {
      const k = this.kinds[i];
      if (k === SEG_PROP) out += out === '' ? (this.segs[i] as string) : `.${this.segs[i] as string}`;
      else out += `[${this.segs[i]}]`;
    }
    return out;
  }

  /** JSON path as strict decoding reports it: map keys are `.key` */
  jsonPath(extra: string): string {
    let out = '';
    for (let i = 0; i < this.segs.length; i++) {
      const k = this.kinds[i];
      if (k === SEG_INDEX) out += `[${this.segs[i]}]`;
      else out += out === '' ? (this.segs[i] as string) : `.${this.segs[i] as string}`;
    }
    return out === '' ? extra : `${out}.${extra}`;
  }

  private push(seg: string | number, kind: number): void {
    this.segs.push(seg);
    this.kinds.push(kind);
  }

  private pop(): void {
    this.segs.pop();
    this.kinds.pop();
  }

  private typeError(expected: string, actual: string, found?: { v: unknown; s: CompiledSchema }): void {
    const p = this.fieldPath();
    if (found && this.enumBesideTypeError && found.s.enumValues) {
      this.pushTypeError(p, expected, actual, found);
      this.enumCheck(found.v, found.s.enumValues);
      return;
    }
    this.pushTypeError(p, expected, actual, found);
  }

  private pushTypeError(p: string, expected: string, actual: string, found?: { v: unknown; s: CompiledSchema }): void {
    const converter = found && converterMessage(found.s, found.v);
    this.errors.push({
      field: p,
      type: 'FieldValueTypeInvalid',
      message: `Invalid value: "${actual}": ${p} in body must be of type ${expected}: "${actual}"`,
      ...(converter ? { converter } : {}),
    });
  }

  private invalid(value: unknown, detail: string, type = 'FieldValueInvalid'): void {
    this.errors.push({ field: this.fieldPath(), type, message: `Invalid value: ${badValue(value)}: ${detail}` });
  }

  value(v: unknown, s: CompiledSchema): void {
    if (s.allOf !== undefined || s.anyOf !== undefined || s.oneOf !== undefined || s.not !== undefined) this.alternatives(v, s);
    if (s.intOrString) {
      // kube: type [integer, string]; string and number checks apply to their kind of value
      if (typeof v === 'string') {
        if (s.format === 'quantity') {
          if (!QUANTITY.test(v)) this.quantityError(v);
          return;
        }
        return this.string(v, s);
      }
      if (typeof v === 'number' && (Number.isInteger(v) || (s.format === 'quantity' && Number.isFinite(v)))) {
        if (s.format !== 'quantity') this.numeric(v, s);
        return;
      }
      this.typeError(s.format === 'quantity' ? 'quantity' : INT_OR_STRING, jsonType(v));
      if (this.enumBesideTypeError && s.enumValues) this.enumCheck(v, s.enumValues);
      return;
    }
    switch (s.type) {
      case 'object':
        if (v === null || typeof v !== 'object' || Array.isArray(v)) return this.typeError('object', jsonType(v), { v, s });
        this.object(v as Record<string, unknown>, s);
        return;
      case 'array':
        if (!Array.isArray(v)) return this.typeError('array', jsonType(v), { v, s });
        this.array(v, s);
        return;
      case 'string':
        if (typeof v !== 'string') {
          // Quantity accepts JSON numbers (Kubernetes' resource.Quantity unmarshalling)
          if (s.format === 'quantity' && typeof v === 'number' && Number.isFinite(v)) return;
          return this.typeError('string', jsonType(v), { v, s });
        }
        this.string(v, s);
        return;
      case 'integer':
        if (typeof v !== 'number' || !Number.isInteger(v)) return this.typeError('integer', jsonType(v), { v, s });
        if (this.goIntRanges && this.outOfGoRange(v, s)) return;
        this.numeric(v, s);
        return;
      case 'number':
        if (typeof v !== 'number') return this.typeError('number', jsonType(v), { v, s });
        this.numeric(v, s);
        return;
      case 'boolean':
        if (typeof v !== 'boolean') return this.typeError('boolean', jsonType(v), { v, s });
        if (s.enumValues) this.enumCheck(v, s.enumValues);
        return;
      default:
        // untyped: an object with properties, or anything (preserve-unknown / embedded)
        if (v !== null && typeof v === 'object' && !Array.isArray(v) && (s.properties || s.additional)) {
          this.object(v as Record<string, unknown>, s);
        } else if (Array.isArray(v) && s.items) {
          this.array(v, s);
        }
    }
  }

  /** a type error for an integer its Go field cannot hold (kube: json "cannot unmarshal number … of type int32") */
  private outOfGoRange(v: number, s: CompiledSchema): boolean {
    const goType = s.format === 'int32' ? 'int32' : 'int64';
    const range = goType === 'int32' ? INT32 : INT64;
    if (v >= range.min && v <= range.max) return false;
    const p = this.fieldPath();
    this.errors.push({ field: p, type: 'FieldValueTypeInvalid', message: `Invalid value: ${String(v)}: ${p} in body must be of type ${goType}: "${String(v)}"` });
    return true;
  }

  private quantityError(v: string): void {
    const p = this.fieldPath();
    this.errors.push({
      field: p,
      type: 'FieldValueTypeInvalid',
      message: `Invalid value: "${v}": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`,
    });
  }

  private string(v: string, s: CompiledSchema): void {
    const f = s.format;
    if (f === 'byte') {
      const bad = base64Error(v);
      if (bad >= 0) {
        this.errors.push({
          field: this.fieldPath(),
          type: 'FieldValueTypeInvalid',
          message: `illegal base64 data at input byte ${bad}`,
        });
        return;
      }
    } else if (f === 'quantity') {
      if (!QUANTITY.test(v)) return this.quantityError(v);
    }
    // kube-openapi's string validator reports the first of maxLength, minLength, pattern (values.go),
    // lengths in runes (utf8.RuneCount)
    if (s.maxLength !== undefined && v.length > s.maxLength && runeCount(v) > s.maxLength) {
      this.errors.push({
        field: this.fieldPath(),
        type: 'FieldValueTooLong',
        message: `Too long: may not be more than ${s.maxLength} bytes`,
      });
    } else if (s.minLength !== undefined && v.length < 2 * s.minLength && runeCount(v) < s.minLength) {
      this.invalid(v, `${this.fieldPath()} in body should be at least ${s.minLength} chars long`);
    } else if (s.pattern !== undefined && !s.pattern.test(v)) {
      const detail = s.pattern.error === undefined ? s.pattern.source : `${s.pattern.source}, but pattern is invalid: ${s.pattern.error}`;
      this.invalid(v, `${this.fieldPath()} in body should match '${detail}'`);
    }
    // then the format (errors.InvalidType: a type error), then the enum
    if (f !== undefined && f !== 'byte' && f !== 'quantity' && !matchesFormat(f, v)) this.pushTypeError(this.fieldPath(), f, v);
    if (s.enumValues) this.enumCheck(v, s.enumValues);
  }

  private numeric(v: number, s: CompiledSchema): void {
    if (s.enumValues) this.enumCheck(v, s.enumValues);
    if (s.minimum !== undefined && (s.exclusiveMinimum ? v <= s.minimum : v < s.minimum)) {
      this.invalid(v, `${this.fieldPath()} in body should be greater than ${s.exclusiveMinimum ? '' : 'or equal to '}${s.minimum}`);
    }
    if (s.maximum !== undefined && (s.exclusiveMaximum ? v >= s.maximum : v > s.maximum)) {
      this.invalid(v, `${this.fieldPath()} in body should be less than ${s.exclusiveMaximum ? '' : 'or equal to '}${s.maximum}`);
    }
    if (s.multipleOf !== undefined && s.multipleOf > 0 && !Number.isInteger(Number((v / s.multipleOf).toPrecision(12)))) {
      this.invalid(v, `${this.fieldPath()} in body should be a multiple of ${s.multipleOf}`);
    }
  }

  private enumCheck(v: unknown, values: readonly unknown[]): void {
    for (let i = 0; i < values.length; i++) if (values[i] === v) return;
    let supported = '';
    // kube: strings as they are, other values as JSON, each Go-quoted (field.NotSupported): `"1", "2"`
    for (let i = 0; i < values.length; i++) {
      const x = values[i];
      supported += (i ? ', ' : '') + JSON.stringify(typeof x === 'string' ? x : JSON.stringify(x));
    }
    this.errors.push({
      field: this.fieldPath(),
      type: 'FieldValueNotSupported',
      message: `Unsupported value: ${badValue(v)}: supported values: ${supported}`,
    });
  }

  private array(v: unknown[], s: CompiledSchema): void {
    const items = s.items;
    if (s.maxItems !== undefined && v.length > s.maxItems) {
      this.errors.push({
        field: this.fieldPath(),
        type: 'FieldValueTooMany',
        message: `Too many: ${v.length}: must have at most ${s.maxItems} items`,
      });
    }
    if (s.minItems !== undefined && v.length < s.minItems) {
      this.invalid(v, `${this.fieldPath()} in body should have at least ${s.minItems} items`);
    }
    if (this.listUniqueness && (s.listType === 'set' || s.listType === 'map' || s.uniqueItems)) this.duplicates(v, s);
    if (!items) return;
    for (let i = 0; i < v.length; i++) {
      const item = v[i];
      this.push(i, SEG_INDEX);
      if (item === null && !items.nullable) {
        // a null item decodes to nothing usable: report it like a type mismatch
        if (items.type !== undefined || items.intOrString) this.typeError(items.intOrString ? INT_OR_STRING : items.type!, 'null');
      } else if (item !== null) {
        this.value(item, items);
        if (this.goValues) {
          const g = goValue(item, items);
          if (g !== undefined) v[i] = g;
        }
      }
      this.pop();
    }
  }

  /** an `x-orch-embedded-resource` object names its kind (Kubernetes: "must not be empty") */
  private embedded(obj: Record<string, unknown>): void {
    for (const k of ['apiVersion', 'kind']) {
      if (typeof obj[k] === 'string' && obj[k] !== '') continue;
      this.push(k, SEG_PROP);
      const e: FieldError = { field: this.fieldPath(), type: 'FieldValueRequired', message: 'Required value: must not be empty' };
      NOT_RATCHETED.add(e);
      this.errors.push(e);
      this.pop();
    }
    const m = obj.metadata;
    if (m !== undefined && (m === null || typeof m !== 'object' || Array.isArray(m))) {
      this.push('metadata', SEG_PROP);
      this.typeError('object', jsonType(m));
      this.pop();
    }
  }

  /** set and map lists hold each value (or key tuple) once (spec 000 §4.9) */
  private duplicates(v: unknown[], s: CompiledSchema): void {
    const seen = new Set<string>();
    const keys = s.listType === 'map' ? s.listMapKeys : undefined;
    for (let i = 0; i < v.length; i++) {
      const item = v[i];
      let id: string;
      if (keys && keys.length > 0 && item !== null && typeof item === 'object' && !Array.isArray(item)) {
        const o = item as Record<string, unknown>;
        id = JSON.stringify(keys.map((k) => o[k] ?? null));
      } else id = stableJson(item);
      if (seen.has(id)) {
        this.push(i, SEG_INDEX);
        const shown = keys && keys.length > 0 && item !== null && typeof item === 'object'
          ? `map[string]interface {}{${keys.map((k) => `"${k}":${JSON.stringify((item as Record<string, unknown>)[k] ?? null)}`).join(', ')}}`
          : badValue(item);
        const e: FieldError = { field: this.fieldPath(), type: 'FieldValueDuplicate', message: `Duplicate value: ${shown}` };
        NOT_RATCHETED.add(e);
        this.errors.push(e);
        this.pop();
      } else seen.add(id);
    }
  }

  /** allOf / anyOf / oneOf / not: value checks only, never pruning (structural schemas, docs/crds.md) */
  private alternatives(v: unknown, s: CompiledSchema): void {
    const check = (b: CompiledSchema): FieldError[] => {
      const w = new Walk(false, false, false, false, this.enumBesideTypeError);
      w.segs.push(...this.segs);
      w.kinds.push(...this.kinds);
      w.value(structuredClone(v), b);
      return w.errors;
    };
    const passes = (b: CompiledSchema): boolean => check(b).length === 0;
    const p = this.fieldPath();
    const before = this.errors.length;
    // allOf branches report their own errors (with full paths), as Kubernetes does
    if (s.allOf) for (const b of s.allOf) this.errors.push(...check(b));
    if (s.anyOf && !s.anyOf.some(passes)) this.invalid(v, `${p} in body must validate at least one schema (anyOf)`);
    if (s.oneOf && s.oneOf.filter(passes).length !== 1) this.invalid(v, `${p} in body must validate one and only one schema (oneOf)`);
    if (s.not && passes(s.not)) this.invalid(v, `${p} in body must not validate the schema (not)`);
    for (let i = before; i < this.errors.length; i++) NOT_RATCHETED.add(this.errors[i]!);
  }

  private object(obj: Record<string, unknown>, s: CompiledSchema): void {
    const props = s.properties;
    const additional = s.additional;
    if (s.maxProperties !== undefined || s.minProperties !== undefined) {
      const n = Object.keys(obj).length;
      if (s.maxProperties !== undefined && n > s.maxProperties) {
        this.errors.push({ field: this.fieldPath(), type: 'FieldValueTooMany', message: `Too many: ${n}: must have at most ${s.maxProperties} items` });
      }
      if (s.minProperties !== undefined && n < s.minProperties) {
        this.invalid(obj, `${this.fieldPath()} in body should have at least ${s.minProperties} properties`);
      }
    }
    if (s.embedded) this.embedded(obj);
    for (const k in obj) {
      let child: CompiledSchema | true | undefined = props?.get(k);
      let kind = SEG_PROP;
      if (child === undefined && additional !== undefined) {
        child = additional;
        kind = SEG_KEY;
      }
      if (child === undefined) {
        if (s.preserveUnknown || (s.embedded && (k === 'apiVersion' || k === 'kind' || k === 'metadata'))) continue;
        const path = this.jsonPath(k);
        this.unknownFields.push(path);
        if (this.embeddedMeta > 0) (this.embeddedMetaUnknown ??= []).push(path);
        if (this.prune) delete obj[k];
        continue;
      }
      if (child === true) continue;
      const v = obj[k];
      if (v === null) {
        if (!child.nullable && this.dropNulls) delete obj[k];
        continue;
      }
      // "" in a required field with a minLength is reported once, as `Required value`, below
      if (v === '' && child.minLength !== undefined && child.minLength > 0 && s.required?.includes(k)) continue;
      const meta = s.embedded && k === 'metadata';
      if (meta) this.embeddedMeta++;
      this.push(k, kind);
      this.value(v, child);
      this.pop();
      if (this.goValues) {
        const g = goValue(v, child);
        if (g !== undefined) obj[k] = g;
      }
      if (meta) this.embeddedMeta--;
      if (this.dropEmptyMaps && isEmptyTypedMap(v, child) && !s.required?.includes(k)) delete obj[k];
    }
    const req = s.required;
    if (req !== undefined) {
      for (const r of req) {
        const v = obj[r];
        let missing = v === undefined || v === null;
        if (!missing && v === '') {
          const min = props?.get(r)?.minLength;
          missing = min !== undefined && min > 0;
        }
        if (missing) {
          this.push(r, SEG_PROP);
          this.errors.push({ field: this.fieldPath(), type: 'FieldValueRequired', message: 'Required value' });
          this.pop();
        }
      }
    }
  }
}

/**
 * Validates (and by default prunes) `obj` in place against `schema`.
 * `$ref`s resolve against `defs`; the compiled form is cached per schema.
 */
export function validateAgainstSchema(
  obj: unknown,
  schema: Schema,
  defs: Definitions,
  opts: ValidateOptions = {},
): ValidationResult {
  return validateCompiled(obj, compileSchema(schema, defs), opts);
}

export function validateCompiled(obj: unknown, compiled: CompiledSchema, opts: ValidateOptions = {}): ValidationResult {
  const w = new Walk(opts.prune !== false, opts.dropNulls !== false, opts.listUniqueness === true, opts.dropEmptyMaps === true, opts.enumBesideTypeError === true, opts.goValues === true, opts.goIntRanges === true);
  if (obj !== null && obj !== undefined) w.value(obj, compiled);
  const r: ValidationResult = { errors: w.errors, unknownFields: w.unknownFields };
  if (w.embeddedMetaUnknown) r.embeddedMetaUnknown = w.embeddedMetaUnknown;
  return r;
}

/**
 * Drops the empty typed maps of `obj` and writes its quantities and times as Go does (the
 * `dropEmptyMaps` and `goValues` of a validation, without its errors): what the store does to a
 * built-in kind's object, for callers that compare before it writes
 */
export function dropEmptyTypedMaps(obj: unknown, compiled: CompiledSchema): void {
  validateCompiled(obj, compiled, { prune: false, dropNulls: false, dropEmptyMaps: true, goValues: true });
}

/** `{}` where the schema is a map of typed values (not a struct, free-form JSON or a FieldsV1-like message) */
function isEmptyTypedMap(v: unknown, s: CompiledSchema): boolean {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  if (s.properties !== undefined || s.additional === undefined || s.additional === true || s.preserveUnknown) return false;
  if (s.source['x-orch-proto-type'] !== undefined) return false;
  for (const _ in v) return false;
  return true;
}
