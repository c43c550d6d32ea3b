// Plain JSON helpers of the apply machinery: copies, equality, and the object
// without its managedFields (never part of any field set).

import type { JSONObject, JSONValue } from '../../core/object.js';

export const isObject = (v: JSONValue | undefined): v is JSONObject =>
  v !== null && v !== undefined && typeof v === 'object' && !Array.isArray(v);

export function clone<T extends JSONValue>(v: T): T {
  return structuredClone(v);
}

export function deepEqual(a: JSONValue | undefined, b: JSONValue | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a === null || b === null) return false;
  if (typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as JSONValue[];
    return a.length === bb.length && a.every((x, i) => deepEqual(x, bb[i]));
  }
  const oa = a as JSONObject;
  const ob = b as JSONObject;
  const ka = Object.keys(oa);
  if (ka.length !== Object.keys(ob).length) return false;
  return ka.every((k) => Object.prototype.hasOwnProperty.call(ob, k) && deepEqual(oa[k], ob[k]));
}

/** The object without `metadata.managedFields` (never part of any field set). */
export function withoutManagedFields(v: JSONValue): JSONValue {
  if (!isObject(v) || !isObject(v.metadata) || v.metadata.managedFields === undefined) return v;
  const { managedFields: _drop, ...meta } = v.metadata;
  void _drop;
  return { ...v, metadata: meta };
}
