// Small constructors that keep the kind files data-like: a kind is a schema
// written with these plus a strategy. Every helper returns a plain Schema.

import type { Schema } from './types.js';

type Extra = Partial<Schema>;

export const str = (description: string, extra: Extra = {}): Schema => ({ type: 'string', description, ...extra });
export const int32 = (description: string, extra: Extra = {}): Schema => ({ type: 'integer', format: 'int32', description, ...extra });
export const int64 = (description: string, extra: Extra = {}): Schema => ({ type: 'integer', format: 'int64', description, ...extra });
export const bool = (description: string, extra: Extra = {}): Schema => ({ type: 'boolean', description, ...extra });
export const num = (description: string, extra: Extra = {}): Schema => ({ type: 'number', format: 'double', description, ...extra });
export const time = (description: string): Schema => ({ type: 'string', format: 'date-time', description });
export const enumOf = (description: string, values: string[], extra: Extra = {}): Schema => ({
  type: 'string',
  description: `${description}\n\nPossible enum values: ${values.map((v) => `"${v}"`).join(', ')}`,
  enum: values,
  ...extra,
});

export const ref = (name: string, description?: string, extra: Extra = {}): Schema =>
  description === undefined ? { $ref: name, ...extra } : { $ref: name, description, ...extra };

export const obj = (description: string, properties: Record<string, Schema>, required?: string[], extra: Extra = {}): Schema => {
  const s: Schema = { type: 'object', description, properties, ...extra };
  if (required && required.length > 0) s.required = required;
  return s;
};

/** an object whose inner structure is accepted as-is (rarely-used deep sub-structures) */
export const opaque = (description: string): Schema => ({
  type: 'object',
  description,
  'x-orch-preserve-unknown-fields': true,
});

export const strMap = (description: string, extra: Extra = {}): Schema => ({
  type: 'object',
  description,
  additionalProperties: { type: 'string' },
  ...extra,
});

export const mapOf = (description: string, values: Schema, extra: Extra = {}): Schema => ({
  type: 'object',
  description,
  additionalProperties: values,
  ...extra,
});

export const atomicList = (description: string, items: Schema, extra: Extra = {}): Schema => ({
  type: 'array',
  description,
  items,
  'x-orch-list-type': 'atomic',
  ...extra,
});

export const setList = (description: string, items: Schema, extra: Extra = {}): Schema => ({
  type: 'array',
  description,
  items,
  'x-orch-list-type': 'set',
  ...extra,
});

/** a list-map keyed by `keys`; `mergeKey` adds the strategic-merge-patch markers (strategy `merge` unless `extra` has one) */
export const listMap = (description: string, items: Schema, keys: string[], mergeKey?: string, extra: Extra = {}): Schema => {
  const s: Schema = { type: 'array', description, items, 'x-orch-list-type': 'map', 'x-orch-list-map-keys': keys, ...extra };
  if (mergeKey) {
    // `extra` may name a wider strategy (`merge,retainKeys`)
    s['x-orch-patch-strategy'] ??= 'merge';
    s['x-orch-patch-merge-key'] = mergeKey;
  }
  return s;
};

/** a list with a strategic-merge key but no declared list type (Kubernetes' many such lists) */
export const mergeList = (description: string, items: Schema, mergeKey: string, extra: Extra = {}): Schema => ({
  type: 'array',
  description,
  items,
  'x-orch-patch-strategy': 'merge',
  'x-orch-patch-merge-key': mergeKey,
  ...extra,
});

export const intOrString = (description: string): Schema => ({ description, 'x-orch-int-or-string': true });

/**
 * Protobuf field numbers (spec 000 §2.7): `proto({ name: 1, ... }, props)`
 * marks each listed property with its Kubernetes generated.proto number.
 * Listing a property that does not exist is a programming error.
 */
export const proto = (numbers: Record<string, number>, props: Record<string, Schema>): Record<string, Schema> => {
  const out: Record<string, Schema> = { ...props };
  for (const [name, n] of Object.entries(numbers)) {
    const p = props[name];
    if (!p) throw new Error(`proto: no property ${name}`);
    out[name] = { ...p, 'x-orch-proto-field': n };
  }
  return out;
};

/** marks properties that live in a Go-inlined message at field `embedded` of the parent (e.g. Volume's VolumeSource = 2), or at a path of them */
export const protoEmbedded = (embedded: number | number[], numbers: Record<string, number>, props: Record<string, Schema>): Record<string, Schema> => {
  const out = proto(numbers, props);
  for (const name of Object.keys(numbers)) out[name] = { ...out[name], 'x-orch-proto-embedded': embedded };
  return out;
};

/** a MicroTime (microsecond RFC 3339 in JSON; the same Time message in protobuf) */
export const microTime = (description: string): Schema => ({ type: 'string', format: 'date-time', description, 'x-orch-proto-type': 'MicroTime' });

/**
 * Field numbers for a schema and its inline sub-objects at once:
 * `{ a: 1, b: [2, { c: 1 }] }` numbers `a`, `b` and `b`'s (or `b`'s items')
 * property `c`; a key `name@1` puts `name` in the Go-inlined message at field 1.
 */
export type ProtoTree = { [key: string]: number | [number, ProtoTree] };

export const protoTree = (s: Schema, tree: ProtoTree): Schema => {
  const props = s.properties;
  if (!props) {
    if (s.items) return { ...s, items: protoTree(s.items, tree) };
    throw new Error('protoTree: schema has no properties');
  }
  const out: Record<string, Schema> = { ...props };
  for (const [key, spec] of Object.entries(tree)) {
    const at = key.indexOf('@');
    const name = at < 0 ? key : key.slice(0, at);
    const p = props[name];
    if (!p) throw new Error(`protoTree: no property ${name}`);
    const [n, sub] = typeof spec === 'number' ? [spec, undefined] : spec;
    let q: Schema = { ...(sub ? protoTree(p, sub) : p), 'x-orch-proto-field': n };
    if (at >= 0) q = { ...q, 'x-orch-proto-embedded': Number(key.slice(at + 1)) };
    out[name] = q;
  }
  return { ...s, properties: out };
};
