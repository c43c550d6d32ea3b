// Node conditions (spec 002 §2.1): one actor of the node-condition machine
// (src/lifecycles/node-condition.ts) per condition, timers on the agent's
// injected clock (clock.ts), reported in the Node's status as metav1.Time.

import { type ActorRefFrom, createActor } from 'xstate';
import { type Clock, rfc3339 } from './clock.js';
import { type ConditionStatus, type ConditionType, conditionMachine } from '../lifecycles/node-condition.js';

export type { ConditionStatus, ConditionType } from '../lifecycles/node-condition.js';

export interface NodeCondition {
  type: ConditionType;
  status: ConditionStatus;
  reason: string;
  message: string;
  lastHeartbeatTime: string;
  lastTransitionTime: string;
}

export type ConditionActor = ActorRefFrom<typeof conditionMachine>;

const PRESSURE: ConditionType[] = ['MemoryPressure', 'DiskPressure', 'PIDPressure', 'NetworkUnavailable'];
export const CONDITION_TYPES: ConditionType[] = ['Ready', ...PRESSURE];

/** the five node conditions, one actor each */
export class NodeConditions {
  private readonly actors = new Map<ConditionType, ConditionActor>();

  constructor(
    clock: Clock,
    transitionPeriodMs: number,
    private readonly onChange: (type: ConditionType, status: ConditionStatus) => void = () => {},
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
          this.onChange(type, last);
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
