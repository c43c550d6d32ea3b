// Static pods as kubelet's file source makes them (pkg/kubelet/config/common.go, spec 002 §4.2): the
// NoExecute toleration of every taint, "invalid pod" files dropped, and a mirror pod the API refuses (422)
// not posted again on every relist.

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock, type TimerHandle } from '../../src/core/clock.js';
import { ApiError, type ApiClient, type KubeObject } from '../../src/nodeagent/api-client.js';
import type { Clock } from '../../src/nodeagent/clock.js';
import { PodManager } from '../../src/nodeagent/pod-manager.js';
import type { PodSyncer } from '../../src/nodeagent/pod-sync.js';
import { readStaticPods } from '../../src/nodeagent/static-pods.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'orch-static-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const manifest = (name: string, spec: Record<string, unknown>) => JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec });
const read = async () => {
  const logs: string[] = [];
  const pods = await readStaticPods(dir, 'node-a', 'orch.io', (m) => logs.push(m));
  return { pods, logs };
};

describe('static pod defaults', () => {
  it('adds {operator: Exists, effect: NoExecute} to the tolerations, keeping the others', async () => {
    await writeFile(join(dir, 'a.json'), manifest('a', { containers: [{ name: 'c', image: 'i' }] }));
    await writeFile(join(dir, 'b.json'), manifest('b', { containers: [{ name: 'c', image: 'i' }], tolerations: [{ key: 'k', operator: 'Equal', value: 'v', effect: 'NoSchedule' }] }));
    // kubelet's AddOrUpdateTolerationInPod replaces a matching one that has tolerationSeconds
    await writeFile(join(dir, 'c.json'), manifest('c', { containers: [{ name: 'c', image: 'i' }], tolerations: [{ operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 30 }] }));
    const { pods } = await read();
    expect(pods.map((p) => p.spec!.tolerations)).toEqual([
      [{ operator: 'Exists', effect: 'NoExecute' }],
      [{ key: 'k', operator: 'Equal', value: 'v', effect: 'NoSchedule' }, { operator: 'Exists', effect: 'NoExecute' }],
      [{ operator: 'Exists', effect: 'NoExecute' }],
    ]);
  });
});

describe('static pod validation (kubelet: "invalid pod", the file is dropped)', () => {
  it('drops a file whose pod is invalid and keeps the valid ones', async () => {
    const ok = { containers: [{ name: 'c', image: 'i' }] };
    await writeFile(join(dir, '0-ok.json'), manifest('ok', ok));
    await writeFile(join(dir, '1-policy.json'), manifest('policy', { ...ok, restartPolicy: 'Sometimes' }));
    await writeFile(join(dir, '2-name.json'), manifest('Bad_Name', ok));
    await writeFile(join(dir, '3-ns.json'), JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'ns', namespace: 'Kube_System' }, spec: ok }));
    await writeFile(join(dir, '4-image.json'), manifest('image', { containers: [{ name: 'c' }] }));
    await writeFile(join(dir, '5-dup.json'), manifest('dup', { initContainers: [{ name: 'c', image: 'i' }], containers: [{ name: 'c', image: 'i' }] }));
    await writeFile(join(dir, '6-cname.json'), manifest('cname', { containers: [{ name: 'C_1', image: 'i' }] }));
    await writeFile(join(dir, '7-none.json'), manifest('none', { containers: [] }));
    const { pods, logs } = await read();
    expect(pods.map((p) => p.metadata.name)).toEqual(['ok-node-a']);
    expect(logs).toHaveLength(7);
    for (const l of logs) expect(l).toMatch(/: invalid pod: \[/);
    expect(logs[0]).toContain('spec.restartPolicy: Unsupported value: "Sometimes"');
    expect(logs[1]).toContain('metadata.name: Invalid value: "Bad_Name-node-a"');
    expect(logs[2]).toContain('metadata.namespace: Invalid value: "Kube_System"');
    expect(logs[3]).toContain('spec.containers[0].image: Required value');
    expect(logs[4]).toContain('spec.containers[0].name: Duplicate value: "c"');
    expect(logs[5]).toContain('spec.containers[0].name: Invalid value: "C_1"');
    expect(logs[6]).toContain('spec.containers: Required value');
  });
});

describe('mirror pod refused by the API', () => {
  let pm: PodManager | undefined;
  afterEach(() => pm?.stop());

  it('a 422 on the mirror POST is logged once and not retried on every relist, until the manifest changes', async () => {
    await writeFile(join(dir, 'a.json'), manifest('a', { containers: [{ name: 'c', image: 'i' }] }));
    const manual = new ManualClock(Date.now());
    // each relist ends by arming the next one (1000 ms): the test waits for that, then moves the clock
    let armed = 0;
    const clock: Clock = {
      now: () => manual.now(),
      setTimeout: (fn, ms) => {
        if (ms === 1000) armed++;
        return manual.setTimeout(fn as () => void, ms);
      },
      clearTimeout: (h) => (h as TimerHandle | undefined)?.cancel(),
    };
    let posts = 0;
    const api = {
      get: async () => ({ metadata: { resourceVersion: '1' }, items: [] }),
      watch: () => ({ done: new Promise<void>(() => undefined), stop: () => undefined }),
      create: async () => {
        posts++;
        throw new ApiError(422, 'Invalid', 'Pod "a-node-a" is invalid: spec.x: Invalid value');
      },
      delete: async () => ({}),
      strategicPatch: async () => ({}),
    } as unknown as ApiClient;
    const syncer = {
      sync: async () => undefined,
      status: async (p: KubeObject) => p.status ?? {},
      kill: async () => undefined,
      remove: async () => undefined,
      runtimePods: async () => new Set<string>(),
      volumes: { removeOrphans: async () => undefined },
    } as unknown as PodSyncer;
    const logs: string[] = [];
    pm = new PodManager({ api, syncer, nodeName: 'node-a', nodeUid: () => 'node-uid', domain: 'orch.io', staticPodPath: dir, relistMs: 1000, clock, log: (m) => logs.push(m) });
    pm.start();
    const relists = async (n: number) => {
      for (let i = 0; i < n; i++) {
        const before = armed;
        manual.advance(1000);
        for (let j = 0; j < 500 && armed === before; j++) await new Promise((r) => setTimeout(r, 10));
        await pm!.drain();
      }
    };
    await relists(5);
    expect(posts).toBe(1);
    expect(logs.filter((l) => l.startsWith('mirror pod a-node-a'))).toHaveLength(1);
    // a changed manifest is a new static pod: its mirror is posted
    await writeFile(join(dir, 'a.json'), manifest('a', { containers: [{ name: 'c', image: 'j' }] }));
    await relists(3);
    expect(posts).toBe(2);
  });
});
