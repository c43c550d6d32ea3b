// The garbage collector (spec 000 §2.6 propagationPolicy / orphanDependents;
// the Kubernetes model, docs/deletion.md), on the controller runtime
// (docs/controllers.md) as Kubernetes' is: a dependency graph (gc-graph.ts)
// fed by an informer for every registered kind — the registry changes at run
// time with CRDs, so an informer starts when a kind is registered and stops
// when it is removed — and two work queues on the runtime's WorkQueue (Clock
// driven, with backoff): "attemptToDelete" and "orphan". It acts on three
// situations:
//
//   - a dependent whose owners are all gone (Background, the default): the
//     dependent is deleted; an owner that is gone but others remain is just
//     dropped from its ownerReferences;
//   - an owner Terminating with the `orphan` finalizer (orphan queue): the
//     reference to it is removed from every dependent, then the finalizer;
//   - an owner Terminating with the `foregroundDeletion` finalizer: its
//     dependents are deleted (Foreground themselves when they have
//     dependents), and once no dependent with `blockOwnerDeletion` remains,
//     the finalizer is removed — the deletion machine then removes the owner.
//
// It is level-driven: every decision is taken from the objects as the
// informers hold them now (the informers are never behind the local store,
// runtime/informer-factory.ts), and each start lists everything, so a restart
// in the middle of a foreground deletion carries on where it stopped. An
// owner the cache does not hold (or holds with another uid) is confirmed
// absent with a live read through the registry before a dependent is touched,
// as kube's isDangling does. The informer handlers only keep the graph and
// queue keys; the work happens in the queues' workers.

import { type Clock, systemClock } from '../core/clock.js';
import { StatusError } from '../core/errors.js';
import { FOREGROUND_FINALIZER, ORPHAN_FINALIZER, type PropagationPolicy } from '../registry/deletion/machine.js';
import { isTerminating } from '../registry/deletion/facts.js';
import type { GenericStore } from '../registry/generic-store.js';
import { storagePrefix } from '../registry/generic-store.js';
import { type Registry, apiVersionOf } from '../registry/registry.js';
import type { ApiObject, JSONObject, ResourceDefinition } from '../registry/types.js';
import type { EventRecorder, InvolvedObject } from './event-recorder.js';
import { type GraphNode, type OwnerRef, OwnerGraph, finalizersOf, ownerRefsOf } from './gc-graph.js';
import { ControllerLoop, type InformerHandlers, type InformerSource, type InformerUse, WorkQueue, prefixRange, sharedInformers } from './runtime/index.js';

export { ownerRefsOf };

/** the field manager the collector's writes are recorded under (spec 000 §2.4) */
export const GC_MANAGER = 'orch-garbage-collector';

/** `invalid`: a namespaced owner named by a cluster-scoped dependent (treated as absent) */
type OwnerState = 'absent' | 'invalid' | 'waiting' | 'present';

/** one watched kind (kube's "monitor"): a definition serving its storage and the informer of it */
interface Monitor {
  def: ResourceDefinition;
  use: InformerUse;
}

/**
 * Retries start at the collector's old fixed delay (200 ms) and double up to
 * 30 s, as before the move onto the runtime (docs/controllers.md).
 */
const BACKOFF = { baseDelayMs: 200, maxDelayMs: 30_000 };

export class GarbageCollector {
  private readonly graph = new OwnerGraph();
  /** storage prefix (`/registry/<group>/<resource>/`) → its monitor */
  private readonly monitors = new Map<string, Monitor>();
  /** the attemptToDelete queue (and the run's lifetime) */
  private readonly loop: ControllerLoop;
  private orphans: WorkQueue | undefined;
  private started = false;
  private unwatchRegistry?: () => void;

  constructor(
    private readonly source: InformerSource,
    private readonly registry: Registry,
    private readonly storeFor: (def: ResourceDefinition) => GenericStore,
    private readonly log: (msg: string) => void = () => {},
    /** the server's Events (event-recorder.ts, docs/events.md); best effort */
    private readonly recorder?: Pick<EventRecorder, 'event'>,
    private readonly clock: Clock = systemClock,
  ) {
    this.loop = new ControllerLoop(source, { name: 'garbage collector', log, clock, ...BACKOFF });
  }

