// Blind time of the node lifecycle controller (docs/nodeagent.md "Control
// plane behind"): the stretches during which the controller could not have
// observed a heartbeat a node sent, because the control plane itself was
// behind — its event loop stalled (a timer ran late), its process saturated,
// its own store writes failing. Nodes are not held to account for them
// (src/lifecycles/node-lifecycle.ts, Liveness): without this, an overloaded
// member whose renewals queue up unread would mark thousands of healthy nodes
// Unknown (the 5,000-node run in docs/scale.md: 2,220).
//
// The ledger is the measure of a union of intervals. Intervals arrive with
// non-decreasing ends (they are reported when they are over), so keeping the
// end of the covered part is enough to count an overlap once.

import type { BlindLedger } from './machine.js';

export class BlindTime implements BlindLedger {
  private sum = 0;
  private coveredUntil = Number.NEGATIVE_INFINITY;

  /** `toleranceMs`: how late a timer may run before the lateness counts (ordinary event-loop jitter) */
  constructor(readonly toleranceMs: number) {}

  total(): number {
    return this.sum;
  }

  /** the controller could not observe in [from, to) */
  add(from: number, to: number): void {
    const start = Math.max(from, this.coveredUntil);
    if (to <= start) return;
    this.sum += to - start;
    this.coveredUntil = to;
  }

  late(dueAt: number, now: number): void {
    this.add(dueAt + this.toleranceMs, now);
  }
}
