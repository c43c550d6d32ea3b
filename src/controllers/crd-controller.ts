// The CRD controller (leader only, src/controllers/leader-gate.ts): keeps each
// CustomResourceDefinition's status true to what the registrar serves
// (NamesAccepted, Established, Terminating conditions, acceptedNames,
// storedVersions), and carries out deletion: a Terminating CRD has all its
// objects deleted (their own finalizers honoured), and once none is left its
// `customresourcecleanup` finalizer is removed, which removes the CRD
// (issue #16; docs/crds.md). Level-driven: a new leader re-scans.

import { StatusError } from '../core/errors.js';
import type { GenericStore } from '../registry/generic-store.js';
import { decodeObject } from '../registry/generic-store.js';
import type { CrdSpec } from '../registry/crd/convert.js';
import { cleanupFinalizer } from '../registry/crd/kind.js';
import { deepEqual, nowTimestamp } from '../machinery/meta.js';
import type { ApiObject, JSONObject } from '../registry/types.js';
import type { RevisionedStore } from '../store/types.js';
import { prefixEnd } from '../store/types.js';
import { CrdRegistrar, type CrdState } from './crd-registrar.js';

export interface CrdControllerOptions {
  store: RevisionedStore;
  registrar: CrdRegistrar;
  crds: () => GenericStore;
  storeFor: (def: CrdState['defs'][number]) => GenericStore;
  apiDomain: string;
  log?: (msg: string) => void;
}

type Condition = { type: string; status: string; reason: string; message: string; lastTransitionTime?: string };

export class CrdController {
  private stopped = true;
  private readonly pending = new Set<string>();
  private scheduled = false;
  private unsubscribe: (() => void)[] = [];
  /** objects prefix → CRD name, for CRDs being emptied */
  private draining = new Map<string, string>();

  constructor(private readonly o: CrdControllerOptions) {}

  start(): void {
    this.stopped = false;
    this.unsubscribe.push(this.o.registrar.onChange((name) => this.enqueue(name)));
    this.unsubscribe.push(
      this.o.store.onApplied((w) => {
        if (this.draining.size === 0) return;
        for (const ev of w.events) {
          for (const [prefix, name] of this.draining) if (ev.kv.key.startsWith(prefix)) this.enqueue(name);
        }
      }),
    );
    for (const name of this.o.registrar.names()) this.enqueue(name);
  }

  stop(): void {
    this.stopped = true;
    for (const u of this.unsubscribe) u();
    this.unsubscribe = [];
    this.pending.clear();
  }

