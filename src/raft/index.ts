// Public surface of the Raft core (docs/raft.md).
export * from './types.js';
export { RawNode } from './raw-node.js';
export { mulberry32 } from './prng.js';
