// What every namespace has in Kubernetes (issue #11 item 6), leader only:
// a `default` ServiceAccount (kube's serviceaccounts-controller) and the
// cluster CA in a ConfigMap (kube's root-ca-cert-publisher, `kube-root-ca.crt`;
// here `<product>-root-ca.crt`, see docs/architecture.md). Both come back when
// deleted, and the ConfigMap is put back when its data is changed. Active
// namespaces only: a Terminating one is being emptied.

import { StatusError } from '../core/errors.js';
import { decodeObject, type GenericStore } from '../registry/generic-store.js';
import type { ApiObject } from '../registry/types.js';
import type { RevisionedStore, StoreEvent } from '../store/types.js';

export const NAMESPACE_DEFAULTS_MANAGER = 'orch-namespace-defaults-controller';

export interface NamespaceDefaultsOptions {
  store: RevisionedStore;
  namespaces: () => GenericStore;
  serviceAccounts: () => GenericStore;
  configMaps: () => GenericStore;
  /** the ConfigMap's name (`orch-root-ca.crt`, or `kube-root-ca.crt` with --api-domain k8s.io) */
  rootCAConfigMapName: string;
  caPem: string;
  /** kube's `serviceaccount` controller: keep a `default` ServiceAccount */
  serviceAccount: boolean;
  /** kube's `root-ca-cert-publisher`: keep the CA ConfigMap */
  rootCA: boolean;
  log?: (msg: string) => void;
}

export class NamespaceDefaultsController {
  private unsubscribe?: () => void;
  private stopped = true;
  private readonly pending = new Set<string>();
  private scheduled = false;

  constructor(private readonly o: NamespaceDefaultsOptions) {}

  start(): void {
    this.unsubscribe?.();
    this.stopped = false;
    const ns = this.o.namespaces().rangeKeys('');
    const sa = this.o.serviceAccounts().rangeKeys('');
    const cm = this.o.configMaps().rangeKeys('');
    const nameOf = (ev: StoreEvent): string | undefined => {
      const k = ev.kv.key;
      if (k >= ns.key && k < ns.end) return k.slice(ns.key.length);
      // `<prefix><namespace>/<name>`: only the two objects this controller keeps
      for (const [range, name] of [[sa, 'default'], [cm, this.o.rootCAConfigMapName]] as const) {
        if (k >= range.key && k < range.end && k.endsWith(`/${name}`)) return k.slice(range.key.length, k.length - name.length - 1);
      }
      return undefined;
    };
    this.unsubscribe = this.o.store.onApplied((w) => {
      for (const ev of w.events) {
        const name = nameOf(ev);
        if (name) this.enqueue(name);
      }
    });
    for (const kv of this.o.store.range(ns).kvs) this.enqueue(kv.key.slice(ns.key.length));
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.pending.clear();
  }

  private enqueue(namespace: string): void {
    if (this.stopped) return;
    this.pending.add(namespace);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => void this.drain());
  }

  private async drain(): Promise<void> {
    while (this.pending.size > 0 && !this.stopped) {
      const [ns] = this.pending;
      this.pending.delete(ns!);
      try {
        await this.sync(ns!);
      } catch (e) {
        this.o.log?.(`namespace defaults: ${ns}: ${(e as Error).message}; retrying`);
        setTimeout(() => this.enqueue(ns!), 1000).unref();
      }
    }
    this.scheduled = false;
  }

  /** one namespace: its default ServiceAccount and CA ConfigMap exist and are right */
  async sync(namespace: string): Promise<void> {
    const kv = this.o.namespaces().readRaw('', namespace);
    if (!kv) return;
    const nsObj = decodeObject(kv);
    if (nsObj.metadata?.deletionTimestamp) return;
    const opts = { dryRun: false, manager: NAMESPACE_DEFAULTS_MANAGER };
    const sas = this.o.serviceAccounts();
    if (this.o.serviceAccount && !sas.readRaw(namespace, 'default')) {
      await ignoreExists(sas.create(namespace, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default', namespace } }, opts));
    }
    if (!this.o.rootCA) return;
    const cms = this.o.configMaps();
    const name = this.o.rootCAConfigMapName;
    const data = { 'ca.crt': this.o.caPem };
    const current = cms.readRaw(namespace, name);
    if (!current) {
      await ignoreExists(cms.create(namespace, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data }, opts));
    } else {
      const have = (decodeObject(current) as ApiObject & { data?: Record<string, string> }).data ?? {};
      if (have['ca.crt'] !== this.o.caPem || Object.keys(have).length !== 1) {
        await cms.guaranteedUpdate(namespace, name, opts, (cur) => ({ ...cur!, data }));
      }
    }
  }
}

async function ignoreExists(p: Promise<unknown>): Promise<void> {
  try {
    await p;
  } catch (e) {
    // created meanwhile (another writer, or a namespace that is being deleted refuses new content)
    if (e instanceof StatusError && (e.code === 409 || e.code === 403)) return;
    throw e;
  }
}
