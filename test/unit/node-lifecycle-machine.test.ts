// The per-node lifecycle machine (src/controllers/node-lifecycle/machine.ts)
// on a simulated clock.

import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { heartbeat, startNodeHealth, viewOf } from '../../src/lifecycles/node-lifecycle.js';
import { BlindTime } from '../../src/controllers/node-lifecycle/blind-time.js';

describe('node health machine', () => {
  it('becomes Unreachable one grace period after the last heartbeat, and Alive on the next one', () => {
    const clock = new ManualClock(1_000);
    const a = startNodeHealth(clock, { graceMs: 50_000, notReadyGraceMs: 50_000, ready: 'True' });
    expect(viewOf(a)).toEqual({ unreachable: false, readiness: 'Ready' });
    clock.advance(40_000);
    a.send({ type: 'HEARTBEAT' });
    clock.advance(49_999);
    expect(viewOf(a).unreachable).toBe(false);
    clock.advance(1);
    expect(viewOf(a).unreachable).toBe(true);
    a.send({ type: 'HEARTBEAT' });
    expect(viewOf(a).unreachable).toBe(false);
    clock.advance(49_999);
    expect(viewOf(a).unreachable).toBe(false);
    a.stop();
    expect(clock.pending).toBe(0);
  });

  it('a new machine gives the node a whole grace period, whatever it saw before', () => {
    const clock = new ManualClock(0);
    const a = startNodeHealth(clock, { graceMs: 10_000, notReadyGraceMs: 10_000, ready: 'True' });
    clock.advance(9_000);
    const b = startNodeHealth(clock, { graceMs: 10_000, notReadyGraceMs: 10_000, ready: 'True' });
    clock.advance(1_000);
    expect(viewOf(a).unreachable).toBe(true);
    expect(viewOf(b).unreachable).toBe(false);
    clock.advance(9_000);
    expect(viewOf(b).unreachable).toBe(true);
  });

  it('Ready=False becomes Persistent after the not-ready grace period; repeated reports do not restart it', () => {
    const clock = new ManualClock(0);
    const a = startNodeHealth(clock, { graceMs: 1e9, notReadyGraceMs: 30_000, ready: 'True' });
    a.send({ type: 'REPORT', ready: 'False' });
    expect(viewOf(a).readiness).toBe('NotReady.Recent');
    clock.advance(20_000);
    a.send({ type: 'REPORT', ready: 'False' });
    clock.advance(10_000);
    expect(viewOf(a).readiness).toBe('NotReady.Persistent');
    a.send({ type: 'REPORT', ready: 'True' });
    expect(viewOf(a).readiness).toBe('Ready');
    a.send({ type: 'REPORT', ready: 'False' });
    clock.advance(29_999);
    expect(viewOf(a).readiness).toBe('NotReady.Recent');
    a.send({ type: 'REPORT', ready: 'Unknown' });
    expect(viewOf(a).readiness).toBe('Unknown');
    clock.advance(60_000);
    expect(viewOf(a).readiness).toBe('Unknown');
    a.send({ type: 'REPORT', ready: 'None' });
    expect(viewOf(a).readiness).toBe('Missing');
  });

  it('a heartbeat while Alive is no transition; the one timer re-arms for what is left', () => {
    const clock = new ManualClock(0);
    const a = startNodeHealth(clock, { graceMs: 10_000, notReadyGraceMs: 10_000, ready: 'True' });
    const before = a.getSnapshot();
    clock.advance(6_000);
    heartbeat(a);
    expect(a.getSnapshot()).toBe(before);
    expect(clock.pending).toBe(1);
    clock.advance(9_999);
    expect(viewOf(a).unreachable).toBe(false);
    expect(clock.pending).toBe(1);
    clock.advance(1);
    expect(viewOf(a).unreachable).toBe(true);
    expect(clock.pending).toBe(0);
    heartbeat(a);
    expect(viewOf(a).unreachable).toBe(false);
    a.stop();
    expect(clock.pending).toBe(0);
  });

  it('blind time (a timer run late) is not counted as silence, up to maxBlindMs', () => {
    const clock = new ManualClock(0);
    const blind = new BlindTime(1_000);
    const a = startNodeHealth(clock, { graceMs: 10_000, notReadyGraceMs: 10_000, ready: 'True', blind, maxBlindMs: 100_000 });
    const b = startNodeHealth(clock, { graceMs: 10_000, notReadyGraceMs: 10_000, ready: 'True', blind, maxBlindMs: 5_000 });
    // the controller's pass, due at 3 s, reports its lateness to the ledger
    clock.setTimeout(() => blind.late(3_000, clock.now()), 3_000);
    clock.advance(2_000);
    // the event loop blocks until 25 s: everything due meanwhile runs late, the pass first: [4 s, 25 s) was blind
    clock.stall(23_000);
    expect(blind.total()).toBe(21_000);
    // a: 25 s of silence less 21 s blind = 4 s observed: 6 s left; b: only 5 s credited, so it is Unreachable
    expect(viewOf(a).unreachable).toBe(false);
    expect(viewOf(b).unreachable).toBe(true);
    clock.advance(5_999);
    expect(viewOf(a).unreachable).toBe(false);
    clock.advance(1);
    expect(viewOf(a).unreachable).toBe(true);
    a.stop();
    b.stop();
  });
});
