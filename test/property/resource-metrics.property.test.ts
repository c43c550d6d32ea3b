// Properties of the resource metrics pipeline's formats (docs/metrics.md):
// what the agent writes the scraper reads back exactly, and the Quantity
// strings metrics-server answers parse back to the same amount.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatGoFloat, parsePromText, writePromText } from '../../src/core/prom-text.js';
import { formatBinarySI, formatDecimalSI, parseQuantity } from '../../src/core/quantity.js';
import { resourceUsage } from '../../src/controllers/metrics/storage.js';

const labelValue = fc.string({ maxLength: 12 });
const finite = fc.double({ noNaN: true, noDefaultInfinity: true });

describe('Prometheus text round trip', () => {
  it('every written sample is read back with its labels, value and timestamp', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ container: labelValue, pod: labelValue, value: finite, ts: fc.option(fc.integer({ min: 0, max: 2 ** 45 }), { nil: undefined }) }), { maxLength: 8 }),
        (rows) => {
          const samples = rows.map((r) => ({ labels: { container: r.container, pod: r.pod }, value: r.value, ...(r.ts !== undefined ? { timestampMs: r.ts } : {}) }));
          const read = parsePromText(writePromText([{ name: 'x_total', type: 'counter', help: 'h', samples }]));
          const key = (s: { labels: Record<string, string>; value: number; timestampMs?: number }) => JSON.stringify([s.labels.container, s.labels.pod, Object.is(s.value, -0) ? 0 : s.value, s.timestampMs ?? null]);
          expect(read.map(key).sort()).toEqual(samples.map(key).sort());
        },
      ),
    );
  });

  it('Go float text reads back as the same number', () => {
    fc.assert(
      fc.property(finite, (f) => {
        expect(Number(formatGoFloat(f))).toBe(f);
      }),
    );
  });
});

describe('Quantity strings', () => {
  it('CPU nanocores and memory bytes parse back to the amount', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 50 }), (n) => {
        expect(Math.round((parseQuantity(formatDecimalSI(n, -9)) ?? NaN) * 1e9)).toBe(n);
        expect(parseQuantity(formatBinarySI(n))).toBe(n);
      }),
    );
  });
});

describe('rates', () => {
  it('the CPU rate times the window is the CPU used, within one nanocore per second', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 40 }), fc.integer({ min: 0, max: 2 ** 40 }), fc.integer({ min: 1, max: 600_000 }), (cpu0, used, windowMs) => {
        const u = resourceUsage({ startTimeMs: 0, timestampMs: 1000 + windowMs, cumulativeCpuNs: cpu0 + used, memoryBytes: 7 }, { startTimeMs: 0, timestampMs: 1000, cumulativeCpuNs: cpu0, memoryBytes: 3 })!;
        expect(u.windowMs).toBe(windowMs);
        expect(u.memoryBytes).toBe(7);
        expect(Math.abs((u.cpuNanoCores * windowMs) / 1000 - used)).toBeLessThanOrEqual(windowMs / 1000 + 1);
      }),
    );
  });
});
