// The pod manager against watch events older than the status it wrote (kubelet's status manager: the
// status the agent computed is the pod's status; pods from the API update its spec and metadata). A fake
// API whose status writes answer with the pod at the next resourceVersion, a watch the test feeds by
// hand, a fake pod syncer whose one container runs until the test ends it, and a manual clock (no relist
// but the first): every sync is one the test asks for.

import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock, type TimerHandle } from '../../src/core/clock.js';
import type { ApiClient, KubeObject, WatchEvent } from '../../src/nodeagent/api-client.js';
import type { Clock } from '../../src/nodeagent/clock.js';
import { newerVersion, PodManager } from '../../src/nodeagent/pod-manager.js';
import type { PodSyncer } from '../../src/nodeagent/pod-sync.js';

type Status = Record<string, unknown>;
const UID = 'uid-1';

/** the API: one pod, its resourceVersions `${prefix}${n}` (prefix '' is orch's decimal form) */
function fakeApi(prefix: string) {
  let n = 10;
  const rv = () => `${prefix}${n}`;
  let pod: KubeObject = { metadata: { name: 'p', namespace: 'default', uid: UID, resourceVersion: rv() }, spec: { containers: [{ name: 'c' }] }, status: { phase: 'Pending' } };
  const copy = (): KubeObject => structuredClone(pod);
  const written: { rv: string; phase: unknown }[] = [];
  let send: ((e: WatchEvent) => void) | undefined;
  const api = {
    get: async () => ({ metadata: { resourceVersion: rv() }, items: [copy()] }),
    watch: (_path: string, onEvent: (e: WatchEvent) => void) => {
      send = onEvent;
      return { done: new Promise<void>(() => undefined), stop: () => undefined };
    },
    strategicPatch: async (_path: string, patch: { status: Status }) => {
      n += 1;
      pod = { ...copy(), status: patch.status, metadata: { ...pod.metadata, resourceVersion: rv() } };
      written.push({ rv: rv(), phase: patch.status.phase });
      return copy();
    },
    delete: async () => ({}),
    create: async () => ({}),
  };
  return {
    api: api as unknown as ApiClient,
    written,
    /** a watch event of the pod as it was at that write (the status and resourceVersion it gave the pod) */
    deliver(at: { rv: string; phase: unknown }, meta: Partial<KubeObject['metadata']> = {}, status: Status = {}) {
      send!({ type: 'MODIFIED', object: { ...copy(), metadata: { ...pod.metadata, ...meta, resourceVersion: at.rv }, status: { phase: at.phase, ...status } } });
    },
  };
}

/**
 * a runtime of one container under restartPolicy Never, as the pod syncer runs it: a sync from a
 * non-terminal status starts a sandbox if there is none; from a terminal one it stops the sandbox
 */
function fakeSyncer() {
  const s = { starts: 0, sandbox: false, running: false, seen: [] as unknown[] };
  const terminal = (phase: unknown) => phase === 'Succeeded' || phase === 'Failed';
  const syncer = {
    sync: async (pod: KubeObject) => {
      const phase = pod.status?.phase;
      s.seen.push(phase);
      if (terminal(phase)) s.sandbox = false;
      else if (!s.sandbox) Object.assign(s, { starts: s.starts + 1, sandbox: true, running: true });
    },
    status: async (pod: KubeObject): Promise<Status> => {
      const prev = pod.status?.phase;
      return { ...pod.status, phase: !s.sandbox && terminal(prev) ? prev : s.running ? 'Running' : 'Succeeded' };
    },
    kill: async () => undefined,
    remove: async () => undefined,
    runtimePods: async () => new Set<string>(),
    volumes: { removeOrphans: async () => undefined },
  };
  return { syncer: syncer as unknown as PodSyncer, state: s, exit: () => void (s.running = false) };
}

let pm: PodManager | undefined;
afterEach(() => pm?.stop());

const RELIST_MS = 60_000;

