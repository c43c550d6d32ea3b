// Named structures in the served documents (docs/schemas.md "Named
// structures"). orch's schemas write many structures inline; Kubernetes
// publishes each as a named definition (`io.k8s.api.core.v1.ServicePort`)
// referenced with `$ref`. kubectl explain prints a field's type from the
// referenced name (`<[]ServicePort>`, `<IntOrString>`, `<FieldsV1>`) and shows
// `<Object>` with no fields for an opaque inline object, and clients that key
// on definition names look them up. This pass rewrites a built document's
// schemas in place: every inline object whose place openapi-type-names.ts
// names is moved to that definition, and inline int-or-string values of
// built-in kinds become references to IntOrString, as Kubernetes has them.
// Custom resources' schemas are left as their CRDs wrote them, as kube does.

import type { Json, Version } from './openapi-schema.js';
import { refPath } from './openapi-schema.js';
import { kubeTypeName } from './openapi-type-names.js';
import { JSON_SCHEMA_PROPS_PKG, jsonSchemaPropsDefinitions } from './openapi-jsonschemaprops.js';

export interface HoistContext {
  v: Version;
  /** the reversed API domain, `io.k8s` */
  rev: string;
  apiDomain: string;
  /** a shared definition by full name, in this document's form (to add IntOrString, Quantity, FieldsV1 …) */
  shared(name: string): Json | undefined;
}

const isObj = (x: unknown): x is Json => typeof x === 'object' && x !== null && !Array.isArray(x);

/** markers of a field, not of its type: they stay beside the reference (kube: a DeploymentSpec's `strategy` is retainKeys) */
const FIELD_MARKERS = ['x-kubernetes-patch-strategy', 'x-orch-patch-strategy', 'x-kubernetes-patch-merge-key', 'x-orch-patch-merge-key'];

/** an inline object structure: not a reference, not a map (whose values are a slot of their own) */
function isInlineObject(s: Json): boolean {
  return s.$ref === undefined && s.allOf === undefined && s.type === 'object' && !isObj(s.additionalProperties);
}

function isInlineIntOrString(s: Json): boolean {
  return s.$ref === undefined && s.allOf === undefined && s['x-orch-int-or-string'] === true;
}

/**
 * Hoists inline structures of the definitions named in `roots` (and of the
 * definitions hoisted from them) into `out`, a document's definitions.
 */
export function hoistNamedTypes(out: Json, roots: Iterable<string>, ctx: HoistContext): void {
  const prefix = `${ctx.rev}.`;
  const queue = [...roots];
  const ref = (name: string, from: Json, slot: 'property' | 'element'): Json => {
    const $ref = refPath(name, ctx.v);
    if (slot === 'element') return { $ref };
    const r: Json = ctx.v === 2 ? { $ref } : { allOf: [{ $ref }] };
    if (from.description !== undefined) r.description = from.description;
    if (ctx.v === 3 && from.default !== undefined) r.default = from.default;
    for (const k of FIELD_MARKERS) if (from[k] !== undefined) r[k] = from[k];
    return r;
  };
  const ensureShared = (name: string): boolean => {
    if (out[name] !== undefined) return true;
    const s = ctx.shared(name);
    if (s === undefined) return false;
    out[name] = s;
    queue.push(name);
    return true;
  };
  /** the replacement of the structure `s` at a slot of `owner`'s property `prop`, or undefined to keep it inline */
  const named = (s: Json, owner: string | undefined, prop: string, slot: 'property' | 'element'): Json | undefined => {
    if (isInlineIntOrString(s)) {
      // Quantity's v2 form has no format, its v3 form a string-or-number union
      const quantity = ctx.v === 2 ? s.format === undefined : isObj((s.anyOf as unknown[] | undefined)?.[0]) && (s.anyOf as Json[])[0]!.type === 'string';
      const name = `${prefix}${quantity ? 'apimachinery.pkg.api.resource.Quantity' : 'apimachinery.pkg.util.intstr.IntOrString'}`;
      return ensureShared(name) ? ref(name, s, slot) : undefined;
    }
    if (!isInlineObject(s)) return undefined;
    const rel = owner === undefined ? undefined : kubeTypeName(owner, prop);
    if (rel === undefined) {
      walk(s, undefined);
      return undefined;
    }
    const name = `${prefix}${rel}`;
    const existing = out[name];
    if (existing === undefined) {
      if (rel === `${JSON_SCHEMA_PROPS_PKG}.JSONSchemaProps`) {
        Object.assign(out, jsonSchemaPropsDefinitions(ctx.v, ctx.rev, ctx.apiDomain));
      } else if (!ensureShared(name)) {
        const def: Json = { ...s };
        delete def.default;
        if (slot === 'property') for (const k of FIELD_MARKERS) delete def[k];
        // at a property the one description is the field's: kubectl explain prints the field's and
        // then the type's, so the type keeps none (an item's description is the type's own)
        if (slot === 'property') delete def.description;
        out[name] = def;
        queue.push(name);
      }
    } else if (isObj(existing) && existing.description === undefined && slot === 'element' && s.description !== undefined) {
      existing.description = s.description;
    }
    return ref(name, s, slot);
  };
  const walk = (s: Json, owner: string | undefined): void => {
    const props = s.properties;
    if (!isObj(props)) return;
    for (const [p, c] of Object.entries(props)) {
      if (!isObj(c)) continue;
      const whole = named(c, owner, p, 'property');
      if (whole) {
        props[p] = whole;
        continue;
      }
      for (const k of ['items', 'additionalProperties'] as const) {
        const el = c[k];
        if (!isObj(el)) continue;
        const r = named(el, owner, p, 'element');
        if (r) c[k] = r;
      }
    }
  };
  const seen = new Set<string>();
  for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
    if (seen.has(name)) continue;
    seen.add(name);
    const s = out[name];
    if (isObj(s) && name.startsWith(prefix)) walk(s, name.slice(prefix.length));
  }
}
