// Property test of the Raft core: fast-check generates fault schedules
// (crashes — clean and between persisting and sending —, restarts,
// partitions, loss, duplication, reordering by delay, clock skew, proposals,
// compaction, leadership transfers, reads) for 3- and 5-node clusters. The
// simulation (sim.ts) checks after every step: election safety, log
// matching, leader completeness and state machine safety (Raft §5.4,
// Figure 3). At the end the network is healed and every node restarted; then
// a leader must emerge and every entry known committed must be applied on
// every node (liveness under a healthy network).

import fc from 'fast-check';
import { describe, it } from 'vitest';
import { actionArb, runSchedule, variantArb } from './schedule.js';

// CI budget: a few seconds. RAFT_PROPERTY_RUNS=3000 for a deeper local search.
const EXTRA = Number(process.env.RAFT_PROPERTY_RUNS ?? 0);
const RUNS3 = EXTRA || 300;
const RUNS5 = EXTRA || 150;
// A deep search runs for minutes: a limit that grows with it, and a turn of the event loop
// between runs so the worker answers vitest's RPC (else "Timeout calling onTaskUpdate").
const TIMEOUT = 60_000 + EXTRA * 200;
const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('raft safety under generated fault schedules', () => {
  it('3-node clusters', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 2 ** 31 - 1 }), fc.array(actionArb(3), { minLength: 20, maxLength: 80, size: 'max' }), variantArb, async (seed, actions, variant) => {
        await yieldToLoop();
        runSchedule(3, seed, actions, variant);
      }),
      { numRuns: RUNS3 },
    );
  }, TIMEOUT);

  it('5-node clusters', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 2 ** 31 - 1 }), fc.array(actionArb(5), { minLength: 20, maxLength: 80, size: 'max' }), variantArb, async (seed, actions, variant) => {
        await yieldToLoop();
        runSchedule(5, seed, actions, variant);
      }),
      { numRuns: RUNS5 },
    );
  }, TIMEOUT);
});
