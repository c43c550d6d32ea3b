// The namespace lifecycle controller (spec 000 §3.1: "a namespaced resource is
// also deleted when its namespace is deleted"). A deleted namespace is
// Terminating while its `spec.finalizers` holds `kubernetes`; this controller
// deletes every namespaced object in it, then removes that finalizer, and the
// generic store removes the namespace. It is level-driven: after a restart in
// the middle it simply finds the Terminating namespace again and finishes.

import { StatusError } from '../api/errors.js';
import type { GenericStore } from '../api/generic-store.js';
import { decodeObject } from '../api/generic-store.js';
import type { Registry } from '../api/registry.js';
import type { ApiObject, ResourceDefinition } from '../api/types.js';
import type { RevisionedStore } from '../store/types.js';

export const NAMESPACE_FINALIZER = 'kubernetes';

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
  ) {}

  start(): void {
    const nsDef = this.namespaceDef();
    const gs = this.storeFor(nsDef);
    const { key, end } = gs.rangeKeys('');
    this.unsubscribe = this.store.onApplied((w) => {
      for (const ev of w.events) {
        if (ev.type !== 'put' || ev.kv.key < key || ev.kv.key >= end) continue;
        const ns = decodeObject(ev.kv);
        if (ns.metadata?.deletionTimestamp) this.enqueue(ns.metadata.name!);
      }
    });
    // resume work a restart interrupted
    for (const kv of this.store.range({ key, end }).kvs) {
      const ns = decodeObject(kv);
      if (ns.metadata?.deletionTimestamp) this.enqueue(ns.metadata.name!);
    }
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe?.();
  }

  private namespaceDef(): ResourceDefinition {
    const d = this.registry.lookup('', 'v1', 'namespaces');
    if (!d) throw new Error('namespaces are not registered');
    return d;
  }

  private enqueue(name: string): void {
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
    if (!ns.metadata?.deletionTimestamp) return;
    let remaining = 0;
    for (const def of this.registry.all()) {
      if (def.scope !== 'Namespaced') continue;
      const gs = this.storeFor(def);
      const { key, end } = gs.rangeKeys(name);
      for (const item of this.store.range({ key, end }).kvs) {
        const obj = decodeObject(item);
        remaining++;
        try {
          await gs.delete(name, obj.metadata!.name!, { dryRun: false });
        } catch (e) {
          if (!(e instanceof StatusError && e.code === 404)) throw e;
        }
      }
    }
    if (remaining > 0) {
      // objects with finalizers of their own stay until those are removed; look again later
      const left = this.registry
        .all()
        .filter((d) => d.scope === 'Namespaced')
        .some((d) => {
          const { key, end } = this.storeFor(d).rangeKeys(name);
          return this.store.range({ key, end, countOnly: true }).count > 0;
        });
      if (left) {
        setTimeout(() => this.enqueue(name), 500).unref();
        return;
      }
    }
    await nsStore.guaranteedUpdate('', name, { dryRun: false }, (cur) => {
      const o = cur as ApiObject;
      const spec = (o.spec ?? {}) as { finalizers?: string[] };
      spec.finalizers = (spec.finalizers ?? []).filter((f) => f !== NAMESPACE_FINALIZER);
      o.spec = spec;
      return o;
    });
  }
}
