// What every namespace has in Kubernetes (issue #11 item 6), leader only:
// a `default` ServiceAccount (kube's serviceaccounts-controller) and the
// cluster CA in a ConfigMap (kube's root-ca-cert-publisher, `kube-root-ca.crt`;
// here `<product>-root-ca.crt`, see docs/architecture.md). Both come back when
// deleted, and the ConfigMap is put back when its data is changed. Active
// namespaces only: a Terminating one is being emptied.

import { StatusError } from '../core/errors.js';
import type { GenericStore } from '../registry/generic-store.js';
import type { ApiObject } from '../registry/types.js';
import type { Clock } from '../core/clock.js';
import { ControllerLoop, LoopController, type Informer, type InformerSource } from './runtime/index.js';

export const NAMESPACE_DEFAULTS_MANAGER = 'orch-namespace-defaults-controller';

export interface NamespaceDefaultsOptions {
  store: InformerSource;
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
  clock?: Clock;
}

export class NamespaceDefaultsController extends LoopController {
  protected readonly loop: ControllerLoop;
  private namespaces: Informer | undefined;
  private serviceAccounts: Informer | undefined;
  private configMaps: Informer | undefined;

  constructor(private readonly o: NamespaceDefaultsOptions) {
    super();
    this.loop = new ControllerLoop(o.store, { name: 'namespace defaults', log: o.log, clock: o.clock, baseDelayMs: 200 });
  }

  /** follows namespaces and the two objects kept in each; may be called again after stop() (leader-gate.ts) */
  start(): void {
    this.loop.begin((ns) => this.sync(ns));
    const onNamespace = (_o: ApiObject, key: string): void => this.loop.enqueue(key);
    // `<namespace>/<name>`: only the two objects this controller keeps
    const onObject = (name: string) => (_o: ApiObject, key: string) => {
      if (key.endsWith(`/${name}`)) this.loop.enqueue(key.slice(0, key.length - name.length - 1));
    };
    const handlers = (f: (o: ApiObject, key: string) => void) => ({ add: f, update: (_a: ApiObject, b: ApiObject, k: string) => f(b, k), delete: f });
    // only the two objects per namespace: a cache of every ConfigMap (and ServiceAccount) would hold a
    // decoded copy of each for nothing (docs/store.md, "Memory per stored object")
    this.serviceAccounts = this.loop.inform({ ...this.o.serviceAccounts().rangeKeys(''), name: 'default' }, handlers(onObject('default')));
    this.configMaps = this.loop.inform({ ...this.o.configMaps().rangeKeys(''), name: this.o.rootCAConfigMapName }, handlers(onObject(this.o.rootCAConfigMapName)));
    this.namespaces = this.loop.inform(this.o.namespaces().rangeKeys(''), handlers(onNamespace));
  }

  stop(): void {
    this.loop.end();
  }

  /** one namespace: its default ServiceAccount and CA ConfigMap exist and are right */
  async sync(namespace: string): Promise<void> {
    const nsObj = this.namespaces?.get(namespace);
    if (!nsObj) return;
    if (nsObj.metadata?.deletionTimestamp) return;
    const opts = { dryRun: false, manager: NAMESPACE_DEFAULTS_MANAGER };
    if (this.o.serviceAccount && !this.serviceAccounts?.get(`${namespace}/default`)) {
      await ignoreExists(this.o.serviceAccounts().create(namespace, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default', namespace } }, opts));
    }
    if (!this.o.rootCA) return;
    const cms = this.o.configMaps();
    const name = this.o.rootCAConfigMapName;
    const data = { 'ca.crt': this.o.caPem };
    const current = this.configMaps?.get(`${namespace}/${name}`);
    if (!current) {
      await ignoreExists(cms.create(namespace, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data }, opts));
    } else {
      const have = (current as ApiObject & { data?: Record<string, string> }).data ?? {};
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
