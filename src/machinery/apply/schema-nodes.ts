// Objects seen through their schema (spec 000 §4.9): how a value is treated
// at a schema node (scalar, atomic, granular struct or map, set or map list)
// and how a list item is named in a path.
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
import type { JSONValue } from '../../core/object.js';
import { type PathElement, indexPE, keyPE, valuePE } from './path-element.js';
import { isObject } from './json-values.js';

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

export function isDeclared(node: { fields: Record<string, Schema> }, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(node.fields, key);
}

/** The path element naming one list item (spec 000 §4.9: map lists by keys, sets by value). */
export function itemPE(node: Extract<Node, { t: 'list' }>, item: JSONValue, index: number, defs: Definitions | undefined): PathElement | undefined {
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
