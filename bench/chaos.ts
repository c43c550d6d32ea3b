// The long chaos run (docs/reliability.md "Partition nemesis"): the same
// 3-member cluster of real processes, workload, watchers and nemesis as
// test/cluster/chaos.test.ts (test/cluster/chaos-harness.ts), for longer, and
// prints one JSON document: operations, acknowledged and lost writes,
// linearizability, faults injected by kind, leader changes, the longest time
// without an acknowledged write, recovery times, and the watch check.
//
//   npx tsx bench/chaos.ts [seconds=300]
//
// Exits 1 when a check fails (a lost write, a non-linearizable key, a watch
// that missed a revision).

import { ALL_FAULTS, runChaos } from '../test/cluster/chaos-harness.js';

const seconds = Number(process.argv[2] ?? 300);
const report = await runChaos({
  workloadMs: seconds * 1000,
  faults: ALL_FAULTS,
  log: (m) => process.stderr.write(`${new Date().toISOString()} ${m}\n`),
});
const recoveries = [...report.recoveriesMs].sort((a, b) => a - b);
const out = {
  seconds,
  durationMs: report.durationMs,
  operations: report.operations,
  acknowledgedWrites: report.acknowledgedWrites,
  lostWrites: report.lostWrites.length,
  linearizable: report.linearizability.ok,
  nonLinearizableKeys: report.linearizability.failedKeys,
  undecidedKeys: report.linearizability.unknownKeys,
  faultsInjected: report.faultsInjected,
  faultsTotal: Object.values(report.faultsInjected).reduce((a, b) => a + (b ?? 0), 0),
  leaderChanges: report.leaderChanges,
  maxUnavailabilityMs: report.maxUnavailabilityMs,
  recoveryMs: { median: recoveries[Math.floor(recoveries.length / 2)] ?? null, max: recoveries[recoveries.length - 1] ?? null },
  watch: { segments: report.watch.segments, events: report.watch.events, expired410: report.watch.expired, problems: report.watch.problems.length, firstProblems: report.watch.problems.slice(0, 10) },
};
process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
const failed = out.lostWrites > 0 || !out.linearizable || out.watch.problems > 0;
process.exit(failed ? 1 : 0);
