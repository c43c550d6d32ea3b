// The controller runtime (issue #9 item 5; docs/controllers.md): shared
// informers over the store's applied feed, a rate-limited work queue on the
// Clock port, the loop that ties them together, and the leader gate.
export { ControllerLoop, type ControllerLoopOptions } from './controller-loop.js';
export { LoopController } from './loop-controller.js';
export { type IndexFunc, Informer, type InformerHandlers, type InformerRange, type Lister, NAMESPACE_INDEX } from './informer.js';
export { InformerFactory, type InformerSource, type InformerUse, prefixEnd, prefixRange, sharedInformers } from './informer-factory.js';
export { type Controller, type LeaderGate, type LeadershipSource, runWhileLeader } from './leader-gate.js';
export { type RateLimitOptions, TokenBucket, WorkQueue, type WorkQueueOptions } from './work-queue.js';
export { type RawEntry, RawRange, type RawSource } from './raw-range.js';
export { LABEL_INDEX, labelCandidates, labelIndex } from './label-index.js';
