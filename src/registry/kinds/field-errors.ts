// kube's field.ErrorList constructors (k8s.io/apimachinery/pkg/util/validation/field)
// with the messages kube prints, for the kinds whose strategies validate by hand.

import { deepEqual } from '../../machinery/meta.js';
import { badValue } from '../../machinery/schema/value-text.js';
import type { FieldError } from '../types.js';

export const invalid = (field: string, v: unknown, m: string): FieldError => ({ field, type: 'FieldValueInvalid', message: `Invalid value: ${badValue(v)}: ${m}` });
export const required = (field: string, m = ''): FieldError => ({ field, type: 'FieldValueRequired', message: m ? `Required value: ${m}` : 'Required value' });
export const forbidden = (field: string, m: string): FieldError => ({ field, type: 'FieldValueForbidden', message: `Forbidden: ${m}` });
export const duplicate = (field: string, v: unknown): FieldError => ({ field, type: 'FieldValueDuplicate', message: `Duplicate value: ${badValue(v)}` });
export const tooMany = (field: string, n: number, max: number): FieldError => ({ field, type: 'FieldValueTooMany', message: `Too many: ${n}: must have at most ${max} items` });
export const tooLong = (field: string, max: number): FieldError => ({ field, type: 'FieldValueTooLong', message: `Too long: may not be more than ${max} bytes` });
export const notSupported = (field: string, v: unknown, ok: string[]): FieldError => ({
  field, type: 'FieldValueNotSupported', message: `Unsupported value: ${badValue(v)}: supported values: ${ok.map((x) => JSON.stringify(x)).join(', ')}`,
});

/** kube's ValidateImmutableField: the value given back with "field is immutable" */
export function immutable(field: string, next: unknown, prev: unknown): FieldError[] {
  return deepEqual(next ?? null, prev ?? null) ? [] : [invalid(field, next ?? null, 'field is immutable')];
}

/** field.Invalid with the value already as kube prints it (Go's %#v of a slice or struct) */
export const invalidShown = (field: string, shown: string, m: string): FieldError => ({ field, type: 'FieldValueInvalid', message: `Invalid value: ${shown}: ${m}` });

/** Go's %#v of a slice of strings as kube gives one back: `[]string{"a", "b"}`, `[]string(nil)` when absent or empty */
export function goSlice(type: string, v: unknown): string {
  const items = Array.isArray(v) ? v.map(String) : [];
  return items.length === 0 ? `[]${type}(nil)` : `[]${type}{${items.map((x) => JSON.stringify(x)).join(', ')}}`;
}

/** how kube prints a pointer to a string-like value: quoted, and a nil one as `"null"` */
export const goStringPtr = (v: unknown): string => JSON.stringify(typeof v === 'string' ? v : 'null');

/** Go's %#v of a struct of string fields, `core.EventSource{Component:"", Host:""}`: each [Go name, JSON name] */
export function goStruct(type: string, fields: [string, string][], v: unknown): string {
  const o = (v && typeof v === 'object' ? v : {}) as Record<string, unknown>;
  return `${type}{${fields.map(([goName, json]) => `${goName}:${JSON.stringify(typeof o[json] === 'string' ? o[json] : '')}`).join(', ')}}`;
}

/** the top-level fields that differ, a `-` and a `+` line each (where kube prints a Go struct diff in a message) */
export function fieldDiff(was: Record<string, unknown>, now: Record<string, unknown>): string {
  const keys = [...new Set([...Object.keys(was), ...Object.keys(now)])].filter((k) => !deepEqual(was[k], now[k]));
  return keys.map((k) => `-  ${k}: ${JSON.stringify(was[k] ?? null)}\n+  ${k}: ${JSON.stringify(now[k] ?? null)}`).join('\n');
}
