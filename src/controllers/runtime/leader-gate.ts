// Runs an in-process controller only while this member leads its cluster.
// Every member of a Raft cluster runs the same controllers; their writes are
// compare-and-swap, so running them everywhere is safe but triples the work
// (and the conflicts). Kubernetes elects one kube-controller-manager with a
// Lease; orch members already elect a Raft leader, so that election decides.
// A store without a leadership signal (the single-node LocalStore) is always
// the leader (src/store/types.ts `isLeader`).
//
// The controllers are level-driven and restartable: `start()` re-scans the
// store, so a new leader finishes whatever the old one left half done.
// Leadership is not a lock: a deposed leader may act for a moment before it
// learns of its demotion; the compare-and-swap writes keep that harmless.

import type { RevisionedStore } from '../../store/types.js';

export interface Controller {
  start(): void;
  stop(): void;
  /** whether the informers it started have listed (runtime/informer.ts); absent = synced once started */
  hasSynced?(): boolean;
}

/** the leadership part of the store contract */
export type LeadershipSource = Pick<RevisionedStore, 'isLeader' | 'onLeadershipChange'>;

export interface LeaderGate {
  /** whether the controller is running on this member now */
  readonly running: boolean;
  /** running and its informers synced: what /readyz "informer-sync" asks (src/server/readiness.ts) */
  synced(): boolean;
  /** stops the controller (if running) and stops following leadership */
  stop(): void;
}

export interface LeaderGateOptions {
  /** for the log lines on start and stop */
  name?: string;
  log?: (msg: string) => void;
}

/** starts `controller` whenever this member becomes leader, stops it when it stops being one */
export function runWhileLeader(source: LeadershipSource, controller: Controller, opts: LeaderGateOptions = {}): LeaderGate {
  const name = opts.name ?? 'controller';
  const isLeader = (): boolean => source.isLeader?.() ?? true;
  let running = false;
  let closed = false;
  let startScheduled = false;

  const startNow = (): void => {
    startScheduled = false;
    // leadership may have flapped since the start was scheduled: decide on the latest state
    if (closed || running || !isLeader()) return;
    running = true;
    opts.log?.(`${name}: this member leads; starting`);
    controller.start();
  };
  const stopNow = (): void => {
    if (!running) return;
    running = false;
    opts.log?.(`${name}: this member no longer leads; stopping`);
    controller.stop();
  };
  const onChange = (leader: boolean): void => {
    if (closed) return;
    if (!leader) {
      // stop at once: a former leader should not keep writing
      stopNow();
      return;
    }
    // start off the caller's stack (the Raft loop delivers the change; a start scans the store)
    if (!running && !startScheduled) {
      startScheduled = true;
      setImmediate(startNow);
    }
  };

  const unsubscribe = source.onLeadershipChange?.(onChange);
  if (isLeader()) {
    running = true;
    controller.start();
  }

  return {
    get running() {
      return running;
    },
    synced() {
      return running && (controller.hasSynced?.() ?? true);
    },
    stop() {
      closed = true;
      unsubscribe?.();
      stopNow();
    },
  };
}
