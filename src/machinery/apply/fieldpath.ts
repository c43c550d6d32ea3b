// Field paths and field sets for server-side apply (spec 000 §2.4, §4.9).
//
// A field set is a set of paths stored as a trie, in the model Kubernetes'
// structured-merge-diff uses: every path element is one of
//   f:<name>          a struct field or map key
//   k:{"a":1,"b":"x"} a list-map item, identified by its key fields (sorted by name)
//   v:<json>          a set item, identified by its value
//   i:<n>             a list item identified by position (only where nothing else works)
// At each node a set holds "members" (paths that end there) and "children"
// (non-empty sub-sets). The FieldsV1 encoding writes members as `"<pe>":{}` and
// a path element that is both a member and has children as
// `"<pe>":{".":{}, ...children}` — the shape kubectl users see in
// `metadata.managedFields[].fieldsV1`.

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

// ---------------------------------------------------------------------------
// Serialization of single path elements (the FieldsV1 keys).

/**
 * JSON as Go's encoding/json writes it: object keys in the given order, HTML
 * characters and U+2028/U+2029 escaped. Kubernetes builds `k:` and `v:` keys
 * this way, so we do the same to produce identical strings.
 */
export function goJSON(v: JSONValue, sortKeys = true): string {
  if (v === null) return 'null';
  if (typeof v === 'string') {
    return JSON.stringify(v).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  }
  if (typeof v === 'number' || typeof v === 'boolean') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map((x) => goJSON(x, sortKeys)).join(',')}]`;
  const entries = Object.entries(v);
  if (sortKeys) entries.sort((x, y) => compareStrings(x[0], y[0]));
  return `{${entries.map(([k, x]) => `${goJSON(k)}:${goJSON(x, sortKeys)}`).join(',')}}`;
}

export function serializePathElement(pe: PathElement): string {
  switch (pe.kind) {
    case 'field':
      return `f:${pe.name}`;
    case 'key':
      return `k:{${pe.fields.map(([k, v]) => `${goJSON(k)}:${goJSON(v)}`).join(',')}}`;
    case 'value':
      return `v:${goJSON(pe.value)}`;
    case 'index':
      return `i:${pe.index}`;
  }
}

export class FieldPathError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FieldPathError';
  }
}

export function parsePathElement(s: string): PathElement {
  const prefix = s.slice(0, 2);
  const rest = s.slice(2);
  switch (prefix) {
    case 'f:':
      return fieldPE(rest);
    case 'k:': {
      let parsed: unknown;
      try {
        parsed = JSON.parse(rest);
      } catch {
        throw new FieldPathError(`invalid key path element ${JSON.stringify(s)}`);
      }
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
        throw new FieldPathError(`invalid key path element ${JSON.stringify(s)}`);
      }
      return keyPE(parsed as Record<string, JSONValue>);
    }
    case 'v:':
      try {
        return valuePE(JSON.parse(rest) as JSONValue);
      } catch {
        throw new FieldPathError(`invalid value path element ${JSON.stringify(s)}`);
      }
    case 'i:': {
      if (!/^(0|[1-9][0-9]*)$/.test(rest)) throw new FieldPathError(`invalid index path element ${JSON.stringify(s)}`);
      return indexPE(Number(rest));
    }
    default:
      throw new FieldPathError(`unknown path element type ${JSON.stringify(s)}`);
  }
}

/** Go's `%v` rendering of a value as structured-merge-diff prints it in paths. */
function displayValue(v: JSONValue): string {
  if (v === null) return 'null';
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return `[${v.map(displayValue).join(', ')}]`;
  return `{${Object.entries(v)
    .sort((a, b) => compareStrings(a[0], b[0]))
    .map(([k, x]) => `${k}=${displayValue(x)}`)
    .join(';')}}`;
}

export function pathElementToString(pe: PathElement): string {
  switch (pe.kind) {
    case 'field':
      return `.${pe.name}`;
    case 'key':
      return `[${pe.fields.map(([k, v]) => `${k}=${displayValue(v)}`).join(',')}]`;
    case 'value':
      return `[=${displayValue(pe.value)}]`;
    case 'index':
      return `[${pe.index}]`;
  }
}

/** Kubernetes-style path text: `.spec.containers[name="c"].image`. */
export function pathToString(path: Path): string {
  return path.map(pathElementToString).join('');
}

// ---------------------------------------------------------------------------
// Field sets.

interface ChildNode {
  pe: PathElement;
  set: FieldSet;
}

/**
 * A set of field paths. Mutation happens only through `insert` while a set
 * is being built; the algebra (`union`, `difference`, ...) returns new sets.
 */
export class FieldSet {
  private readonly members = new Map<string, PathElement>();
  private readonly children = new Map<string, ChildNode>();

  static fromPaths(paths: Iterable<Path>): FieldSet {
    const s = new FieldSet();
    for (const p of paths) s.insert(p);
    return s;
  }

  /** Adds a path (a no-op for the empty path). Returns this set. */
  insert(path: Path): this {
    if (path.length === 0) return this;
    let node: FieldSet = this;
    for (let i = 0; i < path.length - 1; i++) {
      const pe = path[i]!;
      const k = serializePathElement(pe);
      let child = node.children.get(k);
      if (!child) {
        child = { pe, set: new FieldSet() };
        node.children.set(k, child);
      }
      node = child.set;
    }
    const last = path[path.length - 1]!;
    node.members.set(serializePathElement(last), last);
    return this;
  }

  /**
   * Building only: the sub-set under a path element given with its
   * serialized key, created when absent. Lets a walk insert below a node it
   * already reached instead of re-walking (and re-serializing) the path from
   * the root for every insert (`PathCursor`).
   */
  childForInsert(key: string, pe: PathElement): FieldSet {
    let child = this.children.get(key);
    if (!child) {
      child = { pe, set: new FieldSet() };
      this.children.set(key, child);
    }
    return child.set;
  }

  /** Building only: adds a member given with its serialized key. */
  addMember(key: string, pe: PathElement): void {
    this.members.set(key, pe);
  }

  has(path: Path): boolean {
    if (path.length === 0) return false;
    let node: FieldSet | undefined = this;
    for (let i = 0; i < path.length - 1; i++) {
      node = node.children.get(serializePathElement(path[i]!))?.set;
      if (!node) return false;
    }
    return node.members.has(serializePathElement(path[path.length - 1]!));
  }

  /** True when the path itself or any path below it is in the set. */
  hasPrefix(path: Path): boolean {
    if (path.length === 0) return !this.isEmpty();
    let node: FieldSet | undefined = this;
    for (let i = 0; i < path.length - 1; i++) {
      node = node.children.get(serializePathElement(path[i]!))?.set;
      if (!node) return false;
    }
    const k = serializePathElement(path[path.length - 1]!);
    return node.members.has(k) || node.children.has(k);
  }

  hasMember(pe: PathElement): boolean {
    return this.members.has(serializePathElement(pe));
  }

  /** The sub-set below one path element (empty when none). */
  child(pe: PathElement): FieldSet {
    return this.children.get(serializePathElement(pe))?.set ?? EMPTY;
  }

  isEmpty(): boolean {
    return this.members.size === 0 && this.children.size === 0;
  }

  get size(): number {
    let n = this.members.size;
    for (const c of this.children.values()) n += c.set.size;
    return n;
  }

  /** Every path in the set, in Kubernetes order (a member before its children). */
  paths(): Path[] {
    const out: Path[] = [];
    this.collect([], out);
    return out;
  }

  private collect(prefix: PathElement[], out: Path[]): void {
    for (const [k, pe] of this.sortedElements()) {
      if (this.members.has(k)) out.push([...prefix, pe]);
      const c = this.children.get(k);
      if (c) c.set.collect([...prefix, pe], out);
    }
  }

  /** All path elements used at this level (members and children), sorted. */
  private sortedElements(): Array<[string, PathElement]> {
    const all = new Map<string, PathElement>(this.members);
    for (const [k, c] of this.children) all.set(k, c.pe);
    return [...all.entries()].sort((a, b) => comparePathElements(a[1], b[1]));
  }

  union(other: FieldSet): FieldSet {
    const out = new FieldSet();
    for (const [k, pe] of this.members) out.members.set(k, pe);
    for (const [k, pe] of other.members) out.members.set(k, pe);
    // Sets are not modified once built, so a subtree only one side has is
    // shared, not copied (a create's whole object is one such subtree).
    for (const [k, a] of this.children) {
      const b = other.children.get(k);
      out.children.set(k, b ? { pe: a.pe, set: a.set.union(b.set) } : a);
    }
    for (const [k, b] of other.children) if (!this.children.has(k)) out.children.set(k, b);
    return out;
  }

  intersection(other: FieldSet): FieldSet {
    const out = new FieldSet();
    for (const [k, pe] of this.members) if (other.members.has(k)) out.members.set(k, pe);
    for (const [k, a] of this.children) {
      const b = other.children.get(k);
      if (!b) continue;
      const set = a.set.intersection(b.set);
      if (!set.isEmpty()) out.children.set(k, { pe: a.pe, set });
    }
    return out;
  }

  difference(other: FieldSet): FieldSet {
    const out = new FieldSet();
    for (const [k, pe] of this.members) if (!other.members.has(k)) out.members.set(k, pe);
    for (const [k, a] of this.children) {
      const b = other.children.get(k);
      if (!b) {
        out.children.set(k, a); // shared, as in union
        continue;
      }
      const set = a.set.difference(b.set);
      if (!set.isEmpty()) out.children.set(k, { pe: a.pe, set });
    }
    return out;
  }

  equals(other: FieldSet): boolean {
    if (this.members.size !== other.members.size || this.children.size !== other.children.size) return false;
    for (const k of this.members.keys()) if (!other.members.has(k)) return false;
    for (const [k, a] of this.children) {
      const b = other.children.get(k);
      if (!b || !a.set.equals(b.set)) return false;
    }
    return true;
  }

  /**
   * The set plus every ancestor of its paths as a member: "owning a.b.c also
   * holds a and a.b in place". Used by pruning (spec 000 §4.9: a field given
   * up and owned by nobody else is deleted, containers included).
   */
  withAncestors(): FieldSet {
    const out = new FieldSet();
    for (const [k, pe] of this.members) out.members.set(k, pe);
    for (const [k, c] of this.children) {
      out.members.set(k, c.pe);
      out.children.set(k, { pe: c.pe, set: c.set.withAncestors() });
    }
    return out;
  }

  /** Iterates this level: `(pe, isMember, childSet)`. */
  *entries(): Generator<[PathElement, boolean, FieldSet]> {
    for (const [k, pe] of this.sortedElements()) {
      yield [pe, this.members.has(k), this.children.get(k)?.set ?? EMPTY];
    }
  }

  /** Builds a set from one level's parts (used by schema reconciliation). */
  static fromEntries(entries: Iterable<[PathElement, boolean, FieldSet]>): FieldSet {
    const out = new FieldSet();
    for (const [pe, member, child] of entries) {
      const k = serializePathElement(pe);
      if (member) out.members.set(k, pe);
      if (!child.isEmpty()) out.children.set(k, { pe, set: child });
    }
    return out;
  }

  /** The FieldsV1 tree (spec 000 §2.4), keys in Kubernetes order. */
  toFieldsV1(): JSONObject {
    return this.emitV1(false);
  }

  private emitV1(includeSelf: boolean): JSONObject {
    const out: JSONObject = {};
    if (includeSelf && !this.isEmpty()) out['.'] = {};
    for (const [k, pe] of this.sortedElements()) {
      const c = this.children.get(k);
      if (c) out[k] = c.set.emitV1(this.members.has(k));
      else out[serializePathElement(pe)] = {};
    }
    return out;
  }

  /** The FieldsV1 JSON text exactly as Kubernetes writes it. */
  toFieldsV1JSON(): string {
    return JSON.stringify(this.toFieldsV1());
  }

  static fromFieldsV1(v: JSONValue): FieldSet {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) {
      throw new FieldPathError('FieldsV1 must be a JSON object');
    }
    return readV1(v).set;
  }

  toString(): string {
    return this.paths().map(pathToString).join('\n');
  }
}

function readV1(obj: JSONObject): { set: FieldSet; self: boolean } {
  const set = new FieldSet();
  let self = false;
  const entries: Array<[PathElement, boolean, FieldSet]> = [];
  for (const [k, v] of Object.entries(obj)) {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) {
      throw new FieldPathError(`FieldsV1 value under ${JSON.stringify(k)} must be an object`);
    }
    if (k === '.') {
      self = true;
      continue;
    }
    const pe = parsePathElement(k);
    if (Object.keys(v).length === 0) {
      entries.push([pe, true, EMPTY]);
      continue;
    }
    const sub = readV1(v);
    entries.push([pe, sub.self, sub.set]);
  }
  if (entries.length === 0) return { set, self };
  return { set: FieldSet.fromEntries(entries), self };
}

const EMPTY = new FieldSet();

/**
 * A path being walked, one element at a time, for inserting into a set being
 * built: each element is serialized once, and the set's node for the path is
 * found (created) once, when something is first inserted below it, so an
 * empty map or list leaves no empty node behind (as `insert` never does).
 */
export class PathCursor {
  private node: FieldSet | undefined;
  private readonly key: string;

  private constructor(
    private readonly root: FieldSet,
    private readonly parent: PathCursor | undefined,
    readonly pe: PathElement | undefined,
  ) {
    this.key = pe ? serializePathElement(pe) : '';
    if (!parent) this.node = root;
  }

  /** The empty path in `set`. */
  static at(set: FieldSet): PathCursor {
    return new PathCursor(set, undefined, undefined);
  }

  child(pe: PathElement): PathCursor {
    return new PathCursor(this.root, this, pe);
  }

  /** `set.insert(path)` for this cursor's path (a no-op for the empty path). */
  insert(): void {
    if (this.parent && this.pe) this.parent.nodeFor().addMember(this.key, this.pe);
  }

  private nodeFor(): FieldSet {
    this.node ??= this.parent!.nodeFor().childForInsert(this.key, this.pe!);
    return this.node;
  }
}

/** Builds a path from parts: strings are field names, numbers are list indexes. */
export function path(...parts: Array<string | number | PathElement>): Path {
  return parts.map((p) => (typeof p === 'string' ? fieldPE(p) : typeof p === 'number' ? indexPE(p) : p));
}
