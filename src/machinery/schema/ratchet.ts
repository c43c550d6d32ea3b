// Validation ratcheting of custom resources (Kubernetes CRDValidationRatcheting,
// on by default since 1.30; docs/crds.md): on update, a schema error is
// dropped when the value at which the failing check is declared is unchanged
// from the stored object, so a CRD that gains a stricter schema does not lock
// its existing objects. Values correlate with the stored ones through object
// properties, map keys and the keys of `map` lists; items of `set` and atomic
// lists do not correlate (the list as a whole does). Never ratcheted: list
// duplicates, an embedded resource's apiVersion/kind, allOf/anyOf/oneOf/not
// (validate.ts NOT_RATCHETED) and object metadata (validated elsewhere).
//
// Cost: nothing unless the update has schema errors; then one walk of the
// changed part of the object.

import type { FieldError } from '../../core/object.js';
import { deepEqual } from '../meta.js';
import type { CompiledSchema } from './compile.js';
import { NOT_RATCHETED } from './validate.js';
import { indexByKeys, keyOf } from './cel-rules.js';

/** the errors of `errors` that survive ratcheting against the stored object `old` */
export function ratchetErrors(errors: FieldError[], obj: unknown, old: unknown, s: CompiledSchema): FieldError[] {
  const unchanged: string[] = [];
  collectUnchanged(obj, old, s, '', unchanged);
  if (unchanged.length === 0) return errors;
  return errors.filter((e) => NOT_RATCHETED.has(e) || !unchanged.some((p) => within(nodeOf(e), p)));
}

/** where the failing check is declared: a missing required field is its object's check */
function nodeOf(e: FieldError): string {
  if (e.type !== 'FieldValueRequired' || e.message !== 'Required value') return e.field;
  const dot = e.field.lastIndexOf('.');
  return dot < 0 ? '' : e.field.slice(0, dot);
}

function within(path: string, prefix: string): boolean {
  return prefix === '' || path === prefix || path.startsWith(`${prefix}.`) || path.startsWith(`${prefix}[`);
}

/** the topmost correlated nodes whose value equals the stored one, as validate.ts renders field paths */
function collectUnchanged(v: unknown, old: unknown, s: CompiledSchema, path: string, out: string[]): void {
  if (old === undefined || v === undefined) return;
  if (deepEqual(v, old)) {
    out.push(path);
    return;
  }
  if (Array.isArray(v)) {
    const items = s.items;
    if (!items || s.listType !== 'map' || !s.listMapKeys || !Array.isArray(old)) return;
    const keys = s.listMapKeys;
    const byKey = indexByKeys(old, keys);
    for (let i = 0; i < v.length; i++) collectUnchanged(v[i], byKey.get(keyOf(v[i], keys)), items, `${path}[${i}]`, out);
    return;
  }
  if (v === null || typeof v !== 'object' || old === null || typeof old !== 'object' || Array.isArray(old)) return;
  const obj = v as Record<string, unknown>;
  const oldObj = old as Record<string, unknown>;
  for (const k of Object.keys(obj)) {
    const prop = s.properties?.get(k);
    if (prop !== undefined) collectUnchanged(obj[k], oldObj[k], prop, path === '' ? k : `${path}.${k}`, out);
    else if (prop === undefined && s.additional !== undefined && s.additional !== true) collectUnchanged(obj[k], oldObj[k], s.additional, `${path}[${k}]`, out);
  }
}
