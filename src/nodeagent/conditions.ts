// Node conditions (spec 002 §2.1): each condition's lifecycle is an XState
// machine. A condition starts Unknown; every observation says whether the
// problem it reports is present. Pressure conditions stay True for
// `transitionPeriodMs` after the pressure ends (Kubernetes'
// evictionPressureTransitionPeriod) so they do not flap; Ready follows the
// runtime at once. lastHeartbeatTime moves on every observation,
// lastTransitionTime only when the status changes. Times come from the
// injected clock (clock.ts).

import { type ActorRefFrom, assign, createActor, setup } from 'xstate';
import { type Clock, rfc3339 } from './clock.js';

export type ConditionType = 'Ready' | 'MemoryPressure' | 'DiskPressure' | 'PIDPressure' | 'NetworkUnavailable';
export type ConditionStatus = 'True' | 'False' | 'Unknown';

export interface NodeCondition {
  type: ConditionType;
  status: ConditionStatus;
  reason: string;
  message: string;
  lastHeartbeatTime: string;
  lastTransitionTime: string;
}

export interface Observation {
  type: 'OBSERVE';
  problem: boolean;
  reason: string;
  message: string;
}

interface Ctx {
  clock: Clock;
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

export const conditionMachine = setup({
  types: {
    context: {} as Ctx,
    events: {} as Observation,
    input: {} as { clock: Clock; whenProblem: ConditionStatus; whenFine: ConditionStatus; transitionPeriodMs: number },
  },
  delays: {
    transitionPeriod: ({ context }) => context.periodMs,
  },
  actions: {
    setProblem: assign(({ context, event }) => ({
      status: context.whenProblem,
      reason: event.reason,
      message: event.message,
      heartbeat: context.clock.now(),
      transition: context.status === context.whenProblem ? context.transition : context.clock.now(),
      pending: undefined,
    })),
    setFine: assign(({ context, event }) => ({
      status: context.whenFine,
      reason: event.reason,
      message: event.message,
      heartbeat: context.clock.now(),
      transition: context.status === context.whenFine ? context.transition : context.clock.now(),
      pending: undefined,
    })),
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

export type ConditionActor = ActorRefFrom<typeof conditionMachine>;

const PRESSURE: ConditionType[] = ['MemoryPressure', 'DiskPressure', 'PIDPressure', 'NetworkUnavailable'];
export const CONDITION_TYPES: ConditionType[] = ['Ready', ...PRESSURE];

/** the five node conditions, one actor each */
export class NodeConditions {
  private readonly actors = new Map<ConditionType, ConditionActor>();

  constructor(
    clock: Clock,
    transitionPeriodMs: number,
    private readonly onChange: () => void = () => {},
  ) {
    for (const type of CONDITION_TYPES) {
      const period = type === 'MemoryPressure' || type === 'DiskPressure' || type === 'PIDPressure' ? transitionPeriodMs : 0;
      const actor = createActor(conditionMachine, {
        clock: { setTimeout: (fn, ms) => clock.setTimeout(fn as () => void, ms), clearTimeout: (id) => clock.clearTimeout(id) },
        input: { clock, whenProblem: type === 'Ready' ? 'False' : 'True', whenFine: type === 'Ready' ? 'True' : 'False', transitionPeriodMs: period },
      });
      let last = actor.getSnapshot().context.status;
      actor.subscribe((s) => {
        if (s.context.status !== last) {
          last = s.context.status;
          this.onChange();
        }
      });
      actor.start();
      this.actors.set(type, actor);
    }
  }

  observe(type: ConditionType, problem: boolean, reason: string, message: string): void {
    this.actors.get(type)!.send({ type: 'OBSERVE', problem, reason, message });
  }

  state(type: ConditionType): string {
    return String(this.actors.get(type)!.getSnapshot().value);
  }

  list(): NodeCondition[] {
    return CONDITION_TYPES.map((type) => {
      const c = this.actors.get(type)!.getSnapshot().context;
      return { type, status: c.status, reason: c.reason, message: c.message, lastHeartbeatTime: rfc3339(c.heartbeat), lastTransitionTime: rfc3339(c.transition) };
    });
  }

  stop(): void {
    for (const a of this.actors.values()) a.stop();
  }
}