  private enqueue(name: string): void {
    if (this.stopped) return;
    this.pending.add(name);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => void this.drain());
  }

  private async drain(): Promise<void> {
    while (this.pending.size > 0 && !this.stopped) {
      const [name] = this.pending;
      this.pending.delete(name!);
      try {
        await this.reconcile(name!);
      } catch (e) {
        if (this.stopped) break;
        this.o.log?.(`crd controller: ${name}: ${(e as Error).message}`);
        // conflicts and transient failures: try again shortly
        setTimeout(() => this.enqueue(name!), 200).unref();
      }
    }
    this.scheduled = false;
  }

  private async reconcile(name: string): Promise<void> {
    const st = this.o.registrar.state(name);
    if (!st) {
      for (const [p, n] of this.draining) if (n === name) this.draining.delete(p);
      return;
    }
    await this.updateStatus(name);
    const cur = this.o.registrar.state(name);
    if (cur?.object.metadata?.deletionTimestamp) await this.cleanup(name, cur);
  }

  /** conditions, accepted names and stored versions as the registrar sees the CRD */
  private async updateStatus(name: string): Promise<void> {
    await this.o.crds().guaranteedUpdate('', name, { dryRun: false, manager: 'orch-apiextensions-controller', subresource: 'status' }, (current) => {
      const c = current!;
      const st = this.o.registrar.state(name);
      const spec = c.spec as unknown as CrdSpec;
      const old = (c.status ?? {}) as JSONObject;
      const oldConds = (Array.isArray(old.conditions) ? old.conditions : []) as unknown as Condition[];
      const accepted = st?.verdict.accepted === true;
      const terminating = Boolean(c.metadata?.deletionTimestamp);
      const conds: Condition[] = [
        accepted
          ? { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found' }
          : { type: 'NamesAccepted', status: 'False', reason: 'NameConflict', message: st?.verdict.message ?? 'names not accepted' },
        accepted
          ? { type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' }
          : { type: 'Established', status: 'False', reason: 'NotAccepted', message: 'not all names are accepted' },
      ];
      if (terminating) conds.push({ type: 'Terminating', status: 'True', reason: 'InstanceDeletionInProgress', message: 'CustomResource deletion is in progress' });
      for (const cd of conds) {
        const prev = oldConds.find((p) => p.type === cd.type);
        cd.lastTransitionTime = prev && prev.status === cd.status && prev.lastTransitionTime ? prev.lastTransitionTime : nowTimestamp();
      }
      const storage = spec.versions?.find((v) => v.storage)?.name;
      const stored = Array.isArray(old.storedVersions) ? [...(old.storedVersions as string[])] : [];
      if (storage && !stored.includes(storage)) stored.push(storage);
      const status: JSONObject = { conditions: conds as unknown as JSONObject[], storedVersions: stored };
      if (accepted) {
        const n = spec.names;
        const acc: JSONObject = { plural: n.plural, singular: n.singular ?? n.kind.toLowerCase(), kind: n.kind, listKind: n.listKind ?? `${n.kind}List` };
        if (n.shortNames?.length) acc.shortNames = [...n.shortNames];
        if (n.categories?.length) acc.categories = [...n.categories];
        status.acceptedNames = acc;
      } else status.acceptedNames = (old.acceptedNames as JSONObject | undefined) ?? { plural: '', kind: '' };
      if (deepEqual(status, old)) return c;
      return { ...c, status };
    });
  }

  /** deletes every object of the kind; when none is left, lets the CRD go */
  private async cleanup(name: string, st: CrdState): Promise<void> {
    const spec = st.object.spec as unknown as CrdSpec;
    const prefix = CrdRegistrar.objectsPrefix(spec);
    this.draining.set(prefix, name);
    const kvs = this.o.store.range({ key: prefix, end: prefixEnd(prefix) }).kvs;
    const storageDef = st.defs.find((d) => d.storage?.storageVersion === `${d.group}/${d.version}`) ?? st.defs[0];
    for (const kv of kvs) {
      let obj: ApiObject | undefined;
      try {
        obj = decodeObject(kv);
      } catch {
        obj = undefined;
      }
      if (obj?.metadata?.deletionTimestamp) continue; // waiting for its own finalizers
      if (storageDef && obj) {
        try {
          await this.o.storeFor(storageDef).delete(obj.metadata?.namespace ?? '', obj.metadata?.name ?? '', { dryRun: false, propagationPolicy: 'Background' });
        } catch (e) {
          if (!(e instanceof StatusError && e.code === 404)) throw e;
        }
      } else {
        // not served (names never accepted) or unreadable: nothing can hold it
        await this.o.store.txn({ compare: [{ key: kv.key, target: 'mod', op: '=', value: kv.modRevision }], success: [{ type: 'delete', key: kv.key }], failure: [] });
      }
    }
    if (this.o.store.range({ key: prefix, end: prefixEnd(prefix), countOnly: true }).count > 0) return; // the deletes re-enqueue us
    this.draining.delete(prefix);
    const fin = cleanupFinalizer(this.o.apiDomain);
    try {
      await this.o.crds().guaranteedUpdate('', name, { dryRun: false, manager: 'orch-apiextensions-controller' }, (current) => {
        const c = current!;
        const fins = c.metadata?.finalizers ?? [];
        if (!fins.includes(fin)) return c;
        return { ...c, metadata: { ...c.metadata, finalizers: fins.filter((f) => f !== fin) } };
      });
      this.o.log?.(`crd controller: ${name}: all objects deleted; removing the definition`);
    } catch (e) {
      if (!(e instanceof StatusError && e.code === 404)) throw e;
    }
  }
}