  /** an Event about an object the collector acted on; never awaited, never fails the collection */
  private record(def: ResourceDefinition, obj: ApiObject, type: 'Normal' | 'Warning', reason: string, message: string): void {
    const m = obj.metadata ?? {};
    const involved: InvolvedObject = { apiVersion: apiVersionOf(def), kind: def.kind, name: m.name ?? '', uid: m.uid };
    if (m.namespace) involved.namespace = m.namespace;
    void this.recorder?.event(involved, type, reason, message);
  }

  /**
   * Starts the queues, then an informer for every registered kind (each lists
   * now and hands its objects to the graph). May be called again after stop()
   * (leader-gate.ts): the graph is rebuilt from fresh lists.
   */
  start(): void {
    this.stop();
    this.graph.clear();
    this.loop.begin((key) => this.attemptToDelete(key));
    const orphans = new WorkQueue({ name: 'garbage collector (orphan)', clock: this.clock, log: this.log, ...BACKOFF });
    this.orphans = orphans;
    void orphans.run((key) => this.attemptToOrphan(key));
    this.unwatchRegistry = this.registry.onChange(() => this.syncMonitors());
    this.syncMonitors();
    this.started = true;
  }

  /** nodes in the dependency graph: objects that name owners or wait for their dependents (gc-graph.ts) */
  get graphSize(): number {
    return this.graph.size;
  }

  get hasStarted(): boolean {
    return this.started;
  }

  /** running, and every kind's informer has listed */
  hasSynced(): boolean {
    if (!this.loop.running) return false;
    for (const m of this.monitors.values()) if (!m.use.hasSynced()) return false;
    return true;
  }

  stop(): void {
    this.unwatchRegistry?.();
    this.unwatchRegistry = undefined;
    for (const m of this.monitors.values()) m.use.release();
    this.monitors.clear();
    this.orphans?.shutDown();
    this.orphans = undefined;
    this.loop.end();
  }

  // ---- the graph, fed by one informer per kind ----

  /** starts informers for kinds registered since the last call and stops those of kinds removed (kube's resyncMonitors) */
  private syncMonitors(): void {
    const wanted = new Map<string, ResourceDefinition>();
    for (const d of this.registry.all()) {
      // versions served over another's storage share its prefix, so its informer
      const prefix = storagePrefix(d, '');
      if (!wanted.has(prefix)) wanted.set(prefix, d);
    }
    for (const [prefix, m] of [...this.monitors]) {
      const def = wanted.get(prefix);
      if (def) {
        m.def = def;
        continue;
      }
      // the kind is no longer served: its objects leave the graph (owners named by them now read as 'unknown')
      const gone = m.use.informer.keys().map((k) => [k, m.use.informer.get(k)] as const);
      m.use.release();
      this.monitors.delete(prefix);
      for (const [k, obj] of gone) this.removed(prefix + k, obj);
    }
    for (const [prefix, def] of wanted) {
      if (this.monitors.has(prefix)) continue;
      // the handlers get an add for every object listed (the start-up scan); the collector reads metadata only
      // (kube's metadata informers), so its cache does not hold every object whole (docs/store.md)
      this.monitors.set(prefix, { def, use: sharedInformers(this.source).use({ ...prefixRange(prefix), metadataOnly: true }, this.handlers(prefix)) });
    }
  }

  private handlers(prefix: string): InformerHandlers {
    return {
      add: (obj, key) => this.changed(prefix + key, obj),
      update: (_old, obj, key) => this.changed(prefix + key, obj),
      delete: (obj, key) => this.removed(prefix + key, obj),
    };
  }

  /** an object added or updated: the graph follows, and what it concerns is queued (kube's processGraphChanges) */
  private changed(key: string, obj: ApiObject): void {
    const { before, after } = this.graph.upsert(key, obj);
    const ownersChanged = !before || before.uid !== after.uid || JSON.stringify(before.owners) !== JSON.stringify(after.owners);
    if (after.owners.length > 0 && ownersChanged) this.loop.enqueue(key);
    if (after.deletingDependents) {
      // the owner now waits: its dependents are to be deleted
      this.loop.enqueue(key);
      if (!before?.deletingDependents) for (const d of this.graph.dependentsOf(after.uid)) this.loop.enqueue(d);
    } else if (isTerminating(obj) && finalizersOf(obj).includes(ORPHAN_FINALIZER)) {
      this.orphans?.add(key);
    }
    // an owner waiting for this dependent may be unblocked by a changed reference
    if (before) this.wakeWaitingOwners(before);
    if (ownersChanged || isTerminating(obj)) this.wakeWaitingOwners(after);
  }

