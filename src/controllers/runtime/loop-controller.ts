// What every controller built on one ControllerLoop answers the same way:
// synced once the loop's informers have listed, settled once its queue is
// idle (the leader gate's Controller contract, leader-gate.ts). A controller
// that waits on more than its loop overrides either.

import type { ControllerLoop } from './controller-loop.js';

export abstract class LoopController {
  protected abstract readonly loop: ControllerLoop;

  hasSynced(): boolean {
    return this.loop.hasSynced();
  }

  /** resolves once the queue has nothing queued or running (tests and shutdown wait on it) */
  async settled(): Promise<void> {
    await this.loop.queue?.idle();
  }
}
