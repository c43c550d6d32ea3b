// Compiles a kind's Schema (with `$ref`s into the shared Definitions) into a
// graph of plain nodes once, so the per-write walks (validation, pruning,
// defaulting; spec 000 §4.8) never look names up or re-read optional fields.
// `$ref` nodes become direct pointers to the compiled target (cycles allowed).

import { type CompiledPattern, compilePattern } from './regex.js';
import type { Definitions, Schema, SchemaType, ValidationRule } from './types.js';

export interface CompiledSchema {
  readonly source: Schema;
  type: SchemaType | undefined;
  format: string | undefined;
  enumValues: readonly unknown[] | undefined;
  hasDefault: boolean;
  default: unknown;
  nullable: boolean;
  properties: Map<string, CompiledSchema> | undefined;
  /** map values: a schema, `true` for any value, undefined for no extra keys */
  additional: CompiledSchema | true | undefined;
  items: CompiledSchema | undefined;
  required: readonly string[] | undefined;
  preserveUnknown: boolean;
  intOrString: boolean;
  embedded: boolean;
  minimum: number | undefined;
  maximum: number | undefined;
  maxLength: number | undefined;
  minLength: number | undefined;
  maxItems: number | undefined;
  minItems: number | undefined;
  maxProperties: number | undefined;
  minProperties: number | undefined;
  exclusiveMinimum: boolean;
  exclusiveMaximum: boolean;
  multipleOf: number | undefined;
  uniqueItems: boolean;
  /** `x-orch-list-type` (set and map lists reject duplicates, spec 000 §4.9) */
  listType: 'atomic' | 'set' | 'map' | undefined;
  listMapKeys: readonly string[] | undefined;
  /** RE2, as kube (regex.ts) */
  pattern: CompiledPattern | undefined;
  /** value alternatives (CRD schemas) */
  allOf: CompiledSchema[] | undefined;
  anyOf: CompiledSchema[] | undefined;
  oneOf: CompiledSchema[] | undefined;
  not: CompiledSchema | undefined;
  /** CEL rules on this node (`x-orch-validations`) */
  rules: readonly ValidationRule[] | undefined;
  /** this node or a descendant carries CEL rules */
  subtreeHasRules: boolean;
  /** properties carrying a `default` (applied where absent) */
  defaultedProps: [string, CompiledSchema][];
  /** present-valued children below which some default lives */
  propsWithDefaultsBelow: [string, CompiledSchema][];
  /** this node or a descendant has something to default */
  subtreeHasDefaults: boolean;
}

/** a resolved `$ref` that does not exist in the definitions */
export class UnresolvedRefError extends Error {}

const cache = new WeakMap<Definitions, { bySchema: WeakMap<Schema, CompiledSchema>; byRef: Map<string, CompiledSchema> }>();

export function compileSchema(schema: Schema, defs: Definitions): CompiledSchema {
  let entry = cache.get(defs);
  if (!entry) {
    entry = { bySchema: new WeakMap(), byRef: new Map() };
    cache.set(defs, entry);
  }
  const hit = entry.bySchema.get(schema);
  if (hit) return hit;
  const compiled = new Compiler(defs, entry.bySchema, entry.byRef).compile(schema);
  computeDefaults(compiled, new Set());
  computeRules(compiled, new Set());
  return compiled;
}

/** forget compiled graphs for a definitions object that changed in place */
export function invalidateCompiled(defs: Definitions): void {
  cache.delete(defs);
}

class Compiler {
  constructor(
    private readonly defs: Definitions,
    private readonly bySchema: WeakMap<Schema, CompiledSchema>,
    private readonly byRef: Map<string, CompiledSchema>,
  ) {}

  compile(s: Schema): CompiledSchema {
    const hit = this.bySchema.get(s);
    if (hit) return hit;
    if (s.$ref !== undefined) {
      const target = this.resolve(s.$ref);
      // a default next to a $ref (OpenAPI v3 allOf idiom) overrides the target's
      if (s.default === undefined && s.nullable === undefined) {
        this.bySchema.set(s, target);
        return target;
      }
      const node: CompiledSchema = { ...target, source: s };
      if (s.default !== undefined) {
        node.hasDefault = true;
        node.default = s.default;
      }
      if (s.nullable !== undefined) node.nullable = s.nullable;
      this.bySchema.set(s, node);
      return node;
    }
    const node = emptyNode(s);
    this.bySchema.set(s, node);
    this.fill(node, s);
    return node;
  }

