// The TLS worker restart rules (src/lifecycles/tls-worker.ts): pure
// transitions for the backoff, and the slot driver on a ManualClock — a worker
// restart is tested without a process and without waiting.

import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { HEALTHY_AFTER_MS, MAX_RESTART_DELAY_MS, initialTlsWorker, restartDelayMs, stepTlsWorker, superviseWorkerSlot } from '../../src/lifecycles/tls-worker.js';

describe('TLS worker machine (pure transitions)', () => {
  it('a young death waits 100 ms, then 200, 400 … capped at 5 s', () => {
    let snap = initialTlsWorker(0);
    const delays: number[] = [];
    let t = 0;
    for (let i = 0; i < 9; i++) {
      t += 50; // dies 50 ms after its start
      const exited = stepTlsWorker(snap, { type: 'EXITED', at: t });
      expect(exited.actions).toEqual(['scheduleRestart']);
      expect(exited.snapshot.value).toBe('waiting');
      delays.push(exited.snapshot.context.delayMs);
      t += exited.snapshot.context.delayMs;
      const due = stepTlsWorker(exited.snapshot, { type: 'RESTART_DUE', at: t });
      expect(due.actions).toEqual(['spawn']);
      expect(due.snapshot.value).toBe('up');
      snap = due.snapshot;
    }
    expect(delays).toEqual([100, 200, 400, 800, 1600, 3200, 5000, 5000, 5000]);
    expect(restartDelayMs(30)).toBe(MAX_RESTART_DELAY_MS);
  });

  it('a worker that lived past the healthy mark restarts at once and resets the backoff', () => {
    let snap = stepTlsWorker(initialTlsWorker(0), { type: 'EXITED', at: 10 }).snapshot; // young: 100 ms
    snap = stepTlsWorker(snap, { type: 'RESTART_DUE', at: 110 }).snapshot;
    const old = stepTlsWorker(snap, { type: 'EXITED', at: 110 + HEALTHY_AFTER_MS + 1 });
    expect(old.snapshot.context).toMatchObject({ attempt: 0, delayMs: 0 });
    // exactly at the mark still counts as young
    const edge = stepTlsWorker(snap, { type: 'EXITED', at: 110 + HEALTHY_AFTER_MS });
    expect(edge.snapshot.context).toMatchObject({ attempt: 2, delayMs: 200 });
  });

  it('a close while waiting drops the restart; nothing after a close acts', () => {
    const waiting = stepTlsWorker(initialTlsWorker(0), { type: 'EXITED', at: 1 }).snapshot;
    const closed = stepTlsWorker(waiting, { type: 'CLOSE' });
    expect(closed.snapshot.value).toBe('closed');
    expect(stepTlsWorker(closed.snapshot, { type: 'RESTART_DUE', at: 500 }).actions).toEqual([]);
    expect(stepTlsWorker(closed.snapshot, { type: 'EXITED', at: 500 }).actions).toEqual([]);
  });
});

describe('superviseWorkerSlot on a ManualClock', () => {
  it('spawns at once, restarts a crashed worker after the backoff, and never after close', () => {
    const clock = new ManualClock(1_000);
    const spawns: number[] = [];
    const slot = superviseWorkerSlot(clock, () => spawns.push(clock.now()));
    expect(spawns).toEqual([1_000]);

    clock.advance(20);
    slot.exited(); // died young
    expect(slot.state).toBe('waiting');
    clock.advance(99);
    expect(spawns).toHaveLength(1);
    clock.advance(1);
    expect(spawns).toEqual([1_000, 1_120]);
    expect(slot.state).toBe('up');

    clock.advance(5);
    slot.exited(); // young again: 200 ms
    clock.advance(200);
    expect(spawns).toEqual([1_000, 1_120, 1_325]);

    clock.advance(HEALTHY_AFTER_MS + 1);
    slot.exited(); // healthy: immediate
    clock.advance(0);
    expect(spawns).toHaveLength(4);
    expect(slot.attempt).toBe(0);

    slot.exited();
    slot.close();
    clock.advance(60_000);
    expect(spawns).toHaveLength(4);
    expect(slot.state).toBe('closed');
    expect(clock.pending).toBe(0);
  });
});
