// The garbage collector's dependency graph (Kubernetes' GraphBuilder
// "uidToNode"; docs/deletion.md, docs/controllers.md): a node per object that
// names owners or waits for its dependents (foreground deletion), keyed by
// storage key, with the owners it names and the reverse edges owner uid →
// dependents. An object that is neither has nothing the graph is asked about
// (owners are looked up by name in the informers, a vanished owner's
// dependents by its uid): it gets no node, so the graph's size and its work
// per write follow the objects with owners, not every object stored. The informers of every kind feed
// it (garbage-collector.ts); it holds no objects, only what the collector
// needs to find the dependents of an owner and the owners waiting for them.

import { FOREGROUND_FINALIZER } from '../registry/deletion/machine.js';
import { isTerminating } from '../registry/deletion/facts.js';
import type { ApiObject, JSONObject } from '../registry/types.js';

export interface OwnerRef {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  blockOwnerDeletion: boolean;
}

/** one object as the graph knows it */
export interface GraphNode {
  key: string;
  uid: string;
  owners: OwnerRef[];
  /** Terminating with foregroundDeletion: waiting for its dependents */
  deletingDependents: boolean;
}

export function ownerRefsOf(obj: ApiObject): OwnerRef[] {
  const refs = obj.metadata?.ownerReferences;
  if (!Array.isArray(refs)) return [];
  const out: OwnerRef[] = [];
  for (const r of refs as JSONObject[]) {
    if (!r || typeof r !== 'object') continue;
    if (typeof r.uid !== 'string' || typeof r.name !== 'string' || typeof r.kind !== 'string' || typeof r.apiVersion !== 'string') continue;
    out.push({ apiVersion: r.apiVersion, kind: r.kind, name: r.name, uid: r.uid, blockOwnerDeletion: r.blockOwnerDeletion === true });
  }
  return out;
}

export function finalizersOf(obj: ApiObject): string[] {
  const f = obj.metadata?.finalizers;
  return Array.isArray(f) ? f : [];
}

export class OwnerGraph {
  private readonly nodes = new Map<string, GraphNode>();
  private readonly keyByUid = new Map<string, string>();
  /** owner uid → keys of the objects that name it in ownerReferences */
  private readonly dependents = new Map<string, Set<string>>();

  clear(): void {
    this.nodes.clear();
    this.keyByUid.clear();
    this.dependents.clear();
  }

  get(key: string): GraphNode | undefined {
    return this.nodes.get(key);
  }

  /** the key of the object with `uid`, if the graph holds it */
  keyOf(uid: string): string | undefined {
    return this.keyByUid.get(uid);
  }

  /** keys of the objects naming `uid` as an owner (a copy: callers write while they walk it) */
  dependentsOf(uid: string): string[] {
    return [...(this.dependents.get(uid) ?? [])];
  }

  /** number of nodes held (objects with owners or waiting for dependents) */
  get size(): number {
    return this.nodes.size;
  }

  /**
   * The node of `obj` after a write, and the one it replaces. `after` is
   * kept only when it names owners or waits for dependents (see the top).
   */
  upsert(key: string, obj: ApiObject): { before?: GraphNode; after: GraphNode } {
    const before = this.nodes.get(key);
    if (before) this.unlink(before);
    const after: GraphNode = {
      key,
      uid: obj.metadata?.uid ?? '',
      owners: ownerRefsOf(obj),
      deletingDependents: isTerminating(obj) && finalizersOf(obj).includes(FOREGROUND_FINALIZER),
    };
    if (after.owners.length === 0 && !after.deletingDependents) {
      if (before) this.nodes.delete(key);
      return { before, after };
    }
    this.nodes.set(key, after);
    if (after.uid) this.keyByUid.set(after.uid, key);
    for (const o of after.owners) {
      let s = this.dependents.get(o.uid);
      if (!s) this.dependents.set(o.uid, (s = new Set()));
      s.add(key);
    }
    return { before, after };
  }

  /** drops the node of `key`; returns it (undefined when the graph did not hold it) */
  remove(key: string): GraphNode | undefined {
    const node = this.nodes.get(key);
    if (!node) return undefined;
    this.unlink(node);
    this.nodes.delete(key);
    return node;
  }

  private unlink(node: GraphNode): void {
    if (this.keyByUid.get(node.uid) === node.key) this.keyByUid.delete(node.uid);
    for (const o of node.owners) {
      const s = this.dependents.get(o.uid);
      if (!s) continue;
      s.delete(node.key);
      if (s.size === 0) this.dependents.delete(o.uid);
    }
  }
}
