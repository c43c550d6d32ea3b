// The restart lifecycle of one TLS worker slot (src/gateway/tls-workers.ts,
// docs/tls.md) as an XState v5 machine: up → (the process exits) → waiting →
// (the backoff is over) → up, and closed for good when the pool closes.
//
// The rule: a worker that dies young is restarted with growing delays (100 ms,
// 200 ms, 400 ms … at most 5 s), so a broken setup does not turn into a fork
// loop; a worker that lived longer than 10 s was healthy, so the next restart
// is immediate and the backoff starts afresh. Time enters only as the `at` of
// the events and through the Clock port of `superviseWorkerSlot`, so both the
// rule (pure transitions) and the driver (a ManualClock) are tested without
// waiting (test/unit/tls-worker-supervisor.test.ts).

import { initialTransition, setup, assign, transition } from 'xstate';
import type { Clock, TimerHandle } from '../core/clock.js';

/** a worker that lived longer than this was healthy: its restart is immediate */
export const HEALTHY_AFTER_MS = 10_000;
export const FIRST_RESTART_DELAY_MS = 100;
export const MAX_RESTART_DELAY_MS = 5000;

/** the delay before restart number `attempt` of a run of young deaths (0 = immediate) */
export function restartDelayMs(attempt: number): number {
  return attempt === 0 ? 0 : Math.min(MAX_RESTART_DELAY_MS, FIRST_RESTART_DELAY_MS * 2 ** (attempt - 1));
}

export type TlsWorkerEvent =
  /** the worker process exited (`at`: clock ms) */
  | { type: 'EXITED'; at: number }
  /** the backoff is over; a new process starts (`at`: clock ms) */
  | { type: 'RESTART_DUE'; at: number }
  | { type: 'CLOSE' };

export type TlsWorkerAction = 'scheduleRestart' | 'spawn';

interface Context {
  /** young deaths in a row */
  attempt: number;
  /** when the current process was started */
  startedAt: number;
  /** the delay of the restart scheduled last */
  delayMs: number;
}

export const tlsWorkerMachine = setup({
  types: { context: {} as Context, events: {} as TlsWorkerEvent, input: {} as { at: number } },
  actions: { scheduleRestart: () => {}, spawn: () => {} },
}).createMachine({
  id: 'tlsWorker',
  context: ({ input }) => ({ attempt: 0, startedAt: input.at, delayMs: 0 }),
  initial: 'up',
  states: {
    up: {
      on: {
        EXITED: {
          target: 'waiting',
          actions: [
            assign(({ context, event }) => {
              const attempt = event.at - context.startedAt > HEALTHY_AFTER_MS ? 0 : context.attempt + 1;
              return { attempt, delayMs: restartDelayMs(attempt) };
            }),
            'scheduleRestart',
          ],
        },
        CLOSE: 'closed',
      },
    },
    waiting: {
      on: {
        RESTART_DUE: { target: 'up', actions: [assign(({ event }) => ({ startedAt: event.at })), 'spawn'] },
        CLOSE: 'closed',
      },
    },
    closed: { type: 'final' },
  },
});

export type TlsWorkerSnapshot = ReturnType<typeof initialTransition<typeof tlsWorkerMachine>>[0];

/** a slot whose first process started at `at` */
export function initialTlsWorker(at: number): TlsWorkerSnapshot {
  return initialTransition(tlsWorkerMachine, { at })[0];
}

/** one pure step: the next snapshot and the actions to carry out, in order */
export function stepTlsWorker(snapshot: TlsWorkerSnapshot, event: TlsWorkerEvent): { snapshot: TlsWorkerSnapshot; actions: TlsWorkerAction[] } {
  const [next, actions] = transition(tlsWorkerMachine, snapshot, event);
  return { snapshot: next, actions: actions.map((a) => a.type as TlsWorkerAction) };
}

export interface WorkerSlot {
  /** the slot's process exited */
  exited(): void;
  /** no more restarts (the pool closes) */
  close(): void;
  readonly state: 'up' | 'waiting' | 'closed';
  /** young deaths in a row (diagnostics, tests) */
  readonly attempt: number;
}

/**
 * Drives one slot's machine: `spawn` starts a process (the caller reports its
 * exit through `exited()`); restarts are scheduled on `clock`.
 */
export function superviseWorkerSlot(clock: Clock, spawn: () => void): WorkerSlot {
  let snapshot = initialTlsWorker(clock.now());
  let timer: TimerHandle | undefined;
  const send = (event: TlsWorkerEvent): void => {
    const step = stepTlsWorker(snapshot, event);
    snapshot = step.snapshot;
    for (const action of step.actions) {
      if (action === 'spawn') spawn();
      else timer = clock.setTimeout(() => send({ type: 'RESTART_DUE', at: clock.now() }), snapshot.context.delayMs);
    }
  };
  spawn();
  return {
    exited: () => send({ type: 'EXITED', at: clock.now() }),
    close() {
      timer?.cancel();
      send({ type: 'CLOSE' });
    },
    get state() {
      return snapshot.value as 'up' | 'waiting' | 'closed';
    },
    get attempt() {
      return snapshot.context.attempt;
    },
  };
}
