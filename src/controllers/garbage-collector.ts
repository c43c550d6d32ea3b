// The garbage collector (spec 000 §2.6 propagationPolicy / orphanDependents;
// the Kubernetes model, docs/deletion.md). It keeps an owner graph by uid of
// every object of every registered kind, fed by the store's applied writes,
// and acts on three situations:
//
//   - a dependent whose owners are all gone (Background, the default): the
//     dependent is deleted; an owner that is gone but others remain is just
//     dropped from its ownerReferences;
//   - an owner Terminating with the `orphan` finalizer: the reference to it
//     is removed from every dependent, then the finalizer;
//   - an owner Terminating with the `foregroundDeletion` finalizer: its
//     dependents are deleted (Foreground themselves when they have
//     dependents), and once no dependent with `blockOwnerDeletion` remains,
//     the finalizer is removed — the deletion machine then removes the owner.
//
// It is level-driven: every decision is taken from the objects as they are
// in the store now, and on start it scans everything, so a restart in the
// middle of a foreground deletion carries on where it stopped. The store's
// listener only queues the write; decoding and graph upkeep happen off the
// write path.

import { StatusError } from '../core/errors.js';
import { FOREGROUND_FINALIZER, ORPHAN_FINALIZER, type PropagationPolicy } from '../registry/deletion/machine.js';
import { isTerminating } from '../registry/deletion/facts.js';
import type { GenericStore } from '../registry/generic-store.js';
import { decodeObject, decodeShared, storageKey, storagePrefix, storageResource } from '../registry/generic-store.js';
import { type Registry, apiVersionOf } from '../registry/registry.js';
import type { ApiObject, JSONObject, ResourceDefinition } from '../registry/types.js';
import type { AppliedWrite, KeyValue, RevisionedStore } from '../store/types.js';
import { prefixEnd } from '../store/types.js';
import type { EventRecorder, InvolvedObject } from './event-recorder.js';

/** the field manager the collector's writes are recorded under (spec 000 §2.4) */
export const GC_MANAGER = 'orch-garbage-collector';

interface OwnerRef {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  blockOwnerDeletion: boolean;
}

/** one object as the graph knows it */
interface GraphNode {
  key: string;
  uid: string;
  owners: OwnerRef[];
  /** Terminating with foregroundDeletion: waiting for its dependents */
  deletingDependents: boolean;
}

/** `invalid`: a namespaced owner named by a cluster-scoped dependent (treated as absent) */
type OwnerState = 'absent' | 'invalid' | 'waiting' | 'present';

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

function finalizersOf(obj: ApiObject): string[] {
  const f = obj.metadata?.finalizers;
  return Array.isArray(f) ? f : [];
}

function safeDecode(kv: KeyValue): ApiObject | undefined {
  try {
    return decodeObject(kv);
  } catch {
    // a corrupt value is nobody's owner or dependent; reads report it (spec 000 §4.10)
    return undefined;
  }
}

/** safeDecode for the graph, which only reads: shared with the watch caches (decodeShared) */
function sharedDecode(kv: KeyValue): ApiObject | undefined {
  try {
    return decodeShared(kv);
  } catch {
    return undefined;
  }
}

export class GarbageCollector {
  private readonly nodes = new Map<string, GraphNode>();
  private readonly keyByUid = new Map<string, string>();
  /** owner uid → keys of the objects that name it in ownerReferences */
  private readonly dependents = new Map<string, Set<string>>();
  /** `<group>/<resource>` → a definition serving it (all versions share storage) */
  private resources = new Map<string, ResourceDefinition>();
  private readonly scanned = new Set<string>();
  /** applied writes not yet ingested, with their objects decoded when they were applied */
  private readonly inbox: { write: AppliedWrite; decoded: (ApiObject | undefined)[] }[] = [];
  private readonly queue = new Set<string>();
  private running = false;
  private stopped = false;
  private started = false;
  private unsubscribe?: () => void;
  private unwatchRegistry?: () => void;
  private readonly retries = new Map<string, number>();

