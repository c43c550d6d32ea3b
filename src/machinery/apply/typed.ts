// Objects seen through their schema (spec 000 §4.9): which fields an object
// sets, how two objects differ, how an applied configuration merges into the
// live object and how items are removed. Everything here is a pure function
// over plain JSON; inputs are never mutated.
//
// Merge markers, read the way Kubernetes' structured-merge-diff reads them:
//   x-orch-list-type atomic | set | map (+ x-orch-list-map-keys)
//   without a list type, x-orch-patch-strategy "merge" is a map list keyed by
//     x-orch-patch-merge-key (a set when the items are scalars and no key is given)
//   other lists are atomic
//   x-orch-map-type atomic | granular (objects default to granular)
// Unstructured parts (no schema, x-orch-preserve-unknown-fields, or keys the
// schema does not declare) are "deduced": every key is a separately owned
// field and every list is atomic.

import type { Definitions, Schema } from '../schema/types.js';
import type { JSONObject, JSONValue } from '../../core/object.js';
import {
  FieldSet,
  PathCursor,
  fieldPE,
  indexPE,
  keyPE,
  pathToString,
  serializePathElement,
  valuePE,
  type Path,
  type PathElement,
} from './fieldpath.js';

export interface TypeContext {
  /** schema of the whole object; undefined = unstructured */
  schema?: Schema;
  defs?: Definitions;
}

type ListRelation = 'atomic' | 'set' | 'map';

export type Node =
  | { t: 'scalar' }
  | { t: 'atomic' }
  /** granular map or struct: declared fields plus an element schema for other keys (undefined = deduced) */
  | { t: 'struct'; fields: Record<string, Schema>; elem: Schema | undefined }
  | { t: 'list'; relation: 'set' | 'map'; keys: string[]; elem: Schema | undefined };

export class ApplyShapeError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = 'ApplyShapeError';
  }
}

// ---------------------------------------------------------------------------
// Schema resolution.

/** Follows `$ref`s (`#/definitions/X`, `#/components/schemas/X` or a bare name). Unknown refs → undefined. */
export function resolveSchema(s: Schema | undefined, defs: Definitions | undefined): Schema | undefined {
  let cur = s;
  for (let depth = 0; cur && cur.$ref !== undefined && depth < 64; depth++) {
    const ref = cur.$ref;
    const name = ref.includes('/') ? ref.slice(ref.lastIndexOf('/') + 1) : ref;
    const target = defs?.[name] ?? defs?.[ref];
    if (!target) return undefined;
    // sibling keywords next to $ref (e.g. description) do not change the shape
    cur = target;
  }
  return cur;
}

/**
 * Built-in metadata schema, used when a kind's schema does not describe
 * `metadata` itself, so managedFields look the way they do in Kubernetes
 * (labels/annotations granular maps, finalizers a set, ownerReferences keyed by uid).
 */
export const OBJECT_META_SCHEMA: Schema = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    generateName: { type: 'string' },
    namespace: { type: 'string' },
    selfLink: { type: 'string' },
    uid: { type: 'string' },
    resourceVersion: { type: 'string' },
    generation: { type: 'integer' },
    creationTimestamp: { type: 'string' },
    deletionTimestamp: { type: 'string' },
    deletionGracePeriodSeconds: { type: 'integer' },
    labels: { type: 'object', additionalProperties: { type: 'string' } },
    annotations: { type: 'object', additionalProperties: { type: 'string' } },
    ownerReferences: {
      type: 'array',
      'x-orch-list-type': 'map',
      'x-orch-list-map-keys': ['uid'],
      items: {
        type: 'object',
        properties: {
          apiVersion: { type: 'string' },
          kind: { type: 'string' },
          name: { type: 'string' },
          uid: { type: 'string' },
          controller: { type: 'boolean' },
          blockOwnerDeletion: { type: 'boolean' },
        },
      },
    },
    finalizers: { type: 'array', 'x-orch-list-type': 'set', items: { type: 'string' } },
    managedFields: { type: 'array', 'x-orch-list-type': 'atomic', items: { type: 'object' } },
  },
};

