// Small helpers over plain JSON values shared by the patch engines. Every
// engine is a pure function: inputs are never mutated, so the engines clone
// what they are about to change.

import type { JSONObject, JSONValue } from '../../core/object.js';

export function isObject(v: JSONValue | undefined): v is JSONObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function deepClone<T extends JSONValue>(v: T): T {
  if (Array.isArray(v)) return v.map((e) => deepClone(e)) as T;
  if (isObject(v)) {
    const out: JSONObject = {};
    for (const k of Object.keys(v)) {
      // typed API objects may carry `undefined` members; JSON has no such value
      if (v[k] !== undefined) setProp(out, k, deepClone(v[k]!));
    }
    return out as T;
  }
  return v;
}

/** JSON equality: object member order does not matter, array order does (RFC 6902 §4.6). */
export function deepEqual(a: JSONValue | undefined, b: JSONValue | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  if (isObject(a)) {
    if (!isObject(b)) return false;
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(b).length) return false;
    for (const k of ka) {
      if (!Object.prototype.hasOwnProperty.call(b, k)) return false;
      if (!deepEqual(a[k], b[k])) return false;
    }
    return true;
  }
  return false;
}

/** A canonical string for a value (sorted object keys): identity of merge-key values and set members. */
export function canonicalKey(v: JSONValue | undefined): string {
  if (v === undefined) return 'undefined';
  if (Array.isArray(v)) return `[${v.map(canonicalKey).join(',')}]`;
  if (isObject(v)) {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalKey(v[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

export function hasOwn(o: JSONObject, k: string): boolean {
  return Object.prototype.hasOwnProperty.call(o, k);
}

/** Type name used in error messages. */
export function kindOf(v: JSONValue | undefined): string {
  if (v === undefined) return 'missing';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

/**
 * Sets an own data property. Plain assignment of `__proto__` would change the
 * prototype instead of creating a member, and JSON may carry that key.
 */
export function setProp(o: JSONObject, k: string, v: JSONValue): void {
  if (k === '__proto__') Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  else o[k] = v;
}
