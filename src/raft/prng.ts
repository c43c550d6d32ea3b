// A small seeded PRNG (mulberry32) for hosts and tests that want
// reproducible randomized election timeouts (RaftConfig.random): the one
// copy is core's seededRandom (src/core/random.ts), which imports nothing.

export { seededRandom as mulberry32 } from '../core/random.js';
