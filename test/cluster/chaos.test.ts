// Chaos test on real processes (docs/raft.md "Chaos test", docs/reliability.md
// "Partition nemesis"): 3 members on loopback, a client workload of creates,
// updates with resourceVersion preconditions and consistent reads through the
// HTTPS API, and watchers following the same objects across members, while a
// nemesis SIGKILLs the leader, isolates the leader and a follower, flaps a
// link, pauses the leader and jumps its wall clock (test/cluster/chaos-harness.ts).
// The history must be linearizable (Wing–Gong, per key), no acknowledged write
// may be lost, every watch stream must be gap-free (or end in 410), and the
// cluster must accept writes again within a few election timeouts of each
// fault being healed. The long run is bench/chaos.ts.

import { describe, expect, it } from 'vitest';
import { ALL_FAULTS, runChaos } from './chaos-harness.js';

/** "a few election timeouts" (0.5–1 s at a 50 ms tick) plus the time a 3-member cluster needs after a heal */
const RECOVERY_BOUND_MS = 10_000;

describe('chaos: 3 real members under kills, partitions, pauses and clock jumps', () => {
  it('keeps the history linearizable, loses no acknowledged write, and keeps every watch gap-free', async () => {
    // One pass through every kind of fault, kept short for the suite: each
    // partition or pause lasts 1.2 s (past the 0.5–1 s election timeout, so
    // an isolated leader is replaced), and the nemesis waits 0.5 s after each
    // recovery. The long run (bench/chaos.ts) keeps 2.5 s faults and 1.5 s gaps.
    const report = await runChaos({ workloadMs: 0, passes: 1, faultMs: 1200, warmupMs: 500, settleMs: 500, faults: ALL_FAULTS, log: (m) => console.log(`chaos ${m}`) });
    console.log(`chaos: ${JSON.stringify({ ...report, watch: { ...report.watch, problems: report.watch.problems.slice(0, 20) } })}`);
    expect(report.acknowledgedWrites).toBeGreaterThan(20); // the workload did make progress
    expect(report.lostWrites).toEqual([]);
    expect(report.linearizability.failedKeys).toEqual([]);
    expect(report.linearizability.unknownKeys).toEqual([]);
    expect(report.watch.problems).toEqual([]);
    expect(report.watch.events).toBeGreaterThan(0);
    for (const kind of ALL_FAULTS) expect(report.faultsInjected[kind], kind).toBe(1);
    for (const ms of report.recoveriesMs) expect(ms).toBeLessThan(RECOVERY_BOUND_MS);
  }, 400_000);
});
