// The lifecycle of a leader-gated controller (src/controllers/leader-gate.ts)
// as an XState v5 machine: following → starting → running → following …,
// and closed for good. The gate feeds it leadership changes and carries out
// the actions it returns (start or stop the controller, schedule a start);
// the machine itself does nothing, so every rule is tested through pure
// transitions (test/unit/leader-gate-machine.test.ts).
//
// The rules (docs/architecture.md "Lifecycles"):
// - losing leadership stops a running controller at once: a former leader
//   should not keep writing;
// - gaining it schedules a start off the caller's stack (the Raft loop
//   delivers the change and a start scans the store); the scheduled start
//   decides on the leadership of that moment, so a flap in between neither
//   starts a follower nor loses the start of a leader;
// - a close stops a running controller and ignores everything after.

import { initialTransition, setup, transition } from 'xstate';

export type LeaderGateEvent =
  /** this member became leader */
  | { type: 'LEADER' }
  /** this member stopped being leader */
  | { type: 'FOLLOWER' }
  /** a scheduled (or the initial) start is due; `leader` is the leadership now */
  | { type: 'START_DUE'; leader: boolean }
  | { type: 'CLOSE' };

/** what the gate must do after a transition */
export type LeaderGateAction = 'startController' | 'stopController' | 'scheduleStart';

export const leaderGateMachine = setup({
  types: { events: {} as LeaderGateEvent },
  actions: { startController: () => {}, stopController: () => {}, scheduleStart: () => {} },
  guards: { leads: ({ event }) => event.type === 'START_DUE' && event.leader },
}).createMachine({
  id: 'leaderGate',
  initial: 'following',
  states: {
    following: {
      on: {
        LEADER: { target: 'starting', actions: 'scheduleStart' },
        START_DUE: { guard: 'leads', target: 'running', actions: 'startController' },
        CLOSE: 'closed',
      },
    },
    // a start is scheduled; leadership may flap until it is due
    starting: {
      on: {
        START_DUE: [{ guard: 'leads', target: 'running', actions: 'startController' }, { target: 'following' }],
        CLOSE: 'closed',
      },
    },
    running: {
      on: {
        FOLLOWER: { target: 'following', actions: 'stopController' },
        CLOSE: { target: 'closed', actions: 'stopController' },
      },
    },
    closed: { type: 'final' },
  },
});

export type LeaderGateSnapshot = ReturnType<typeof initialTransition<typeof leaderGateMachine>>[0];
export type LeaderGateState = 'following' | 'starting' | 'running' | 'closed';

export function initialLeaderGate(): LeaderGateSnapshot {
  return initialTransition(leaderGateMachine)[0];
}

/** one pure step: the next snapshot and the actions the gate must carry out, in order */
export function stepLeaderGate(snapshot: LeaderGateSnapshot, event: LeaderGateEvent): { snapshot: LeaderGateSnapshot; actions: LeaderGateAction[] } {
  const [next, actions] = transition(leaderGateMachine, snapshot, event);
  return { snapshot: next, actions: actions.map((a) => a.type as LeaderGateAction) };
}

export function leaderGateState(snapshot: LeaderGateSnapshot): LeaderGateState {
  return snapshot.value as LeaderGateState;
}
