// The namespace lifecycle controller (spec 000 §3.1: "a namespaced resource is
// also deleted when its namespace is deleted"). A deleted namespace is
// Terminating while its `spec.finalizers` holds `kubernetes` (a kind-held
// finalizer the deletion machine counts, src/registry/deletion/machine.ts); this
// controller deletes every namespaced object in it with the Background
// policy (the garbage collector takes care of dependents elsewhere), reports
// progress in the namespace's status conditions as Kubernetes does, then
// removes that finalizer, and the generic store removes the namespace. It is
// level-driven: after a restart in the middle it simply finds the
// Terminating namespace again and finishes.

import type { EventRecorder, InvolvedObject } from './event-recorder.js';
import { StatusError } from '../core/errors.js';
import { isCorruptObjectError } from '../registry/deletion/corrupt.js';
import { isTerminating } from '../registry/deletion/facts.js';
import type { GenericStore } from '../registry/generic-store.js';
import { decodeObject } from '../registry/generic-store.js';
import { nowTimestamp } from '../machinery/meta.js';
import type { Registry } from '../registry/registry.js';
import type { ApiObject, JSONObject, ResourceDefinition } from '../registry/types.js';
import type { KeyValue, RevisionedStore } from '../store/types.js';
import { NAMESPACE_FINALIZER } from '../registry/kinds/namespace.js';

export { NAMESPACE_FINALIZER };
/** the field manager of the controller's writes (spec 000 §2.4) */
export const NAMESPACE_CONTROLLER_MANAGER = 'orch-namespace-controller';

export class NamespaceController {
  private pending = new Set<string>();
  private running = false;
  private stopped = false;
  private unsubscribe?: () => void;

  constructor(
    private readonly store: RevisionedStore,
    private readonly registry: Registry,
    private readonly storeFor: (def: ResourceDefinition) => GenericStore,
    private readonly log: (msg: string) => void = () => {},
    /** the server's Events (event-recorder.ts); cluster-scoped objects' Events go to `default`, as in kube */
    private readonly recorder?: Pick<EventRecorder, 'event'>,
  ) {}

  /** subscribes and scans; may be called again after stop() (src/controllers/leader-gate.ts) */
  start(): void {
    this.unsubscribe?.();
    this.stopped = false;
    const nsDef = this.namespaceDef();
    const gs = this.storeFor(nsDef);
    const { key, end } = gs.rangeKeys('');
    this.unsubscribe = this.store.onApplied((w) => {
      for (const ev of w.events) {
        if (ev.type !== 'put' || ev.kv.key < key || ev.kv.key >= end) continue;
        const ns = safeDecode(ev.kv);
        if (ns && isTerminating(ns)) this.enqueue(ns.metadata!.name!);
      }
    });
    // resume work a restart interrupted
    for (const kv of this.store.range({ key, end }).kvs) {
      const ns = safeDecode(kv);
      if (ns && isTerminating(ns)) this.enqueue(ns.metadata!.name!);
    }
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    // the next start() scans again, which finds whatever is still Terminating
    this.pending.clear();
  }

  private namespaceDef(): ResourceDefinition {
    const d = this.registry.lookup('', 'v1', 'namespaces');
    if (!d) throw new Error('namespaces are not registered');
    return d;
  }

  private enqueue(name: string): void {
    // retry timers of a stopped controller fall silent
    if (this.stopped) return;
    this.pending.add(name);
    if (!this.running) {
      this.running = true;
      setImmediate(() => void this.drain());
    }
  }

  private async drain(): Promise<void> {
    while (this.pending.size > 0 && !this.stopped) {
      const name = this.pending.values().next().value as string;
      this.pending.delete(name);
      try {
        await this.finalize(name);
      } catch (e) {
        this.log(`namespace controller: ${name}: ${(e as Error).message}`);
        setTimeout(() => this.enqueue(name), 1000).unref();
      }
    }
    this.running = false;
  }

