// One node's lifecycle as the control plane sees it (spec 002 §2.1, §3), an
// XState machine with two parallel regions (the node lifecycle controller,
// src/controllers/node-lifecycle/, feeds it and acts on its view):
//
//   liveness:  Alive ──(no HEARTBEAT for gracePeriod)──► Unreachable
//              Alive ◄──────────────(HEARTBEAT)───────── Unreachable
//     A HEARTBEAT is a renewal of the node's Lease or a new lastHeartbeatTime
//     in its Ready condition, as this controller observes it: the grace
//     period is timed on the controller's clock from the moment it saw the
//     heartbeat, never from the timestamps the node wrote, so clock skew
//     between node and control plane does not matter (kube does the same).
//   readiness: what the node's Ready condition says (REPORT on every write)
//              Ready | NotReady.Recent ──(notReadyGracePeriod)──► NotReady.Persistent
//              | Unknown (the condition says Unknown) | Missing (never posted)
//
// Heartbeats do not go through the machine while it is Alive: the node's
// Liveness (below) notes the time it was seen, and its one timer (a callback
// actor the Alive state invokes, on the clock port), when due, asks whether
// the node has been silent for a whole grace period — if not, the timer is
// set again for what is left, without an event; if so, SILENT moves the
// machine to Unreachable. A Lease renewal thus costs a clock read, not a
// state transition and a timer reset (at 5,000 nodes ~580 transitions/s
// fewer; docs/scale.md). HEARTBEAT is still the event that brings an
// Unreachable node back.
//
// Blind time (docs/nodeagent.md "Control plane behind"): time during which
// the controller itself could not observe heartbeats — its event loop
// stalled, its process saturated, its store failing — does not count as a
// node's silence (kube's rule that probeTimestamp is the controller's own
// observation time, carried one step further). Liveness takes that credit
// from a BlindTime ledger the controller keeps, capped by `maxBlindMs`, so
// that a node that is really gone is still marked while the control plane
// stays behind.
//
// A new machine starts Alive with a whole grace period ahead: a controller
// that has just started (a restart, a new Raft leader) gives every node a
// fresh grace period instead of judging it by heartbeats it never saw, so a
// leader change does not mark every node Unknown at once (issue 13).
//
// Timers run on the clock handed to the actor (src/core/clock.ts), so tests
// drive the machine with a ManualClock.

import { type ActorRefFrom, createActor, fromCallback, setup } from 'xstate';
import type { Clock, TimerHandle } from '../core/clock.js';

export type ReadyStatus = 'True' | 'False' | 'Unknown' | 'None';

/**
 * HEARTBEAT: the node was seen; RECHECK: blind time was credited, an
 * Unreachable node may have time left; SILENT (from the Liveness timer): the
 * grace period ran out
 */
export type NodeHealthEvent = { type: 'HEARTBEAT' } | { type: 'RECHECK' } | { type: 'SILENT' } | { type: 'REPORT'; ready: ReadyStatus };

/** the controller's account of time it could not observe (controllers/node-lifecycle/blind-time.ts) */
export interface BlindLedger {
  /** ms of blind time up to now */
  total(): number;
  /** a timer due at `dueAt` ran at `now`: a lateness beyond the ledger's tolerance was blind time */
  late(dueAt: number, now: number): void;
}

/** When a node was last seen and how long it may stay silent, on the controller's clock. */
export class Liveness {
  private seenAt = 0;
  private blindAtSeen = 0;
  private dueAt = 0;
  private timer?: TimerHandle;

  constructor(
    private readonly clock: Clock,
    private readonly graceMs: number,
    private readonly blind?: BlindLedger,
    /** the most blind time credited to one silence */
    private readonly maxBlindMs = Number.POSITIVE_INFINITY,
  ) {
    this.seen();
  }

  seen(): void {
    this.seenAt = this.clock.now();
    this.blindAtSeen = this.blind?.total() ?? 0;
  }

  /** how much longer the node may stay silent (≤ 0: it has been silent for the grace period) */
  remainingMs(): number {
    const credit = Math.min(this.maxBlindMs, (this.blind?.total() ?? 0) - this.blindAtSeen);
    return this.graceMs + credit - (this.clock.now() - this.seenAt);
  }

  /** `silent` once the node has been silent for the grace period; the timer re-arms itself for what is left */
  watch(silent: () => void): void {
    this.unwatch();
    const ms = Math.max(0, this.remainingMs());
    this.dueAt = this.clock.now() + ms;
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      if (this.expired()) silent();
      else this.watch(silent);
    }, ms);
  }

  unwatch(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }

  /** the timer is due: a late timer tells the ledger the controller was stalled, then the node is judged */
  private expired(): boolean {
    this.blind?.late(this.dueAt, this.clock.now());
    return this.remainingMs() <= 0;
  }
}

