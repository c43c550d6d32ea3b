// Schema lookup for strategic merge patch (spec 000 §4.9 markers): which
// strategy a field uses and, for merged lists, by which key elements are
// matched. Follows `$ref`, `properties`, `additionalProperties` and `items`.
// Anything the schema does not describe gets no metadata, which means
// merge-patch semantics for maps and replacement for lists.

import type { Definitions, Schema } from '../schema/types.js';

export interface PatchMeta {
  /** the strategies of `x-orch-patch-strategy`, e.g. ['merge', 'retainKeys'] */
  strategies: string[];
  mergeKey?: string;
}

export interface FieldSchema {
  /** schema of the field's value (resolved), or undefined when not described */
  schema: Schema | undefined;
  meta: PatchMeta;
}

const NO_META: PatchMeta = { strategies: [] };

/** Resolves `$ref` chains; the referring node's own keywords win over the target's. */
export function resolveSchema(schema: Schema | undefined, defs: Definitions): Schema | undefined {
  let cur = schema;
  const seen = new Set<string>();
  while (cur?.$ref !== undefined) {
    const name = refName(cur.$ref);
    if (seen.has(name)) break;
    seen.add(name);
    const target = defs[name];
    if (!target) return { ...cur, $ref: undefined };
    const { $ref: _ignored, ...own } = cur;
    cur = { ...target, ...own };
  }
  return cur;
}

function refName(ref: string): string {
  for (const prefix of ['#/definitions/', '#/components/schemas/']) {
    if (ref.startsWith(prefix)) return ref.slice(prefix.length);
  }
  return ref;
}

function metaOf(schema: Schema | undefined): PatchMeta {
  if (!schema) return NO_META;
  const raw = schema['x-orch-patch-strategy'];
  const strategies = raw
    ? raw
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s.length > 0)
    : [];
  const mergeKey = schema['x-orch-patch-merge-key'];
  return mergeKey ? { strategies, mergeKey } : { strategies };
}

/** The schema and patch metadata of member `key` of an object described by `parent`. */
export function lookupField(parent: Schema | undefined, key: string, defs: Definitions): FieldSchema {
  const p = resolveSchema(parent, defs);
  if (!p) return { schema: undefined, meta: NO_META };
  let field: Schema | undefined = p.properties?.[key];
  if (!field && typeof p.additionalProperties === 'object') field = p.additionalProperties;
  if (!field) return { schema: undefined, meta: NO_META };
  // markers may sit on the property itself or on the definition it refers to
  const resolved = resolveSchema(field, defs);
  return { schema: resolved, meta: metaOf(resolved) };
}

/** The (resolved) schema of the elements of a list described by `list`. */
export function itemsOf(list: Schema | undefined, defs: Definitions): Schema | undefined {
  const l = resolveSchema(list, defs);
  return l?.items ? resolveSchema(l.items, defs) : undefined;
}

export function hasStrategy(meta: PatchMeta, strategy: string): boolean {
  return meta.strategies.includes(strategy);
}