  constructor(
    private readonly store: RevisionedStore,
    private readonly registry: Registry,
    private readonly storeFor: (def: ResourceDefinition) => GenericStore,
    private readonly log: (msg: string) => void = () => {},
    /** the server's Events (event-recorder.ts, docs/events.md); best effort */
    private readonly recorder?: Pick<EventRecorder, 'event'>,
  ) {}

  /** an Event about an object the collector acted on; never awaited, never fails the collection */
  private record(def: ResourceDefinition, obj: ApiObject, type: 'Normal' | 'Warning', reason: string, message: string): void {
    const m = obj.metadata ?? {};
    const involved: InvolvedObject = { apiVersion: apiVersionOf(def), kind: def.kind, name: m.name ?? '', uid: m.uid };
    if (m.namespace) involved.namespace = m.namespace;
    void this.recorder?.event(involved, type, reason, message);
  }

  /**
   * subscribes, then scans every registered kind (in the same tick, so no
   * write is missed). May be called again after stop() (leader-gate.ts): the
   * graph is rebuilt from the store, as it stopped following writes.
   */
  start(): void {
    this.unsubscribe?.();
    this.unwatchRegistry?.();
    this.stopped = false;
    this.nodes.clear();
    this.keyByUid.clear();
    this.dependents.clear();
    this.scanned.clear();
    this.inbox.length = 0;
    this.queue.clear();
    this.retries.clear();
    this.unsubscribe = this.store.onApplied((w) => {
      // decode now, while the write that made the object may still hand it over
      // and the watch caches share the decode (decodeShared); ingest runs later
      const decoded = w.events.map((ev) => (ev.type === 'put' && this.defOfKey(ev.kv.key) ? sharedDecode(ev.kv) : undefined));
      this.inbox.push({ write: w, decoded });
      this.kick();
    });
    this.unwatchRegistry = this.registry.onChange(() => {
      this.scan();
      this.kick();
    });
    this.scan();
    this.started = true;
    this.kick();
  }

  get hasStarted(): boolean {
    return this.started;
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe?.();
    this.unwatchRegistry?.();
    this.unsubscribe = this.unwatchRegistry = undefined;
  }

  /** true when nothing is queued or running (tests and health) */
  get idle(): boolean {
    return !this.running && this.queue.size === 0 && this.inbox.length === 0;
  }

  // ---- the graph ----

  private refreshResources(): void {
    const m = new Map<string, ResourceDefinition>();
    for (const d of this.registry.all()) {
      // keyed as the storage keys are: versions served over another's storage share its entry
      const st = storageResource(d);
      const k = `${st.group || 'core'}/${st.resource}`;
      if (!m.has(k)) m.set(k, d);
    }
    this.resources = m;
  }

  /** the definition that stores `key`, from `/registry/<group>/<resource>/...` */
  private defOfKey(key: string): ResourceDefinition | undefined {
    const parts = key.split('/');
    if (parts.length < 5 || parts[1] !== 'registry') return undefined;
    return this.resources.get(`${parts[2]}/${parts[3]}`);
  }

  /** reads every kind not read before; queues what needs attention */
  private scan(): void {
    this.refreshResources();
    for (const def of this.resources.values()) {
      const prefix = storagePrefix(def, '');
      if (this.scanned.has(prefix)) continue;
      this.scanned.add(prefix);
      for (const kv of this.store.range({ key: prefix, end: prefixEnd(prefix) }).kvs) {
        const obj = safeDecode(kv);
        if (!obj) continue;
        this.upsert(kv.key, obj);
        const node = this.nodes.get(kv.key)!;
        if (node.owners.length > 0 || node.deletingDependents || this.hasGcFinalizerAndTerminating(obj)) this.queue.add(kv.key);
      }
    }
  }

  private hasGcFinalizerAndTerminating(obj: ApiObject): boolean {
    if (!isTerminating(obj)) return false;
    const f = finalizersOf(obj);
    return f.includes(ORPHAN_FINALIZER) || f.includes(FOREGROUND_FINALIZER);
  }