  /** an object deleted (`obj` as last seen): the graph holds a node only for objects with owners or waiting ones */
  private removed(key: string, obj: ApiObject | undefined): void {
    const node = this.graph.remove(key);
    const uid = node?.uid ?? obj?.metadata?.uid;
    // dependents of a vanished owner: delete them or drop the reference (Background)
    if (uid) for (const d of this.graph.dependentsOf(uid)) this.loop.enqueue(d);
    if (node) this.wakeWaitingOwners(node);
  }

  private wakeWaitingOwners(node: GraphNode): void {
    for (const o of node.owners) {
      const k = this.graph.keyOf(o.uid);
      if (k && this.graph.get(k)?.deletingDependents) this.loop.enqueue(k);
    }
  }

  // ---- the workers ----

  /** the object at storage key `key` as its kind's informer holds it */
  private read(key: string): { def: ResourceDefinition; obj: ApiObject } | undefined {
    // `/registry/<group>/<resource>/` is the prefix of every stored object's key
    const parts = key.split('/');
    if (parts.length < 5) return undefined;
    const prefix = `/${parts[1]}/${parts[2]}/${parts[3]}/`;
    const m = this.monitors.get(prefix);
    const obj = m?.use.informer.get(key.slice(prefix.length));
    return m && obj ? { def: m.def, obj } : undefined;
  }

  /**
   * Resolves once every monitor has listed and handed its objects to the
   * graph (they come in slices, runtime/informer-factory.ts), or at stop:
   * kube's collector too waits for its monitors before it acts.
   */
  private async monitorsSynced(): Promise<void> {
    while (this.loop.running) {
      const waiting = [...this.monitors.values()].filter((m) => !m.use.hasSynced());
      if (waiting.length === 0) return;
      await Promise.race(waiting.map((m) => m.use.synced()));
    }
  }

  /** the attemptToDelete queue: an object with owners, or an owner deleting its dependents first */
  private async attemptToDelete(key: string): Promise<void> {
    await this.monitorsSynced();
    const cur = this.read(key);
    if (!cur) return;
    const { def, obj } = cur;
    if (isTerminating(obj)) {
      const f = finalizersOf(obj);
      if (f.includes(FOREGROUND_FINALIZER)) return this.processForeground(def, obj);
      if (f.includes(ORPHAN_FINALIZER)) this.orphans?.add(key);
      // being deleted some other way: nothing for the collector
      return;
    }
    if (ownerRefsOf(obj).length > 0) await this.checkOwners(def, obj);
  }

  /** the orphan queue: an owner Terminating with the `orphan` finalizer */
  private async attemptToOrphan(key: string): Promise<void> {
    await this.monitorsSynced();
    const cur = this.read(key);
    if (!cur || !isTerminating(cur.obj)) return;
    const f = finalizersOf(cur.obj);
    // foregroundDeletion goes first (as before the queues were split)
    if (f.includes(FOREGROUND_FINALIZER)) {
      this.loop.enqueue(key);
      return;
    }
    if (f.includes(ORPHAN_FINALIZER)) await this.processOrphan(cur.def, cur.obj);
  }