/** The root schema with a usable `metadata` (ours when the kind's does not declare its fields). */
export function rootSchema(ctx: TypeContext): Schema {
  const root = resolveSchema(ctx.schema, ctx.defs);
  const meta = resolveSchema(root?.properties?.metadata, ctx.defs);
  if (meta && meta.properties && Object.keys(meta.properties).length > 0) return root!;
  const base: Schema = root ?? { type: 'object', 'x-orch-preserve-unknown-fields': true };
  return { ...base, properties: { ...(base.properties ?? {}), metadata: OBJECT_META_SCHEMA } };
}

export const isObject = (v: JSONValue | undefined): v is JSONObject =>
  v !== null && v !== undefined && typeof v === 'object' && !Array.isArray(v);

function isScalarSchema(s: Schema | undefined): boolean {
  return !!s && s.type !== undefined && s.type !== 'object' && s.type !== 'array';
}

function listRelation(s: Schema, defs: Definitions | undefined): { relation: ListRelation; keys: string[] } {
  const lt = s['x-orch-list-type'];
  const mergeKey = s['x-orch-patch-merge-key'];
  if (lt === 'atomic') return { relation: 'atomic', keys: [] };
  if (lt === 'set') return { relation: 'set', keys: [] };
  if (lt === 'map') {
    const keys = s['x-orch-list-map-keys'] ?? (mergeKey ? [mergeKey] : []);
    return keys.length > 0 ? { relation: 'map', keys: [...keys] } : { relation: 'atomic', keys: [] };
  }
  // spec 000 §4.9: without a list type, patch strategy merge reads as a map keyed by the merge key
  const strategy = s['x-orch-patch-strategy'];
  if (strategy && strategy.split(',').includes('merge')) {
    if (mergeKey) return { relation: 'map', keys: [mergeKey] };
    if (isScalarSchema(resolveSchema(s.items, defs))) return { relation: 'set', keys: [] };
  }
  return { relation: 'atomic', keys: [] };
}

function isListSchema(s: Schema): boolean {
  return s.type === 'array' || (s.type === undefined && s.items !== undefined);
}

function isObjectSchema(s: Schema): boolean {
  return (
    s.type === 'object' ||
    (s.type === undefined &&
      (s.properties !== undefined || s.additionalProperties !== undefined || s['x-orch-preserve-unknown-fields'] === true))
  );
}

/** How a value is treated at a schema node. `value` decides the shape where the schema does not. */
export function classify(schemaIn: Schema | undefined, value: JSONValue | undefined, defs: Definitions | undefined): Node {
  const s = resolveSchema(schemaIn, defs);
  if (Array.isArray(value)) {
    if (!s || !isListSchema(s)) return { t: 'atomic' };
    const { relation, keys } = listRelation(s, defs);
    if (relation === 'atomic') return { t: 'atomic' };
    return { t: 'list', relation, keys, elem: s.items };
  }
  if (isObject(value)) {
    if (!s) return { t: 'struct', fields: {}, elem: undefined };
    if (s['x-orch-map-type'] === 'atomic') return { t: 'atomic' };
    if (!isObjectSchema(s) && s.type !== undefined) return { t: 'atomic' };
    const elem =
      s.additionalProperties !== undefined && typeof s.additionalProperties === 'object'
        ? s.additionalProperties
        : undefined;
    return { t: 'struct', fields: s.properties ?? {}, elem };
  }
  if (value === undefined && s) {
    if (isListSchema(s)) {
      const { relation, keys } = listRelation(s, defs);
      return relation === 'atomic' ? { t: 'atomic' } : { t: 'list', relation, keys, elem: s.items };
    }
    if (isObjectSchema(s)) {
      if (s['x-orch-map-type'] === 'atomic') return { t: 'atomic' };
      const elem = typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined;
      return { t: 'struct', fields: s.properties ?? {}, elem };
    }
  }
  return { t: 'scalar' };
}

