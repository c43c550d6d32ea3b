// The service-manager watchdog's lifecycle (spec 002 §8) as an XState
// machine: READY=1 once the agent is ready (always, as kubelet's sd_notify;
// spec 002 §8), then, with a watchdog period, WATCHDOG=1 every half period
// while it is healthy; while unhealthy no keep-alive is sent, so the manager
// restarts the agent unless health returns first. The node agent
// (src/nodeagent/watchdog.ts) reads the period from the environment, sends
// through systemd-notify and runs the actor on its clock; this file is pure
// rules, so the agent may import it without importing the control plane.

import { assign, setup } from 'xstate';

/** sends one sd_notify message */
export type Notify = (message: 'READY=1' | 'WATCHDOG=1') => void;

export interface WatchdogContext {
  /** undefined: no watchdog, READY=1 only */
  halfPeriodMs: number | undefined;
  healthy: () => boolean;
  notify: Notify;
  sent: number;
}

export const watchdogMachine = setup({
  types: { context: {} as WatchdogContext, events: {} as { type: 'READY' } | { type: 'STOP' }, input: {} as Omit<WatchdogContext, 'sent'> },
  delays: { half: ({ context }) => context.halfPeriodMs ?? 0 },
  guards: { healthy: ({ context }) => context.healthy(), watching: ({ context }) => context.halfPeriodMs !== undefined },
  actions: {
    ready: ({ context }) => context.notify('READY=1'),
    keepAlive: assign(({ context }) => {
      context.notify('WATCHDOG=1');
      return { sent: context.sent + 1 };
    }),
  },
}).createMachine({
  id: 'watchdog',
  context: ({ input }) => ({ ...input, sent: 0 }),
  initial: 'WaitingForReady',
  on: { STOP: '.Stopped' },
  states: {
    WaitingForReady: {
      on: { READY: [{ guard: 'watching', target: 'Healthy', actions: ['ready', 'keepAlive'] }, { target: 'ReadyOnly', actions: 'ready' }] },
    },
    // READY=1 sent, no watchdog period: nothing more to send
    ReadyOnly: {},
    Healthy: {
      after: { half: [{ guard: 'healthy', target: 'Healthy', reenter: true, actions: 'keepAlive' }, { target: 'Unhealthy' }] },
    },
    // no keep-alives: the service manager kills and restarts the agent unless health returns first
    Unhealthy: {
      after: { half: [{ guard: 'healthy', target: 'Healthy', actions: 'keepAlive' }, { target: 'Unhealthy', reenter: true }] },
    },
    Stopped: { type: 'final' },
  },
});

