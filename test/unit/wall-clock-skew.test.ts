// The chaos tests' clock jumps (src/core/wall-clock-skew.ts): only the wall
// clock moves; Date keeps its statics and instances stay real Dates.
import { describe, expect, it } from 'vitest';
import { installWallClockSkew } from '../../src/core/wall-clock-skew.js';

describe('wall-clock skew', () => {
  it('moves Date.now() and new Date() by the offset, nothing else', () => {
    const RealNow = Date.now();
    const skew = installWallClockSkew();
    expect(installWallClockSkew()).toBe(skew);
    const perf0 = performance.now();
    skew.set(10 * 60_000);
    expect(Date.now() - RealNow).toBeGreaterThanOrEqual(10 * 60_000);
    expect(new Date().getTime() - RealNow).toBeGreaterThanOrEqual(10 * 60_000);
    // explicit times and the statics are untouched
    expect(new Date(0).toISOString()).toBe('1970-01-01T00:00:00.000Z');
    expect(Date.parse('2020-01-01T00:00:00Z')).toBe(1577836800000);
    expect(Date.UTC(2020, 0, 1)).toBe(1577836800000);
    expect(new Date() instanceof Date).toBe(true);
    // the monotonic clock does not jump
    expect(performance.now() - perf0).toBeLessThan(60_000);
    skew.set(-10 * 60_000);
    expect(Date.now()).toBeLessThan(RealNow);
    skew.set(0);
    expect(skew.get()).toBe(0);
    expect(Math.abs(Date.now() - RealNow)).toBeLessThan(60_000);
  });
});
