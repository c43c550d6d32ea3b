// The node agent's volume manager without a server (docs/nodeagent.md
// "Volumes"): the atomic `..data` swap, token refresh at 80 % of the lifetime
// or after 24 h (kubelet's token manager), FailedMount and retry for a
// missing ConfigMap, optional sources, and the simulated runtime's mapping of
// container paths to host paths.

import { mkdtemp, readFile, readdir, readlink, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeAtomically } from '../../src/nodeagent/atomic-writer.js';
import type { KubeObject } from '../../src/nodeagent/api-client.js';
import type { Clock } from '../../src/nodeagent/clock.js';
import { mapMounts } from '../../src/nodeagent/runtime/sim-process.js';
import { formatMap, refreshTime, type VolumeReader, VolumeManager } from '../../src/nodeagent/volumes.js';
import type { Fetched } from '../../src/nodeagent/container-env.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'orch-vol-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const file = (s: string, mode = 0o644) => ({ data: Buffer.from(s), mode });

describe('atomic writer', () => {
  it('swaps ..data to a new version, links top-level names, drops names and versions gone', async () => {
    const v = join(dir, 'vol');
    expect(await writeAtomically(v, new Map([['a', file('1')], ['sub/b', file('2')]]), Date.UTC(2026, 10, 28, 14, 5, 9))).toBe(true);
    const first = await readlink(join(v, '..data'));
    expect(first).toMatch(/^\.\.2026_11_28_14_05_09\.\d+$/);
    expect(await readlink(join(v, 'a'))).toBe('..data/a');
    expect(await readlink(join(v, 'sub'))).toBe('..data/sub');
    expect(await readFile(join(v, 'sub', 'b'), 'utf8')).toBe('2');
    // unchanged: nothing written
    expect(await writeAtomically(v, new Map([['a', file('1')], ['sub/b', file('2')]]), 0)).toBe(false);
    expect(await readlink(join(v, '..data'))).toBe(first);
    // changed: a new version, `sub` gone, the old version removed
    expect(await writeAtomically(v, new Map([['a', file('3')], ['c', file('4', 0o600)]]), 1000)).toBe(true);
    expect(await readFile(join(v, 'a'), 'utf8')).toBe('3');
    expect((await readdir(v)).sort()).toEqual([expect.stringMatching(/^\.\.1970_01_01_00_00_01\.\d+$/), '..data', 'a', 'c']);
    // a mode change alone is a change
    expect(await writeAtomically(v, new Map([['a', file('3')], ['c', file('4', 0o644)]]), 2000)).toBe(true);
  });

  it('refuses paths that leave the volume', async () => {
    await expect(writeAtomically(join(dir, 'v'), new Map([['../x', file('1')]]), 0)).rejects.toThrow('invalid path');
    await expect(writeAtomically(join(dir, 'v'), new Map([['/etc/x', file('1')]]), 0)).rejects.toThrow('invalid path');
  });
});

describe('token refresh (kubelet token manager)', () => {
  it('at 80 % of the lifetime, and at most a day after issue', () => {
    expect(refreshTime({ issuedMs: 0, expiresAtMs: 3607_000 })).toBe(0.8 * 3607_000);
    expect(refreshTime({ issuedMs: 1000, expiresAtMs: 1000 + 365 * 86400_000 })).toBe(1000 + 86400_000);
  });
});

class FakeClock implements Clock {
  t = 1_000_000;
  now(): number {
    return this.t;
  }
  setTimeout(): unknown {
    return undefined;
  }
  clearTimeout(): void {}
}

