// Small pure parts of the agent: Lease back-off, thresholds, resources, the lock file, log timestamps.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { pressures, parseThreshold } from '../../src/nodeagent/host.js';
import { nextLeaseDelay } from '../../src/nodeagent/lease.js';
import { acquireLock, LockHeldError } from '../../src/nodeagent/lock.js';
import { resources } from '../../src/nodeagent/node-status.js';
import { rfc3339Nano } from '../../src/nodeagent/streaming/logs.js';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe('lease back-off (spec 002 §8)', () => {
  it('starts at 200 ms, doubles, stops at 7 s, and returns to the interval on success', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8].map((n) => nextLeaseDelay(n, 10_000))).toEqual([200, 400, 800, 1600, 3200, 6400, 7000, 7000]);
    expect(nextLeaseDelay(0, 10_000)).toBe(10_000);
  });
});

describe('log timestamps', () => {
  it('print nine fraction digits without the float noise of nanoseconds in a Number', () => {
    // 2026-11-28T04:12:57.655Z in ns: the Number is 1_795_839_177_655_000_064, whose `% 1e9` is 655000064
    const ms = Date.UTC(2026, 10, 28, 4, 12, 57, 655);
    expect(rfc3339Nano(ms * 1_000_000)).toBe('2026-11-28T04:12:57.655000000Z');
    expect(rfc3339Nano((ms + 0.123) * 1_000_000)).toBe('2026-11-28T04:12:57.655123000Z');
    expect(rfc3339Nano(Date.UTC(2026, 0, 1) * 1_000_000 - 1000)).toBe('2025-12-31T23:59:59.999999000Z');
  });
});

describe('thresholds', () => {
  it('parse quantities and percentages', () => {
    expect(parseThreshold('100Mi', 0)).toBe(100 * 2 ** 20);
    expect(parseThreshold('1G', 0)).toBe(1e9);
    expect(parseThreshold('10%', 500)).toBe(50);
    expect(parseThreshold('lots', 1)).toBeUndefined();
  });
  it('pressure when available is below the threshold', () => {
    const r = { cpuCores: 2, memoryTotalBytes: 2 ** 30, memoryAvailableBytes: 99 * 2 ** 20, diskTotalBytes: 100, diskAvailableBytes: 10, pidsMax: 100, pidsUsed: 89, networkReady: true };
    expect(pressures(r, { 'memory.available': '100Mi', 'nodefs.available': '10%', 'pid.available': '10%' })).toEqual({ memory: true, disk: false, pid: false });
    expect(pressures({ ...r, diskAvailableBytes: 9, pidsUsed: 91 }, { 'nodefs.available': '10%', 'pid.available': '10%' })).toEqual({ memory: false, disk: true, pid: true });
  });
  it('allocatable is capacity minus systemReserved (no eviction thresholds given); devices count healthy ones', () => {
    const r = { cpuCores: 4, memoryTotalBytes: 8 * 2 ** 30, memoryAvailableBytes: 0, diskTotalBytes: 2 ** 30, diskAvailableBytes: 0, pidsMax: 1, pidsUsed: 0, networkReady: true };
    const f = { name: 'n', hostname: 'n', port: 0, maxPods: 50, systemReserved: { cpu: '500m', memory: '1Gi' }, labels: {}, taints: [], extended: { 'example.com/gpu': { capacity: 2, allocatable: 1 } } };
    const { capacity, allocatable } = resources(r, f);
    expect(capacity).toEqual({ cpu: '4', memory: '8Gi', 'ephemeral-storage': '1Gi', pods: '50', 'example.com/gpu': '2' });
    expect(allocatable).toMatchObject({ cpu: '3500m', memory: '7Gi', 'example.com/gpu': '1' });
  });
  it('allocatable is capacity − kubeReserved − systemReserved − the hard eviction threshold (kubelet\'s GetNodeAllocatableAbsolute)', () => {
    const r = { cpuCores: 4, memoryTotalBytes: 8 * 2 ** 30, memoryAvailableBytes: 0, diskTotalBytes: 100 * 2 ** 30, diskAvailableBytes: 0, pidsMax: 1, pidsUsed: 0, networkReady: true };
    const f = {
      name: 'n', hostname: 'n', port: 0, maxPods: 110, labels: {}, taints: [], extended: {},
      systemReserved: { cpu: '500m', memory: '1Gi', 'ephemeral-storage': '1Gi' },
      kubeReserved: { cpu: '0.25', memory: '512Mi', 'ephemeral-storage': '2Gi' },
      evictionHard: { 'memory.available': '100Mi', 'nodefs.available': '10%', 'pid.available': '10%' },
    };
    expect(resources(r, f).allocatable).toEqual({
      cpu: '3250m',
      memory: '6556Mi', // 8Gi - 1Gi - 512Mi - 100Mi, canonical
      'ephemeral-storage': '87Gi',
      pods: '110',
    });
    // a percentage threshold of memory is of capacity; never below zero
    expect(resources(r, { ...f, evictionHard: { 'memory.available': '50%' } }).allocatable.memory).toBe('2560Mi');
    expect(resources(r, { ...f, systemReserved: { memory: '9Gi' } }).allocatable.memory).toBe('0');
  });
  it('whole cores are written as the Quantity kube prints (2, not 2000m)', () => {
    const r = { cpuCores: 2, memoryTotalBytes: 2 ** 30, memoryAvailableBytes: 0, diskTotalBytes: 2 ** 30, diskAvailableBytes: 0, pidsMax: 1, pidsUsed: 0, networkReady: true };
    const f = { name: 'n', hostname: 'n', port: 0, maxPods: 110, systemReserved: {}, labels: {}, taints: [], extended: {} };
    expect(resources(r, f).allocatable.cpu).toBe('2');
    expect(resources(r, { ...f, systemReserved: { cpu: '1' } }).allocatable.cpu).toBe('1');
  });
});

describe('lock file', () => {
  it('is exclusive while the owner lives, released on release(), taken over when stale', async () => {
    const d = await mkdtemp(join(tmpdir(), 'orch-lock-'));
    dirs.push(d);
    const path = join(d, 'sub', 'agent.lock');
    const l = acquireLock(path);
    expect((await readFile(path, 'utf8')).trim()).toBe(String(process.pid));
    // held by a live process (pid 1 is always alive)
    await writeFile(join(d, 'other.lock'), '1\n');
    expect(() => acquireLock(join(d, 'other.lock'))).toThrow(LockHeldError);
    expect(() => acquireLock(join(d, 'other.lock'))).toThrow(/another node agent \(pid 1\) holds the lock file/);
    l.release();
    await expect(readFile(path, 'utf8')).rejects.toThrow();
    await writeFile(path, '999999\n');
    const again = acquireLock(path);
    expect((await readFile(path, 'utf8')).trim()).toBe(String(process.pid));
    again.release();
  });
});