  /** is the owner a reference names there, and is it waiting for its dependents? */
  private async ownerState(ref: OwnerRef, dependentNamespace: string): Promise<OwnerState | 'unknown'> {
    const slash = ref.apiVersion.indexOf('/');
    const group = slash >= 0 ? ref.apiVersion.slice(0, slash) : '';
    const version = slash >= 0 ? ref.apiVersion.slice(slash + 1) : ref.apiVersion;
    const def = this.registry.lookupKind(group, version, ref.kind);
    // a kind this server does not serve: keep the reference (conservative)
    if (!def) return 'unknown';
    // a namespaced owner lives in the dependent's namespace; a cluster-scoped dependent cannot have one
    if (def.scope === 'Namespaced' && dependentNamespace === '') return 'invalid';
    const informer = this.monitors.get(storagePrefix(def, ''))?.use.informer;
    const key = def.scope === 'Namespaced' ? `${dependentNamespace}/${ref.name}` : ref.name;
    // a corrupt owner is neither present nor absent (spec 000 §4.10): keep the reference
    if (!informer || informer.corruptKeys().includes(key)) return 'unknown';
    let owner = informer.get(key);
    if (owner?.metadata?.uid !== ref.uid) {
      // kube's isDangling: absence is confirmed with a live read before a dependent is touched
      owner = await this.liveRead(def, dependentNamespace, ref.name);
      if (owner?.metadata?.uid !== ref.uid) return 'absent';
    }
    if (isTerminating(owner) && finalizersOf(owner).includes(FOREGROUND_FINALIZER)) return 'waiting';
    return 'present';
  }

  /** a consistent read through the registry; undefined when the object does not exist */
  private async liveRead(def: ResourceDefinition, namespace: string, name: string): Promise<ApiObject | undefined> {
    try {
      return await this.storeFor(def).get(def.scope === 'Namespaced' ? namespace : '', name);
    } catch (e) {
      if (e instanceof StatusError && e.code === 404) return undefined;
      // anything else (a corrupt value, no quorum) is retried with backoff rather than taken for absence
      throw e;
    }
  }

  /** Kubernetes' attemptToDeleteItem for an object that is not being deleted */
  private async checkOwners(def: ResourceDefinition, obj: ApiObject): Promise<void> {
    const ns = obj.metadata?.namespace ?? '';
    const solid: OwnerRef[] = [];
    const drop: OwnerRef[] = [];
    let waiting = 0;
    for (const ref of ownerRefsOf(obj)) {
      const s = await this.ownerState(ref, ns);
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
    if (waiting > 0 && this.graph.dependentsOf(uid).length > 0) {
      policy = 'Foreground';
      // kube's cycle guard: a dependent of this object already waits for its own dependents, so this
      // object's references stop blocking its owners before it waits in turn (A→B→C→A would deadlock)
      if (this.dependentWaiting(uid)) await this.unblockOwners(def, obj);
    } else if (f.includes(ORPHAN_FINALIZER)) policy = 'Orphan';
    else if (f.includes(FOREGROUND_FINALIZER)) policy = 'Foreground';
    else policy = 'Background';
    if (await this.remove(def, obj, policy)) {
      // not recorded by kube's collector: an Event on the dependent says why it went (docs/events.md)
      const owners = drop.map((r) => `${r.kind} ${r.name} (uid ${r.uid})`).join(', ');
      this.record(def, obj, 'Normal', 'GarbageCollected', `Deleted by the garbage collector (propagation ${policy}): owner${drop.length > 1 ? 's' : ''} ${owners} ${drop.length > 1 ? 'are' : 'is'} gone`);
    }
  }

  /** does a dependent of `uid` wait, Terminating with `foregroundDeletion`, for its own dependents? */
  private dependentWaiting(uid: string): boolean {
    return this.graph.dependentsOf(uid).some((k) => {
      const dep = this.read(k)?.obj;
      return dep !== undefined && isTerminating(dep) && finalizersOf(dep).includes(FOREGROUND_FINALIZER);
    });
  }

  /** kube's unblockOwnerReferences: every `blockOwnerDeletion: true` of the object becomes false */
  private async unblockOwners(def: ResourceDefinition, obj: ApiObject): Promise<void> {
    await this.update(def, obj, (o) => {
      for (const r of (o.metadata?.ownerReferences ?? []) as JSONObject[]) if (r.blockOwnerDeletion === true) r.blockOwnerDeletion = false;
    });
  }

  /** owner with `foregroundDeletion`: delete the dependents, then drop the finalizer */
  private async processForeground(def: ResourceDefinition, owner: ApiObject): Promise<void> {
    const uid = owner.metadata?.uid ?? '';
    let blocking = 0;
    for (const depKey of this.graph.dependentsOf(uid)) {
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
    for (const depKey of this.graph.dependentsOf(uid)) {
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
