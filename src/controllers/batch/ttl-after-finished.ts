// The TTL-after-finished controller (kube-controller-manager's
// `ttl-after-finished`), leader only: a Job that finished (Complete or
// Failed) and sets spec.ttlSecondsAfterFinished is deleted, with background
// propagation, that many seconds after it finished (completionTime, else the
// terminal condition's lastTransitionTime). A Job not yet due is looked at
// again when it is, a delayed add on the injected clock.

import { StatusError } from '../../core/errors.js';
import { type Clock, systemClock } from '../../core/clock.js';
import type { GenericStore } from '../../registry/generic-store.js';
import type { ApiObject, JSONValue } from '../../registry/types.js';
import { ControllerLoop, LoopController, type Informer, type InformerSource } from '../runtime/index.js';

export const TTL_AFTER_FINISHED_CONTROLLER = 'ttl-after-finished';

type Obj = Record<string, JSONValue>;

export interface TtlOptions {
  store: InformerSource;
  jobs: () => GenericStore;
  clock?: Clock;
  log?: (msg: string) => void;
}

/** when a finished Job expires (ms), undefined when it has no TTL or has not finished */
export function expiresAt(job: ApiObject): number | undefined {
  const ttl = (job.spec as Obj | undefined)?.ttlSecondsAfterFinished;
  if (typeof ttl !== 'number' || job.metadata?.deletionTimestamp) return undefined;
  const st = (job.status ?? {}) as Obj;
  const done = ((st.conditions ?? []) as Obj[]).find((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');
  if (!done) return undefined;
  const at = Date.parse(String(st.completionTime ?? done.lastTransitionTime ?? ''));
  return Number.isNaN(at) ? undefined : at + ttl * 1000;
}

export class TtlAfterFinishedController extends LoopController {
  protected readonly loop: ControllerLoop;
  private readonly clock: Clock;
  private jobs: Informer | undefined;

  constructor(private readonly o: TtlOptions) {
    super();
    this.clock = o.clock ?? systemClock;
    this.loop = new ControllerLoop(o.store, { name: 'ttl-after-finished', clock: this.clock, log: o.log, baseDelayMs: 200 });
  }

  start(): void {
    this.stop();
    this.loop.begin((key) => this.sync(key));
    this.jobs = this.loop.inform(this.o.jobs().rangeKeys(''), {
      add: (j, key) => {
        if (expiresAt(j) !== undefined) this.loop.enqueue(key);
      },
      update: (_old, j, key) => {
        if (expiresAt(j) !== undefined) this.loop.enqueue(key);
      },
    });
  }

  stop(): void {
    this.loop.end();
    this.jobs = undefined;
  }

  private async sync(key: string): Promise<void> {
    const job = this.jobs?.get(key);
    if (!job) return;
    const at = expiresAt(job);
    if (at === undefined) return;
    const left = at - this.clock.now();
    if (left > 0) {
      this.loop.enqueueAfter(key, left);
      return;
    }
    try {
      // the uid and resourceVersion checked: a Job changed since (a new TTL) is looked at again
      await this.o.jobs().delete(job.metadata?.namespace ?? '', job.metadata?.name ?? '', {
        dryRun: false, propagationPolicy: 'Background', preconditions: { uid: job.metadata?.uid ?? '', resourceVersion: job.metadata?.resourceVersion ?? '' },
      });
    } catch (e) {
      if (e instanceof StatusError && e.code === 404) return;
      if (e instanceof StatusError && e.code === 409) return; // the update that moved it enqueued it again
      throw e;
    }
  }
}
