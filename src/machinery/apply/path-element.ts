// Path elements of field paths for server-side apply (spec 000 §2.4, §4.9):
// what an element is (see fieldpath.ts for the model), how paths are built,
// and the order Kubernetes sorts them in.

import type { JSONObject, JSONValue } from '../../core/object.js';

export type PathElement =
  | { readonly kind: 'field'; readonly name: string }
  /** key fields sorted by name, as Kubernetes sorts them */
  | { readonly kind: 'key'; readonly fields: ReadonlyArray<readonly [string, JSONValue]> }
  | { readonly kind: 'value'; readonly value: JSONValue }
  | { readonly kind: 'index'; readonly index: number };

export type Path = readonly PathElement[];

export const fieldPE = (name: string): PathElement => ({ kind: 'field', name });
export const indexPE = (index: number): PathElement => ({ kind: 'index', index });
export const valuePE = (value: JSONValue): PathElement => ({ kind: 'value', value });
export function keyPE(fields: Record<string, JSONValue> | ReadonlyArray<readonly [string, JSONValue]>): PathElement {
  const list = Array.isArray(fields)
    ? [...(fields as ReadonlyArray<readonly [string, JSONValue]>)]
    : Object.entries(fields as Record<string, JSONValue>);
  list.sort((a, b) => compareStrings(a[0], b[0]));
  return { kind: 'key', fields: list };
}

/** Builds a path from parts: strings are field names, numbers are list indexes. */
export function path(...parts: Array<string | number | PathElement>): Path {
  return parts.map((p) => (typeof p === 'string' ? fieldPE(p) : typeof p === 'number' ? indexPE(p) : p));
}

// ---------------------------------------------------------------------------
// Ordering. Kubernetes sorts path elements field < key < value < index, field
// names by byte order, keys field by field, values by a total order over JSON
// (numbers < strings < booleans < lists < maps < null). FieldsV1 is written in
// this order, so matching it keeps our encoding byte-compatible.

/** Byte-wise (UTF-8) order equals code-point order; JS `<` compares UTF-16 units. */
export function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const ca = a.codePointAt(i)!;
    const cb = b.codePointAt(i)!;
    if (ca !== cb) return ca < cb ? -1 : 1;
    if (ca > 0xffff) i++;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

/**
 * Sorts `keys` in place by compareStrings, as `keys.sort(compareStrings)`
 * does (both stable): an object's few keys by insertion, without the copy
 * and comparator calls of Array.prototype.sort (≈ 0.3 µs and 1.8 KB of
 * garbage per create, docs/architecture.md "Write path cost", fifth pass).
 */
export function sortStrings(keys: string[]): void {
  if (keys.length > 16) {
    keys.sort(compareStrings);
    return;
  }
  for (let i = 1; i < keys.length; i++) {
    const k = keys[i]!;
    let j = i - 1;
    while (j >= 0 && compareStrings(keys[j]!, k) > 0) {
      keys[j + 1] = keys[j]!;
      j--;
    }
    keys[j + 1] = k;
  }
}

function typeRank(v: JSONValue): number {
  if (typeof v === 'number') return 0;
  if (typeof v === 'string') return 1;
  if (typeof v === 'boolean') return 2;
  if (Array.isArray(v)) return 3;
  if (v !== null && typeof v === 'object') return 4;
  return 5;
}

export function compareValues(a: JSONValue, b: JSONValue): number {
  const ra = typeRank(a);
  const rb = typeRank(b);
  if (ra !== rb) return ra < rb ? -1 : 1;
  switch (ra) {
    case 0:
      return a === b ? 0 : (a as number) < (b as number) ? -1 : 1;
    case 1:
      return compareStrings(a as string, b as string);
    case 2:
      return a === b ? 0 : a ? 1 : -1;
    case 3: {
      const la = a as JSONValue[];
      const lb = b as JSONValue[];
      for (let i = 0; i < Math.min(la.length, lb.length); i++) {
        const c = compareValues(la[i]!, lb[i]!);
        if (c !== 0) return c;
      }
      return la.length === lb.length ? 0 : la.length < lb.length ? -1 : 1;
    }
    case 4: {
      const ea = Object.entries(a as JSONObject).sort((x, y) => compareStrings(x[0], y[0]));
      const eb = Object.entries(b as JSONObject).sort((x, y) => compareStrings(x[0], y[0]));
      for (let i = 0; i < Math.min(ea.length, eb.length); i++) {
        const c = compareStrings(ea[i]![0], eb[i]![0]) || compareValues(ea[i]![1], eb[i]![1]);
        if (c !== 0) return c;
      }
      return ea.length === eb.length ? 0 : ea.length < eb.length ? -1 : 1;
    }
    default:
      return 0;
  }
}

const KIND_RANK = { field: 0, key: 1, value: 2, index: 3 } as const;

export function comparePathElements(a: PathElement, b: PathElement): number {
  if (a.kind !== b.kind) return KIND_RANK[a.kind] < KIND_RANK[b.kind] ? -1 : 1;
  switch (a.kind) {
    case 'field':
      return compareStrings(a.name, (b as typeof a).name);
    case 'key': {
      const fa = a.fields;
      const fb = (b as typeof a).fields;
      for (let i = 0; i < Math.min(fa.length, fb.length); i++) {
        const c = compareStrings(fa[i]![0], fb[i]![0]) || compareValues(fa[i]![1], fb[i]![1]);
        if (c !== 0) return c;
      }
      return fa.length === fb.length ? 0 : fa.length < fb.length ? -1 : 1;
    }
    case 'value':
      return compareValues(a.value, (b as typeof a).value);
    case 'index': {
      const ib = (b as typeof a).index;
      return a.index === ib ? 0 : a.index < ib ? -1 : 1;
    }
  }
}
