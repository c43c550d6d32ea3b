// The FieldsV1 of a create's Update entry built straight from the object
// (spec 000 §4.9, §2.4). A create compares `{}` with the object, so the
// writer owns every node of it — fields, maps, lists and items, containers
// included — less the system fields. `updateManagedFields` used to get there
// through the typed comparison: a walk building a field set, the set
// difference with SYSTEM_FIELDS, then the set sorted and emitted. This walk
// emits the same tree in one pass, in Kubernetes order, with the same
// classification (typed.ts), and hands back `null` for the shapes the field
// set would merge or treat oddly (duplicate list items, `undefined` values,
// top-level keys that `{}` inherits), where the caller takes the old path.
// Equality with that path: test/property/created-fields.property.test.ts.

import type { JSONObject, JSONValue } from '../../core/object.js';
import type { Definitions, Schema } from '../schema/types.js';
import { comparePathElements, serializePathElement, sortStrings, type PathElement } from './fieldpath.js';
import { classify, fieldSchema, itemPEOrIndex, rootSchema, withoutManagedFields, type TypeContext } from './typed.js';

/** metadata fields no manager owns (the `metadata` part of SYSTEM_FIELDS in managed.ts) */
const META_SYSTEM = new Set(['f:name', 'f:namespace', 'f:creationTimestamp', 'f:selfLink', 'f:uid', 'f:clusterName', 'f:generation', 'f:managedFields', 'f:resourceVersion']);
const INHERITED: Record<string, unknown> = {};
/** rootSchema per kind schema (it copies the properties when the kind's metadata declares none); defs are the server's one set */
const roots = new WeakMap<Schema, { defs: Definitions | undefined; root: Schema }>();

function rootOf(ctx: TypeContext): Schema {
  if (!ctx.schema) return rootSchema(ctx);
  const hit = roots.get(ctx.schema);
  if (hit && hit.defs === ctx.defs) return hit.root;
  const root = rootSchema(ctx);
  roots.set(ctx.schema, { defs: ctx.defs, root });
  return root;
}

/**
 * FieldsV1 of everything `obj` sets, as a create's Update entry holds it;
 * `undefined` when nothing is left after the system fields (no entry);
 * `null` when this walk does not decide (the caller uses the field sets).
 */
export function createdFieldsV1(obj: JSONObject, ctx: TypeContext): JSONObject | undefined | null {
  const clean = withoutManagedFields(obj) as JSONObject;
  const root = classify(rootOf(ctx), clean, ctx.defs);
  if (root.t !== 'struct') return null;
  const keys = Object.keys(clean);
  sortStrings(keys);
  const out: JSONObject = {};
  let empty = true;
  for (const k of keys) {
    // the comparison reads `{}[k]`: an inherited name is not "absent" there
    if (INHERITED[k] !== undefined) return null;
    const sub = emitNode(clean[k], fieldSchema(root, k), ctx.defs);
    if (sub === null) return null;
    const key = `f:${k}`;
    let kept: JSONObject | undefined = sub;
    if (k === 'apiVersion' || k === 'kind') kept = withoutSelf(sub);
    else if (k === 'metadata') kept = metadataPart(sub);
    if (kept === undefined) continue;
    out[key] = kept;
    empty = false;
  }
  return empty ? undefined : out;
}

/**
 * The emitted subtree of a node the writer owns itself (FieldSet.emitV1 with
 * the node as a member): `{}` for a leaf or an empty container, else `"."`
 * and the children in Kubernetes order.
 */
function emitNode(v: JSONValue | undefined, schema: Schema | undefined, defs: Definitions | undefined): JSONObject | null {
  if (v === undefined) return null;
  const node = classify(schema, v, defs);
  if (node.t === 'scalar' || node.t === 'atomic') return {};
  if (node.t === 'struct') {
    const o = v as JSONObject;
    const keys = Object.keys(o);
    if (keys.length === 0) return {};
    sortStrings(keys);
    const out: JSONObject = { '.': {} };
    for (const k of keys) {
      const sub = emitNode(o[k], fieldSchema(node, k), defs);
      if (sub === null) return null;
      out[`f:${k}`] = sub;
    }
    return out;
  }
  const list = v as JSONValue[];
  if (list.length === 0) return {};
  const items: Array<{ pe: PathElement; key: string; item: JSONValue }> = [];
  const seen = new Set<string>();
  for (let i = 0; i < list.length; i++) {
    const pe = itemPEOrIndex(node, list[i]!, i, defs);
    const key = serializePathElement(pe);
    // two items with one path merge in a field set: left to it
    if (seen.has(key)) return null;
    seen.add(key);
    items.push({ pe, key, item: list[i]! });
  }
  if (items.length > 1) items.sort((a, b) => comparePathElements(a.pe, b.pe));
  const out: JSONObject = { '.': {} };
  for (const it of items) {
    const sub = emitNode(it.item, node.elem, defs);
    if (sub === null) return null;
    out[it.key] = sub;
  }
  return out;
}

/** the node no longer owned itself: its children only, or nothing */
function withoutSelf(sub: JSONObject): JSONObject | undefined {
  let out: JSONObject | undefined;
  for (const k in sub) {
    if (k === '.') continue;
    out ??= {};
    out[k] = sub[k]!;
  }
  return out;
}

/** `metadata` less itself and its system fields (their children, if any, stay: a set difference removes members only) */
function metadataPart(sub: JSONObject): JSONObject | undefined {
  let out: JSONObject | undefined;
  for (const k in sub) {
    if (k === '.') continue;
    const x = META_SYSTEM.has(k) ? withoutSelf(sub[k] as JSONObject) : (sub[k] as JSONObject);
    if (x === undefined) continue;
    out ??= {};
    out[k] = x;
  }
  return out;
}