function manager(objects: Record<string, Fetched>, allocatable?: Record<string, string>) {
  const clock = new FakeClock();
  const events: string[] = [];
  const tokens: { audiences: string[]; expirationSeconds: number; pod: { name: string; uid: string }; sa: string }[] = [];
  const reader: VolumeReader = {
    object: async (kind, _ns, name) => objects[`${kind}/${name}`] ?? { notFound: true },
    token: async (_ns, sa, r) => {
      tokens.push({ ...r, sa });
      return { token: `tok-${tokens.length}`, expiresAtMs: clock.t + r.expirationSeconds * 1000 };
    },
  };
  const m = new VolumeManager({ rootDir: dir, labelDomain: 'orch.io', reader, ...(allocatable ? { allocatable: () => allocatable } : {}), clock, events: { event: (_r, type, reason, message) => void events.push(`${type} ${reason} ${message}`) }, log: () => {} });
  return { m, clock, events, tokens };
}

const pod = (volumes: unknown[], containers: unknown[] = []): KubeObject =>
  ({ metadata: { name: 'p', namespace: 'ns', uid: 'u1', labels: { b: '2', a: 'x"y' } }, spec: { serviceAccountName: 'robot', volumes, containers } }) as unknown as KubeObject;

const projected = { name: 'api', projected: { sources: [{ serviceAccountToken: { path: 'token', expirationSeconds: 3607 } }, { configMap: { name: 'orch-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } }, { downwardAPI: { items: [{ path: 'namespace', fieldRef: { fieldPath: 'metadata.namespace' } }] } }], defaultMode: 420 } };
const tokenFile = (uid = 'u1') => join(dir, 'pods', uid, 'volumes', 'orch.io~projected', 'api', 'token');

describe('volume manager', () => {
  it('requests a token bound to the pod for its account and renews it at 80 % of its life', async () => {
    const { m, clock, tokens } = manager({ 'configmaps/orch-root-ca.crt': { data: { 'ca.crt': 'CA' } } });
    const p = pod([projected]);
    expect(await m.mount(p)).toBeDefined();
    expect(tokens).toEqual([{ sa: 'robot', audiences: [], expirationSeconds: 3607, pod: { name: 'p', uid: 'u1' } }]);
    expect(await readFile(tokenFile(), 'utf8')).toBe('tok-1');
    expect(await readFile(join(dir, 'pods', 'u1', 'volumes', 'orch.io~projected', 'api', 'namespace'), 'utf8')).toBe('ns');
    clock.t += 0.79 * 3607_000;
    await m.mount(p);
    expect(tokens).toHaveLength(1);
    clock.t += 0.02 * 3607_000;
    await m.mount(p);
    expect(tokens).toHaveLength(2);
    expect(await readFile(tokenFile(), 'utf8')).toBe('tok-2');
    expect(m.mountsFor('u1', { volumeMounts: [{ name: 'api', mountPath: '/var/run/secrets/orch.io/serviceaccount' }, { name: 'nope', mountPath: '/x' }] })).toEqual([
      { containerPath: '/var/run/secrets/orch.io/serviceaccount', hostPath: join(dir, 'pods', 'u1', 'volumes', 'orch.io~projected', 'api'), readonly: true },
    ]);
    await m.remove('u1');
    await expect(readdir(join(dir, 'pods'))).resolves.toEqual([]);
  });

  it('a missing ConfigMap is a FailedMount; the mount is retried after a back-off and succeeds once it exists', async () => {
    const objects: Record<string, Fetched> = {};
    const { m, clock, events } = manager(objects);
    const p = pod([{ name: 'cfg', configMap: { name: 'c' } }, { name: 'opt', secret: { secretName: 's', optional: true } }]);
    expect(await m.mount(p)).toBeUndefined();
    expect(events).toEqual(['Warning FailedMount MountVolume.SetUp failed for volume "cfg" : configmap "c" not found']);
    objects['configmaps/c'] = { data: { k: 'v' }, binaryData: { bin: Buffer.from([1, 2]).toString('base64') } };
    // within the back-off (0.5 s) nothing is tried
    expect(await m.mount(p)).toBeUndefined();
    expect(events).toHaveLength(1);
    clock.t += 600;
    const v = await m.mount(p);
    expect(v).toBeDefined();
    expect(await readFile(join(dir, 'pods', 'u1', 'volumes', 'orch.io~configmap', 'cfg', 'k'), 'utf8')).toBe('v');
    expect([...(await readFile(join(dir, 'pods', 'u1', 'volumes', 'orch.io~configmap', 'cfg', 'bin')))]).toEqual([1, 2]);
    // the optional Secret that does not exist is an empty volume
    expect((await readdir(join(dir, 'pods', 'u1', 'volumes', 'orch.io~secret', 'opt'))).filter((e) => !e.startsWith('..'))).toEqual([]);
  });

  it('removes the directories of pods it does not know (gone while the agent was down)', async () => {
    const { m } = manager({});
    const p = pod([{ name: 'e', emptyDir: {} }]);
    await m.mount(p);
    const { mkdir } = await import('node:fs/promises');
    await mkdir(join(dir, 'pods', 'gone', 'volumes'), { recursive: true });
    await mkdir(join(dir, 'pods', 'known', 'volumes'), { recursive: true });
    await m.removeOrphans((uid) => uid === 'known');
    expect((await readdir(join(dir, 'pods'))).sort()).toEqual(['known', 'u1']);
  });

  it('a missing key of items is kubelet\'s error; downward API labels are sorted `k="v"` lines', async () => {
    const { m, events } = manager({ 'secrets/s': { data: { a: Buffer.from('A').toString('base64') } } });
    expect(await m.mount(pod([{ name: 's', secret: { secretName: 's', items: [{ key: 'b', path: 'b' }] } }]))).toBeUndefined();
    expect(events).toEqual(['Warning FailedMount MountVolume.SetUp failed for volume "s" : references non-existent secret key: b']);
    expect(formatMap({ b: '2', a: 'x"y' })).toBe('a="x\\"y"\nb="2"');
  });
});

describe('downward API volumes (kube e2e downwardapi_volume.go)', () => {
  const dapiFile = (f: string) => join(dir, 'pods', 'u1', 'volumes', 'orch.io~downward-api', 'podinfo', f);
  const dapi = {
    name: 'podinfo',
    downwardAPI: { items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }, { path: 'cpu_limit', resourceFieldRef: { containerName: 'c', resource: 'limits.cpu' } }, { path: 'memory_limit', resourceFieldRef: { containerName: 'c', resource: 'limits.memory' } }] },
  };

  it('a limit the container does not set is the node allocatable, as in env', async () => {
    const { m } = manager({}, { cpu: '3500m', memory: '8Gi' });
    await m.mount(pod([dapi], [{ name: 'c' }]));
    expect(await readFile(dapiFile('cpu_limit'), 'utf8')).toBe('4');
    expect(await readFile(dapiFile('memory_limit'), 'utf8')).toBe(String(8 * 2 ** 30));
  });

  it("a label change is written at the pod's next sync, not at the minute's resync", async () => {
    const { m, clock } = manager({}, { cpu: '2', memory: '1Gi' });
    const p = pod([dapi], [{ name: 'c' }]);
    await m.mount(p);
    expect(await readFile(dapiFile('labels'), 'utf8')).toBe('a="x\\"y"\nb="2"');
    clock.t += 1000;
    // the same pod again: nothing to do before the resync
    await m.mount(p);
    p.metadata.labels = { ...p.metadata.labels, c: '3' };
    await m.mount(p);
    expect(await readFile(dapiFile('labels'), 'utf8')).toBe('a="x\\"y"\nb="2"\nc="3"');
  });
});

describe('simulated runtime mounts', () => {
  it('rewrites container paths standing as paths, the longest first', () => {
    const m = [
      { containerPath: '/data', hostPath: '/h/data' },
      { containerPath: '/data/sub', hostPath: '/h/sub' },
    ];
    // `.` may continue a file name (`/data.old`), so `/data.` stays
    expect(mapMounts('cat /data/f /data/sub/g /database /x/data "$(cat /data)" /data.old /data;', m)).toBe('cat /h/data/f /h/sub/g /database /x/data "$(cat /h/data)" /data.old /h/data;');
    expect(mapMounts('/data', [])).toBe('/data');
  });
});
