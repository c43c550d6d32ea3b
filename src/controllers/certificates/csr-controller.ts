// What the three certificate controllers share (kube's certificate controller
// base, pkg/controller/certificates/certificate_controller.go): a work queue of
// CertificateSigningRequest names fed by one informer, the request read back
// from the informer's cache at sync time, and the request's PEM parsed with
// kube's error wording.

import { type Clock, systemClock } from '../../core/clock.js';
import type { GenericStore } from '../../registry/generic-store.js';
import type { ApiObject } from '../../registry/types.js';
import { ControllerLoop, LoopController, type Informer, type InformerSource } from '../runtime/index.js';
import { specOf } from './csr-state.js';
import { type ParsedCsr, parseCsr, requestPem } from './signer.js';

export interface CsrControllerOptions {
  store: InformerSource;
  csrs: () => GenericStore;
  clock?: Clock;
  log?: (msg: string) => void;
}

export abstract class CsrController extends LoopController {
  protected readonly loop: ControllerLoop;
  protected readonly clock: Clock;
  private informer: Informer | undefined;

  constructor(name: string, protected readonly base: CsrControllerOptions, baseDelayMs: number) {
    super();
    this.clock = base.clock ?? systemClock;
    this.loop = new ControllerLoop(base.store, { name, clock: this.clock, log: base.log, baseDelayMs });
  }

  /** whether a change to this request is worth a sync */
  protected wants(_csr: ApiObject): boolean {
    return true;
  }

  protected abstract handle(csr: ApiObject, key: string): Promise<void>;

  start(): void {
    this.stop();
    this.loop.begin(async (key) => {
      const csr = this.informer?.get(key);
      if (csr) await this.handle(csr, key);
    });
    const consider = (o: ApiObject, key: string): void => {
      if (this.wants(o)) this.loop.enqueue(key);
    };
    this.informer = this.loop.inform(this.base.csrs().rangeKeys(''), { add: consider, update: (_old, o, key) => consider(o, key) });
  }

  stop(): void {
    this.loop.end();
    this.informer = undefined;
  }
}

/** the request's PEM parsed; a parse error is kube's "unable to parse csr" (retried with backoff) */
export async function parseRequestOf(csr: ApiObject): Promise<ParsedCsr> {
  try {
    return await parseCsr(requestPem(specOf(csr).request));
  } catch (e) {
    throw new Error(`unable to parse csr "${csr.metadata?.name ?? ''}": ${(e as Error).message}`);
  }
}
