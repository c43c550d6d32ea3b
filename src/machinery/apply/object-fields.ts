// Field sets of objects (spec 000 §4.9): which fields an object sets, how two
// objects differ in paths, removing the items a set names from an object, and
// adapting a stored set to the current schema. Pure functions over plain
// JSON; inputs are never mutated.

import type { Definitions, Schema } from '../schema/types.js';
import type { JSONObject, JSONValue } from '../../core/object.js';
import { FieldSet, PathCursor } from './field-set.js';
import { type PathElement, fieldPE } from './path-element.js';
import { serializePathElement } from './path-encoding.js';
import { deepEqual, isObject, withoutManagedFields } from './json-values.js';
import { type Node, type TypeContext, classify, fieldSchema, isDeclared, itemPEOrIndex, resolveSchema, rootSchema } from './schema-nodes.js';

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