  private upsert(key: string, obj: ApiObject): { before?: GraphNode; after: GraphNode } {
    const before = this.nodes.get(key);
    if (before) this.unlink(before);
    const after: GraphNode = {
      key,
      uid: obj.metadata?.uid ?? '',
      owners: ownerRefsOf(obj),
      deletingDependents: isTerminating(obj) && finalizersOf(obj).includes(FOREGROUND_FINALIZER),
    };
    this.nodes.set(key, after);
    if (after.uid) this.keyByUid.set(after.uid, key);
    for (const o of after.owners) {
      let s = this.dependents.get(o.uid);
      if (!s) this.dependents.set(o.uid, (s = new Set()));
      s.add(key);
    }
    return { before, after };
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

  /** applies queued store writes to the graph and queues the objects they concern */
  private ingest(): void {
    while (this.inbox.length > 0) {
      const { write: w, decoded } = this.inbox.shift()!;
      for (const [i, ev] of w.events.entries()) {
        const key = ev.kv.key;
        if (!this.defOfKey(key)) continue;
        if (ev.type === 'put') {
          const obj = decoded[i] ?? sharedDecode(ev.kv);
          if (!obj) {
            const old = this.nodes.get(key);
            if (old) this.removed(old);
            continue;
          }
          const { before, after } = this.upsert(key, obj);
          const ownersChanged = !before || JSON.stringify(before.owners) !== JSON.stringify(after.owners) || before.uid !== after.uid;
          if (after.owners.length > 0 && ownersChanged) this.queue.add(key);
          if (after.deletingDependents) {
            // the owner now waits: its dependents are to be deleted
            this.queue.add(key);
            if (!before?.deletingDependents) for (const d of this.dependents.get(after.uid) ?? []) this.queue.add(d);
          }
          if (this.hasGcFinalizerAndTerminating(obj)) this.queue.add(key);
          // an owner waiting for this dependent may be unblocked by a changed reference
          if (before) this.wakeWaitingOwners(before);
          if (ownersChanged || isTerminating(obj)) this.wakeWaitingOwners(after);
        } else {
          const old = this.nodes.get(key);
          if (old) this.removed(old);
        }
      }
    }
  }

  private removed(node: GraphNode): void {
    this.unlink(node);
    this.nodes.delete(node.key);
    // dependents of a vanished owner: delete them or drop the reference (Background)
    for (const d of this.dependents.get(node.uid) ?? []) this.queue.add(d);
    this.wakeWaitingOwners(node);
  }

  private wakeWaitingOwners(node: GraphNode): void {
    for (const o of node.owners) {
      const k = this.keyByUid.get(o.uid);
      if (k && this.nodes.get(k)?.deletingDependents) this.queue.add(k);
    }
  }

  // ---- the work loop ----

  private kick(): void {
    if (this.running || this.stopped) return;
    this.running = true;
    setImmediate(() => void this.drain());
  }

  private async drain(): Promise<void> {
    try {
      while (!this.stopped) {
        this.ingest();
        const key = this.queue.values().next().value as string | undefined;
        if (key === undefined) break;
        this.queue.delete(key);
        try {
          await this.process(key);
          this.retries.delete(key);
        } catch (e) {
          if (this.stopped) break;
          const n = (this.retries.get(key) ?? 0) + 1;
          this.retries.set(key, n);
          this.log(`garbage collector: ${key}: ${(e as Error).message}`);
          // back off, level-driven: the retry reads the object afresh
          setTimeout(() => {
            // a restart re-scans everything; a stopped collector queues nothing
            if (this.stopped) return;
            this.queue.add(key);
            this.kick();
          }, Math.min(30_000, 100 * 2 ** Math.min(n, 8))).unref();
        }
      }
    } finally {
      this.running = false;
    }
    if (!this.stopped && (this.inbox.length > 0 || this.queue.size > 0)) this.kick();
  }

  private read(key: string): { def: ResourceDefinition; obj: ApiObject } | undefined {
    const def = this.defOfKey(key);
    if (!def) return undefined;
    const kv = this.store.range({ key }).kvs[0];
    if (!kv) return undefined;
    const obj = safeDecode(kv);
    return obj ? { def, obj } : undefined;
  }

  private async process(key: string): Promise<void> {
    const cur = this.read(key);
    if (!cur) return;
    const { def, obj } = cur;
    if (isTerminating(obj)) {
      const f = finalizersOf(obj);
      if (f.includes(FOREGROUND_FINALIZER)) return this.processForeground(def, obj);
      if (f.includes(ORPHAN_FINALIZER)) return this.processOrphan(def, obj);
      // being deleted some other way: nothing for the collector
      return;
    }
    if (ownerRefsOf(obj).length > 0) await this.checkOwners(def, obj);
  }

  /** is the owner a reference names there, and is it waiting for its dependents? */
  private ownerState(ref: OwnerRef, dependentNamespace: string): OwnerState | 'unknown' {
    const slash = ref.apiVersion.indexOf('/');
    const group = slash >= 0 ? ref.apiVersion.slice(0, slash) : '';
    const version = slash >= 0 ? ref.apiVersion.slice(slash + 1) : ref.apiVersion;
    const def = this.registry.lookupKind(group, version, ref.kind);
    // a kind this server does not serve: keep the reference (conservative)
    if (!def) return 'unknown';
    // a namespaced owner lives in the dependent's namespace; a cluster-scoped dependent cannot have one
    if (def.scope === 'Namespaced' && dependentNamespace === '') return 'invalid';
    const kv = this.store.range({ key: storageKey(def, dependentNamespace, ref.name) }).kvs[0];
    if (!kv) return 'absent';
    const owner = safeDecode(kv);
    if (!owner) return 'unknown';
    if (owner.metadata?.uid !== ref.uid) return 'absent';
    if (isTerminating(owner) && finalizersOf(owner).includes(FOREGROUND_FINALIZER)) return 'waiting';
    return 'present';
  }

  /** Kubernetes' attemptToDeleteItem for an object that is not being deleted */
  private async checkOwners(def: ResourceDefinition, obj: ApiObject): Promise<void> {
    const ns = obj.metadata?.namespace ?? '';
    const solid: OwnerRef[] = [];
    const drop: OwnerRef[] = [];
    let waiting = 0;
    for (const ref of ownerRefsOf(obj)) {
      const s = this.ownerState(ref, ns);
      if (s === 'invalid') {
        // kube's garbage collector reports this reference as it drops it (reason and wording as kube)
        this.record(def, obj, 'Warning', 'OwnerRefInvalidNamespace', `ownerRef [${ref.apiVersion}/${ref.kind}, namespace: ${ns}, name: ${ref.name}, uid: ${ref.uid}] does not exist in namespace "${ns}"`);
      }
      if (s === 'present' || s === 'unknown') solid.push(ref);
      else {
        drop.push(ref);
        if (s === 'waiting') waiting++;
      }
    }
    if (drop.length === 0) return;
    const uid = obj.metadata?.uid ?? '';
    if (solid.length > 0) {
      // another owner keeps it alive: forget the owners that are gone or going
      const gone = new Set(drop.map((r) => r.uid));
      await this.update(def, obj, (o) => {
        const refs = (o.metadata?.ownerReferences ?? []) as JSONObject[];
        o.metadata!.ownerReferences = refs.filter((r) => !gone.has(r.uid as string));
        if (o.metadata!.ownerReferences.length === 0) delete o.metadata!.ownerReferences;
      });
      return;
    }
    let policy: PropagationPolicy;
    const f = finalizersOf(obj);
    if (waiting > 0 && (this.dependents.get(uid)?.size ?? 0) > 0) policy = 'Foreground';
    else if (f.includes(ORPHAN_FINALIZER)) policy = 'Orphan';
    else if (f.includes(FOREGROUND_FINALIZER)) policy = 'Foreground';
    else policy = 'Background';
    if (await this.remove(def, obj, policy)) {
      // not recorded by kube's collector: an Event on the dependent says why it went (docs/events.md)
      const owners = drop.map((r) => `${r.kind} ${r.name} (uid ${r.uid})`).join(', ');
      this.record(def, obj, 'Normal', 'GarbageCollected', `Deleted by the garbage collector (propagation ${policy}): owner${drop.length > 1 ? 's' : ''} ${owners} ${drop.length > 1 ? 'are' : 'is'} gone`);
    }
  }

  /** owner with `foregroundDeletion`: delete the dependents, then drop the finalizer */
  private async processForeground(def: ResourceDefinition, owner: ApiObject): Promise<void> {
    const uid = owner.metadata?.uid ?? '';
    let blocking = 0;
    for (const depKey of [...(this.dependents.get(uid) ?? [])]) {
      const dep = this.read(depKey);
      if (!dep) continue;
      const refs = ownerRefsOf(dep.obj).filter((r) => r.uid === uid);
      if (refs.length === 0) continue;
      if (!isTerminating(dep.obj)) await this.checkOwners(dep.def, dep.obj);
      // still there (finalizers of its own, or kept by another owner)?
      const after = this.read(depKey);
      if (after && ownerRefsOf(after.obj).some((r) => r.uid === uid && r.blockOwnerDeletion)) blocking++;
    }
    // the dependents' own deletions wake this owner again (wakeWaitingOwners)
    if (blocking > 0) return;
    await this.update(def, owner, (o) => {
      o.metadata!.finalizers = finalizersOf(o).filter((x) => x !== FOREGROUND_FINALIZER);
    });
  }

  /** owner with `orphan`: remove the reference from every dependent, then the finalizer */
  private async processOrphan(def: ResourceDefinition, owner: ApiObject): Promise<void> {
    const uid = owner.metadata?.uid ?? '';
    for (const depKey of [...(this.dependents.get(uid) ?? [])]) {
      const dep = this.read(depKey);
      if (!dep || !ownerRefsOf(dep.obj).some((r) => r.uid === uid)) continue;
      await this.update(dep.def, dep.obj, (o) => {
        const refs = (o.metadata?.ownerReferences ?? []) as JSONObject[];
        o.metadata!.ownerReferences = refs.filter((r) => r.uid !== uid);
        if (o.metadata!.ownerReferences.length === 0) delete o.metadata!.ownerReferences;
      });
    }
    await this.update(def, owner, (o) => {
      o.metadata!.finalizers = finalizersOf(o).filter((x) => x !== ORPHAN_FINALIZER);
    });
  }

  /** an update of the object as read, pinned to its uid; gone or replaced objects are left alone */
  private async update(def: ResourceDefinition, obj: ApiObject, change: (o: ApiObject) => void): Promise<void> {
    const gs = this.storeFor(def);
    const uid = obj.metadata?.uid;
    try {
      await gs.guaranteedUpdate(obj.metadata?.namespace ?? '', obj.metadata!.name!, { dryRun: false, manager: GC_MANAGER }, (cur) => {
        const o = cur as ApiObject;
        if (o.metadata?.uid !== uid) throw new StatusError(409, 'Conflict', 'the object was replaced');
        change(o);
        return o;
      });
    } catch (e) {
      if (e instanceof StatusError && (e.code === 404 || e.code === 409)) return;
      throw e;
    }
  }

  /** true when this call deleted (or marked) the object */
  private async remove(def: ResourceDefinition, obj: ApiObject, policy: PropagationPolicy): Promise<boolean> {
    const gs = this.storeFor(def);
    try {
      await gs.delete(obj.metadata?.namespace ?? '', obj.metadata!.name!, {
        dryRun: false,
        propagationPolicy: policy,
        preconditions: { uid: obj.metadata?.uid },
      });
      return true;
    } catch (e) {
      // gone already, or a new object of the same name (the precondition protects it)
      if (e instanceof StatusError && (e.code === 404 || e.code === 409)) return false;
      throw e;
    }
  }
}
