// A leader-only pass that creates objects kube-apiserver makes at start when
// they are missing (its bootstrap post-start hooks): an existing object is
// left alone, and a failed pass is retried every second, as a failed write is
// likely a store that is not available yet.

import { StatusError } from '../core/errors.js';
import type { GenericStore } from '../registry/generic-store.js';
import type { ApiObject } from '../registry/types.js';
import { type Clock, systemClock } from '../core/clock.js';
import type { Controller } from './runtime/leader-gate.js';

export interface BootstrapObject {
  /** undefined when the kind is not served (--runtime-config) */
  store: () => GenericStore | undefined;
  object: ApiObject;
}

export interface BootstrapObjectsOptions {
  /** for the log */
  name: string;
  /** the field manager of the creates */
  manager: string;
  /** in creation order */
  objects: () => BootstrapObject[];
  clock?: Clock;
  log?: (msg: string) => void;
}

export class BootstrapObjects implements Controller {
  private stopped = false;
  private run: Promise<void> = Promise.resolve();

  constructor(private readonly o: BootstrapObjectsOptions) {}

  start(): void {
    this.stopped = false;
    this.run = this.ensure().catch((e: unknown) => {
      this.o.log?.(`${this.o.name}: ${(e as Error).message}; retrying`);
      (this.o.clock ?? systemClock).setTimeout(() => {
        if (!this.stopped) this.start();
      }, 1000);
    });
  }

  stop(): void {
    this.stopped = true;
  }

  /** resolves once the last start's pass ended (it never rejects) */
  settled(): Promise<void> {
    return this.run;
  }

  private async ensure(): Promise<void> {
    for (const { store, object } of this.o.objects()) {
      if (this.stopped) return;
      const gs = store();
      if (!gs) continue;
      try {
        await gs.create(object.metadata?.namespace ?? '', structuredClone(object), { dryRun: false, manager: this.o.manager });
      } catch (e) {
        // already there (an earlier start, another member, an operator): kept as it is
        if (!(e instanceof StatusError && e.code === 409)) throw e;
      }
    }
  }
}