export function fieldSchema(node: { fields: Record<string, Schema>; elem: Schema | undefined }, key: string): Schema | undefined {
  return Object.prototype.hasOwnProperty.call(node.fields, key) ? node.fields[key] : node.elem;
}

function isDeclared(node: { fields: Record<string, Schema> }, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(node.fields, key);
}

/** The path element naming one list item (spec 000 §4.9: map lists by keys, sets by value). */
function itemPE(node: Extract<Node, { t: 'list' }>, item: JSONValue, index: number, defs: Definitions | undefined): PathElement | undefined {
  if (node.relation === 'set') return valuePE(item);
  if (!isObject(item)) return undefined;
  const elem = resolveSchema(node.elem, defs);
  const fields: Array<[string, JSONValue]> = [];
  for (const k of node.keys) {
    if (item[k] !== undefined) fields.push([k, item[k]!]);
    else {
      // a key field may be omitted when its schema has a default (e.g. protocol TCP)
      const def = resolveSchema(elem?.properties?.[k], defs)?.default;
      if (def === undefined) return undefined;
      fields.push([k, def as JSONValue]);
    }
  }
  void index;
  return keyPE(fields);
}

export function itemPEOrIndex(node: Extract<Node, { t: 'list' }>, item: JSONValue, index: number, defs: Definitions | undefined): PathElement {
  return itemPE(node, item, index, defs) ?? indexPE(index);
}

// ---------------------------------------------------------------------------
// Field sets of objects.

/** The set of fields an object sets (leaves, list items, atomic values). `metadata.managedFields` is ignored. */
export function toFieldSet(obj: JSONValue | undefined, ctx: TypeContext): FieldSet {
  const out = new FieldSet();
  if (obj === undefined) return out;
  walkSet(withoutManagedFields(obj), rootSchema(ctx), PathCursor.at(out), ctx.defs);
  return out;
}

/**
 * Collects the field set of `v` at `path`. With `everyNode`, maps and lists
 * are inserted themselves too (what Kubernetes' comparison does for a
 * subtree present on one side only).
 */
function walkSet(
  v: JSONValue,
  schema: Schema | undefined,
  at: PathCursor,
  defs: Definitions | undefined,
  everyNode = false,
): void {
  const node = classify(schema, v, defs);
  if (everyNode) at.insert();
  switch (node.t) {
    case 'scalar':
    case 'atomic':
      at.insert();
      return;
    case 'struct': {
      const o = v as JSONObject;
      for (const k in o) {
        const cv = o[k]!;
        const child = at.child(fieldPE(k));
        walkSet(cv, fieldSchema(node, k), child, defs, everyNode);
        // undeclared keys, nulls and empty objects are owned themselves
        if (!isDeclared(node, k) || cv === null || (isObject(cv) && isEmptyObject(cv))) child.insert();
      }
      return;
    }
    case 'list': {
      const list = v as JSONValue[];
      for (let i = 0; i < list.length; i++) {
        const item = list[i]!;
        const child = at.child(itemPEOrIndex(node, item, i, defs));
        walkSet(item, node.elem, child, defs, everyNode);
        child.insert();
      }
      return;
    }
  }
}

function isEmptyObject(o: object): boolean {
  for (const _ in o) return false;
  return true;
}

/** A cursor at `path` in `set` (walkSet's starting point below the root). */
function cursorAt(set: FieldSet, path: readonly PathElement[]): PathCursor {
  let c = PathCursor.at(set);
  for (const pe of path) c = c.child(pe);
  return c;
}

/**
 * Every node of an object as a path — fields, maps, lists and items,
 * containers included. An applied configuration keeps all of these in place
 * when pruning, so applying it a second time changes nothing.
 */
export function toNodeSet(obj: JSONValue | undefined, ctx: TypeContext): FieldSet {
  const out = new FieldSet();
  if (obj === undefined) return out;
  walkSet(withoutManagedFields(obj), rootSchema(ctx), PathCursor.at(out), ctx.defs, true);
  return out;
}

