// The `bootstrapsigner` controller (spec 001 §5.4): keeps the ConfigMap
// `cluster-info` in `orch-public` signed. For every valid bootstrap token
// with `usage-bootstrap-signing`, key `jws-kubeconfig-<id>` holds a detached
// JWS (HS256, key = the whole token `<id>.<secret>`) of the `kubeconfig` key;
// signatures of expired, deleted or non-signing tokens are removed.
// Level-driven: any write to a Secret in `orch-system` or to the ConfigMap
// resyncs, and a timer fires at the next expiration.

import { CompactSign } from 'jose';
import { type GenericStore, decodeObject } from '../registry/generic-store.js';
import type { ApiObject, ResourceDefinition } from '../registry/types.js';
import { BOOTSTRAP_NAMESPACE, type BootstrapToken, lifecycleState, parseBootstrapSecret } from '../auth/authn/bootstrap-token.js';
import type { RevisionedStore } from '../store/types.js';
import { StatusError } from '../core/errors.js';

export const CLUSTER_INFO_NAMESPACE = 'orch-public';
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
  store: RevisionedStore;
  secrets: () => { def: ResourceDefinition; gs: GenericStore };
  configMaps: () => { def: ResourceDefinition; gs: GenericStore };
  apiDomain: string;
  /** cluster data written when `cluster-info` does not exist yet */
  server: () => string;
  caPem: string;
  log?: (msg: string) => void;
  now?: () => number;
}

export class BootstrapSignerController {
  private unsubscribe?: () => void;
  private timer?: NodeJS.Timeout;
  private running = false;
  private again = false;
  private stopped = false;
  /** resolves when the current sync pass finishes (tests) */
  idle: Promise<void> = Promise.resolve();

  constructor(private readonly o: BootstrapSignerOptions) {}

  /** subscribes and syncs; may be called again after stop() (leader-gate.ts) */
  start(): void {
    this.unsubscribe?.();
    this.stopped = false;
    const s = this.o.secrets().gs.rangeKeys(BOOTSTRAP_NAMESPACE);
    const c = this.o.configMaps().gs.rangeKeys(CLUSTER_INFO_NAMESPACE);
    this.unsubscribe = this.o.store.onApplied((w) => {
      if (w.events.some((ev) => (ev.kv.key >= s.key && ev.kv.key < s.end) || (ev.kv.key >= c.key && ev.kv.key < c.end))) this.kick();
    });
    this.kick();
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    if (this.timer) clearTimeout(this.timer);
  }

  private kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    this.idle = (async () => {
      do {
        this.again = false;
        try {
          await this.sync();
        } catch (e) {
          if (!(e instanceof StatusError && e.code === 409)) this.o.log?.(`bootstrapsigner: ${(e as Error).message}`);
          this.again = true;
          await new Promise((r) => setTimeout(r, 200).unref());
        }
      } while (this.again && !this.stopped);
      this.running = false;
    })();
  }

  private signingTokens(now: number): { tokens: BootstrapToken[]; nextExpiry: number | undefined } {
    const { gs } = this.o.secrets();
    const { key, end } = gs.rangeKeys(BOOTSTRAP_NAMESPACE);
    const tokens: BootstrapToken[] = [];
    let nextExpiry: number | undefined;
    for (const kv of this.o.store.range({ key, end }).kvs) {
      const t = parseBootstrapSecret(decodeObject(kv), this.o.apiDomain);
      if ('invalid' in t || !t.usageSigning || lifecycleState(t, now) !== 'valid') continue;
      tokens.push(t);
      if (t.expiresAt !== undefined && (nextExpiry === undefined || t.expiresAt < nextExpiry)) nextExpiry = t.expiresAt;
    }
    return { tokens, nextExpiry };
  }

  private async sync(): Promise<void> {
    const now = (this.o.now ?? Date.now)();
    const { tokens, nextExpiry } = this.signingTokens(now);
    const { gs } = this.o.configMaps();
    const kv = gs.readRaw(CLUSTER_INFO_NAMESPACE, CLUSTER_INFO_NAME);
    const current = kv ? decodeObject(kv) : undefined;
    const data = { ...((current?.data ?? {}) as Record<string, string>) };
    if (data.kubeconfig === undefined) data.kubeconfig = clusterInfoKubeconfig(this.o.server(), this.o.caPem);
    const want: Record<string, string> = {};
    for (const t of tokens) want[`${JWS_KEY_PREFIX}${t.id}`] = await detachedSignature(data.kubeconfig, `${t.id}.${t.secret}`);
    const next: Record<string, string> = {};
    for (const [k, v] of Object.entries(data)) if (!k.startsWith(JWS_KEY_PREFIX)) next[k] = v;
    Object.assign(next, want);
    const changed = !current || JSON.stringify(sorted(next)) !== JSON.stringify(sorted((current.data ?? {}) as Record<string, string>));
    if (changed) {
      await gs.guaranteedUpdate(CLUSTER_INFO_NAMESPACE, CLUSTER_INFO_NAME, { dryRun: false, createIfAbsent: true, manager: 'bootstrapsigner' }, (cur) => {
        const o: ApiObject = cur ?? { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: CLUSTER_INFO_NAME, namespace: CLUSTER_INFO_NAMESPACE } };
        // a concurrent change to `kubeconfig` makes these signatures stale; the write event resyncs
        o.data = { ...next, kubeconfig: ((cur?.data ?? {}) as Record<string, string>).kubeconfig ?? next.kubeconfig! };
        if (o.data.kubeconfig !== next.kubeconfig) for (const k of Object.keys(want)) delete (o.data as Record<string, string>)[k];
        return o;
      });
    }
    if (this.timer) clearTimeout(this.timer);
    if (nextExpiry !== undefined && !this.stopped) {
      this.timer = setTimeout(() => this.kick(), Math.min(MAX_TIMER_MS, Math.max(0, nextExpiry - now) + 1));
      this.timer.unref();
    }
  }
}

function sorted(o: Record<string, string>): [string, string][] {
  return Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}
