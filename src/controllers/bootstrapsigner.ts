// The `bootstrapsigner` controller (spec 001 §5.4): keeps the ConfigMap
// `cluster-info` in `orch-public` (kube's `kube-public` with --api-domain k8s.io) signed. For every valid bootstrap token
// with `usage-bootstrap-signing`, key `jws-kubeconfig-<id>` holds a detached
// JWS (HS256, key = the whole token `<id>.<secret>`) of the `kubeconfig` key;
// signatures of expired, deleted or non-signing tokens are removed.
// Level-driven on the controller runtime (runtime/): any change of a Secret in
// `orch-system` or of the ConfigMap queues the one key `cluster-info`, and a
// delayed add on the clock looks again at the next expiration.

import { CompactSign } from 'jose';
import { systemNamespacesOf } from '../core/product-names.js';
import type { GenericStore } from '../registry/generic-store.js';
import type { ApiObject, ResourceDefinition } from '../registry/types.js';
import { bootstrapNamespaceOf, type BootstrapToken, lifecycleState, parseBootstrapSecret } from '../auth/authn/bootstrap-token.js';
import { StatusError } from '../core/errors.js';
import { type Clock, systemClock } from '../core/clock.js';
import { ControllerLoop, LoopController, type Informer, type InformerSource } from './runtime/index.js';

export const CLUSTER_INFO_NAME = 'cluster-info';
export const JWS_KEY_PREFIX = 'jws-kubeconfig-';
const MAX_TIMER_MS = 2 ** 31 - 1;

/** the detached compact JWS of §5.4: `<header>..<signature>` */
export async function detachedSignature(payload: string, token: string): Promise<string> {
  const id = token.split('.')[0]!;
  const full = await new CompactSign(new TextEncoder().encode(payload)).setProtectedHeader({ alg: 'HS256', kid: id }).sign(new TextEncoder().encode(token));
  const [h, , s] = full.split('.');
  return `${h}..${s}`;
}

/** the `kubeconfig` value kubeadm-style clients expect: one cluster, no users */
export function clusterInfoKubeconfig(server: string, caPem: string): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- cluster:',
    `    certificate-authority-data: ${Buffer.from(caPem).toString('base64')}`,
    `    server: ${server}`,
    "  name: ''",
    'contexts: []',
    'current-context: ""',
    'preferences: {}',
    'users: []',
    '',
  ].join('\n');
}

export interface BootstrapSignerOptions {
  store: InformerSource;
  secrets: () => { def: ResourceDefinition; gs: GenericStore };
  configMaps: () => { def: ResourceDefinition; gs: GenericStore };
  apiDomain: string;
  /** cluster data written when `cluster-info` does not exist yet */
  server: () => string;
  caPem: string;
  log?: (msg: string) => void;
  clock?: Clock;
}

export class BootstrapSignerController extends LoopController {
  protected readonly loop: ControllerLoop;
  private readonly clock: Clock;
  private secretsInformer: Informer | undefined;
  private configMapsInformer: Informer | undefined;
  /** where `cluster-info` lives: the public namespace (`orch-public`, kube's with --api-domain k8s.io) */
  private readonly clusterInfoNamespace: string;
  /** the one key of the queue: everything this controller writes is one ConfigMap */
  private readonly clusterInfoKey: string;
  /** where the token Secrets live (bootstrap-token.ts) */
  private readonly tokenNamespace: string;

  constructor(private readonly o: BootstrapSignerOptions) {
    super();
    this.clusterInfoNamespace = systemNamespacesOf(o.apiDomain).public;
    this.clusterInfoKey = `${this.clusterInfoNamespace}/${CLUSTER_INFO_NAME}`;
    this.tokenNamespace = bootstrapNamespaceOf(o.apiDomain);
    this.clock = o.clock ?? systemClock;
    this.loop = new ControllerLoop(o.store, { name: 'bootstrapsigner', clock: this.clock, log: o.log, baseDelayMs: 200 });
  }

  /** resolves when the queue has no work in hand (tests) */
  get idle(): Promise<void> {
    return this.loop.queue?.idle() ?? Promise.resolve();
  }

