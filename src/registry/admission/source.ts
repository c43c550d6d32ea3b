// The admission configuration in force: every MutatingWebhookConfiguration,
// ValidatingWebhookConfiguration, ValidatingAdmissionPolicy and binding,
// compiled once per stored version and kept current from the store's
// applied feed — on every member of a cluster, so a change takes effect
// without a restart as soon as the member has applied it.

import { decodeObject, storagePrefix } from '../generic-store.js';
import type { ApiObject, ResourceDefinition } from '../types.js';
import { type KeyValue, type RevisionedStore, prefixEnd } from '../../store/types.js';
import { type CompiledBinding, type CompiledPolicy, compileBinding, compilePolicy } from './policy-config.js';
import { type CompiledWebhook, compileWebhookConfiguration } from './webhook-config.js';

type Compiled = CompiledWebhook[] | CompiledPolicy | CompiledBinding;

/** one resource's objects by name, compiled */
class CompiledSet<T extends Compiled> {
  readonly byName = new Map<string, T>();
  version = 0;
  constructor(
    readonly def: ResourceDefinition,
    readonly compile: (o: ApiObject) => T,
  ) {}
}

export class AdmissionConfigSource {
  private readonly mutating: CompiledSet<CompiledWebhook[]>;
  private readonly validating: CompiledSet<CompiledWebhook[]>;
  private readonly policySet: CompiledSet<CompiledPolicy>;
  private readonly bindingSet: CompiledSet<CompiledBinding>;
  private unsubscribe?: () => void;
  private cache = new Map<string, { version: number; value: unknown }>();

  constructor(
    private readonly store: RevisionedStore,
    defs: { mutating: ResourceDefinition; validating: ResourceDefinition; policies: ResourceDefinition; bindings: ResourceDefinition },
    private readonly log: (msg: string) => void = () => {},
  ) {
    this.mutating = new CompiledSet(defs.mutating, (o) => compileWebhookConfiguration(o, true));
    this.validating = new CompiledSet(defs.validating, (o) => compileWebhookConfiguration(o, false));
    this.policySet = new CompiledSet(defs.policies, compilePolicy);
    this.bindingSet = new CompiledSet(defs.bindings, compileBinding);
  }

  /** subscribes to the applied feed, then reads what is stored (a write in between is seen twice, never lost) */
  start(): void {
    const sets = [this.mutating, this.validating, this.policySet, this.bindingSet] as CompiledSet<Compiled>[];
    const ranges = sets.map((s) => {
      const p = storagePrefix(s.def, '');
      return { set: s, key: p, end: prefixEnd(p) };
    });
    let scannedAt = Infinity;
    this.unsubscribe = this.store.onApplied((w) => {
      if (w.revision <= scannedAt) return;
      for (const ev of w.events) {
        const r = ranges.find((x) => ev.kv.key >= x.key && ev.kv.key < x.end);
        if (!r) continue;
        if (ev.type === 'delete') this.remove(r.set, ev.kv.key.slice(r.key.length));
        else this.put(r.set, ev.kv);
      }
    });
    scannedAt = this.store.revision;
    for (const r of ranges) for (const kv of this.store.range({ key: r.key, end: r.end }).kvs) this.put(r.set, kv);
  }

  stop(): void {
    this.unsubscribe?.();
  }

  private put(set: CompiledSet<Compiled>, kv: KeyValue): void {
    let obj: ApiObject;
    try {
      obj = decodeObject(kv);
    } catch (e) {
      this.log(`admission: skipping undecodable ${kv.key}: ${(e as Error).message}`);
      return;
    }
    try {
      set.byName.set(obj.metadata?.name ?? '', set.compile(obj));
    } catch (e) {
      this.log(`admission: cannot compile ${kv.key}: ${(e as Error).message}`);
      return;
    }
    set.version++;
  }

  private remove(set: CompiledSet<Compiled>, name: string): void {
    if (set.byName.delete(name)) set.version++;
  }

  private memo<T>(key: string, version: number, build: () => T): T {
    const c = this.cache.get(key);
    if (c && c.version === version) return c.value as T;
    const value = build();
    this.cache.set(key, { version, value });
    return value;
  }

  /** mutating webhooks in call order: configurations by name, webhooks as listed (kube's order) */
  mutatingWebhooks(): readonly CompiledWebhook[] {
    return this.memo('m', this.mutating.version, () => flatten(this.mutating));
  }

  validatingWebhooks(): readonly CompiledWebhook[] {
    return this.memo('v', this.validating.version, () => flatten(this.validating));
  }

  /** every policy (by name) with the bindings naming it */
  policies(): readonly { policy: CompiledPolicy; bindings: readonly CompiledBinding[] }[] {
    return this.memo('p', this.policySet.version * 1_000_003 + this.bindingSet.version, () => {
      const byPolicy = new Map<string, CompiledBinding[]>();
      for (const b of [...this.bindingSet.byName.values()].sort((a, c) => a.name.localeCompare(c.name))) {
        const list = byPolicy.get(b.policyName) ?? [];
        list.push(b);
        byPolicy.set(b.policyName, list);
      }
      return [...this.policySet.byName.values()]
        .sort((a, c) => a.name.localeCompare(c.name))
        .map((policy) => ({ policy, bindings: byPolicy.get(policy.name) ?? [] }));
    });
  }
}

function flatten(set: CompiledSet<CompiledWebhook[]>): CompiledWebhook[] {
  return [...set.byName.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).flatMap(([, hooks]) => hooks);
}