  private resolve(ref: string): CompiledSchema {
    const name = ref.startsWith('#/definitions/')
      ? ref.slice(14)
      : ref.startsWith('#/components/schemas/')
        ? ref.slice(21)
        : ref;
    const hit = this.byRef.get(name);
    if (hit) return hit;
    const target = this.defs[name];
    if (!target) throw new UnresolvedRefError(`unresolved schema reference "${ref}"`);
    if (target.$ref !== undefined) {
      const resolved = this.compile(target);
      this.byRef.set(name, resolved);
      return resolved;
    }
    const node = emptyNode(target);
    this.byRef.set(name, node);
    this.bySchema.set(target, node);
    this.fill(node, target);
    return node;
  }

  private fill(node: CompiledSchema, s: Schema): void {
    if (s.properties) {
      node.properties = new Map();
      for (const [k, child] of Object.entries(s.properties)) node.properties.set(k, this.compile(child));
      // presence of a strategy-checked property is the strategy's to report
      if (node.required) node.required = node.required.filter((k) => s.properties?.[k]?.['x-orch-strategy-checked'] !== true);
    }
    if (s.additionalProperties === true) node.additional = true;
    else if (s.additionalProperties && typeof s.additionalProperties === 'object') {
      node.additional = this.compile(s.additionalProperties);
    }
    if (s.items) node.items = this.compile(s.items);
    if (s.allOf) node.allOf = s.allOf.map((x) => this.compile(x));
    if (s.anyOf) node.anyOf = s.anyOf.map((x) => this.compile(x));
    if (s.oneOf) node.oneOf = s.oneOf.map((x) => this.compile(x));
    if (s.not) node.not = this.compile(s.not);
  }
}

function emptyNode(s: Schema): CompiledSchema {
  return {
    source: s,
    type: s.type,
    format: s.format,
    enumValues: s['x-orch-strategy-checked'] === true ? undefined : s.enum,
    hasDefault: s.default !== undefined,
    default: s.default,
    nullable: s.nullable === true || s['x-orch-zero-null'] === true,
    properties: undefined,
    additional: undefined,
    items: undefined,
    required: s.required && s.required.length > 0 ? s.required : undefined,
    preserveUnknown: s['x-orch-preserve-unknown-fields'] === true,
    intOrString: s['x-orch-int-or-string'] === true,
    embedded: s['x-orch-embedded-resource'] === true,
    minimum: s.minimum,
    maximum: s.maximum,
    maxLength: s.maxLength,
    minLength: s.minLength,
    maxItems: s.maxItems,
    minItems: s.minItems,
    maxProperties: s.maxProperties,
    minProperties: s.minProperties,
    exclusiveMinimum: s.exclusiveMinimum === true,
    exclusiveMaximum: s.exclusiveMaximum === true,
    multipleOf: s.multipleOf,
    uniqueItems: s.uniqueItems === true,
    listType: s['x-orch-list-type'],
    listMapKeys: s['x-orch-list-map-keys'],
    pattern: s.pattern !== undefined ? compilePattern(s.pattern) : undefined,
    allOf: undefined,
    anyOf: undefined,
    oneOf: undefined,
    not: undefined,
    rules: s['x-orch-validations'] && s['x-orch-validations'].length > 0 ? s['x-orch-validations'] : undefined,
    subtreeHasRules: false,
    defaultedProps: [],
    propsWithDefaultsBelow: [],
    subtreeHasDefaults: false,
  };
}

/** fills the defaulting shortcuts bottom-up; a cycle counts as "no defaults" on its back edge */
function computeDefaults(node: CompiledSchema, visiting: Set<CompiledSchema>): boolean {
  if (visiting.has(node)) return node.subtreeHasDefaults;
  visiting.add(node);
  node.defaultedProps = [];
  node.propsWithDefaultsBelow = [];
  let any = false;
  if (node.properties) {
    for (const [k, child] of node.properties) {
      const below = computeDefaults(child, visiting);
      if (child.hasDefault) node.defaultedProps.push([k, child]);
      if (below) node.propsWithDefaultsBelow.push([k, child]);
      if (below || child.hasDefault) any = true;
    }
  }
  if (node.additional && node.additional !== true && computeDefaults(node.additional, visiting)) any = true;
  if (node.items && computeDefaults(node.items, visiting)) any = true;
  node.subtreeHasDefaults = any;
  return any;
}

/** marks the nodes below which CEL rules live, so objects without rules are not walked for them */
function computeRules(node: CompiledSchema, visiting: Set<CompiledSchema>): boolean {
  if (visiting.has(node)) return node.subtreeHasRules;
  visiting.add(node);
  let any = node.rules !== undefined;
  if (node.properties) for (const child of node.properties.values()) if (computeRules(child, visiting)) any = true;
  if (node.additional && node.additional !== true && computeRules(node.additional, visiting)) any = true;
  if (node.items && computeRules(node.items, visiting)) any = true;
  node.subtreeHasRules = any;
  return any;
}
