// Strategic merge patch (spec 000 §4.3: built-in kinds only), the Kubernetes
// patch format that knows, from the kind's schema (`x-orch-patch-strategy`,
// `x-orch-patch-merge-key`, spec 000 §4.9), which lists are merged by key
// rather than replaced. Patch directives:
//   `$patch: replace|delete|merge`            on a map, or as a list element
//   `$retainKeys: [..]`                        clear map keys not listed
//   `$deleteFromPrimitiveList/<field>: [..]`   remove values from a merged primitive list
//   `$setElementOrder/<field>: [..]`           final order of a merged list
// The semantics follow Kubernetes' apimachinery strategicpatch package; the
// deliberate differences are listed in docs/patch.md.

import type { Definitions, Schema } from '../schema/types.js';
import type { JSONObject, JSONValue } from '../../core/object.js';
import { PatchError } from './errors.js';
import { canonicalKey, deepClone, deepEqual, hasOwn, isObject, kindOf, setProp } from './json-value.js';
import { type FieldSchema, hasStrategy, itemsOf, lookupField, resolveSchema } from './patch-meta.js';

const DIRECTIVE = '$patch';
const RETAIN_KEYS = '$retainKeys';
const DELETE_FROM_PRIMITIVE_LIST = '$deleteFromPrimitiveList/';
const SET_ELEMENT_ORDER = '$setElementOrder/';

/** Marks a value that a `$patch: delete` removed. */
const DELETED = Symbol('deleted');
type Merged<T> = T | typeof DELETED;

