// Serves the kinds of CustomResourceDefinitions on this member (issue #16):
// driven by the store's applied feed, not by the create handler, so every
// member of a cluster, a follower that catches up and a restarted server all
// register the same kinds. A CRD is served once its names are accepted
// (src/registry/crd/names.ts, the same verdict everywhere) and until its object is
// gone from the store; a Terminating CRD stays served so its objects' own
// finalizers can finish, but refuses creates (guardCreate).

import { storagePrefix } from '../registry/generic-store.js';
import { methodNotAllowed } from '../core/errors.js';
import { type CrdSpec, customDefinitions } from '../registry/crd/convert.js';
import { crdGroup } from '../registry/crd/kind.js';
import { type NamesVerdict, acceptNames } from '../registry/crd/names.js';
import type { Registry } from '../registry/registry.js';
import type { ApiObject, AsyncConverter, ResourceDefinition } from '../registry/types.js';
import { type Informer, type InformerSource, type InformerUse, prefixRange, sharedInformers } from './runtime/index.js';

/** how the registrar gets a CRD's conversion webhook (src/registry/crd/conversion-webhook.ts) */
export interface CrdConversion {
  /** the webhook converter of a CRD with `strategy: Webhook`, else undefined */
  converterFor(spec: CrdSpec): AsyncConverter | undefined;
  /** closes the webhook connections (server shutdown) */
  close(): void;
}

interface Served {
  /** the stored spec the definitions were built from */
  specJson: string;
  defs: ResourceDefinition[];
}

export interface CrdState {
  key: string;
  modRevision: number;
  object: ApiObject;
  verdict: NamesVerdict;
  /** the definitions served for it (empty when not accepted) */
  defs: ResourceDefinition[];
}

export class CrdRegistrar {
  readonly prefix: string;
  private readonly served = new Map<string, Served>();
  private states = new Map<string, CrdState>();
  /** `<group>/<plural>` → CRD name, for the create guard */
  private byResource = new Map<string, string>();
  private use?: InformerUse;
  private readonly listeners = new Set<(name: string) => void>();
  /** every definition this registrar built (other custom definitions are not guarded) */
  private readonly produced = new WeakSet<ResourceDefinition>();

  constructor(
    private readonly store: InformerSource,
    private readonly registry: Registry,
    private readonly apiDomain: string,
    private readonly log: (msg: string) => void = () => {},
    /** the converters of CRDs with a conversion webhook (the composition root's webhook client) */
    private readonly conversion?: CrdConversion,
  ) {
    this.prefix = `/registry/${crdGroup(apiDomain)}/customresourcedefinitions/`;
  }

  /**
   * Follows the CRDs through the shared informer (runtime/). Runs on every
   * member, not only the leader: each serves the custom resources. The
   * handlers run synchronously with the write, so the registry is updated
   * before the CRD write's caller resumes.
   */
  start(): void {
    this.use?.release();
    let informer: Informer | undefined;
    const changed = (name: string): void => {
      if (!informer) return; // the initial list: one sync below
      this.sync(informer);
      for (const l of this.listeners) l(name);
    };
    // listed at once however many CRDs there are: the registry is built from the cache below
    this.use = sharedInformers(this.store).use(
      prefixRange(this.prefix),
      {
        add: (_o, k) => changed(k),
        update: (_a, _b, k) => changed(k),
        delete: (_o, k) => changed(k),
      },
      {},
      { sync: true },
    );
    informer = this.use.informer;
    this.sync(informer);
  }

  stop(): void {
    this.use?.release();
    this.use = undefined;
    this.conversion?.close();
  }

  hasSynced(): boolean {
    return this.use?.informer.hasSynced() ?? false;
  }

