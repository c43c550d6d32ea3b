// Node conditions (spec 002 §2.1): each condition's lifecycle is an XState
// machine. A condition starts Unknown; every observation says whether the
// problem it reports is present. Pressure conditions stay True for
// `transitionPeriodMs` after the pressure ends (Kubernetes'
// evictionPressureTransitionPeriod) so they do not flap; Ready follows the
// runtime at once. lastHeartbeatTime moves on every observation,
// lastTransitionTime only when the status changes. Times come from the
// clock in the input; the transition period's timer from the actor's `clock`
// option. The node agent runs one actor per condition
// (src/nodeagent/conditions.ts); this file is pure rules, so the agent may
// import it without importing the control plane.

import { assign, setup } from 'xstate';
import type { Clock } from '../core/clock.js';

export type ConditionType = 'Ready' | 'MemoryPressure' | 'DiskPressure' | 'PIDPressure' | 'NetworkUnavailable';
export type ConditionStatus = 'True' | 'False' | 'Unknown';

export interface Observation {
  type: 'OBSERVE';
  problem: boolean;
  reason: string;
  message: string;
}

interface Ctx {
  clock: Pick<Clock, 'now'>;
  periodMs: number;
  /** status reported while the problem is present / absent */
  whenProblem: ConditionStatus;
  whenFine: ConditionStatus;
  status: ConditionStatus;
  reason: string;
  message: string;
  heartbeat: number;
  transition: number;
  /** the reason/message to report once a pressure's transition period ends */
  pending?: { reason: string; message: string };
}

/** the condition as an observation sets it: the transition time moves only when the status changes */
function observed(context: Ctx, status: ConditionStatus, event: Observation): Partial<Ctx> {
  const now = context.clock.now();
  return { status, reason: event.reason, message: event.message, heartbeat: now, transition: context.status === status ? context.transition : now, pending: undefined };
}

export const conditionMachine = setup({
  types: {
    context: {} as Ctx,
    events: {} as Observation,
    input: {} as { clock: Pick<Clock, 'now'>; whenProblem: ConditionStatus; whenFine: ConditionStatus; transitionPeriodMs: number },
  },
  delays: {
    transitionPeriod: ({ context }) => context.periodMs,
  },
  actions: {
    setProblem: assign(({ context, event }) => observed(context, context.whenProblem, event)),
    setFine: assign(({ context, event }) => observed(context, context.whenFine, event)),
    rememberFine: assign(({ context, event }) => ({ heartbeat: context.clock.now(), pending: { reason: event.reason, message: event.message } })),
    heartbeat: assign(({ context }) => ({ heartbeat: context.clock.now() })),
    settleFine: assign(({ context }) => ({
      status: context.whenFine,
      reason: context.pending?.reason ?? context.reason,
      message: context.pending?.message ?? context.message,
      transition: context.clock.now(),
      heartbeat: context.clock.now(),
      pending: undefined,
    })),
  },
  guards: {
    problem: ({ event }) => event.problem,
    noPeriod: ({ context }) => context.periodMs <= 0,
  },
}).createMachine({
  id: 'nodeCondition',
  context: ({ input }) => ({
    clock: input.clock,
    periodMs: input.transitionPeriodMs,
    whenProblem: input.whenProblem,
    whenFine: input.whenFine,
    status: 'Unknown',
    reason: 'NodeStatusUnknown',
    message: 'the node agent has not observed this condition yet',
    heartbeat: input.clock.now(),
    transition: input.clock.now(),
  }),
  initial: 'Unknown',
  states: {
    Unknown: {
      on: { OBSERVE: [{ guard: 'problem', target: 'Problem', actions: 'setProblem' }, { target: 'Fine', actions: 'setFine' }] },
    },
    Problem: {
      on: {
        OBSERVE: [
          { guard: 'problem', target: 'Problem', actions: 'setProblem' },
          { guard: 'noPeriod', target: 'Fine', actions: 'setFine' },
          { target: 'Clearing', actions: 'rememberFine' },
        ],
      },
    },
    // the problem is gone but the condition keeps its status until the transition period passes
    Clearing: {
      after: { transitionPeriod: { target: 'Fine', actions: 'settleFine' } },
      on: { OBSERVE: [{ guard: 'problem', target: 'Problem', actions: 'setProblem' }, { actions: 'rememberFine' }] },
    },
    Fine: {
      on: { OBSERVE: [{ guard: 'problem', target: 'Problem', actions: 'setProblem' }, { target: 'Fine', actions: 'setFine' }] },
    },
  },
});

