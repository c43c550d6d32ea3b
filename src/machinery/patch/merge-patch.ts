// JSON Merge Patch (RFC 7386), spec 000 §4.3: objects merge member by member,
// `null` removes a member, and any non-object patch (arrays included) replaces
// the target outright.

import type { JSONObject, JSONValue } from '../../core/object.js';
import { deepClone, deepEqual, hasOwn, isObject, setProp } from './json-value.js';

/** RFC 7386 §2 MergePatch(target, patch); neither argument is modified. */
export function applyMergePatch(target: JSONValue, patch: JSONValue): JSONValue {
  if (!isObject(patch)) return deepClone(patch);
  const out: JSONObject = isObject(target) ? { ...target } : {};
  for (const key of Object.keys(patch)) {
    const value = patch[key]!;
    if (value === null) {
      delete out[key];
    } else {
      const merged = applyMergePatch(hasOwn(out, key) ? out[key]! : null, value);
      setProp(out, key, merged);
    }
  }
  // members the patch did not touch are still shared with `target`; clone them
  // so the result never aliases the input
  for (const key of Object.keys(out)) if (!hasOwn(patch, key)) setProp(out, key, deepClone(out[key]!));
  return out;
}

/**
 * The merge patch that turns `original` into `modified`: changed or added
 * members with their new value, removed members as `null`, nested objects as
 * nested patches. Values containing `null` inside objects cannot be expressed
 * by RFC 7386 (null means delete), so such a round trip drops them.
 */
export function createMergePatch(original: JSONValue, modified: JSONValue): JSONValue {
  if (!isObject(original) || !isObject(modified)) return deepClone(modified);
  const patch: JSONObject = {};
  for (const key of Object.keys(original)) {
    if (!hasOwn(modified, key)) setProp(patch, key, null);
  }
  for (const key of Object.keys(modified)) {
    const m = modified[key]!;
    if (!hasOwn(original, key)) {
      setProp(patch, key, deepClone(m));
      continue;
    }
    const o = original[key]!;
    if (deepEqual(o, m)) continue;
    if (isObject(o) && isObject(m)) setProp(patch, key, createMergePatch(o, m));
    else setProp(patch, key, deepClone(m));
  }
  return patch;
}
