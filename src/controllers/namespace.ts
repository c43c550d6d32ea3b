// The namespace lifecycle controller (spec 000 §3.1: "a namespaced resource is
// also deleted when its namespace is deleted"). A deleted namespace is
// Terminating while its `spec.finalizers` holds `kubernetes` (a kind-held
// finalizer the deletion machine counts, src/registry/deletion/machine.ts); this
// controller deletes every namespaced object in it with the Background
// policy (the garbage collector takes care of dependents elsewhere) — its pods
// first, the rest once no pod remains, as kube's OrderedNamespaceDeletion —, reports
// progress in the namespace's status conditions as Kubernetes does, then
// removes that finalizer, and the generic store removes the namespace. It is
// level-driven: after a restart in the middle it simply finds the
// Terminating namespace again and finishes.

import type { EventRecorder, InvolvedObject } from './event-recorder.js';
import { StatusError } from '../core/errors.js';
import { isCorruptObjectError } from '../registry/deletion/corrupt.js';
import { isTerminating } from '../registry/deletion/facts.js';
import type { GenericStore } from '../registry/generic-store.js';
import { nowTimestamp } from '../machinery/meta.js';
import type { Registry } from '../registry/registry.js';
import type { ApiObject, JSONObject, ResourceDefinition } from '../registry/types.js';
import type { Clock } from '../core/clock.js';
import { ControllerLoop, LoopController, type Informer, type InformerSource } from './runtime/index.js';
import { NAMESPACE_FINALIZER } from '../registry/kinds/namespace.js';

export { NAMESPACE_FINALIZER };
/** the field manager of the controller's writes (spec 000 §2.4) */
export const NAMESPACE_CONTROLLER_MANAGER = 'orch-namespace-controller';

export class NamespaceController extends LoopController {
  protected readonly loop: ControllerLoop;
  private namespaces: Informer | undefined;

  constructor(
    store: InformerSource,
    private readonly registry: Registry,
    private readonly storeFor: (def: ResourceDefinition) => GenericStore,
    private readonly log: (msg: string) => void = () => {},
    /** the server's Events (event-recorder.ts); cluster-scoped objects' Events go to `default`, as in kube */
    private readonly recorder?: Pick<EventRecorder, 'event'>,
    clock?: Clock,
  ) {
    super();
    this.loop = new ControllerLoop(store, { name: 'namespace controller', log, clock, baseDelayMs: 500 });
  }

  /** lists and follows namespaces; may be called again after stop() (src/controllers/leader-gate.ts) */
  start(): void {
    this.loop.begin((name) => this.finalize(name));
    // a start finds whatever a restart interrupted: every Terminating namespace arrives as an add
    const onNamespace = (ns: ApiObject, key: string): void => {
      if (isTerminating(ns)) this.loop.enqueue(key);
    };
    this.namespaces = this.loop.inform(this.storeFor(this.namespaceDef()).rangeKeys(''), { add: onNamespace, update: (_old, ns, key) => onNamespace(ns, key) });
  }

  stop(): void {
    this.loop.end();
  }

  private namespaceDef(): ResourceDefinition {
    const d = this.registry.lookup('', 'v1', 'namespaces');
    if (!d) throw new Error('namespaces are not registered');
    return d;
  }

