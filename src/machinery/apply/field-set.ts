// Field sets for server-side apply (spec 000 §2.4, §4.9): sets of paths
// stored as a trie (see fieldpath.ts for the model), their algebra, the
// FieldsV1 encoding, and the cursor that builds a set while walking an object.

import type { JSONObject, JSONValue } from '../../core/object.js';
import { type Path, type PathElement, comparePathElements } from './path-element.js';
import { FieldPathError, parsePathElement, pathToString, serializePathElement } from './path-encoding.js';

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
