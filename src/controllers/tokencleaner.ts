// The `tokencleaner` controller (spec 001 §5.4, §3): deletes bootstrap-token
// Secrets whose expiration has passed. Level-driven: every Secret write in
// `orch-system` is looked at, each live token gets a timer at its
// expiration, and a start (or restart) rescans everything.

import { StatusError } from '../core/errors.js';
import { type GenericStore, decodeObject } from '../registry/generic-store.js';
import type { ResourceDefinition } from '../registry/types.js';
import { BOOTSTRAP_NAMESPACE, lifecycleState, parseBootstrapSecret } from '../auth/authn/bootstrap-token.js';
import type { RevisionedStore } from '../store/types.js';

const MAX_TIMER_MS = 2 ** 31 - 1;

export class TokenCleanerController {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private unsubscribe?: () => void;
  private stopped = false;

  constructor(
    private readonly store: RevisionedStore,
    private readonly secrets: () => { def: ResourceDefinition; gs: GenericStore },
    private readonly apiDomain: string,
    private readonly log: (msg: string) => void = () => {},
    private readonly now: () => number = Date.now,
  ) {}

  /** subscribes and scans; may be called again after stop() (leader-gate.ts) */
  start(): void {
    this.unsubscribe?.();
    this.stopped = false;
    const { gs } = this.secrets();
    const { key, end } = gs.rangeKeys(BOOTSTRAP_NAMESPACE);
    this.unsubscribe = this.store.onApplied((w) => {
      for (const ev of w.events) {
        if (ev.kv.key < key || ev.kv.key >= end) continue;
        if (ev.type === 'put') this.consider(decodeObject(ev.kv).metadata?.name ?? '');
        else this.clearTimer(ev.kv.key.slice(ev.kv.key.lastIndexOf('/') + 1));
      }
    });
    for (const kv of this.store.range({ key, end }).kvs) this.consider(decodeObject(kv).metadata?.name ?? '');
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }

  private clearTimer(name: string): void {
    const t = this.timers.get(name);
    if (t) clearTimeout(t);
    this.timers.delete(name);
  }

  private consider(name: string): void {
    if (this.stopped || name === '') return;
    this.clearTimer(name);
    const { gs } = this.secrets();
    const kv = gs.readRaw(BOOTSTRAP_NAMESPACE, name);
    if (!kv) return;
    const tok = parseBootstrapSecret(decodeObject(kv), this.apiDomain);
    if ('invalid' in tok || tok.expiresAt === undefined || tok.deleting) return;
    const state = lifecycleState(tok, this.now());
    if (state === 'expired') {
      void this.remove(name);
      return;
    }
    const wait = Math.min(MAX_TIMER_MS, Math.max(0, tok.expiresAt - this.now()) + 1);
    const t = setTimeout(() => this.consider(name), wait);
    t.unref();
    this.timers.set(name, t);
  }

  private async remove(name: string): Promise<void> {
    try {
      await this.secrets().gs.delete(BOOTSTRAP_NAMESPACE, name, { dryRun: false });
      this.log(`tokencleaner: deleted expired bootstrap token secret ${BOOTSTRAP_NAMESPACE}/${name}`);
    } catch (e) {
      if (e instanceof StatusError && e.code === 404) return;
      this.log(`tokencleaner: ${name}: ${(e as Error).message}`);
      if (!this.stopped) setTimeout(() => this.consider(name), 1000).unref();
    }
  }
}