  /** called after the served set was updated for a changed CRD (the status controller listens) */
  onChange(listener: (name: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  state(name: string): CrdState | undefined {
    return this.states.get(name);
  }

  names(): string[] {
    return [...this.states.keys()];
  }

  /**
   * The create guard of a custom resource (WriteHooks.guardCreate): 405 while
   * its CRD is being deleted; otherwise the CRD's key and mod revision, which
   * must not move before the create commits, so no object is created after
   * the cleanup's last look (docs/crds.md).
   */
  guardCreate(def: ResourceDefinition): { key: string; modRevision: number }[] {
    const name = this.byResource.get(`${def.group}/${def.resource}`);
    const st = name === undefined ? undefined : this.states.get(name);
    if (!this.produced.has(def) && !st) return [];
    if (!st || !st.verdict.accepted) throw methodNotAllowed(`create not allowed: the custom resource definition of ${def.resource}.${def.group} is not served`);
    if (st.object.metadata?.deletionTimestamp) throw methodNotAllowed('create not allowed while custom resource definition is terminating');
    return [{ key: st.key, modRevision: st.modRevision }];
  }

  /** rebuilds the verdicts from the stored CRDs and updates the registry where something changed */
  private sync(informer: Informer): void {
    const parsed: { name: string; rev: { createRevision: number; modRevision: number }; obj: ApiObject; spec: CrdSpec }[] = [];
    for (const name of informer.keys()) {
      const obj = informer.get(name)!;
      const spec = obj.spec as unknown as CrdSpec;
      if (!spec || typeof spec !== 'object' || !spec.names || !Array.isArray(spec.versions)) continue;
      const rev = informer.storedRevisions(name) ?? { createRevision: 0, modRevision: Number(obj.metadata?.resourceVersion ?? 0) };
      parsed.push({ name, rev, obj, spec });
    }
    for (const k of informer.corruptKeys()) this.log(`crd registrar: cannot read ${this.prefix}${k}`);
    const verdicts = acceptNames(parsed.map((p) => ({ name: p.name, createRevision: p.rev.createRevision, spec: p.spec })));
    const states = new Map<string, CrdState>();
    const byResource = new Map<string, string>();
    const keep = new Set<string>();
    for (const p of parsed) {
      const verdict = verdicts.get(p.name) ?? { accepted: false };
      let defs: ResourceDefinition[] = [];
      if (verdict.accepted) {
        keep.add(p.name);
        defs = this.serve(p.name, p.spec);
        byResource.set(`${p.spec.group}/${p.spec.names.plural}`, p.name);
      }
      states.set(p.name, { key: `${this.prefix}${p.name}`, modRevision: p.rev.modRevision, object: p.obj, verdict, defs });
    }
    for (const name of [...this.served.keys()]) if (!keep.has(name)) this.unserve(name);
    this.states = states;
    this.byResource = byResource;
  }

  private serve(name: string, spec: CrdSpec): ResourceDefinition[] {
    const specJson = JSON.stringify(spec);
    const cur = this.served.get(name);
    if (cur && cur.specJson === specJson) return cur.defs;
    let defs: ResourceDefinition[];
    try {
      defs = customDefinitions(spec, this.apiDomain, spec.names, this.conversion?.converterFor(spec));
    } catch (e) {
      this.log(`crd registrar: ${name} cannot be served: ${(e as Error).message}`);
      defs = [];
    }
    if (cur) for (const d of cur.defs) this.registry.remove(d.group, d.version, d.resource);
    for (const d of defs) {
      this.produced.add(d);
      this.registry.add(d);
    }
    this.served.set(name, { specJson, defs });
    if (!cur) this.log(`crd registrar: serving ${name} (${defs.map((d) => d.version).join(', ')})`);
    return defs;
  }

  private unserve(name: string): void {
    const cur = this.served.get(name);
    if (!cur) return;
    for (const d of cur.defs) this.registry.remove(d.group, d.version, d.resource);
    this.served.delete(name);
    this.log(`crd registrar: no longer serving ${name}`);
  }

  /** where the objects of a CRD's kind are stored (all namespaces) */
  static objectsPrefix(spec: CrdSpec): string {
    return storagePrefix({ group: spec.group, resource: spec.names.plural, scope: 'Cluster' } as ResourceDefinition, '');
  }
}
