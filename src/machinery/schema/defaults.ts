// Structural defaulting (the Kubernetes CRD semantics, used for every kind):
// a property's `default` is applied where the property is absent (or null and
// not nullable, because decoding drops such nulls), recursively, inside array
// items and map values. Only subtrees that contain a default are visited.

import { type CompiledSchema, compileSchema } from './compile.js';
import type { Definitions, Schema } from './types.js';

export function applyDefaults(obj: unknown, schema: Schema, defs: Definitions): void {
  applyCompiledDefaults(obj, compileSchema(schema, defs));
}

export function applyCompiledDefaults(v: unknown, s: CompiledSchema): void {
  if (!s.subtreeHasDefaults || v === null || typeof v !== 'object') return;
  if (Array.isArray(v)) {
    const items = s.items;
    if (items && items.subtreeHasDefaults) for (let i = 0; i < v.length; i++) applyCompiledDefaults(v[i], items);
    return;
  }
  const o = v as Record<string, unknown>;
  const defaulted = s.defaultedProps;
  for (let i = 0; i < defaulted.length; i++) {
    const [k, child] = defaulted[i];
    const cur = o[k];
    if (cur === undefined || (cur === null && !child.nullable)) o[k] = cloneDefault(child.default);
  }
  const below = s.propsWithDefaultsBelow;
  for (let i = 0; i < below.length; i++) {
    const [k, child] = below[i];
    const cur = o[k];
    if (cur !== undefined && cur !== null) applyCompiledDefaults(cur, child);
  }
  const add = s.additional;
  if (add !== undefined && add !== true && add.subtreeHasDefaults) {
    for (const k in o) {
      if (s.properties?.has(k)) continue;
      applyCompiledDefaults(o[k], add);
    }
  }
}

function cloneDefault(v: unknown): unknown {
  return v !== null && typeof v === 'object' ? structuredClone(v) : v;
}
