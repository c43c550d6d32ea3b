import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// Two test files at a time even on a 2-core host (vitest's default there is
// one): most of a file's time is waiting on servers, agents and real timers,
// so two halve the suite's wall time (772 → 425 s on the CI host). At most
// four: test/helpers/ports.ts gives each worker its own slice of ports.
const workers = Math.min(4, Math.max(2, availableParallelism() - 1));

// Two projects. `in-memory`: files that only exercise modules in memory (no
// server, agent or cluster process of their own); test/run.sh runs them with
// one module graph per worker (`--no-isolate`), since importing src/ again for
// each file was most of their time (docs/testing.md "Suite time"). `servers`:
// the rest, each file with a fresh module graph, so one file's leftovers
// cannot reach the next. vitest 3 takes isolation per run, not per project.
const sharedGraph = ['test/unit/**/*.test.ts', 'test/property/**/*.test.ts', 'test/raft/**/*.test.ts', 'test/watch/**/*.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: workers,
    minWorkers: 1,
    reporters: ['default'],
    projects: [
      { extends: true, test: { name: 'in-memory', include: sharedGraph } },
      { extends: true, test: { name: 'servers', include: ['test/**/*.test.ts'], exclude: sharedGraph } },
    ],
  },
});