export interface Comparison {
  /** paths set in `b` but not in `a` */
  added: FieldSet;
  /** paths set in `a` but not in `b` */
  removed: FieldSet;
  /** leaves (scalars, atomic values) set in both with different values */
  modified: FieldSet;
}

/**
 * How `b` differs from `a`, in paths (spec 000 §4.9: an Update owns what it
 * changed). As in Kubernetes, a map or list that appears or disappears is
 * itself added or removed, besides everything in it — which is why an Update
 * entry shows `"f:labels":{".":{},...}` when it created the labels.
 */
export function compareObjects(a: JSONValue | undefined, b: JSONValue | undefined, ctx: TypeContext): Comparison {
  const out: Comparison = { added: new FieldSet(), removed: new FieldSet(), modified: new FieldSet() };
  walkCompare(
    a === undefined ? undefined : withoutManagedFields(a),
    b === undefined ? undefined : withoutManagedFields(b),
    rootSchema(ctx),
    [],
    out,
    ctx.defs,
  );
  return out;
}

/** Changed-field set of an Update: added ∪ modified. */
export function changedFields(a: JSONValue | undefined, b: JSONValue | undefined, ctx: TypeContext): FieldSet {
  const c = compareObjects(a, b, ctx);
  return c.added.union(c.modified);
}

function walkCompare(
  a: JSONValue | undefined,
  b: JSONValue | undefined,
  schema: Schema | undefined,
  path: PathElement[],
  out: Comparison,
  defs: Definitions | undefined,
): void {
  if (a === undefined && b === undefined) return;
  if (a === undefined || b === undefined) {
    walkSet((a ?? b)!, schema, cursorAt(a === undefined ? out.added : out.removed, path), defs, true);
    return;
  }
  const na = classify(schema, a, defs);
  const nb = classify(schema, b, defs);
  if (na.t !== nb.t || na.t === 'scalar' || na.t === 'atomic' || (na.t === 'list' && nb.t === 'list' && na.relation !== nb.relation)) {
    if (!deepEqual(a, b)) {
      if (na.t === nb.t) out.modified.insert(path);
      else {
        // the value changed shape (e.g. a scalar became a map): old content removed, new content added
        const sa = new FieldSet();
        const sb = new FieldSet();
        walkSet(a, schema, cursorAt(sa, path), defs);
        walkSet(b, schema, cursorAt(sb, path), defs);
        out.modified.insert(path);
        for (const p of sa.difference(sb).paths()) out.removed.insert(p);
        for (const p of sb.difference(sa).paths()) out.added.insert(p);
      }
    }
    return;
  }
  if (na.t === 'struct') {
    const oa = a as JSONObject;
    const ob = b as JSONObject;
    for (const k of new Set([...Object.keys(oa), ...Object.keys(ob)])) {
      walkCompare(oa[k], ob[k], fieldSchema(na, k), [...path, fieldPE(k)], out, defs);
    }
    return;
  }
  if (na.t === 'list') {
    const ia = indexItems(na, a as JSONValue[], defs);
    const ib = indexItems(na, b as JSONValue[], defs);
    for (const k of new Set([...ia.keys(), ...ib.keys()])) {
      const x = ia.get(k);
      const y = ib.get(k);
      walkCompare(x?.item, y?.item, na.elem, [...path, (x ?? y)!.pe], out, defs);
    }
  }
}

function indexItems(node: Extract<Node, { t: 'list' }>, list: JSONValue[], defs: Definitions | undefined): Map<string, { pe: PathElement; item: JSONValue }> {
  const m = new Map<string, { pe: PathElement; item: JSONValue }>();
  list.forEach((item, i) => {
    const pe = itemPEOrIndex(node, item, i, defs);
    const k = serializePathElement(pe);
    if (!m.has(k)) m.set(k, { pe, item });
  });
  return m;
}

// ---------------------------------------------------------------------------
// Applied configurations.

