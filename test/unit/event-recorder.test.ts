// The event recorder (src/controllers/event-recorder.ts): aggregation of
// repeats and the per source+object token bucket, with an injected clock.

import { describe, expect, it } from 'vitest';
import { EventRecorder, type EventSink } from '../../src/controllers/event-recorder.js';

class MemorySink implements EventSink {
  readonly events = new Map<string, Record<string, unknown>>();
  private n = 0;
  async create(namespace: string, event: Record<string, unknown>): Promise<string> {
    const name = `e${++this.n}`;
    this.events.set(`${namespace}/${name}`, structuredClone(event));
    return name;
  }
  async update(namespace: string, name: string, patch: Record<string, unknown>): Promise<boolean> {
    const e = this.events.get(`${namespace}/${name}`);
    if (!e) return false;
    Object.assign(e, patch);
    return true;
  }
}

const pod = { apiVersion: 'v1', kind: 'Namespace', name: 'lab', uid: 'u1' };

describe('EventRecorder', () => {
  it('aggregates a repeat into one Event with count and series', async () => {
    let now = Date.parse('2026-01-01T00:00:00Z');
    const sink = new MemorySink();
    const r = new EventRecorder(sink, { component: 'namespace-controller', now: () => now });
    await r.event(pod, 'Normal', 'Deleting', 'deleting content');
    now += 1000;
    await r.event(pod, 'Normal', 'Deleting', 'deleting content');
    now += 1000;
    await r.event(pod, 'Normal', 'Deleting', 'deleting content');
    expect(sink.events.size).toBe(1);
    const e = [...sink.events.values()][0]!;
    expect(e.count).toBe(3);
    expect(e.firstTimestamp).toBe('2026-01-01T00:00:00Z');
    expect(e.lastTimestamp).toBe('2026-01-01T00:00:02Z');
    expect(e.series).toEqual({ count: 3, lastObservedTime: '2026-01-01T00:00:02.000000Z' });
    // another message is another Event
    await r.event(pod, 'Normal', 'Deleting', 'other');
    expect(sink.events.size).toBe(2);
  });

  it('a repeat after the aggregation window is a new Event; a deleted Event is recreated', async () => {
    let now = 0;
    const sink = new MemorySink();
    const r = new EventRecorder(sink, { component: 'c', now: () => now, aggregateWindowMs: 10_000 });
    await r.event(pod, 'Warning', 'Failed', 'x');
    now += 20_000;
    await r.event(pod, 'Warning', 'Failed', 'x');
    expect(sink.events.size).toBe(2);
    sink.events.clear();
    await r.event(pod, 'Warning', 'Failed', 'x');
    expect(sink.events.size).toBe(1);
  });

  it('drops events beyond the burst for one source+object and refills over time', async () => {
    let now = 0;
    const sink = new MemorySink();
    const r = new EventRecorder(sink, { component: 'c', now: () => now, burst: 3, refillMs: 60_000 });
    for (let i = 0; i < 5; i++) await r.event(pod, 'Normal', 'R', `m${i}`);
    expect(sink.events.size).toBe(3);
    expect(r.dropped).toBe(2);
    // another object has its own bucket
    await r.event({ ...pod, name: 'other', uid: 'u2' }, 'Normal', 'R', 'm');
    expect(sink.events.size).toBe(4);
    now += 60_000;
    await r.event(pod, 'Normal', 'R', 'late');
    await r.event(pod, 'Normal', 'R', 'late2');
    expect(sink.events.size).toBe(5);
    expect(r.dropped).toBe(3);
  });
});
