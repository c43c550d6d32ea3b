// The CRD controller (leader only, src/controllers/leader-gate.ts): keeps each
// CustomResourceDefinition's status true to what the registrar serves
// (NamesAccepted, Established, Terminating conditions, acceptedNames,
// storedVersions), and carries out deletion: a Terminating CRD has all its
// objects deleted (their own finalizers honoured), and once none is left its
// `customresourcecleanup` finalizer is removed, which removes the CRD
// (issue #16; docs/crds.md). Level-driven: a new leader re-scans.

import { StatusError } from '../core/errors.js';
import type { GenericStore } from '../registry/generic-store.js';
import type { CrdSpec } from '../registry/crd/convert.js';
import { cleanupFinalizer } from '../registry/crd/kind.js';
import { deepEqual, nowTimestamp } from '../machinery/meta.js';
import type { ApiObject, JSONObject } from '../registry/types.js';
import type { Clock } from '../core/clock.js';
import { ControllerLoop, type InformerSource, type InformerUse, RawRange, type RawSource, prefixRange } from './runtime/index.js';
import { CrdRegistrar, type CrdState } from './crd-registrar.js';

export interface CrdControllerOptions {
  store: InformerSource & RawSource;
  clock?: Clock;
  registrar: CrdRegistrar;
  crds: () => GenericStore;
  storeFor: (def: CrdState['defs'][number]) => GenericStore;
  apiDomain: string;
  log?: (msg: string) => void;
}

type Condition = { type: string; status: string; reason: string; message: string; lastTransitionTime?: string };

export class CrdController {
  private readonly loop: ControllerLoop;
  private unsubscribe: (() => void) | undefined;
  /** CRD name → the informer of its objects while it is being emptied (released when done or at stop) */
  private draining = new Map<string, InformerUse>();

  constructor(private readonly o: CrdControllerOptions) {
    this.loop = new ControllerLoop(o.store, { name: 'crd controller', log: o.log, clock: o.clock, baseDelayMs: 200 });
  }

  start(): void {
    this.loop.begin((name) => this.reconcile(name));
    this.unsubscribe?.();
    this.unsubscribe = this.o.registrar.onChange((name) => this.loop.enqueue(name));
    for (const name of this.o.registrar.names()) this.loop.enqueue(name);
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    for (const d of this.draining.values()) d.release();
    this.draining.clear();
    this.loop.end();
  }

  hasSynced(): boolean {
    return this.loop.running && this.o.registrar.hasSynced();
  }

  private stopDraining(name: string): void {
    this.draining.get(name)?.release();
    this.draining.delete(name);
  }

  private async reconcile(name: string): Promise<void> {
    const st = this.o.registrar.state(name);
    if (!st) {
      this.stopDraining(name);
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
          : { type: 'NamesAccepted', status: 'False', reason: st?.verdict.reason ?? 'NameConflict', message: st?.verdict.message ?? 'names not accepted' },
        accepted
          ? { type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' }
          : { type: 'Established', status: 'False', reason: 'NotAccepted', message: 'not all names are accepted' },
      ];
      if (terminating) conds.push({ type: 'Terminating', status: 'True', reason: 'InstanceDeletionInProgress', message: 'CustomResource deletion is in progress' });
      for (const cd of conds) {
        const prev = oldConds.find((p) => p.type === cd.type);
        cd.lastTransitionTime = prev && prev.status === cd.status && prev.lastTransitionTime ? prev.lastTransitionTime : nowTimestamp(this.loop.clock.now());
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

  private async setTerminating(name: string, cond: Condition): Promise<void> {
    await this.o.crds().guaranteedUpdate('', name, { dryRun: false, manager: 'orch-apiextensions-controller', subresource: 'status' }, (current) => {
      const c = current!;
      const old = (c.status ?? {}) as JSONObject;
      const conds = (Array.isArray(old.conditions) ? old.conditions : []) as unknown as Condition[];
      const prev = conds.find((p) => p.type === cond.type);
      if (prev && prev.status === cond.status && prev.reason === cond.reason) return c;
      const next = { ...cond, lastTransitionTime: nowTimestamp(this.loop.clock.now()) };
      const list = prev ? conds.map((p) => (p === prev ? next : p)) : [...conds, next];
      return { ...c, status: { ...old, conditions: list as unknown as JSONObject[] } };
    });
  }

  /** deletes every object of the kind; when none is left, lets the CRD go */
  private async cleanup(name: string, st: CrdState): Promise<void> {
    const spec = st.object.spec as unknown as CrdSpec;
    const prefix = CrdRegistrar.objectsPrefix(spec);
    let d = this.draining.get(name);
    if (!d) {
      // any change of its objects looks again (the deletes re-enqueue us)
      const kick = (): void => this.loop.enqueue(name);
      d = this.loop.use(prefixRange(prefix), { update: kick, delete: kick });
      this.draining.set(name, d);
    }
    const informer = d.informer;
    // a kind with many objects is listed in slices (runtime/informer-factory.ts)
    await d.synced();
    if (!d.hasSynced()) return; // stopped meanwhile
    const raw = new RawRange(this.o.store, prefix);
    const storageDef = st.defs.find((x) => x.storage?.storageVersion === `${x.group}/${x.version}`) ?? st.defs[0];
    for (const key of informer.keys()) {
      const obj = informer.get(key);
      if (!obj || obj.metadata?.deletionTimestamp) continue; // gone, or waiting for its own finalizers
      if (storageDef) {
        try {
          await this.o.storeFor(storageDef).delete(obj.metadata?.namespace ?? '', obj.metadata?.name ?? '', { dryRun: false, propagationPolicy: 'Background' });
        } catch (e) {
          if (!(e instanceof StatusError && e.code === 404)) throw e;
        }
      } else {
        // not served (names never accepted): nothing can hold it
        const entry = raw.get(`${prefix}${key}`);
        if (entry) await raw.deleteIfUnchanged(entry);
      }
    }
    // unreadable objects: nothing can hold them either
    for (const key of informer.corruptKeys()) {
      const entry = raw.get(`${prefix}${key}`);
      if (entry) await raw.deleteIfUnchanged(entry);
    }
    if (informer.keys().length + informer.corruptKeys().length > 0) return; // the deletes re-enqueue us
    this.stopDraining(name);
    const fin = cleanupFinalizer(this.o.apiDomain);
    try {
      // kube's finalizer controller records the outcome in the write that lets the CRD go
      await this.setTerminating(name, { type: 'Terminating', status: 'False', reason: 'InstancesDeleted', message: 'instances deleted' });
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
