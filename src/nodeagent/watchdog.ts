// The service-manager watchdog (spec 002 §8): under a service manager that
// sets NOTIFY_SOCKET, send READY=1 once the agent is ready — always, watchdog
// or not, as kubelet does (a Type=notify unit waits for it). With WATCHDOG_USEC
// (and the SystemdWatchdog gate on) also WATCHDOG=1 every half of the period
// while healthy; when unhealthy no keep-alive is sent, so the manager restarts
// the agent. Minimum period 1.0 s; 0 or unset disables the keep-alives. The lifecycle is the XState
// machine of src/lifecycles/watchdog.ts, run here on the injected clock.
//
// Node cannot send Unix datagrams (node:dgram has no AF_UNIX), so messages go
// through the `systemd-notify` tool (--no-block); the unit therefore sets
// NotifyAccess=all (deploy/nodeagent.service). The sender is a port so tests
// and other service managers can replace it.

import { execFile } from 'node:child_process';
import { createActor } from 'xstate';
import { type Clock, systemClock } from './clock.js';
import { type Notify, watchdogMachine } from '../lifecycles/watchdog.js';

export const MIN_WATCHDOG_USEC = 1_000_000;

export type { Notify } from '../lifecycles/watchdog.js';

export class WatchdogConfigError extends Error {}

/** the watchdog period in ms from the environment, or undefined when disabled */
export function watchdogPeriodMs(env: NodeJS.ProcessEnv, pid = process.pid): number | undefined {
  const usec = env.WATCHDOG_USEC;
  if (!usec || !env.NOTIFY_SOCKET) return undefined;
  if (env.WATCHDOG_PID && Number(env.WATCHDOG_PID) !== pid) return undefined; // meant for another process
  if (!/^\d+$/.test(usec)) throw new WatchdogConfigError(`WATCHDOG_USEC must be a whole number of microseconds, got "${usec}"`);
  const n = Number(usec);
  if (n === 0) return undefined;
  if (n < MIN_WATCHDOG_USEC) throw new WatchdogConfigError(`watchdog timeout ${n / 1e6}s is too small (minimum supported: 1.0s)`);
  return n / 1000;
}

/** sends through systemd-notify (inherits NOTIFY_SOCKET from the environment) */
export function systemdNotify(log: (m: string) => void): Notify {
  return (message) => {
    const args = message === 'READY=1' ? ['--no-block', '--ready', `--pid=${process.pid}`] : ['--no-block', message];
    execFile('systemd-notify', args, { timeout: 5_000 }, (err) => {
      if (err) log(`watchdog: systemd-notify ${message} failed: ${err.message}`);
    });
  };
}

export interface Watchdog {
  ready(): void;
  stop(): void;
  state(): string;
  sent(): number;
}

export interface WatchdogOptions {
  env: NodeJS.ProcessEnv;
  healthy: () => boolean;
  enabled?: boolean;
  notify?: Notify;
  clock?: Clock;
  log: (m: string) => void;
}

const DISABLED: Watchdog = { ready() {}, stop() {}, state: () => 'Disabled', sent: () => 0 };

/** the watchdog period, undefined with the SystemdWatchdog gate off (WATCHDOG_USEC then ignored, as kubelet) */
export function gatedWatchdogPeriodMs(env: NodeJS.ProcessEnv, enabled: boolean | undefined): number | undefined {
  return enabled === false ? undefined : watchdogPeriodMs(env);
}

export function startWatchdog(o: WatchdogOptions): Watchdog {
  if (!o.env.NOTIFY_SOCKET) return DISABLED;
  const period = gatedWatchdogPeriodMs(o.env, o.enabled);
  const clock = o.clock ?? systemClock;
  const actor = createActor(watchdogMachine, {
    clock: { setTimeout: (fn, ms) => clock.setTimeout(fn as () => void, ms), clearTimeout: (id) => clock.clearTimeout(id) },
    input: { halfPeriodMs: period === undefined ? undefined : period / 2, healthy: o.healthy, notify: o.notify ?? systemdNotify(o.log) },
  });
  actor.start();
  if (period !== undefined) o.log(`watchdog: period ${period} ms, keep-alive every ${period / 2} ms`);
  return {
    ready: () => actor.send({ type: 'READY' }),
    stop: () => actor.send({ type: 'STOP' }),
    state: () => String(actor.getSnapshot().value),
    sent: () => actor.getSnapshot().context.sent,
  };
}
