// The leader gate's rules (src/lifecycles/leader-gate.ts) through pure
// transitions: no store, no event loop, no timers.

import { describe, expect, it } from 'vitest';
import { type LeaderGateEvent, type LeaderGateSnapshot, initialLeaderGate, leaderGateState, stepLeaderGate } from '../../src/lifecycles/leader-gate.js';

function run(events: LeaderGateEvent[], from: LeaderGateSnapshot = initialLeaderGate()): { state: string; actions: string[] } {
  let snap = from;
  const actions: string[] = [];
  for (const e of events) {
    const step = stepLeaderGate(snap, e);
    snap = step.snapshot;
    actions.push(...step.actions);
  }
  return { state: leaderGateState(snap), actions };
}

describe('leader gate machine', () => {
  it('a member that leads at creation starts at once', () => {
    expect(run([{ type: 'START_DUE', leader: true }])).toEqual({ state: 'running', actions: ['startController'] });
  });

  it('a follower at creation waits; becoming leader schedules a start that starts when due', () => {
    expect(run([{ type: 'START_DUE', leader: false }])).toEqual({ state: 'following', actions: [] });
    expect(run([{ type: 'START_DUE', leader: false }, { type: 'LEADER' }])).toEqual({ state: 'starting', actions: ['scheduleStart'] });
    expect(run([{ type: 'LEADER' }, { type: 'START_DUE', leader: true }])).toEqual({ state: 'running', actions: ['scheduleStart', 'startController'] });
  });

  it('losing leadership stops a running controller at once', () => {
    expect(run([{ type: 'START_DUE', leader: true }, { type: 'FOLLOWER' }])).toEqual({ state: 'following', actions: ['startController', 'stopController'] });
  });

  it('a flap before the scheduled start is decided on the leadership when it is due', () => {
    // lost it again: no start
    expect(run([{ type: 'LEADER' }, { type: 'FOLLOWER' }, { type: 'START_DUE', leader: false }])).toEqual({ state: 'following', actions: ['scheduleStart'] });
    // lost and regained: one scheduled start, one start
    expect(run([{ type: 'LEADER' }, { type: 'FOLLOWER' }, { type: 'LEADER' }, { type: 'START_DUE', leader: true }])).toEqual({
      state: 'running',
      actions: ['scheduleStart', 'startController'],
    });
  });

  it('leadership reported twice changes nothing', () => {
    expect(run([{ type: 'START_DUE', leader: true }, { type: 'LEADER' }])).toEqual({ state: 'running', actions: ['startController'] });
    expect(run([{ type: 'START_DUE', leader: false }, { type: 'FOLLOWER' }])).toEqual({ state: 'following', actions: [] });
  });

  it('close stops a running controller and ignores everything after it', () => {
    expect(run([{ type: 'START_DUE', leader: true }, { type: 'CLOSE' }, { type: 'LEADER' }, { type: 'START_DUE', leader: true }])).toEqual({
      state: 'closed',
      actions: ['startController', 'stopController'],
    });
    // a start scheduled before the close never runs
    expect(run([{ type: 'LEADER' }, { type: 'CLOSE' }, { type: 'START_DUE', leader: true }])).toEqual({ state: 'closed', actions: ['scheduleStart'] });
  });
});
