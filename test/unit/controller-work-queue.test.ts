// The controller runtime's work queue (src/controllers/runtime/work-queue.ts) on a
// ManualClock: de-duplication, one worker per key, per-key backoff, the global bucket, shutdown.
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { TokenBucket, WorkQueue } from '../../src/controllers/runtime/work-queue.js';

const flush = () => new Promise<void>((r) => setImmediate(r));

describe('WorkQueue', () => {
  it('keeps a key queued at most once, in first-add order', async () => {
    const q = new WorkQueue<string>({ clock: new ManualClock() });
    q.add('a');
    q.add('b');
    q.add('a');
    expect(q.length).toBe(2);
    expect(await q.get()).toBe('a');
    expect(await q.get()).toBe('b');
    expect(q.length).toBe(0);
  });

  it('never hands a key being processed to a second worker; an add meanwhile comes back after done', async () => {
    const q = new WorkQueue<string>({ clock: new ManualClock() });
    q.add('a');
    const k = await q.get();
    q.add('a');
    q.add('a');
    expect(q.length).toBe(0); // held, so not queued again yet
    let second: string | undefined;
    void q.get().then((x) => (second = x));
    await flush();
    expect(second).toBeUndefined();
    q.done(k!);
    await flush();
    expect(second).toBe('a');
    q.done('a');
    expect(q.length).toBe(0); // the two adds while held were one
  });

  it('run: one sync per key at a time even with several workers', async () => {
    const q = new WorkQueue<string>({ clock: new ManualClock() });
    let concurrent = 0;
    let maxConcurrentA = 0;
    const seen: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const running = q.run(async (key) => {
      seen.push(key);
      if (key === 'a') {
        concurrent++;
        maxConcurrentA = Math.max(maxConcurrentA, concurrent);
        await gate;
        concurrent--;
      }
    }, 3);
    q.add('a');
    await flush();
    q.add('a');
    q.add('b');
    await flush();
    expect(seen).toEqual(['a', 'b']);
    release();
    await flush();
    await flush();
    expect(seen).toEqual(['a', 'b', 'a']);
    expect(maxConcurrentA).toBe(1);
    q.shutDown();
    await running;
  });

  it('backs a failing key off exponentially and forgets it on success', () => {
    const clock = new ManualClock();
    const q = new WorkQueue<string>({ clock, baseDelayMs: 5, maxDelayMs: 40, qps: 1e6, burst: 1e6 });
    expect([q.when('x'), q.when('x'), q.when('x'), q.when('x'), q.when('x')]).toEqual([5, 10, 20, 40, 40]);
    expect(q.numRequeues('x')).toBe(5);
    expect(q.when('y')).toBe(5); // per key
    q.forget('x');
    expect(q.when('x')).toBe(5);
  });

  it('addRateLimited re-adds only when the backoff has passed on the clock', async () => {
    const clock = new ManualClock();
    const q = new WorkQueue<string>({ clock, baseDelayMs: 100, qps: 1e6, burst: 1e6 });
    q.addRateLimited('x');
    expect(q.length).toBe(0);
    clock.advance(99);
    expect(q.length).toBe(0);
    clock.advance(1);
    expect(q.length).toBe(1);
    q.addRateLimited('x'); // already queued: the later add is a no-op once it fires
    clock.advance(200);
    expect(q.length).toBe(1);
  });

  it('the global bucket spaces out retries of different keys beyond its burst', () => {
    const clock = new ManualClock();
    const q = new WorkQueue<string>({ clock, baseDelayMs: 1, qps: 10, burst: 2 });
    expect(q.when('a')).toBe(1);
    expect(q.when('b')).toBe(1);
    expect(q.when('c')).toBe(100); // bucket empty: one token per 100 ms
    expect(q.when('d')).toBe(200);
    clock.advance(1000); // refilled to the burst, not beyond
    expect(q.when('e')).toBe(1);
    expect(q.when('f')).toBe(1);
    expect(q.when('g')).toBe(100);
  });

  it('TokenBucket refills at qps', () => {
    const clock = new ManualClock();
    const b = new TokenBucket(clock, 2, 1);
    expect(b.reserve()).toBe(0);
    expect(b.reserve()).toBe(500);
    clock.advance(1000);
    expect(b.reserve()).toBe(0);
  });

  it('addAfter keeps the earliest pending add of a key', () => {
    const clock = new ManualClock();
    const q = new WorkQueue<string>({ clock });
    q.addAfter('x', 500);
    q.addAfter('x', 100);
    q.addAfter('x', 900);
    clock.advance(100);
    expect(q.length).toBe(1);
    expect(clock.pending).toBe(0);
  });

  it('shutDown ends waiting getters and run loops and drops delayed adds', async () => {
    const clock = new ManualClock();
    const q = new WorkQueue<string>({ clock });
    const got = q.get();
    q.addAfter('x', 10);
    q.shutDown();
    expect(await got).toBeUndefined();
    clock.advance(10);
    q.add('y');
    expect(q.length).toBe(0);
    expect(await q.get()).toBeUndefined();
    await q.run(async () => {}); // returns at once
  });

  it('run retries a failing sync with backoff on the clock and stops retrying after success', async () => {
    const clock = new ManualClock();
    const q = new WorkQueue<string>({ clock, baseDelayMs: 50, qps: 1e6, burst: 1e6 });
    let calls = 0;
    const running = q.run(async () => {
      calls++;
      if (calls < 3) throw new Error('conflict');
    });
    q.add('k');
    await flush();
    expect(calls).toBe(1);
    clock.advance(49);
    await flush();
    expect(calls).toBe(1);
    clock.advance(1);
    await flush();
    expect(calls).toBe(2);
    clock.advance(100); // second backoff: 100 ms
    await flush();
    expect(calls).toBe(3);
    expect(q.numRequeues('k')).toBe(0);
    clock.advance(10_000);
    await flush();
    expect(calls).toBe(3);
    q.shutDown();
    await running;
  });
});
