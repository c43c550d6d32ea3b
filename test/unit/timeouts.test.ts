// Request deadlines (src/gateway/timeouts.ts, issue #15).
import { describe, expect, it } from 'vitest';
import { isLongRunning, parseGoDuration, requestTimeoutMs, watchTimeoutMs } from '../../src/gateway/timeouts.js';
import type { RequestInfo } from '../../src/endpoints/request.js';

const info = (verb: string, subresource = ''): RequestInfo => ({ isResourceRequest: true, path: '/', verb, group: '', version: 'v1', namespace: 'd', resource: 'pods', subresource, name: 'p' });

describe('request deadlines', () => {
  it('parses Go durations as kubectl sends them', () => {
    expect(parseGoDuration('30s')).toBe(30_000);
    expect(parseGoDuration('1m30s')).toBe(90_000);
    expect(parseGoDuration('1h0m0s')).toBe(3_600_000);
    expect(parseGoDuration('250ms')).toBe(250);
    expect(parseGoDuration('1.5s')).toBe(1500);
    expect(parseGoDuration('0')).toBe(0);
    expect(parseGoDuration('30')).toBeUndefined();
    expect(parseGoDuration('soon')).toBeUndefined();
    expect(parseGoDuration('5s!')).toBeUndefined();
  });

  it('takes ?timeout= only when shorter than the server deadline, and ignores malformed values', () => {
    expect(requestTimeoutMs(new URLSearchParams('timeout=5s'), 60_000)).toBe(5000);
    expect(requestTimeoutMs(new URLSearchParams('timeout=5m'), 60_000)).toBe(60_000);
    expect(requestTimeoutMs(new URLSearchParams('timeout=bogus'), 60_000)).toBe(60_000);
    expect(requestTimeoutMs(new URLSearchParams(''), 60_000)).toBe(60_000);
    expect(requestTimeoutMs(new URLSearchParams('timeout=5s'), 0)).toBe(5000);
  });

  it('treats watches and streaming sub-resources as long-running', () => {
    expect(isLongRunning(info('watch'))).toBe(true);
    for (const sub of ['log', 'exec', 'attach', 'portforward', 'proxy']) expect(isLongRunning(info('get', sub))).toBe(true);
    expect(isLongRunning(info('get'))).toBe(false);
    expect(isLongRunning(info('list'))).toBe(false);
    expect(isLongRunning(info('update', 'status'))).toBe(false);
  });

  it('spreads watch lifetimes over [min, 2·min)', () => {
    expect(watchTimeoutMs(1000, () => 0)).toBe(1000);
    expect(watchTimeoutMs(1000, () => 0.999)).toBeCloseTo(1999);
  });
});
