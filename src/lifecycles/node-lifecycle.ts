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
// A new machine starts Alive with a whole grace period ahead: a controller
// that has just started (a restart, a new Raft leader) gives every node a
// fresh grace period instead of judging it by heartbeats it never saw, so a
// leader change does not mark every node Unknown at once (issue 13).
//
// Timers run on the clock handed to the actor (src/core/clock.ts), so tests
// drive the machine with a ManualClock.

import { type ActorRefFrom, createActor, setup } from 'xstate';
import type { Clock, TimerHandle } from '../core/clock.js';

export type ReadyStatus = 'True' | 'False' | 'Unknown' | 'None';

export type NodeHealthEvent = { type: 'HEARTBEAT' } | { type: 'REPORT'; ready: ReadyStatus };

interface Ctx {
  graceMs: number;
  notReadyGraceMs: number;
}

const reportTo = (own: ReadyStatus) => {
  const target: Record<ReadyStatus, string> = { True: 'Ready', False: 'NotReady', Unknown: 'Unknown', None: 'Missing' };
  return (['True', 'False', 'Unknown', 'None'] as ReadyStatus[])
    .filter((s) => s !== own)
    .map((s) => ({ guard: { type: 'reports', params: { status: s } } as const, target: target[s] }));
};

export const nodeHealthMachine = setup({
  types: {
    context: {} as Ctx,
    events: {} as NodeHealthEvent,
    input: {} as { graceMs: number; notReadyGraceMs: number; ready: ReadyStatus },
  },
  delays: {
    grace: ({ context }) => context.graceMs,
    notReadyGrace: ({ context }) => context.notReadyGraceMs,
  },
  guards: {
    reports: ({ event }, params: { status: ReadyStatus }) => event.type === 'REPORT' && event.ready === params.status,
  },
}).createMachine({
  id: 'nodeHealth',
  type: 'parallel',
  context: ({ input }) => ({ graceMs: input.graceMs, notReadyGraceMs: input.notReadyGraceMs }),
  states: {
    liveness: {
      initial: 'Alive',
      states: {
        Alive: {
          after: { grace: 'Unreachable' },
          // re-entering restarts the grace timer
          on: { HEARTBEAT: { target: 'Alive', reenter: true } },
        },
        Unreachable: { on: { HEARTBEAT: 'Alive' } },
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

/** XState's clock option over the project's clock port */
export function xstateClock(clock: Clock): { setTimeout: (fn: (...args: unknown[]) => void, ms: number) => unknown; clearTimeout: (id: unknown) => void } {
  return {
    setTimeout: (fn, ms) => clock.setTimeout(() => fn(), ms),
    clearTimeout: (id) => (id as TimerHandle | undefined)?.cancel(),
  };
}

/** a started machine for one node; `ready` is the Ready status its object shows now */
export function startNodeHealth(clock: Clock, o: { graceMs: number; notReadyGraceMs: number; ready: ReadyStatus }): NodeHealthActor {
  const actor = createActor(nodeHealthMachine, { clock: xstateClock(clock), input: o });
  actor.start();
  if (o.ready !== 'None') actor.send({ type: 'REPORT', ready: o.ready });
  return actor;
}