/**
 * Rejects configurations whose merge would be ambiguous: list-map items
 * without their keys, duplicate keys or values in map and set lists
 * (Kubernetes fails these applies too).
 */
export function validateConfig(config: JSONValue, ctx: TypeContext): void {
  walkValidate(withoutManagedFields(config), rootSchema(ctx), [], ctx.defs);
}

function walkValidate(v: JSONValue, schema: Schema | undefined, path: PathElement[], defs: Definitions | undefined): void {
  const node = classify(schema, v, defs);
  if (node.t === 'struct') {
    for (const [k, cv] of Object.entries(v as JSONObject)) walkValidate(cv, fieldSchema(node, k), [...path, fieldPE(k)], defs);
  } else if (node.t === 'list') {
    const seen = new Set<string>();
    (v as JSONValue[]).forEach((item, i) => {
      const pe = itemPE(node, item, i, defs);
      const at = pathText([...path, indexPE(i)]);
      if (!pe) {
        throw new ApplyShapeError(
          at,
          `${at}: associative list with keys has an element that omits key field(s) ${node.keys.map((k) => JSON.stringify(k)).join(', ')}`,
        );
      }
      const k = serializePathElement(pe);
      if (seen.has(k)) {
        throw new ApplyShapeError(pathText(path), `${pathText(path)}: duplicate entries for ${pathText([pe])}`);
      }
      seen.add(k);
      walkValidate(item, node.elem, [...path, pe], defs);
    });
  }
}

const pathText = (p: Path): string => pathToString(p);

/**
 * Merges an applied configuration into the live object (spec 000 §4.9):
 * granular maps key by key, map lists item by item (matched by keys), sets as
 * a union, atomic values and scalars replaced by the configuration. A `null`
 * in the configuration removes the field from the result.
 */
export function mergeObjects(live: JSONValue | undefined, config: JSONValue, ctx: TypeContext): JSONValue {
  return merge(live === undefined ? undefined : withoutManagedFields(live), withoutManagedFields(config), rootSchema(ctx), ctx.defs)!;
}

function merge(l: JSONValue | undefined, c: JSONValue | undefined, schema: Schema | undefined, defs: Definitions | undefined): JSONValue | undefined {
  if (c === undefined) return l === undefined ? undefined : clone(l);
  if (l === undefined) return stripNulls(c);
  const node = classify(schema, c, defs);
  switch (node.t) {
    case 'scalar':
    case 'atomic':
      return clone(c);
    case 'struct': {
      if (!isObject(l)) return stripNulls(c);
      const oc = c as JSONObject;
      const out: JSONObject = {};
      for (const [k, lv] of Object.entries(l)) {
        if (oc[k] === undefined) out[k] = clone(lv);
        else if (oc[k] === null) continue;
        else out[k] = merge(lv, oc[k], fieldSchema(node, k), defs)!;
      }
      for (const [k, cv] of Object.entries(oc)) {
        if (l[k] !== undefined || cv === null) continue;
        out[k] = stripNulls(cv);
      }
      return out;
    }
    case 'list': {
      if (!Array.isArray(l)) return stripNulls(c);
      return mergeList(node, l, c as JSONValue[], defs);
    }
  }
}

/**
 * Ordered merge of associative lists: items only in the live list keep their
 * places, items named by the configuration appear in the configuration's
 * order, new items are inserted before the next item they precede in the
 * configuration. Merging the result with the same configuration again gives
 * the same list.
 */
