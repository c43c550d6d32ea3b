// Applied configurations (spec 000 §4.9): the checks that keep a merge
// unambiguous, and how a configuration merges into the live object. Pure
// functions over plain JSON; inputs are never mutated.

import type { Definitions, Schema } from '../schema/types.js';
import type { JSONObject, JSONValue } from '../../core/object.js';
import { type Path, type PathElement, fieldPE, indexPE } from './path-element.js';
import { pathToString, serializePathElement } from './path-encoding.js';
import { clone, isObject, withoutManagedFields } from './json-values.js';
import { type Node, type TypeContext, classify, fieldSchema, itemPE, itemPEOrIndex, rootSchema } from './schema-nodes.js';

export class ApplyShapeError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = 'ApplyShapeError';
  }
}

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

function stripNulls(v: JSONValue): JSONValue {
  if (Array.isArray(v)) return v.map(stripNulls);
  if (isObject(v)) {
    const out: JSONObject = {};
    for (const [k, x] of Object.entries(v)) if (x !== null) out[k] = stripNulls(x);
    return out;
  }
  return v;
}
