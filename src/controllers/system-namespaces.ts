// The leader re-creates the built-in namespaces when they are missing, every
// minute, as kube-apiserver's system namespaces controller does: the node-lease
// namespace may be deleted (kube's NamespaceLifecycle protects only default,
// the system and the public namespaces) and comes back empty.

import { type Clock, type TimerHandle, systemClock } from '../core/clock.js';
import type { Controller } from './runtime/leader-gate.js';

/** kube's system namespaces controller period */
export const SYSTEM_NAMESPACES_PERIOD_MS = 60_000;

export interface SystemNamespacesOptions {
  /** creates the built-in namespaces that are absent (409 ignored) */
  ensure: () => Promise<void>;
  periodMs?: number;
  clock?: Clock;
  log?: (msg: string) => void;
}

export class SystemNamespaces implements Controller {
  private timer: TimerHandle | undefined;
  private stopped = true;

  constructor(private readonly o: SystemNamespacesOptions) {}

  start(): void {
    this.stopped = false;
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = undefined;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = (this.o.clock ?? systemClock).setTimeout(() => {
      this.o.ensure()
        .catch((e: unknown) => this.o.log?.(`system namespaces: ${(e as Error).message}`))
        .finally(() => this.schedule());
    }, this.o.periodMs ?? SYSTEM_NAMESPACES_PERIOD_MS);
  }
}