function mergeList(node: Extract<Node, { t: 'list' }>, l: JSONValue[], c: JSONValue[], defs: Definitions | undefined): JSONValue[] {
  const lk = l.map((item, i) => serializePathElement(itemPEOrIndex(node, item, i, defs)));
  const ck = c.map((item, i) => serializePathElement(itemPEOrIndex(node, item, i, defs)));
  const liveByKey = new Map<string, JSONValue>();
  lk.forEach((k, i) => {
    if (!liveByKey.has(k)) liveByKey.set(k, l[i]!);
  });
  const cfgIndex = new Map<string, number>();
  ck.forEach((k, i) => {
    if (!cfgIndex.has(k)) cfgIndex.set(k, i);
  });
  const out: JSONValue[] = [];
  const emitted = new Set<string>();
  let ci = 0;
  const emitConfigUpTo = (end: number): void => {
    for (; ci <= end && ci < c.length; ci++) {
      const k = ck[ci]!;
      if (emitted.has(k)) continue;
      emitted.add(k);
      const merged = merge(liveByKey.get(k), c[ci]!, node.elem, defs);
      if (merged !== undefined && merged !== null) out.push(merged);
    }
  };
  lk.forEach((k, i) => {
    const at = cfgIndex.get(k);
    if (at === undefined) {
      out.push(clone(l[i]!));
      return;
    }
    if (emitted.has(k)) return;
    emitConfigUpTo(at);
  });
  emitConfigUpTo(c.length - 1);
  return out;
}

/** Removes every item (field, list item) named as a member of `set`, with everything below it. */
export function removeItems(obj: JSONValue, set: FieldSet, ctx: TypeContext): JSONValue {
  return removeWalk(obj, set, rootSchema(ctx), ctx.defs);
}

function removeWalk(v: JSONValue, set: FieldSet, schema: Schema | undefined, defs: Definitions | undefined): JSONValue {
  if (set.isEmpty()) return v;
  const node = classify(schema, v, defs);
  if (node.t === 'struct') {
    const out: JSONObject = {};
    for (const [k, cv] of Object.entries(v as JSONObject)) {
      const pe = fieldPE(k);
      if (set.hasMember(pe)) continue;
      out[k] = removeWalk(cv, set.child(pe), fieldSchema(node, k), defs);
    }
    return out;
  }
  if (node.t === 'list') {
    const out: JSONValue[] = [];
    (v as JSONValue[]).forEach((item, i) => {
      const pe = itemPEOrIndex(node, item, i, defs);
      if (set.hasMember(pe)) return;
      out.push(removeWalk(item, set.child(pe), node.elem, defs));
    });
    return out;
  }
  return v;
}

/**
 * Adapts a stored field set to the current schema (spec 000 §4.9 topology
 * changes): ownership of anything inside a value that is now atomic becomes
 * ownership of the whole value, so the previous owners co-own it.
 */
export function reconcileWithSchema(set: FieldSet, ctx: TypeContext): FieldSet {
  return reconcileWalk(set, rootSchema(ctx), ctx.defs);
}

function reconcileWalk(set: FieldSet, schema: Schema | undefined, defs: Definitions | undefined): FieldSet {
  const node = classify(schema, undefined, defs);
  if (node.t !== 'struct' && node.t !== 'list') return set;
  let changed = false;
  const entries: Array<[PathElement, boolean, FieldSet]> = [];
  for (const [pe, member, child] of set.entries()) {
    const childSchema = node.t === 'struct' ? (pe.kind === 'field' ? fieldSchema(node, pe.name) : undefined) : node.elem;
    if (child.isEmpty()) {
      entries.push([pe, member, child]);
      continue;
    }
    const s = resolveSchema(childSchema, defs);
    if (s && classify(s, undefined, defs).t === 'atomic') {
      entries.push([pe, true, new FieldSet()]);
      changed = true;
      continue;
    }
    const sub = reconcileWalk(child, childSchema, defs);
    if (sub !== child) changed = true;
    entries.push([pe, member, sub]);
  }
  return changed ? FieldSet.fromEntries(entries) : set;
}

// ---------------------------------------------------------------------------
// JSON helpers.

export function clone<T extends JSONValue>(v: T): T {
  return structuredClone(v);
}

function stripNulls(v: JSONValue): JSONValue {
  if (Array.isArray(v)) return v.map(stripNulls);
  if (isObject(v)) {
    const out: JSONObject = {};
    for (const [k, x] of Object.entries(v)) if (x !== null) out[k] = stripNulls(x);
    return out;
  }
  return v;
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
