import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// Two test files at a time even on a 2-core host (vitest's default there is
// one): most of a file's time is waiting on servers, agents and real timers,
// so two halve the suite's wall time (772 → 425 s on the CI host). At most
// four: test/helpers/ports.ts gives each worker its own slice of ports.
const workers = Math.min(4, Math.max(2, availableParallelism() - 1));

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: workers,
    minWorkers: 1,
    reporters: ['default'],
  },
});
