// The lifecycle of one watch stream (src/watch/watcher.ts, spec 000 §4.5) as
// an XState v5 machine: starting (initial events or replay being written) →
// live (events dispatched to it) → ended, or starting → ended. A watch ends
// once, for one reason; its stream is ended (timeout, shutdown, error, slow)
// unless the client went away first (the gateway owns that socket), and its
// owner is told once. The watcher carries out the actions; the rules are
// tested through pure transitions (test/unit/watcher-machine.test.ts).

import { initialTransition, setup, transition } from 'xstate';

export type WatchEndReason = 'stopped' | 'timeout' | 'closed' | 'slow' | 'budget' | 'error';

export type WatcherEvent = { type: 'GO_LIVE' } | { type: 'END'; why: WatchEndReason };

export type WatcherAction = 'endSink' | 'notifyEnd';

export const watcherMachine = setup({
  types: { events: {} as WatcherEvent },
  actions: { endSink: () => {}, notifyEnd: () => {} },
  guards: { clientGone: ({ event }) => event.type === 'END' && event.why === 'stopped' },
}).createMachine({
  id: 'watcher',
  initial: 'starting',
  states: {
    starting: {
      on: {
        GO_LIVE: 'live',
        END: [
          { guard: 'clientGone', target: 'ended', actions: 'notifyEnd' },
          { target: 'ended', actions: ['endSink', 'notifyEnd'] },
        ],
      },
    },
    live: {
      on: {
        END: [
          { guard: 'clientGone', target: 'ended', actions: 'notifyEnd' },
          { target: 'ended', actions: ['endSink', 'notifyEnd'] },
        ],
      },
    },
    ended: { type: 'final' },
  },
});

export type WatcherSnapshot = ReturnType<typeof initialTransition<typeof watcherMachine>>[0];
export type WatcherState = 'starting' | 'live' | 'ended';

export function initialWatcher(): WatcherSnapshot {
  return initialTransition(watcherMachine)[0];
}

/** one pure step: the next snapshot, its state and the actions to carry out, in order */
export function stepWatcher(snapshot: WatcherSnapshot, event: WatcherEvent): { snapshot: WatcherSnapshot; state: WatcherState; actions: WatcherAction[] } {
  const [next, actions] = transition(watcherMachine, snapshot, event);
  return { snapshot: next, state: next.value as WatcherState, actions: actions.map((a) => a.type as WatcherAction) };
}
