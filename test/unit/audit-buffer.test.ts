// The bounded buffer in front of an audit backend (issue 16 item 3): pushing
// never waits; a full buffer drops new events and counts them; a failing
// backend loses its batch, counted, and the next batch is tried.

import { describe, expect, it } from 'vitest';
import { BufferedSink, type BatchWriter } from '../../src/audit/buffer.js';
import type { AuditMetricsSink, DropReason } from '../../src/audit/metrics.js';
import type { AuditEvent } from '../../src/audit/types.js';
import { ManualClock } from '../../src/core/clock.js';

const ev = (i: number): AuditEvent => ({
  kind: 'Event',
  apiVersion: 'audit.orch.io/v1',
  level: 'Metadata',
  auditID: `id-${i}`,
  stage: 'ResponseComplete',
  requestURI: '/api/v1/namespaces',
  verb: 'list',
  user: { username: 'u' },
  requestReceivedTimestamp: '2026-11-25T11:28:53.123456Z',
  stageTimestamp: '2026-11-25T11:28:53.123456Z',
});

class Metrics implements AuditMetricsSink {
  drops: { backend: string; plugin: string; reason: DropReason; n: number }[] = [];
  event() {}
  level() {}
  dropped(backend: string, plugin: string, reason: DropReason, n: number) {
    this.drops.push({ backend, plugin, reason, n });
  }
  bufferDepth() {}
  total(reason: DropReason) {
    return this.drops.filter((d) => d.reason === reason).reduce((a, d) => a + d.n, 0);
  }
}

/** a backend whose writes finish when the test says */
class GatedWriter implements BatchWriter {
  batches: string[][] = [];
  private gates: { resolve(): void; reject(e: Error): void }[] = [];
  write(_e: AuditEvent[], lines: string[]): Promise<void> {
    this.batches.push(lines);
    return new Promise((resolve, reject) => this.gates.push({ resolve, reject }));
  }
  release(fail?: Error) {
    const g = this.gates.shift()!;
    if (fail) g.reject(fail);
    else g.resolve();
  }
  get pending() {
    return this.gates.length;
  }
}

const tick = () => new Promise((r) => setImmediate(r));

function sink(writer: BatchWriter, o: { bufferSize: number; maxBatchSize: number; maxBatchWaitMs?: number; clock?: ManualClock }, metrics: Metrics, logs: string[] = []) {
  return new BufferedSink(writer, {
    name: 'log',
    plugin: 'log',
    failureReason: 'write_error',
    bufferSize: o.bufferSize,
    maxBatchSize: o.maxBatchSize,
    maxBatchWaitMs: o.maxBatchWaitMs ?? 0,
    metrics,
    clock: o.clock ?? new ManualClock(),
    log: (m) => logs.push(m),
  });
}

describe('audit buffer', () => {
  it('a full buffer drops new events and counts them; nothing waits', async () => {
    const w = new GatedWriter();
    const m = new Metrics();
    const logs: string[] = [];
    const s = sink(w, { bufferSize: 3, maxBatchSize: 1 }, m, logs);
    s.push(ev(0));
    await tick();
    expect(w.batches).toHaveLength(1); // in flight, stuck
    for (let i = 1; i <= 6; i++) s.push(ev(i)); // 3 fit, 3 do not
    expect(s.depth).toBe(3);
    expect(m.total('buffer_full')).toBe(3);
    expect(m.drops[0]).toMatchObject({ backend: 'log', plugin: 'buffered' });
    // one log line, not one per drop
    expect(logs.filter((l) => l.includes('buffer full'))).toHaveLength(1);
    w.release();
    for (let i = 0; i < 10 && w.pending === 0; i++) await tick();
    expect(w.batches).toHaveLength(2);
    while (w.pending > 0) {
      w.release();
      for (let i = 0; i < 5; i++) await tick();
    }
    expect(w.batches.map((b) => (JSON.parse(b[0]!) as AuditEvent).auditID)).toEqual(['id-0', 'id-1', 'id-2', 'id-3']);
  });

  it('the events waiting go out together, up to the batch size', async () => {
    const w = new GatedWriter();
    const s = sink(w, { bufferSize: 100, maxBatchSize: 4 }, new Metrics());
    s.push(ev(0));
    await tick();
    for (let i = 1; i <= 9; i++) s.push(ev(i));
    w.release();
    for (let i = 0; i < 5; i++) await tick();
    expect(w.batches.map((b) => b.length)).toEqual([1, 4]);
    w.release();
    for (let i = 0; i < 5; i++) await tick();
    w.release();
    for (let i = 0; i < 5; i++) await tick();
    expect(w.batches.map((b) => b.length)).toEqual([1, 4, 4, 1]);
  });

  it('a batch smaller than the max waits for max-wait', async () => {
    const w = new GatedWriter();
    const clock = new ManualClock();
    const s = sink(w, { bufferSize: 100, maxBatchSize: 10, maxBatchWaitMs: 30_000, clock }, new Metrics());
    s.push(ev(0));
    s.push(ev(1));
    await tick();
    expect(w.batches).toHaveLength(0);
    clock.advance(30_000);
    expect(w.batches.map((b) => b.length)).toEqual([2]);
    // a full batch does not wait
    for (let i = 2; i < 12; i++) s.push(ev(i));
    w.release();
    for (let i = 0; i < 5; i++) await tick();
    expect(w.batches.map((b) => b.length)).toEqual([2, 10]);
  });

  it('a failing backend loses that batch, counted, and the next batch is still tried', async () => {
    const w = new GatedWriter();
    const m = new Metrics();
    const logs: string[] = [];
    const s = sink(w, { bufferSize: 100, maxBatchSize: 2 }, m, logs);
    s.push(ev(0));
    s.push(ev(1));
    await tick();
    s.push(ev(2));
    w.release(new Error('ENOSPC: no space left on device'));
    for (let i = 0; i < 5; i++) await tick();
    expect(m.drops).toEqual([{ backend: 'log', plugin: 'log', reason: 'write_error', n: 2 }]);
    expect(logs.some((l) => l.includes('ENOSPC'))).toBe(true);
    expect(w.batches).toHaveLength(2);
    w.release();
    await s.flush();
    expect(m.total('write_error')).toBe(2);
  });

  it('flush writes what is waiting; after close, events are counted as dropped', async () => {
    const written: string[] = [];
    const m = new Metrics();
    const s = sink({ write: async (_e, lines) => void written.push(...lines) }, { bufferSize: 100, maxBatchSize: 3 }, m);
    for (let i = 0; i < 7; i++) s.push(ev(i));
    await s.close();
    expect(written).toHaveLength(7);
    s.push(ev(8));
    expect(m.total('shutdown')).toBe(1);
  });
});
