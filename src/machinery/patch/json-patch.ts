// JSON Patch (RFC 6902), spec 000 §4.3/§4.4: a sequence of operations applied
// in order; if any operation fails the whole patch fails and the document is
// unchanged. Paths are RFC 6901 JSON Pointers. A failing `test` is reported
// apart from an invalid patch so the server can answer 409 rather than 422.

import type { JSONValue } from '../../core/object.js';
import { PatchError } from './errors.js';
import { parseArrayIndex, parsePointer } from './json-pointer.js';
import { deepClone, deepEqual, hasOwn, isObject, kindOf, setProp } from './json-value.js';

export type JsonPatchOperation =
  | { op: 'add' | 'replace' | 'test'; path: string; value: JSONValue }
  | { op: 'remove'; path: string }
  | { op: 'move' | 'copy'; from: string; path: string };

const OPS = new Set(['add', 'remove', 'replace', 'move', 'copy', 'test']);

/**
 * Checks the shape of a patch document (RFC 6902 §3, §4): an array of objects,
 * each with a known `op`, a string `path`, a `value` member for add/replace/test
 * (which may be null) and a string `from` for move/copy.
 */
export function parseJsonPatch(patch: JSONValue): JsonPatchOperation[] {
  if (!Array.isArray(patch)) {
    throw new PatchError('Invalid', `a JSON Patch document must be an array of operations, got ${kindOf(patch)}`);
  }
  return patch.map((raw, i) => {
    if (!isObject(raw)) throw new PatchError('Invalid', `operation ${i}: must be an object, got ${kindOf(raw)}`);
    const op = raw.op;
    if (typeof op !== 'string') throw new PatchError('Invalid', `operation ${i}: missing or non-string "op" member`);
    if (!OPS.has(op)) throw new PatchError('Invalid', `operation ${i}: unrecognized op "${op}"`);
    const path = raw.path;
    if (typeof path !== 'string') {
      throw new PatchError('Invalid', `operation ${i} (${op}): missing or non-string "path" member`);
    }
    switch (op) {
      case 'add':
      case 'replace':
      case 'test':
        if (!hasOwn(raw, 'value')) {
          throw new PatchError('Invalid', `operation ${i} (${op} ${path}): missing "value" member`);
        }
        return { op, path, value: raw.value! };
      case 'move':
      case 'copy': {
        const from = raw.from;
        if (typeof from !== 'string') {
          throw new PatchError('Invalid', `operation ${i} (${op} ${path}): missing or non-string "from" member`);
        }
        return { op, from, path };
      }
      default:
        return { op: 'remove', path };
    }
  });
}

/** Applies an RFC 6902 patch to `doc` and returns the new document; `doc` and `patch` are not modified. */
export function applyJsonPatch(doc: JSONValue, patch: JSONValue | JsonPatchOperation[]): JSONValue {
  const ops = parseJsonPatch(patch as JSONValue);
  // one clone up front; every operation below works on it in place
  let cur = deepClone(doc);
  ops.forEach((op, i) => {
    const where = `operation ${i} (${op.op} ${JSON.stringify(op.path)})`;
    const path = parsePointer(op.path, where);
    switch (op.op) {
      case 'add':
        cur = add(cur, path, deepClone(op.value), where);
        break;
      case 'remove':
        cur = remove(cur, path, where).doc;
        break;
      case 'replace':
        cur = replace(cur, path, deepClone(op.value), where);
        break;
      case 'move': {
        const from = parsePointer(op.from, `${where} from`);
        // RFC 6902 §4.4: a location cannot be moved into one of its children
        if (from.length < path.length && from.every((t, j) => path[j] === t)) {
          throw new PatchError('Invalid', `${where}: cannot move "${op.from}" into its own child`);
        }
        if (from.length === path.length && from.every((t, j) => path[j] === t)) {
          get(cur, from, `${where} from`); // must exist; otherwise a no-op
          break;
        }
        const removed = remove(cur, from, `${where} from`);
        cur = add(removed.doc, path, removed.value, where);
        break;
      }
      case 'copy': {
        const from = parsePointer(op.from, `${where} from`);
        cur = add(cur, path, deepClone(get(cur, from, `${where} from`)), where);
        break;
      }
      case 'test': {
        const actual = get(cur, path, where);
        if (!deepEqual(actual, op.value)) {
          throw new PatchError(
            'TestFailed',
            `${where}: test failed: expected ${JSON.stringify(op.value)}, found ${JSON.stringify(actual)}`,
          );
        }
        break;
      }
    }
  });
  return cur;
}

function get(doc: JSONValue, path: string[], where: string): JSONValue {
  let cur = doc;
  for (let i = 0; i < path.length; i++) cur = child(cur, path[i]!, where, path.slice(0, i + 1));
  return cur;
}

function child(container: JSONValue, token: string, where: string, upTo: string[]): JSONValue {
  if (Array.isArray(container)) {
    const idx = parseArrayIndex(token);
    if (idx === undefined) throw new PatchError('Invalid', `${where}: "${token}" is not a valid array index`);
    if (idx >= container.length) {
      throw new PatchError('Invalid', `${where}: index ${idx} is out of bounds (array length ${container.length})`);
    }
    return container[idx]!;
  }
  if (isObject(container)) {
    if (!hasOwn(container, token)) throw new PatchError('Invalid', `${where}: "/${upTo.join('/')}" does not exist`);
    return container[token]!;
  }
  throw new PatchError('Invalid', `${where}: cannot descend into a ${kindOf(container)} at "${token}"`);
}

function parentOf(doc: JSONValue, path: string[], where: string): JSONValue {
  const parent = get(doc, path.slice(0, -1), where);
  if (!Array.isArray(parent) && !isObject(parent)) {
    throw new PatchError('Invalid', `${where}: the parent of the target is a ${kindOf(parent)}, not a container`);
  }
  return parent;
}

function add(doc: JSONValue, path: string[], value: JSONValue, where: string): JSONValue {
  if (path.length === 0) return value;
  const parent = parentOf(doc, path, where);
  const last = path[path.length - 1]!;
  if (Array.isArray(parent)) {
    if (last === '-') {
      parent.push(value);
      return doc;
    }
    const idx = parseArrayIndex(last);
    if (idx === undefined) throw new PatchError('Invalid', `${where}: "${last}" is not a valid array index`);
    if (idx > parent.length) {
      throw new PatchError('Invalid', `${where}: index ${idx} is out of bounds (array length ${parent.length})`);
    }
    parent.splice(idx, 0, value);
    return doc;
  }
  setProp(parent as Record<string, JSONValue>, last, value);
  return doc;
}

function remove(doc: JSONValue, path: string[], where: string): { doc: JSONValue; value: JSONValue } {
  if (path.length === 0) throw new PatchError('Invalid', `${where}: cannot remove the whole document`);
  const parent = parentOf(doc, path, where);
  const last = path[path.length - 1]!;
  const value = child(parent, last, where, path);
  if (Array.isArray(parent)) parent.splice(Number(last), 1);
  else delete (parent as Record<string, JSONValue>)[last];
  return { doc, value };
}

function replace(doc: JSONValue, path: string[], value: JSONValue, where: string): JSONValue {
  if (path.length === 0) return value;
  const parent = parentOf(doc, path, where);
  const last = path[path.length - 1]!;
  child(parent, last, where, path); // the target must exist (RFC 6902 §4.3)
  if (Array.isArray(parent)) parent[Number(last)] = value;
  else setProp(parent as Record<string, JSONValue>, last, value);
  return doc;
}
