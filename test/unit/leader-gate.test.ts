// The leader gate (src/controllers/leader-gate.ts) against a small leadership
// source: the store contract's `isLeader` / `onLeadershipChange` pair.

import { describe, expect, it } from 'vitest';
import { type LeadershipSource, runWhileLeader } from '../../src/controllers/leader-gate.js';

class FakeLeadership implements LeadershipSource {
  leader = false;
  private readonly listeners = new Set<(leader: boolean) => void>();
  isLeader(): boolean {
    return this.leader;
  }
  onLeadershipChange(listener: (leader: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  set(leader: boolean): void {
    if (leader === this.leader) return;
    this.leader = leader;
    for (const l of [...this.listeners]) l(leader);
  }
  get listenerCount(): number {
    return this.listeners.size;
  }
}

class RecordingController {
  events: string[] = [];
  start(): void {
    this.events.push('start');
  }
  stop(): void {
    this.events.push('stop');
  }
}

const tick = () => new Promise<void>((r) => setImmediate(r));

describe('runWhileLeader', () => {
  it('runs at once when the source has no leadership signal (single node)', () => {
    const c = new RecordingController();
    const gate = runWhileLeader({}, c);
    expect(c.events).toEqual(['start']);
    expect(gate.running).toBe(true);
    gate.stop();
    expect(c.events).toEqual(['start', 'stop']);
    expect(gate.running).toBe(false);
  });

  it('starts on becoming leader, stops on losing it, and starts again', async () => {
    const src = new FakeLeadership();
    const c = new RecordingController();
    const gate = runWhileLeader(src, c);
    expect(c.events).toEqual([]);
    src.set(true);
    await tick();
    expect(c.events).toEqual(['start']);
    expect(gate.running).toBe(true);
    src.set(false);
    // a lost leadership stops synchronously
    expect(c.events).toEqual(['start', 'stop']);
    src.set(true);
    await tick();
    expect(c.events).toEqual(['start', 'stop', 'start']);
    gate.stop();
    expect(c.events).toEqual(['start', 'stop', 'start', 'stop']);
    expect(src.listenerCount).toBe(0);
  });

  it('starts at once when the member already leads', () => {
    const src = new FakeLeadership();
    src.leader = true;
    const c = new RecordingController();
    runWhileLeader(src, c);
    expect(c.events).toEqual(['start']);
  });

  it('does not start after a leadership that flapped away before the start ran', async () => {
    const src = new FakeLeadership();
    const c = new RecordingController();
    const gate = runWhileLeader(src, c);
    src.set(true);
    src.set(false);
    await tick();
    expect(c.events).toEqual([]);
    expect(gate.running).toBe(false);
  });

  it('ignores leadership after the gate is stopped', async () => {
    const src = new FakeLeadership();
    const c = new RecordingController();
    const gate = runWhileLeader(src, c);
    src.set(true);
    gate.stop();
    await tick();
    src.set(false);
    src.set(true);
    await tick();
    expect(c.events).toEqual([]);
  });
});
