// Compiles a kind's Schema (plus the shared `$ref` Definitions) into a
// protobuf message plan once: field number → property, and how each value is
// written on the wire. The field numbers are the `x-orch-proto-field` markers
// of the schemas (spec 000 §2.7; the Kubernetes generated.proto numbers), so
// one definition per kind drives validation, OpenAPI and protobuf alike.

import type { Definitions, Schema } from '../schema/types.js';

/** scalar and well-known leaf encodings */
export type Leaf =
  | 'string'
  | 'bytes'
  | 'int32'
  | 'int64'
  | 'double'
  | 'bool'
  | 'Time'
  | 'MicroTime'
  | 'IntOrString'
  | 'Quantity'
  | 'FieldsV1'
  | 'RawExtension';

export type ValuePlan =
  | { kind: 'leaf'; leaf: Leaf }
  | { kind: 'message'; message: MessagePlan }
  /** map<string, V>: repeated entry messages { key = 1; value = 2 } */
  | { kind: 'map'; value: ValuePlan }
  /** a list inside a map value (Kubernetes wraps it: ExtraValue { repeated items = 1 }) */
  | { kind: 'wrappedList'; item: ValuePlan }
  /** apiextensions/v1 JSONSchemaProps (json-schema-props.ts); `prefixes` of its x-<prefix>-* markers */
  | { kind: 'jsonSchemaProps'; prefixes: string[] };

export interface FieldPlan {
  name: string;
  number: number;
  repeated: boolean;
  /** a decoded 0 means absent (x-orch-proto-omit-zero) */
  omitZero: boolean;
  value: ValuePlan;
}

export interface MessagePlan {
  /** fields directly in this message, ascending by number */
  fields: FieldPlan[];
  byNumber: Map<number, FieldPlan>;
  /** Go-inlined structs: field number → the message holding some of this JSON object's properties */
  embedded: Map<number, MessagePlan>;
  /** JSON property names that have no protobuf field (not encodable) */
  unnumbered: Set<string>;
}

const cache = new WeakMap<Definitions, WeakMap<Schema, MessagePlan>>();

/** the message plan of an object schema (cached per definitions object) */
export function messagePlan(schema: Schema, defs: Definitions): MessagePlan {
  let byDefs = cache.get(defs);
  if (!byDefs) {
    byDefs = new WeakMap();
    cache.set(defs, byDefs);
  }
  return new PlanBuilder(defs, byDefs).message(resolve(schema, defs));
}

/** true when the schema's top level carries protobuf field numbers (built-in kinds; not custom resources) */
export function hasProtoFields(schema: Schema, defs: Definitions): boolean {
  const s = resolve(schema, defs);
  return Object.values(s.properties ?? {}).some((p) => p['x-orch-proto-field'] !== undefined);
}

function refName(ref: string): string {
  if (ref.startsWith('#/definitions/')) return ref.slice(14);
  if (ref.startsWith('#/components/schemas/')) return ref.slice(21);
  return ref;
}

/** follows `$ref`s to the target schema */
export function resolve(s: Schema, defs: Definitions): Schema {
  let cur = s;
  for (let i = 0; cur.$ref !== undefined && i < 16; i++) {
    const t = defs[refName(cur.$ref)];
    if (!t) return {};
    cur = t;
  }
  return cur;
}

class PlanBuilder {
  constructor(
    private readonly defs: Definitions,
    private readonly memo: WeakMap<Schema, MessagePlan>,
  ) {}

  message(s: Schema): MessagePlan {
    const hit = this.memo.get(s);
    if (hit) return hit;
    const plan: MessagePlan = { fields: [], byNumber: new Map(), embedded: new Map(), unnumbered: new Set() };
    // registered before filling: recursive structures (JSONSchemaProps-like) terminate
    this.memo.set(s, plan);
    for (const [name, prop] of Object.entries(s.properties ?? {})) {
      const number = prop['x-orch-proto-field'];
      const value = number === undefined ? undefined : this.value(prop);
      if (number === undefined || value === undefined) {
        plan.unnumbered.add(name);
        continue;
      }
      const repeated = isArray(resolve(prop, this.defs));
      const field: FieldPlan = { name, number, repeated, omitZero: prop['x-orch-proto-omit-zero'] === true, value: repeated ? this.itemValue(prop) ?? value : value };
      const emb = prop['x-orch-proto-embedded'];
      const target = emb === undefined ? plan : embeddedPlan(plan, emb);
      target.fields.push(field);
      target.byNumber.set(number, field);
    }
    sortFields(plan);
    return plan;
  }

  private itemValue(prop: Schema): ValuePlan | undefined {
    const s = resolve(prop, this.defs);
    return s.items ? this.value(s.items) : undefined;
  }

  /** how one value (a property, list item or map value) is encoded; undefined = not encodable */
  value(prop: Schema): ValuePlan | undefined {
    const s = resolve(prop, this.defs);
    const special = prop['x-orch-proto-type'] ?? s['x-orch-proto-type'];
    if (special === 'JSONSchemaProps') return { kind: 'jsonSchemaProps', prefixes: prop['x-orch-proto-marker-prefixes'] ?? s['x-orch-proto-marker-prefixes'] ?? ['x-kubernetes-'] };
    if (special) return leaf(special);
    if (s['x-orch-int-or-string']) return leaf(s.format === 'quantity' ? 'Quantity' : 'IntOrString');
    switch (s.type) {
      case 'string':
        if (s.format === 'date-time') return leaf('Time');
        if (s.format === 'byte') return leaf('bytes');
        return leaf('string');
      case 'integer':
        return leaf(s.format === 'int32' ? 'int32' : 'int64');
      case 'number':
        return leaf('double');
      case 'boolean':
        return leaf('bool');
      case 'array':
        // a repeated field's element; the caller marks the field repeated
        return s.items ? this.value(s.items) : undefined;
      case 'object':
      case undefined: {
        if (s.properties) return { kind: 'message', message: this.message(s) };
        if (s.additionalProperties && typeof s.additionalProperties === 'object') {
          const vs = resolve(s.additionalProperties, this.defs);
          if (isArray(vs)) {
            const item = vs.items ? this.value(vs.items) : undefined;
            return item ? { kind: 'map', value: { kind: 'wrappedList', item } } : undefined;
          }
          const v = this.value(s.additionalProperties);
          return v ? { kind: 'map', value: v } : undefined;
        }
        return undefined;
      }
      default:
        return undefined;
    }
  }
}

function sortFields(plan: MessagePlan): void {
  plan.fields.sort((a, b) => a.number - b.number);
  for (const e of plan.embedded.values()) sortFields(e);
}

function isArray(s: Schema): boolean {
  return s.type === 'array';
}

function leaf(l: Leaf): ValuePlan {
  return { kind: 'leaf', leaf: l };
}

/** the inlined message at `path` (one number, or a path through inlined messages) */
function embeddedPlan(parent: MessagePlan, path: number | number[]): MessagePlan {
  let e = parent;
  for (const n of typeof path === 'number' ? [path] : path) {
    let next = e.embedded.get(n);
    if (!next) {
      next = { fields: [], byNumber: new Map(), embedded: new Map(), unnumbered: new Set() };
      e.embedded.set(n, next);
    }
    e = next;
  }
  return e;
}