async function setUp(prefix: string) {
  const manual = new ManualClock(Date.now());
  // the first relist (a real read of the static pod directory, then a sync of every pod) ends by arming the
  // next one: until then a sync of its own may still come, whatever the test does meanwhile
  let relisted!: () => void;
  const firstRelist = new Promise<void>((r) => (relisted = r));
  const clock: Clock = {
    now: () => manual.now(),
    setTimeout: (fn, ms) => {
      if (ms === RELIST_MS) relisted();
      return manual.setTimeout(fn as () => void, ms);
    },
    clearTimeout: (h) => (h as TimerHandle | undefined)?.cancel(),
  };
  const a = fakeApi(prefix);
  const r = fakeSyncer();
  pm = new PodManager({ api: a.api, syncer: r.syncer, nodeName: 'n1', nodeUid: () => undefined, domain: 'orch.io', staticPodPath: '/nonexistent/orch-manifests', relistMs: RELIST_MS, clock, log: () => undefined });
  pm.start();
  await firstRelist;
  await settle(pm);
  return { ...a, ...r, pm };
}

/** lets every sync asked for (and those they ask for) run to its end */
async function settle(m: PodManager): Promise<void> {
  for (let i = 0; i < 20; i++) {
    await m.drain();
    await new Promise((r) => setImmediate(r));
  }
}

describe('pod manager: watch events older than its status write', () => {
  for (const [name, prefix] of [
    ["orch's decimal resourceVersions", ''],
    ['opaque resourceVersions (the watch order only)', 'x'],
  ] as const) {
    it(`a finished pod is not started again from an older event's Running (${name})`, async () => {
      const t = await setUp(prefix);
      // first sync: the container started, Running written (the watch's event of that write not delivered yet)
      expect(t.state.starts).toBe(1);
      expect(t.written.map((w) => w.phase)).toEqual(['Running']);
      const running = t.written[0]!;
      // the container ends: Succeeded written
      t.exit();
      t.pm.schedule(UID);
      await settle(t.pm);
      expect(t.written.map((w) => w.phase)).toEqual(['Running', 'Succeeded']);
      // a relist's sync of the finished pod: its sandbox stopped
      t.pm.schedule(UID);
      await settle(t.pm);
      expect(t.state.sandbox).toBe(false);
      // the watch now delivers the Running write's event, older than the Succeeded write's response
      t.deliver(running);
      await settle(t.pm);
      t.pm.schedule(UID);
      await settle(t.pm);
      expect(t.state.seen.at(-1)).toBe('Succeeded');
      expect(t.state.starts).toBe(1);
      expect(t.written.map((w) => w.phase)).toEqual(['Running', 'Succeeded']);
      expect(t.pm.knownPods()[0]!.status?.phase).toBe('Succeeded');
    });
  }

  it('an event older than the write is no new spec; the API is taken in again once it caught up with the write', async () => {
    const t = await setUp('');
    const running = t.written[0]!;
    t.exit();
    t.pm.schedule(UID);
    await settle(t.pm);
    const succeeded = t.written[1]!;
    const syncs = t.state.seen.length;
    // older than the pod the agent knows (the Succeeded write's response): no sync, its label not taken
    t.deliver(running, { labels: { old: 'yes' } });
    await settle(t.pm);
    expect(t.state.seen.length).toBe(syncs);
    expect(t.pm.knownPods()[0]!.metadata.labels).toBeUndefined();
    // the watch reaches the write, then someone else's newer change: taken in, status and all
    t.deliver(succeeded);
    t.deliver({ rv: '13', phase: 'Succeeded' }, { labels: { new: 'yes' } }, { reason: 'SetElsewhere' });
    await settle(t.pm);
    expect(t.pm.knownPods()[0]!.metadata.labels).toEqual({ new: 'yes' });
    expect(t.pm.knownPods()[0]!.status).toMatchObject({ phase: 'Succeeded', reason: 'SetElsewhere' });
    expect(t.state.seen.length).toBeGreaterThan(syncs);
  });
});

describe('newerVersion', () => {
  it('compares decimal resourceVersions as integers and leaves other forms undecided', () => {
    expect(newerVersion('12', '9')).toBe(true);
    expect(newerVersion('9', '12')).toBe(false);
    expect(newerVersion('12', '12')).toBe(false);
    expect(newerVersion('x12', 'x9')).toBeUndefined();
    expect(newerVersion('x12', 'x12')).toBe(false);
    expect(newerVersion(undefined, '1')).toBeUndefined();
  });
});
