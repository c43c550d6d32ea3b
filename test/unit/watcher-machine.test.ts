// The watch stream lifecycle (src/lifecycles/watcher.ts) through pure transitions.

import { describe, expect, it } from 'vitest';
import { type WatcherEvent, initialWatcher, stepWatcher } from '../../src/lifecycles/watcher.js';

function run(events: WatcherEvent[]): { state: string; actions: string[] } {
  let snap = initialWatcher();
  let state = 'starting';
  const actions: string[] = [];
  for (const e of events) {
    const step = stepWatcher(snap, e);
    snap = step.snapshot;
    state = step.state;
    actions.push(...step.actions);
  }
  return { state, actions };
}

describe('watcher machine', () => {
  it('starting → live → ended: the stream is ended and the owner told once', () => {
    expect(run([{ type: 'GO_LIVE' }])).toEqual({ state: 'live', actions: [] });
    expect(run([{ type: 'GO_LIVE' }, { type: 'END', why: 'timeout' }])).toEqual({ state: 'ended', actions: ['endSink', 'notifyEnd'] });
  });

  it('a watch may end while it starts (a too-old version, a timeout while waiting)', () => {
    expect(run([{ type: 'END', why: 'error' }])).toEqual({ state: 'ended', actions: ['endSink', 'notifyEnd'] });
  });

  it('a client that went away leaves the sink to the gateway', () => {
    expect(run([{ type: 'GO_LIVE' }, { type: 'END', why: 'stopped' }])).toEqual({ state: 'ended', actions: ['notifyEnd'] });
  });

  it('a watch ends once: later ends and a late go-live do nothing', () => {
    expect(run([{ type: 'END', why: 'slow' }, { type: 'END', why: 'closed' }, { type: 'GO_LIVE' }, { type: 'END', why: 'stopped' }])).toEqual({
      state: 'ended',
      actions: ['endSink', 'notifyEnd'],
    });
  });
});
