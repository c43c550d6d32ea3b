// A custom resource's schema as kube's /openapi/v2 publishes it. kubectl's
// client-side validation reads v2 and rejects any field a typed object does
// not list, so kube weakens CRD schemas there (apiextensions' builder and
// Structural.ToStructuralOpenAPIV2):
//   - a root that preserves unknown fields is published as a bare object
//     (no apiVersion/kind/metadata properties), so every field is accepted;
//   - below the root, a node that preserves unknown fields or is nullable
//     loses its properties and items (a nullable one its type too, and is
//     no longer required);
//   - an array left without items loses its type.

import type { Schema } from '../machinery/schema/types.js';

export function crdSchemaForV2(root: Schema): Schema {
  if (root['x-orch-preserve-unknown-fields']) return { type: 'object' };
  return weaken(root);
}

function weaken(s: Schema): Schema {
  if (s.$ref !== undefined) return s;
  const out: Schema = { ...s };
  if (out.nullable) {
    delete out.type;
    delete out.properties;
    delete out.items;
  }
  if (out['x-orch-preserve-unknown-fields']) {
    delete out.properties;
    delete out.items;
  }
  if (out.type === 'array' && out.items === undefined) delete out.type;
  if (out.properties) {
    // a nullable field is never required in v2 (null would not pass)
    const nullable = new Set(Object.entries(out.properties).filter(([, c]) => c.nullable).map(([k]) => k));
    if (out.required && nullable.size > 0) out.required = out.required.filter((k) => !nullable.has(k));
    const props: Record<string, Schema> = {};
    for (const [k, child] of Object.entries(out.properties)) props[k] = weaken(child);
    out.properties = props;
  }
  if (out.items) out.items = weaken(out.items);
  if (typeof out.additionalProperties === 'object') out.additionalProperties = weaken(out.additionalProperties);
  return out;
}