  /** deletes the contents, then drops the `kubernetes` finalizer */
  private async finalize(name: string): Promise<void> {
    const nsStore = this.storeFor(this.namespaceDef());
    const kv = nsStore.readRaw('', name);
    if (!kv) return;
    const ns = decodeObject(kv);
    if (!isTerminating(ns)) return;
    const remaining = new Map<string, number>();
    const withFinalizers = new Map<string, number>();
    const failures: string[] = [];
    const seen = new Set<string>();
    for (const def of this.registry.all()) {
      if (def.scope !== 'Namespaced') continue;
      const gs = this.storeFor(def);
      const { key, end } = gs.rangeKeys(name);
      // every version of a resource shares its storage: one pass per prefix
      if (seen.has(key)) continue;
      seen.add(key);
      const resource = def.group ? `${def.resource}.${def.group}` : def.resource;
      for (const item of this.store.range({ key, end }).kvs) {
        const objName = item.key.slice(key.length);
        try {
          const r = await gs.delete(name, objName, { dryRun: false, propagationPolicy: 'Background' });
          if (!r.deleted) {
            remaining.set(resource, (remaining.get(resource) ?? 0) + 1);
            for (const f of r.object.metadata?.finalizers ?? []) withFinalizers.set(f, (withFinalizers.get(f) ?? 0) + 1);
          }
        } catch (e) {
          if (e instanceof StatusError && e.code === 404) continue;
          remaining.set(resource, (remaining.get(resource) ?? 0) + 1);
          // a corrupt object stays until an operator force-deletes it (spec 000 §4.10)
          failures.push(isCorruptObjectError(e) ? `corrupt object ${item.key}` : `${resource} "${objName}": ${(e as Error).message}`);
        }
      }
    }
    await this.report(nsStore, name, remaining, withFinalizers, failures);
    if (remaining.size > 0) {
      // objects with finalizers of their own stay until those are removed; look again later
      if (failures.length > 0) {
        this.log(`namespace controller: ${name}: ${failures.join('; ')}`);
        void this.recorder?.event(this.involved(ns), 'Warning', 'NamespaceDeletionContentFailure', `Failed to delete all resource types: ${failures.join('; ')}`);
      }
      setTimeout(() => this.enqueue(name), failures.length > 0 ? 1000 : 500).unref();
      return;
    }
    await nsStore.guaranteedUpdate('', name, { dryRun: false, manager: NAMESPACE_CONTROLLER_MANAGER }, (cur) => {
      const o = cur as ApiObject;
      const spec = (o.spec ?? {}) as { finalizers?: string[] };
      spec.finalizers = (spec.finalizers ?? []).filter((f) => f !== NAMESPACE_FINALIZER);
      o.spec = spec;
      return o;
    });
    void this.recorder?.event(this.involved(ns), 'Normal', 'NamespaceContentDeleted', `Deleted all content of namespace ${name}`);
  }

  private involved(ns: ApiObject): InvolvedObject {
    return { apiVersion: 'v1', kind: 'Namespace', name: ns.metadata?.name ?? '', uid: ns.metadata?.uid };
  }

  /** the Kubernetes namespace conditions, so `kubectl describe ns` shows what holds it */
  private async report(
    nsStore: GenericStore,
    name: string,
    remaining: Map<string, number>,
    withFinalizers: Map<string, number>,
    failures: string[],
  ): Promise<void> {
    const wanted: Record<string, { status: string; reason: string; message: string }> = {
      NamespaceDeletionContentFailure:
        failures.length > 0
          ? { status: 'True', reason: 'ContentDeletionFailed', message: `Failed to delete all resource types: ${failures.join('; ')}` }
          : { status: 'False', reason: 'ContentDeleted', message: 'All content successfully deleted, may be waiting on finalization' },
      NamespaceContentRemaining:
        remaining.size > 0
          ? {
              status: 'True',
              reason: 'SomeResourcesRemain',
              message: `Some resources are remaining: ${[...remaining].map(([r, n]) => `${r} has ${n} resource instances`).join(', ')}`,
            }
          : { status: 'False', reason: 'ContentRemoved', message: 'All content successfully removed' },
      NamespaceFinalizersRemaining:
        withFinalizers.size > 0
          ? {
              status: 'True',
              reason: 'SomeFinalizersRemain',
              message: `Some content in the namespace has finalizers remaining: ${[...withFinalizers].map(([f, n]) => `${f} in ${n} resource instances`).join(', ')}`,
            }
          : { status: 'False', reason: 'ContentHasNoFinalizers', message: 'All content-preserving finalizers finished' },
    };
    try {
      await nsStore.guaranteedUpdate('', name, { dryRun: false, manager: NAMESPACE_CONTROLLER_MANAGER }, (cur) => {
        const o = cur as ApiObject;
        const status = (o.status ?? {}) as { conditions?: JSONObject[] };
        const conditions = (status.conditions ?? []).filter((c) => !(String(c.type) in wanted));
        for (const [type, w] of Object.entries(wanted)) {
          const old = (status.conditions ?? []).find((c) => c.type === type);
          // an unchanged condition keeps its time, so an unchanged status is not written again
          const same = old && old.status === w.status && old.reason === w.reason && old.message === w.message;
          conditions.push(same ? old : { type, ...w, lastTransitionTime: old?.status === w.status ? (old.lastTransitionTime ?? nowTimestamp()) : nowTimestamp() });
        }
        o.status = { ...status, conditions };
        return o;
      });
    } catch (e) {
      if (!(e instanceof StatusError && e.code === 404)) throw e;
    }
  }
}

function safeDecode(kv: KeyValue): ApiObject | undefined {
  try {
    return decodeObject(kv);
  } catch {
    return undefined;
  }
}