interface Ctx {
  liveness: Liveness;
  notReadyGraceMs: number;
}

const reportTo = (own: ReadyStatus) => {
  const target: Record<ReadyStatus, string> = { True: 'Ready', False: 'NotReady', Unknown: 'Unknown', None: 'Missing' };
  return (['True', 'False', 'Unknown', 'None'] as ReadyStatus[])
    .filter((s) => s !== own)
    .map((s) => ({ guard: { type: 'reports', params: { status: s } } as const, target: target[s] }));
};

/** the Alive state's timer: SILENT when the Liveness says the grace period ran out */
const watchSilence = fromCallback<NodeHealthEvent, Liveness>(({ sendBack, input }) => {
  input.watch(() => sendBack({ type: 'SILENT' }));
  return () => input.unwatch();
});

export const nodeHealthMachine = setup({
  types: {
    context: {} as Ctx,
    events: {} as NodeHealthEvent,
    input: {} as { liveness: Liveness; notReadyGraceMs: number; ready: ReadyStatus },
  },
  actors: { watchSilence },
  delays: {
    notReadyGrace: ({ context }) => context.notReadyGraceMs,
  },
  guards: {
    reports: ({ event }, params: { status: ReadyStatus }) => event.type === 'REPORT' && event.ready === params.status,
    timeLeft: ({ context }) => context.liveness.remainingMs() > 0,
  },
  actions: {
    seen: ({ context }) => context.liveness.seen(),
  },
}).createMachine({
  id: 'nodeHealth',
  type: 'parallel',
  context: ({ input }) => ({ liveness: input.liveness, notReadyGraceMs: input.notReadyGraceMs }),
  states: {
    liveness: {
      initial: 'Alive',
      states: {
        Alive: {
          invoke: { src: 'watchSilence', input: ({ context }) => context.liveness },
          on: { SILENT: 'Unreachable', HEARTBEAT: { actions: 'seen' } },
        },
        Unreachable: {
          on: {
            HEARTBEAT: { target: 'Alive', actions: 'seen' },
            RECHECK: { guard: 'timeLeft', target: 'Alive' },
          },
        },
      },
    },
    readiness: {
      initial: 'Missing',
      states: {
        Missing: { on: { REPORT: reportTo('None') } },
        Ready: { on: { REPORT: reportTo('True') } },
        NotReady: {
          initial: 'Recent',
          states: {
            Recent: { after: { notReadyGrace: 'Persistent' } },
            Persistent: {},
          },
          on: { REPORT: reportTo('False') },
        },
        Unknown: { on: { REPORT: reportTo('Unknown') } },
      },
    },
  },
});

export type NodeHealthActor = ActorRefFrom<typeof nodeHealthMachine>;

export interface NodeHealthView {
  unreachable: boolean;
  readiness: 'Missing' | 'Ready' | 'NotReady.Recent' | 'NotReady.Persistent' | 'Unknown';
}

export function viewOf(actor: NodeHealthActor): NodeHealthView {
  const v = actor.getSnapshot().value as { liveness: string; readiness: string | { NotReady: string } };
  const r = typeof v.readiness === 'string' ? v.readiness : `NotReady.${v.readiness.NotReady}`;
  return { unreachable: v.liveness === 'Unreachable', readiness: r as NodeHealthView['readiness'] };
}

/**
 * A heartbeat of the node: while Alive only its Liveness notes it (no
 * transition, no timer reset); an Unreachable node gets HEARTBEAT.
 */
export function heartbeat(actor: NodeHealthActor): void {
  const snap = actor.getSnapshot();
  if ((snap.value as { liveness: string }).liveness === 'Alive') snap.context.liveness.seen();
  else actor.send({ type: 'HEARTBEAT' });
}

/** XState's clock option over the project's clock port */
export function xstateClock(clock: Clock): { setTimeout: (fn: (...args: unknown[]) => void, ms: number) => unknown; clearTimeout: (id: unknown) => void } {
  return {
    setTimeout: (fn, ms) => clock.setTimeout(() => fn(), ms),
    clearTimeout: (id) => (id as TimerHandle | undefined)?.cancel(),
  };
}

/** a started machine for one node; `ready` is the Ready status its object shows now */
export function startNodeHealth(
  clock: Clock,
  o: { graceMs: number; notReadyGraceMs: number; ready: ReadyStatus; blind?: BlindLedger; maxBlindMs?: number },
): NodeHealthActor {
  const liveness = new Liveness(clock, o.graceMs, o.blind, o.maxBlindMs);
  const actor = createActor(nodeHealthMachine, { clock: xstateClock(clock), input: { liveness, notReadyGraceMs: o.notReadyGraceMs, ready: o.ready } });
  actor.start();
  if (o.ready !== 'None') actor.send({ type: 'REPORT', ready: o.ready });
  return actor;
}
