// The leader gate moved into the controller runtime (runtime/leader-gate.ts);
// this path stays for the composition root and the tests that import it.
export * from './runtime/leader-gate.js';