function fail(path: string, message: string): PatchError {
  return new PatchError('Invalid', `strategic merge patch${path ? ` at ${path}` : ''}: ${message}`);
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

// ---------------------------------------------------------------- apply

/**
 * Applies a strategic merge patch to `original` using the kind's schema.
 * Neither input is modified. The patch must be a JSON object.
 */
export function applyStrategicMergePatch(
  original: JSONValue,
  patch: JSONValue,
  schema: Schema,
  defs: Definitions,
): JSONValue {
  if (!isObject(patch)) throw fail('', `the patch must be a JSON object, got ${kindOf(patch)}`);
  const base = isObject(original) ? deepClone(original) : {};
  const merged = new Merger(defs).mergeMap(base, patch, schema, '');
  return merged === DELETED ? {} : merged;
}

class Merger {
  constructor(private readonly defs: Definitions) {}

  /**
   * Merges `patch` into `original`, which this function owns and may modify
   * (callers pass clones); `patch` is only read.
   */
  mergeMap(original: JSONObject, patch: JSONObject, schema: Schema | undefined, path: string): Merged<JSONObject> {
    let rest = patch;
    if (hasOwn(patch, DIRECTIVE)) {
      const directive = patch[DIRECTIVE];
      rest = { ...patch };
      delete rest[DIRECTIVE];
      if (directive === 'delete') return DELETED;
      if (directive === 'replace') return this.mergeMap({}, rest, schema, path);
      if (directive !== 'merge') throw fail(path, `unknown $patch directive ${JSON.stringify(directive)}`);
    }
    const out = original;

    if (hasOwn(rest, RETAIN_KEYS)) this.applyRetainKeys(out, rest, path);

    const handled = new Set<string>();
    // `$setElementOrder` first: it merges its list together with the ordering
    for (const key of Object.keys(rest)) {
      if (!key.startsWith(SET_ELEMENT_ORDER)) continue;
      const field = key.slice(SET_ELEMENT_ORDER.length);
      this.applySetElementOrder(out, rest, field, rest[key]!, schema, join(path, field));
      handled.add(field);
    }
    // then deletions from primitive lists, then ordinary members
    for (const key of Object.keys(rest)) {
      if (!key.startsWith(DELETE_FROM_PRIMITIVE_LIST)) continue;
      const field = key.slice(DELETE_FROM_PRIMITIVE_LIST.length);
      const toDelete = rest[key]!;
      if (!Array.isArray(toDelete)) throw fail(join(path, key), `must be a list, got ${kindOf(toDelete)}`);
      const cur = out[field];
      if (!Array.isArray(cur)) continue; // nothing to delete from
      const drop = new Set(toDelete.map(canonicalKey));
      setProp(
        out,
        field,
        cur.filter((v) => !drop.has(canonicalKey(v))),
      );
    }
    for (const key of Object.keys(rest)) {
      if (key === RETAIN_KEYS || key.startsWith(SET_ELEMENT_ORDER) || key.startsWith(DELETE_FROM_PRIMITIVE_LIST)) continue;
      if (handled.has(key)) continue;
      const value = rest[key]!;
      if (value === null) {
        delete out[key];
        continue;
      }
      const merged = this.mergeValue(out[key], value, lookupField(schema, key, this.defs), join(path, key));
      if (merged === DELETED) delete out[key];
      else setProp(out, key, merged);
    }
    return out;
  }

  /** Merges one member value; `existing` is owned by the caller's clone. */
  private mergeValue(
    existing: JSONValue | undefined,
    patch: JSONValue,
    field: FieldSchema,
    path: string,
  ): Merged<JSONValue> {
    if (isObject(patch)) {
      // a `replace` strategy on a map field, or a type change, starts from nothing
      const base = isObject(existing) && !hasStrategy(field.meta, 'replace') ? existing : {};
      return this.mergeMap(base, patch, field.schema, path);
    }
    if (Array.isArray(patch)) {
      if (hasStrategy(field.meta, 'merge')) {
        return this.mergeList(Array.isArray(existing) ? existing : [], patch, field, path);
      }
      return deepClone(patch); // lists without a merge strategy are atomic
    }
    return patch;
  }

  /** `$retainKeys` (Kubernetes retainKeys strategy): members not listed are cleared from the original. */
  private applyRetainKeys(out: JSONObject, patch: JSONObject, path: string): void {
    const list = patch[RETAIN_KEYS];
    if (!Array.isArray(list) || !list.every((k) => typeof k === 'string')) {
      throw fail(join(path, RETAIN_KEYS), 'must be a list of strings');
    }
    const keep = new Set(list as string[]);
    for (const [k, v] of Object.entries(patch)) {
      if (v === null || k === RETAIN_KEYS || k === DIRECTIVE) continue;
      if (k.startsWith(SET_ELEMENT_ORDER) || k.startsWith(DELETE_FROM_PRIMITIVE_LIST)) continue;
      if (!keep.has(k)) throw fail(path, `field "${k}" is set by the patch but missing from $retainKeys`);
    }
    for (const k of Object.keys(out)) if (!keep.has(k)) delete out[k];
  }

  /** `$setElementOrder/<field>`: merge the field's list (if patched) and impose the given order. */
  private applySetElementOrder(
    out: JSONObject,
    patch: JSONObject,
    field: string,
    order: JSONValue,
    schema: Schema | undefined,
    path: string,
  ): void {
    if (!Array.isArray(order)) throw fail(path, `$setElementOrder must be a list, got ${kindOf(order)}`);
    const fs = lookupField(schema, field, this.defs);
    const mergeKey = fs.meta.mergeKey;
    const foundOriginal = hasOwn(out, field);
    const foundPatch = hasOwn(patch, field);
    const originalList = out[field];
    const patchList = patch[field];
    if (foundOriginal && !Array.isArray(originalList)) {
      throw fail(path, `$setElementOrder applies to a list, but the object has a ${kindOf(originalList)}`);
    }
    if (foundPatch && !Array.isArray(patchList)) {
      throw fail(path, `$setElementOrder applies to a list, but the patch has a ${kindOf(patchList)}`);
    }
    if (!foundOriginal && !foundPatch) return;
    const serverOrder = (originalList as JSONValue[] | undefined) ?? [];
    let merged: JSONValue[];
    if (foundPatch) {
      validateOrderList(patchList as JSONValue[], order, mergeKey, path);
      const r = this.mergeValue(originalList, patchList as JSONValue[], fs, path);
      merged = r as JSONValue[];
    } else {
      merged = serverOrder;
    }
    const keyOf = elementKey(mergeKey);
    setProp(out, field, normalizeOrder(merged, order, serverOrder, keyOf));
  }

  /** Merges a list with a `merge` strategy (by merge key, or as a set of primitives). */
  private mergeList(original: JSONValue[], patch: JSONValue[], field: FieldSchema, path: string): JSONValue[] {
    if (original.length === 0 && patch.length === 0) return [];
    const mergeKey = field.meta.mergeKey;
    const itemSchema = itemsOf(field.schema, this.defs);

    // the directive elements: `$patch: delete` (by merge key), `$patch: replace`, `$patch: merge`
    let server = original;
    const items: JSONValue[] = [];
    let replace = false;
    for (const e of patch) {
      if (!isObject(e) || !hasOwn(e, DIRECTIVE)) {
        items.push(e);
        continue;
      }
      const directive = e[DIRECTIVE];
      if (directive === 'replace') {
        replace = true;
      } else if (directive === 'delete') {
        if (!mergeKey) throw fail(path, '$patch: delete in a list needs a merge key');
        if (!hasOwn(e, mergeKey)) throw fail(path, `$patch: delete element lacks the merge key "${mergeKey}"`);
        const target = canonicalKey(e[mergeKey]);
        server = server.filter((o) => !(isObject(o) && canonicalKey(o[mergeKey]) === target));
      } else if (directive === 'merge') {
        // explicit default: an element carrying the merge key merges as usual
        if (mergeKey && hasOwn(e, mergeKey)) {
          const copy = { ...e };
          delete copy[DIRECTIVE];
          items.push(copy);
        }
      } else {
        throw fail(path, `unknown $patch directive ${JSON.stringify(directive)}`);
      }
    }

    let maps = false;
    let primitives = false;
    for (const e of [...server, ...items]) {
      if (Array.isArray(e)) throw fail(path, 'lists of lists cannot be merged');
      if (isObject(e)) maps = true;
      else primitives = true;
    }
    if (maps && primitives) throw fail(path, 'cannot merge a list mixing objects and primitive values');
    if (maps && !mergeKey) throw fail(path, 'cannot merge a list of objects without a merge key');

    if (replace) return items.map((e) => this.materialize(e, itemSchema, path));

    if (!maps) {
      // primitive list with merge strategy: set union (order: original first, new values appended)
      const seen = new Set<string>();
      const merged: JSONValue[] = [];
      for (const v of [...server, ...items]) {
        const k = canonicalKey(v);
        if (seen.has(k)) continue;
        seen.add(k);
        merged.push(deepClone(v));
      }
      return normalizeOrder(merged, patch, original, elementKey(undefined));
    }

    const key = mergeKey!;
    const out = [...server];
    for (const e of items) {
      const el = e as JSONObject;
      if (!hasOwn(el, key)) throw fail(path, `list element ${JSON.stringify(el)} lacks the merge key "${key}"`);
      const id = canonicalKey(el[key]);
      const at = out.findIndex((o) => isObject(o) && canonicalKey(o[key]) === id);
      const elPath = `${path}[${key}=${typeof el[key] === 'string' ? el[key] : JSON.stringify(el[key])}]`;
      if (at >= 0) {
        const m = this.mergeMap(out[at] as JSONObject, el, itemSchema, elPath);
        if (m === DELETED) out.splice(at, 1);
        else out[at] = m;
      } else {
        const m = this.mergeMap({}, el, itemSchema, elPath);
        if (m !== DELETED) out.push(m);
      }
    }
    return normalizeOrder(out, patch, original, elementKey(key));
  }

  /** A patch value taken as a new value: maps go through the merge so nulls and directives are resolved. */
  private materialize(v: JSONValue, schema: Schema | undefined, path: string): JSONValue {
    if (!isObject(v)) return deepClone(v);
    const m = this.mergeMap({}, v, schema, path);
    return m === DELETED ? {} : m;
  }
}

type KeyFn = (v: JSONValue) => string | undefined;

/** Identity of a list element for ordering: its merge-key value, or the value itself for primitives. */
function elementKey(mergeKey: string | undefined): KeyFn {
  if (!mergeKey) return (v) => canonicalKey(v);
  return (v) => (isObject(v) && hasOwn(v, mergeKey) ? canonicalKey(v[mergeKey]) : undefined);
}

/**
 * Orders a merged list the way Kubernetes does (normalizeElementOrder and
 * mergeSortedSlice): elements named by the patch (or `$setElementOrder`)
 * follow the patch's order, elements only the server has keep their relative
 * server order, and the two runs are interleaved so a server-only element goes
 * before a patch element only if both are on the server and it was before it
 * there. An element new to the server therefore goes before the server-only
 * elements that follow (`{"containers":[{"name":"new"}]}` makes `new` the first
 * container), as kube's apps e2e tests expect of a patched template.
 */
function normalizeOrder(merged: JSONValue[], patchOrder: JSONValue[], serverOrder: JSONValue[], keyOf: KeyFn): JSONValue[] {
  const patchIndex = indexBy(patchOrder, keyOf);
  const serverIndex = indexBy(serverOrder, keyOf);
  const fromPatch: JSONValue[] = [];
  const serverOnly: JSONValue[] = [];
  for (const v of merged) {
    const k = keyOf(v);
    if (k !== undefined && patchIndex.has(k)) fromPatch.push(v);
    else serverOnly.push(v);
  }
  const rank = (index: Map<string, number>) => (v: JSONValue) => {
    const k = keyOf(v);
    return k === undefined ? Number.MAX_SAFE_INTEGER : (index.get(k) ?? Number.MAX_SAFE_INTEGER);
  };
  const pr = rank(patchIndex);
  const sr = rank(serverIndex);
  fromPatch.sort((a, b) => pr(a) - pr(b));
  serverOnly.sort((a, b) => sr(a) - sr(b));

  const out: JSONValue[] = [];
  let i = 0;
  let j = 0;
  while (i < fromPatch.length && j < serverOnly.length) {
    const si = sr(serverOnly[j]!);
    const pi = sr(fromPatch[i]!);
    if (si !== Number.MAX_SAFE_INTEGER && pi !== Number.MAX_SAFE_INTEGER && si < pi) out.push(serverOnly[j++]!);
    else out.push(fromPatch[i++]!);
  }
  while (i < fromPatch.length) out.push(fromPatch[i++]!);
  while (j < serverOnly.length) out.push(serverOnly[j++]!);
  return out;
}

function indexBy(list: JSONValue[], keyOf: KeyFn): Map<string, number> {
  const m = new Map<string, number>();
  list.forEach((v, i) => {
    const k = keyOf(v);
    if (k !== undefined && !m.has(k)) m.set(k, i);
  });
  return m;
}

/** The patched elements must appear in `$setElementOrder` and in the same relative order. */
function validateOrderList(patchList: JSONValue[], order: JSONValue[], mergeKey: string | undefined, path: string): void {
  const keyOf = elementKey(mergeKey);
  const items = patchList.filter((e) => !(isObject(e) && hasOwn(e, DIRECTIVE)));
  if (items.length === 0 || order.length === 0) return;
  let p = 0;
  for (let o = 0; o < order.length && p < items.length; o++) {
    const a = keyOf(items[p]!);
    if (a !== undefined && a === keyOf(order[o]!)) p++;
  }
  if (p < items.length) {
    throw fail(path, `the patched list does not match the order given by $setElementOrder (${JSON.stringify(order)})`);
  }
}

// ---------------------------------------------------------------- create (two-way)

/**
 * The strategic merge patch that turns `original` into `modified` (Kubernetes
 * CreateTwoWayMergePatch): changed members, `null` for removed ones, merged
 * lists as element patches plus `$patch: delete` elements,
 * `$deleteFromPrimitiveList/` and `$setElementOrder/` directives, and
 * `$retainKeys` for fields with the retainKeys strategy.
 */
export function createStrategicMergePatch(
  original: JSONValue,
  modified: JSONValue,
  schema: Schema,
  defs: Definitions,
): JSONObject {
  if (!isObject(original) || !isObject(modified)) {
    throw fail('', 'a strategic merge patch can only be computed between two JSON objects');
  }
  return new Differ(defs).diffMaps(original, modified, resolveSchema(schema, defs), false, '');
}

class Differ {
  constructor(private readonly defs: Definitions) {}

  diffMaps(
    original: JSONObject,
    modified: JSONObject,
    schema: Schema | undefined,
    buildRetainKeys: boolean,
    path: string,
  ): JSONObject {
    const patch: JSONObject = {};
    const retain: string[] = [];
    for (const key of Object.keys(modified)) {
      const m = modified[key]!;
      if (buildRetainKeys && m !== null) retain.push(key);
      if (!hasOwn(original, key)) {
        setProp(patch, key, deepClone(m));
        continue;
      }
      const o = original[key]!;
      if (deepEqual(o, m)) continue;
      const field = lookupField(schema, key, this.defs);
      if (isObject(o) && isObject(m)) {
        if (hasStrategy(field.meta, 'replace')) {
          setProp(patch, key, deepClone(m));
        } else {
          const sub = this.diffMaps(o, m, field.schema, hasStrategy(field.meta, 'retainKeys'), join(path, key));
          if (Object.keys(sub).length > 0) setProp(patch, key, sub);
        }
      } else if (Array.isArray(o) && Array.isArray(m) && hasStrategy(field.meta, 'merge')) {
        this.diffLists(patch, key, o, m, field, join(path, key));
      } else {
        setProp(patch, key, deepClone(m));
      }
    }
    let removed = false;
    for (const key of Object.keys(original)) {
      if (!hasOwn(modified, key)) {
        setProp(patch, key, null);
        if (original[key] !== null) removed = true;
      }
    }
    if (retain.length > 0 && (Object.keys(patch).length > 0 || removed)) {
      patch[RETAIN_KEYS] = [...retain].sort();
    }
    return patch;
  }

  private diffLists(
    patch: JSONObject,
    key: string,
    original: JSONValue[],
    modified: JSONValue[],
    field: FieldSchema,
    path: string,
  ): void {
    let maps = false;
    for (const e of [...original, ...modified]) {
      if (Array.isArray(e)) throw fail(path, 'lists of lists cannot be merged');
      if (isObject(e)) maps = true;
    }
    if (!maps) {
      this.diffPrimitiveLists(patch, key, original, modified);
      return;
    }
    const mergeKey = field.meta.mergeKey;
    if (!mergeKey) throw fail(path, 'cannot diff a merged list of objects without a merge key');
    const itemSchema = itemsOf(field.schema, this.defs);
    const ids = (list: JSONValue[], which: string): string[] =>
      list.map((e) => {
        if (!isObject(e) || !hasOwn(e, mergeKey)) {
          throw fail(path, `${which} list element ${JSON.stringify(e)} lacks the merge key "${mergeKey}"`);
        }
        return canonicalKey(e[mergeKey]);
      });
    const originalIds = ids(original, 'original');
    const modifiedIds = ids(modified, 'modified');
    const byId = new Map<string, JSONObject>();
    original.forEach((e, i) => {
      if (!byId.has(originalIds[i]!)) byId.set(originalIds[i]!, e as JSONObject);
    });
    const retainKeys = hasStrategy(field.meta, 'retainKeys');

    const elements: JSONValue[] = [];
    modified.forEach((e, i) => {
      const m = e as JSONObject;
      const o = byId.get(modifiedIds[i]!);
      if (!o) {
        elements.push(deepClone(m));
        return;
      }
      const d = this.diffMaps(o, m, itemSchema, retainKeys, `${path}[${i}]`);
      if (Object.keys(d).length > 0) {
        setProp(d, mergeKey, deepClone(m[mergeKey]!));
        elements.push(d);
      }
    });
    const kept = new Set(modifiedIds);
    const deleted = new Set<string>();
    original.forEach((e, i) => {
      const id = originalIds[i]!;
      if (kept.has(id) || deleted.has(id)) return;
      deleted.add(id);
      elements.push({ [DIRECTIVE]: 'delete', [mergeKey]: deepClone((e as JSONObject)[mergeKey]!) });
    });
    const orderSame = originalIds.length === modifiedIds.length && originalIds.every((id, i) => id === modifiedIds[i]);
    if (elements.length > 0) setProp(patch, key, elements);
    if ((elements.length > 0 || !orderSame) && modified.length > 0) {
      patch[SET_ELEMENT_ORDER + key] = modified.map((e) => ({ [mergeKey]: deepClone((e as JSONObject)[mergeKey]!) }));
    }
  }

  private diffPrimitiveLists(patch: JSONObject, key: string, original: JSONValue[], modified: JSONValue[]): void {
    const inOriginal = new Set(original.map(canonicalKey));
    const inModified = new Set(modified.map(canonicalKey));
    const added: JSONValue[] = [];
    const addedIds = new Set<string>();
    for (const v of modified) {
      const id = canonicalKey(v);
      if (!inOriginal.has(id) && !addedIds.has(id)) {
        addedIds.add(id);
        added.push(deepClone(v));
      }
    }
    const deleted: JSONValue[] = [];
    const deletedIds = new Set<string>();
    for (const v of original) {
      const id = canonicalKey(v);
      if (!inModified.has(id) && !deletedIds.has(id)) {
        deletedIds.add(id);
        deleted.push(deepClone(v));
      }
    }
    if (added.length > 0) setProp(patch, key, added);
    if (deleted.length > 0) patch[DELETE_FROM_PRIMITIVE_LIST + key] = deleted;
    if (modified.length > 0 && (deleted.length > 0 || !deepEqual(original, modified))) {
      patch[SET_ELEMENT_ORDER + key] = deepClone(modified);
    }
  }
}
