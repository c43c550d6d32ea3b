// The `tokencleaner` controller (spec 001 §5.4, §3): deletes bootstrap-token
// Secrets whose expiration has passed. Level-driven on the controller runtime
// (runtime/): every Secret in `orch-system` is a key of the work queue, a live
// token is looked at again at its expiration (a delayed add on the clock),
// and a start (or restart) lists everything again.

import { StatusError } from '../core/errors.js';
import type { GenericStore } from '../registry/generic-store.js';
import type { ResourceDefinition } from '../registry/types.js';
import { bootstrapNamespaceOf, lifecycleState, parseBootstrapSecret } from '../auth/authn/bootstrap-token.js';
import { type Clock, systemClock } from '../core/clock.js';
import { ControllerLoop, LoopController, type Informer, type InformerSource } from './runtime/index.js';

/** the longest delay a Node timer takes */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class TokenCleanerController extends LoopController {
  protected readonly loop: ControllerLoop;
  private secretsInformer: Informer | undefined;
  /** where the token Secrets live (bootstrap-token.ts) */
  private readonly namespace: string;

  constructor(
    store: InformerSource,
    private readonly secrets: () => { def: ResourceDefinition; gs: GenericStore },
    private readonly apiDomain: string,
    private readonly log: (msg: string) => void = () => {},
    private readonly clock: Clock = systemClock,
  ) {
    super();
    this.loop = new ControllerLoop(store, { name: 'tokencleaner', clock, log, baseDelayMs: 1000 });
    this.namespace = bootstrapNamespaceOf(apiDomain);
  }

  /** lists and follows the Secrets; may be called again after stop() (leader-gate.ts) */
  start(): void {
    this.loop.begin((name) => this.sync(name));
    const onSecret = (_o: unknown, key: string): void => {
      if (key.startsWith(`${this.namespace}/`)) this.loop.enqueue(key.slice(this.namespace.length + 1));
    };
    this.secretsInformer = this.loop.inform(this.secrets().gs.rangeKeys(''), { add: onSecret, update: (_old, o, key) => onSecret(o, key) });
  }

  stop(): void {
    this.loop.end();
  }

  private async sync(name: string): Promise<void> {
    const secret = this.secretsInformer?.get(`${this.namespace}/${name}`);
    if (!secret) return;
    const tok = parseBootstrapSecret(secret, this.apiDomain);
    if ('invalid' in tok || tok.expiresAt === undefined || tok.deleting) return;
    if (lifecycleState(tok, this.clock.now()) !== 'expired') {
      this.loop.enqueueAfter(name, Math.min(MAX_TIMER_MS, Math.max(0, tok.expiresAt - this.clock.now()) + 1));
      return;
    }
    try {
      await this.secrets().gs.delete(this.namespace, name, { dryRun: false });
      this.log(`tokencleaner: deleted expired bootstrap token secret ${this.namespace}/${name}`);
    } catch (e) {
      if (e instanceof StatusError && e.code === 404) return;
      throw e; // retried with backoff by the queue
    }
  }
}