  /** deletes the contents, then drops the `kubernetes` finalizer */
  private async finalize(name: string): Promise<void> {
    const nsStore = this.storeFor(this.namespaceDef());
    const ns = this.namespaces?.get(name);
    if (!ns || !isTerminating(ns)) return;
    const remaining = new Map<string, number>();
    const withFinalizers = new Map<string, number>();
    const failures: string[] = [];
    const seen = new Set<string>();
    // pods first, and nothing else while any remain (kube's OrderedNamespaceDeletion):
    // what a pod uses (its ConfigMaps, Secrets, claims) stays until the pod is gone
    const defs = this.registry.all().filter((d) => d.scope === 'Namespaced');
    const isPods = (d: ResourceDefinition): boolean => d.group === '' && d.resource === 'pods';
    for (const def of [...defs.filter(isPods), ...defs.filter((d) => !isPods(d))]) {
      if (!isPods(def) && (remaining.get('pods.') ?? 0) > 0) break;
      const gs = this.storeFor(def);
      const range = gs.rangeKeys(name);
      // every version of a resource shares its storage: one pass per prefix
      if (seen.has(range.key)) continue;
      seen.add(range.key);
      // kube's `<resource>.<group>`, so `pods.` for the core group
      const resource = `${def.resource}.${def.group}`;
      // the namespace's part of the resource, listed for this pass only (released below)
      const contents = this.loop.use(range);
      try {
        // a large namespace is listed in slices (runtime/informer-factory.ts)
        await contents.synced();
        if (!contents.hasSynced()) return; // the run stopped
        for (const objName of [...contents.informer.keys(), ...contents.informer.corruptKeys()]) {
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
            failures.push(isCorruptObjectError(e) ? `corrupt object ${range.key}${objName}` : `${resource} "${objName}": ${(e as Error).message}`);
          }
        }
      } finally {
        contents.release();
      }
    }
    await this.report(nsStore, name, remaining, withFinalizers, failures);
    if (remaining.size > 0) {
      // objects with finalizers of their own stay until those are removed; look again later
      if (failures.length > 0) {
        this.log(`namespace controller: ${name}: ${failures.join('; ')}`);
        void this.recorder?.event(this.involved(ns), 'Warning', 'NamespaceDeletionContentFailure', `Failed to delete all resource types: ${failures.join('; ')}`);
      }
      this.loop.enqueueAfter(name, failures.length > 0 ? 1000 : 500);
      return;
    }
    await nsStore.guaranteedUpdate('', name, { dryRun: false, manager: NAMESPACE_CONTROLLER_MANAGER, subresource: 'finalize' }, (cur) => {
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
    // kube's five conditions, in its order; discovery and group versions are local here and never fail
    const counts = (m: Map<string, number>, unit: string): string =>
      [...m].map(([what, n]) => `${what} ${unit} ${n} resource instances`).sort().join(', ');
    const wanted: Record<string, { status: string; reason: string; message: string }> = {
      NamespaceDeletionDiscoveryFailure: { status: 'False', reason: 'ResourcesDiscovered', message: 'All resources successfully discovered' },
      NamespaceDeletionGroupVersionParsingFailure: { status: 'False', reason: 'ParsedGroupVersions', message: 'All legacy kube types successfully parsed' },
      NamespaceDeletionContentFailure:
        failures.length > 0
          ? { status: 'True', reason: 'ContentDeletionFailed', message: `Failed to delete all resource types: ${failures.join('; ')}` }
          : { status: 'False', reason: 'ContentDeleted', message: 'All content successfully deleted, may be waiting on finalization' },
      NamespaceContentRemaining:
        remaining.size > 0
          ? {
              status: 'True',
              reason: 'SomeResourcesRemain',
              message: `Some resources are remaining: ${counts(remaining, 'has')}`,
            }
          : { status: 'False', reason: 'ContentRemoved', message: 'All content successfully removed' },
      NamespaceFinalizersRemaining:
        withFinalizers.size > 0
          ? {
              status: 'True',
              reason: 'SomeFinalizersRemain',
              message: `Some content in the namespace has finalizers remaining: ${counts(withFinalizers, 'in')}`,
            }
          : { status: 'False', reason: 'ContentHasNoFinalizers', message: 'All content-preserving finalizers finished' },
    };
    try {
      await nsStore.guaranteedUpdate('', name, { dryRun: false, manager: NAMESPACE_CONTROLLER_MANAGER, subresource: 'finalize' }, (cur) => {
        const o = cur as ApiObject;
        const status = (o.status ?? {}) as { conditions?: JSONObject[] };
        const conditions = (status.conditions ?? []).filter((c) => !(String(c.type) in wanted));
        for (const [type, w] of Object.entries(wanted)) {
          const old = (status.conditions ?? []).find((c) => c.type === type);
          // an unchanged condition keeps its time, so an unchanged status is not written again
          const same = old && old.status === w.status && old.reason === w.reason && old.message === w.message;
          const now = nowTimestamp(this.loop.clock.now());
          conditions.push(same ? old : { type, ...w, lastTransitionTime: old?.status === w.status ? (old.lastTransitionTime ?? now) : now });
        }
        o.status = { ...status, conditions };
        return o;
      });
    } catch (e) {
      if (!(e instanceof StatusError && e.code === 404)) throw e;
    }
  }
}