  /** lists, follows the Secrets and the ConfigMap and syncs; may be called again after stop() (leader-gate.ts) */
  start(): void {
    this.loop.begin(() => this.sync());
    const kick = (key: string): void => {
      if (key.startsWith(`${this.tokenNamespace}/`) || key === this.clusterInfoKey) this.loop.enqueue(this.clusterInfoKey);
    };
    const handlers = { add: (_o: ApiObject, k: string) => kick(k), update: (_a: ApiObject, _b: ApiObject, k: string) => kick(k), delete: (_o: ApiObject, k: string) => kick(k) };
    this.secretsInformer = this.loop.inform(this.o.secrets().gs.rangeKeys(''), handlers);
    // the one ConfigMap it keeps, not a decoded copy of every ConfigMap (docs/store.md, "Memory per stored object")
    this.configMapsInformer = this.loop.inform({ ...this.o.configMaps().gs.rangeKeys(''), name: CLUSTER_INFO_NAME }, handlers);
    this.loop.enqueue(this.clusterInfoKey);
  }

  stop(): void {
    this.loop.end();
  }

  private signingTokens(now: number): { tokens: BootstrapToken[]; nextExpiry: number | undefined } {
    const tokens: BootstrapToken[] = [];
    let nextExpiry: number | undefined;
    for (const secret of this.secretsInformer?.inNamespace(this.tokenNamespace) ?? []) {
      const t = parseBootstrapSecret(secret, this.o.apiDomain);
      if ('invalid' in t || !t.usageSigning || lifecycleState(t, now) !== 'valid') continue;
      tokens.push(t);
      if (t.expiresAt !== undefined && (nextExpiry === undefined || t.expiresAt < nextExpiry)) nextExpiry = t.expiresAt;
    }
    return { tokens, nextExpiry };
  }

  private async sync(): Promise<void> {
    const now = this.clock.now();
    const { tokens, nextExpiry } = this.signingTokens(now);
    const { gs } = this.o.configMaps();
    const current = this.configMapsInformer?.get(this.clusterInfoKey);
    const data = { ...((current?.data ?? {}) as Record<string, string>) };
    if (data.kubeconfig === undefined) data.kubeconfig = clusterInfoKubeconfig(this.o.server(), this.o.caPem);
    const want: Record<string, string> = {};
    for (const t of tokens) want[`${JWS_KEY_PREFIX}${t.id}`] = await detachedSignature(data.kubeconfig, `${t.id}.${t.secret}`);
    const next: Record<string, string> = {};
    for (const [k, v] of Object.entries(data)) if (!k.startsWith(JWS_KEY_PREFIX)) next[k] = v;
    Object.assign(next, want);
    const changed = !current || JSON.stringify(sorted(next)) !== JSON.stringify(sorted((current.data ?? {}) as Record<string, string>));
    if (changed) {
      try {
        await gs.guaranteedUpdate(this.clusterInfoNamespace, CLUSTER_INFO_NAME, { dryRun: false, createIfAbsent: true, manager: 'bootstrapsigner' }, (cur) => {
          const o: ApiObject = cur ?? { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: CLUSTER_INFO_NAME, namespace: this.clusterInfoNamespace } };
          // a concurrent change to `kubeconfig` makes these signatures stale; the write event resyncs
          o.data = { ...next, kubeconfig: ((cur?.data ?? {}) as Record<string, string>).kubeconfig ?? next.kubeconfig! };
          if (o.data.kubeconfig !== next.kubeconfig) for (const k of Object.keys(want)) delete (o.data as Record<string, string>)[k];
          return o;
        });
      } catch (e) {
        // a conflict is expected (a concurrent writer): look again soon, without a log line
        if (!(e instanceof StatusError && e.code === 409)) throw e;
        this.loop.queue?.addRateLimited(this.clusterInfoKey);
        return;
      }
    }
    if (nextExpiry !== undefined) this.loop.enqueueAfter(this.clusterInfoKey, Math.min(MAX_TIMER_MS, Math.max(0, nextExpiry - now) + 1));
  }
}

function sorted(o: Record<string, string>): [string, string][] {
  return Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}
