// Watch semantics of spec 000 §2.5, §4.5, §4.6 (watch table), §6, §7 against
// a real LocalStore; the sink stands for the gateway's socket.

import { ManualClock } from '../../src/core/clock.js';
import { afterEach, describe, expect, it } from 'vitest';
import { StatusError } from '../../src/core/errors.js';
import type { LocalStore } from '../../src/store/local-store.js';
import { openWatch } from '../../src/endpoints/handlers/watch.js';
import { WatchService, type WatchServiceOptions } from '../../src/watch/service.js';
import {
  RecordingSink,
  cleanupDirs,
  configMaps,
  del,
  genericStore,
  openStore,
  put,
  request,
  sleep,
  until,
  widgets,
} from './helpers.js';

const open: { store: LocalStore; svc: WatchService }[] = [];

/** lets the event loop turn (a dispatch pass, a watcher's start) */
const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

async function setup(opts: WatchServiceOptions = {}): Promise<{ store: LocalStore; svc: WatchService }> {
  const store = await openStore(opts.clock);
  const svc = new WatchService(store, opts);
  open.push({ store, svc });
  return { store, svc };
}

afterEach(async () => {
  for (const { store, svc } of open.splice(0)) {
    svc.close();
    await store.close();
  }
  await cleanupDirs();
});

function watch(
  svc: WatchService,
  store: LocalStore,
  query: Record<string, string>,
  opts: Parameters<typeof request>[2] = {},
  def = configMaps,
): { sink: RecordingSink; stop: () => void } {
  const resp = openWatch(svc, request(def, query, opts));
  const sink = new RecordingSink();
  resp.start(sink);
  return { sink, stop: () => resp.stop() };
}

function statusOf(fn: () => unknown): number {
  try {
    fn();
  } catch (e) {
    if (e instanceof StatusError) return e.code;
    throw e;
  }
  return 200;
}

describe('watch: event types and order (spec 000 §2.5, §6)', () => {
  it('resourceVersion unset: synthetic ADDED for the current state in key order, then every change in order', async () => {
    const { store, svc } = await setup();
    await put(store, configMaps, 'a', 'b-second');
    await put(store, configMaps, 'a', 'a-first');
    const { sink } = watch(svc, store, {});
    await until(() => sink.events().length === 2);
    const r1 = await put(store, configMaps, 'a', 'c', { data: { k: 'v' } });
    const r2 = await put(store, configMaps, 'a', 'c', { data: { k: 'w' } });
    const r3 = await del(store, configMaps, 'a', 'c');
    await until(() => sink.events().length === 5);
    expect(sink.summary()).toEqual(['ADDED a-first', 'ADDED b-second', 'ADDED c', 'MODIFIED c', 'DELETED c']);
    const ev = sink.events();
    expect(ev.map((e) => e.object.metadata?.resourceVersion).slice(2)).toEqual([String(r1), String(r2), String(r3)]);
    // the DELETED object is the last state stamped with the delete's revision
    expect(ev[4]!.object.data).toEqual({ k: 'w' });
    for (const e of ev) {
      expect(e.object.kind).toBe('ConfigMap');
      expect(e.object.apiVersion).toBe('v1');
    }
    expect(sink.text().endsWith('\n')).toBe(true);
    expect(svc.stats().watchers).toBe(1);
  });

  it('a namespace watch sees only its namespace; an all-namespaces watch sees all', async () => {
    const { store, svc } = await setup();
    const inA = watch(svc, store, { resourceVersion: '0' }, { namespace: 'a' });
    const all = watch(svc, store, { resourceVersion: '0' });
    await put(store, configMaps, 'a', 'x');
    await put(store, configMaps, 'b', 'y');
    await put(store, configMaps, 'a', 'z');
    await until(() => all.sink.events().length === 3);
    await until(() => inA.sink.events().length === 2);
    expect(inA.sink.summary()).toEqual(['ADDED x', 'ADDED z']);
    expect(all.sink.events().map((e) => e.object.metadata?.namespace)).toEqual(['a', 'b', 'a']);
  });

  it('cluster-scoped types are watched as a whole', async () => {
    const { store, svc } = await setup();
    await put(store, widgets, '', 'w1', { spec: { size: 1 } });
    const { sink } = watch(svc, store, {}, {}, widgets);
    await put(store, widgets, '', 'w2', { spec: { size: 2 } });
    await until(() => sink.events().length === 2);
    expect(sink.summary()).toEqual(['ADDED w1', 'ADDED w2']);
    expect(sink.events()[0]!.object.apiVersion).toBe('example.orch.io/v1');
  });
});

describe('watch: selectors (spec 000 §4.2)', () => {
  it('MODIFIED events that move an object into or out of the label selector become ADDED or DELETED', async () => {
    const { store, svc } = await setup();
    await put(store, configMaps, 'a', 'o', { labels: { app: 'web' } });
    const { sink } = watch(svc, store, { labelSelector: 'app=web' }, { namespace: 'a' });
    await until(() => sink.events().length === 1);
    const out = await put(store, configMaps, 'a', 'o', { labels: { app: 'db' } }); // leaves
    await put(store, configMaps, 'a', 'o', { labels: { app: 'db' }, data: { x: '1' } }); // invisible
    await put(store, configMaps, 'a', 'o', { labels: { app: 'web' } }); // enters
    await put(store, configMaps, 'a', 'o', { labels: { app: 'web' }, data: { x: '2' } }); // stays
    await put(store, configMaps, 'a', 'other'); // never matches
    await del(store, configMaps, 'a', 'o');
    await until(() => sink.events().length === 5);
    expect(sink.summary()).toEqual(['ADDED o', 'DELETED o', 'ADDED o', 'MODIFIED o', 'DELETED o']);
    const leaving = sink.events()[1]!;
    // the object that left is shown in its last matching state, at the revision it left
    expect(leaving.object.metadata?.resourceVersion).toBe(String(out));
    expect((leaving.object.metadata as { labels?: Record<string, string> }).labels).toEqual({ app: 'web' });
  });

  it('field selectors filter events; unsupported fields and bad selectors are 400', async () => {
    const { store, svc } = await setup();
    const { sink } = watch(svc, store, { resourceVersion: '0', fieldSelector: 'spec.color=red' }, {}, widgets);
    await put(store, widgets, '', 'r', { spec: { color: 'red' } });
    await put(store, widgets, '', 'b', { spec: { color: 'blue' } });
    await put(store, widgets, '', 'b', { spec: { color: 'red' } });
    await until(() => sink.events().length === 2);
    expect(sink.summary()).toEqual(['ADDED r', 'ADDED b']);
    expect(statusOf(() => openWatch(svc, request(widgets, { fieldSelector: 'spec.shape=x' })))).toBe(400);
    expect(statusOf(() => openWatch(svc, request(widgets, { labelSelector: 'a in (' })))).toBe(400);
  });
});

describe('watch: resourceVersion (spec 000 §4.6 watch table)', () => {
  it('N: only the changes after N, no synthetic events', async () => {
    const { store, svc } = await setup();
    await put(store, configMaps, 'a', 'before');
    const n = await put(store, configMaps, 'a', 'at-n');
    await put(store, configMaps, 'a', 'after');
    const { sink } = watch(svc, store, { resourceVersion: String(n) });
    await put(store, configMaps, 'a', 'live');
    await until(() => sink.events().length === 2);
    expect(sink.summary()).toEqual(['ADDED after', 'ADDED live']);
  });

  it('N in a namespace: the replay from the window holds only that namespace\'s changes', async () => {
    const { store, svc } = await setup();
    const n = await put(store, configMaps, 'a', 'at-n');
    await put(store, configMaps, 'b', 'other');
    await put(store, configMaps, 'a', 'after');
    const inA = watch(svc, store, { resourceVersion: String(n) }, { namespace: 'a' });
    await put(store, configMaps, 'b', 'live-b');
    await put(store, configMaps, 'a', 'live');
    await until(() => inA.sink.events().length >= 2);
    await sleep(20);
    expect(inA.sink.summary()).toEqual(['ADDED after', 'ADDED live']);
  });

  it('0: synthetic ADDED events for the current state, then changes', async () => {
    const { store, svc } = await setup();
    await put(store, configMaps, 'a', 'x');
    const { sink } = watch(svc, store, { resourceVersion: '0' });
    await put(store, configMaps, 'a', 'x', { data: { a: 'b' } });
    await until(() => sink.events().length === 2);
    expect(sink.summary()).toEqual(['ADDED x', 'MODIFIED x']);
  });

  it('a version older than the window ends with an ERROR event carrying 410 Expired', async () => {
    const clock = new ManualClock(1_000_000);
    const { store, svc } = await setup({ windowMs: 30, clock });
    const old = await put(store, configMaps, 'a', 'x');
    svc.cacheFor(configMaps);
    clock.advance(1);
    const newer = await put(store, configMaps, 'a', 'y');
    clock.advance(80); // both writes are older than the window now
    const { sink } = watch(svc, store, { resourceVersion: String(old) });
    await until(() => sink.ended);
    const ev = sink.events();
    expect(ev).toHaveLength(1);
    expect(ev[0]!.type).toBe('ERROR');
    expect(ev[0]!.object).toMatchObject({ kind: 'Status', code: 410, reason: 'Expired' });
    expect(ev[0]!.object.message).toBe(`too old resource version: ${old} (${newer})`);
    // the newest version is still servable after the history aged out
    const fresh = watch(svc, store, { resourceVersion: String(newer) });
    await put(store, configMaps, 'a', 'z');
    await until(() => fresh.sink.events().length === 1);
    expect(fresh.sink.summary()).toEqual(['ADDED z']);
    expect(svc.stats().watchers).toBe(1);
  });

  it('a version newer than the cache waits for it', async () => {
    const { store, svc } = await setup();
    const now = await put(store, configMaps, 'a', 'x');
    const { sink } = watch(svc, store, { resourceVersion: String(now + 2) });
    await put(store, configMaps, 'a', 'p'); // now+1: before the requested version
    await put(store, configMaps, 'a', 'q'); // now+2: the requested version itself
    await put(store, configMaps, 'a', 'r');
    await until(() => sink.events().length === 1);
    expect(sink.summary()).toEqual(['ADDED r']);
  });

  it('a cache created after writes backfills its window from the service history', async () => {
    const { store, svc } = await setup();
    const n = await put(store, configMaps, 'a', 'one');
    await put(store, configMaps, 'a', 'two');
    await del(store, configMaps, 'a', 'one');
    expect(svc.stats().caches).toBe(0);
    const { sink } = watch(svc, store, { resourceVersion: String(n) });
    await until(() => sink.events().length === 2);
    expect(sink.summary()).toEqual(['ADDED two', 'DELETED one']);
  });

  it('a cache created after the store compacted past the service history starts its window at the compact revision', async () => {
    const { store, svc } = await setup();
    const first = await put(store, configMaps, 'a', 'one');
    await put(store, configMaps, 'a', 'two');
    const c = await put(store, configMaps, 'a', 'three');
    await put(store, configMaps, 'a', 'four');
    await store.compact(c);
    // the write at the compact revision is still in the store's history: a watch from just before it replays it
    const { sink } = watch(svc, store, { resourceVersion: String(c - 1) });
    await until(() => sink.events().length === 2);
    expect(sink.summary()).toEqual(['ADDED three', 'ADDED four']);
    // older than the store's history: 410, as for any version older than the window
    const { sink: old } = watch(svc, store, { resourceVersion: String(first) });
    await until(() => old.events().length === 1);
    expect(old.events()[0]!.object).toMatchObject({ kind: 'Status', code: 410, reason: 'Expired' });
  });

  it('invalid combinations are 422 (ListOptions validation) or 400 (unreadable values); YAML streams are 406', async () => {
    const { store, svc } = await setup();
    const gs = genericStore(configMaps, store);
    const serve = (q: Record<string, string>) => () => openWatch(svc, request(configMaps, q));
    expect(statusOf(serve({ sendInitialEvents: 'true' }))).toBe(422);
    expect(statusOf(serve({ sendInitialEvents: 'true', resourceVersionMatch: 'Exact', resourceVersion: '1' }))).toBe(422);
    expect(statusOf(serve({ resourceVersionMatch: 'NotOlderThan', resourceVersion: '1' }))).toBe(422);
    expect(statusOf(serve({ resourceVersion: 'abc' }))).toBe(400);
    expect(statusOf(serve({ timeoutSeconds: 'x' }))).toBe(400);
    expect(statusOf(serve({ sendInitialEvents: 'true', resourceVersionMatch: 'NotOlderThan' }))).toBe(200);
    expect(statusOf(() => openWatch(svc, request(configMaps, {}, { accept: { format: 'yaml' } })))).toBe(406);
  });
});

describe('watch: streaming lists and bookmarks (spec 000 §4.5)', () => {
  it('sendInitialEvents: ADDED for all objects, then a bookmark with k8s.io/initial-events-end, then changes', async () => {
    const { store, svc } = await setup();
    await put(store, configMaps, 'a', 'x');
    const synced = await put(store, configMaps, 'a', 'y');
    const { sink } = watch(svc, store, {
      sendInitialEvents: 'true',
      resourceVersionMatch: 'NotOlderThan',
      allowWatchBookmarks: 'true',
    });
    await until(() => sink.events().length === 3);
    await put(store, configMaps, 'a', 'z');
    await until(() => sink.events().length === 4);
    const ev = sink.events();
    expect(ev.map((e) => e.type)).toEqual(['ADDED', 'ADDED', 'BOOKMARK', 'ADDED']);
    expect(ev[2]!.object).toEqual({
      kind: 'ConfigMap',
      apiVersion: 'v1',
      metadata: {
        resourceVersion: String(synced),
        annotations: { 'k8s.io/initial-events-end': 'true', 'orch.io/initial-events-end': 'true' },
      },
    });
  });

  it('sendInitialEvents with a resourceVersion waits until the state is not older than it', async () => {
    const { store, svc } = await setup();
    const now = await put(store, configMaps, 'a', 'x');
    const { sink } = watch(svc, store, {
      sendInitialEvents: 'true',
      resourceVersionMatch: 'NotOlderThan',
      resourceVersion: String(now + 1),
      allowWatchBookmarks: 'true',
    });
    await sleep(20);
    expect(sink.events()).toHaveLength(0);
    await put(store, configMaps, 'a', 'y');
    await until(() => sink.events().length === 3);
    expect(sink.events().map((e) => `${e.type} ${e.object.metadata?.name ?? e.object.metadata?.resourceVersion}`)).toEqual([
      'ADDED x',
      'ADDED y',
      `BOOKMARK ${now + 1}`,
    ]);
  });

  it('periodic bookmarks carry only kind, apiVersion and resourceVersion, and advance with writes to other types', async () => {
    const clock = new ManualClock(1_000_000);
    const { store, svc } = await setup({ bookmarkIntervalMs: 20, clock });
    const { sink } = watch(svc, store, { resourceVersion: '0', allowWatchBookmarks: 'true' });
    const other = await put(store, widgets, '', 'elsewhere');
    await until(() => svc.stats().revision === other);
    await tick();
    expect(sink.events().filter((e) => e.type === 'BOOKMARK')).toHaveLength(0);
    clock.advance(25); // past the jittered interval (18-22 ms)
    expect(sink.events().some((e) => e.type === 'BOOKMARK' && e.object.metadata?.resourceVersion === String(other))).toBe(true);
    const bm = sink.events().find((e) => e.type === 'BOOKMARK')!;
    expect(Object.keys(bm.object).sort()).toEqual(['apiVersion', 'kind', 'metadata']);
    expect(Object.keys(bm.object.metadata!)).toEqual(['resourceVersion']);
    // without allowWatchBookmarks there are none
    const quiet = watch(svc, store, { resourceVersion: '0' });
    await tick();
    clock.advance(60);
    expect(quiet.sink.events()).toHaveLength(0);
    expect(sink.events().filter((e) => e.type === 'BOOKMARK').length).toBeGreaterThanOrEqual(3);
  });

  it('bookmarks a watch once, 2 s before its timeout, as kube does, so a client resumes from a recent version', async () => {
    const clock = new ManualClock(1_000_000);
    const { store, svc } = await setup({ clock });
    const bookmarks = (s: { events(): { type: string }[] }) => s.events().filter((e) => e.type === 'BOOKMARK').length;
    const { sink } = watch(svc, store, { resourceVersion: '0', allowWatchBookmarks: 'true', timeoutSeconds: '5' });
    const other = await put(store, widgets, '', 'elsewhere');
    await until(() => svc.stats().revision === other);
    await tick();
    clock.advance(2900);
    expect(bookmarks(sink)).toBe(0);
    clock.advance(200); // past 3 s: the deadline less 2 s
    expect(sink.events().filter((e) => e.type === 'BOOKMARK').map((e) => (e as { object: { metadata?: { resourceVersion?: string } } }).object.metadata?.resourceVersion)).toEqual([String(other)]);
    clock.advance(1800);
    expect(bookmarks(sink)).toBe(1);
    clock.advance(100);
    await until(() => sink.ended);
    expect(bookmarks(sink)).toBe(1);
    // a watch of 2 s or less has no time for one (kube: the pre-timeout time is already past)
    const short = watch(svc, store, { resourceVersion: '0', allowWatchBookmarks: 'true', timeoutSeconds: '2' });
    await tick();
    clock.advance(2000);
    await until(() => short.sink.ended);
    expect(bookmarks(short.sink)).toBe(0);
  });
});

describe('watch: stream lifecycle', () => {
  it('timeoutSeconds ends the stream cleanly', async () => {
    const clock = new ManualClock(1_000_000);
    const { store, svc } = await setup({ clock });
    const { sink } = watch(svc, store, { resourceVersion: '0', timeoutSeconds: '1' });
    await tick();
    clock.advance(999);
    expect(sink.ended).toBe(false);
    clock.advance(1);
    await until(() => sink.ended);
    expect(sink.events().filter((e) => e.type === 'ERROR')).toHaveLength(0);
    expect(svc.stats().watchers).toBe(0);
  });

  it('stop() frees the watcher at once and nothing more is written', async () => {
    const { store, svc } = await setup();
    const { sink, stop } = watch(svc, store, { resourceVersion: '0' });
    expect(svc.stats().watchers).toBe(1);
    stop();
    expect(svc.stats().watchers).toBe(0);
    await put(store, configMaps, 'a', 'x');
    await sleep(10);
    expect(sink.chunks).toHaveLength(0);
  });

  it('close() ends every stream, including one still waiting for its version', async () => {
    const { store, svc } = await setup();
    const a = watch(svc, store, { resourceVersion: '0' });
    const b = watch(svc, store, { resourceVersion: '999' });
    expect(svc.stats().watchers).toBe(2);
    svc.close();
    await until(() => a.sink.ended && b.sink.ended);
    expect(svc.stats().watchers).toBe(0);
    expect(() => openWatch(svc, request(configMaps, {}))).toThrow(StatusError);
  });
});

describe('watch: fan-out', () => {
  it('a slow watcher is ended with 410 while a fast one receives every event', async () => {
    const { store, svc } = await setup({ maxBacklogBytes: 2000 });
    const fast = watch(svc, store, { resourceVersion: '0' });
    const slow = watch(svc, store, { resourceVersion: '0' });
    slow.sink.stall();
    for (let i = 0; i < 40; i++) await put(store, configMaps, 'a', `o${i}`, { data: { pad: 'x'.repeat(100) } });
    await until(() => fast.sink.events().length === 40);
    expect(fast.sink.summary()).toEqual(Array.from({ length: 40 }, (_, i) => `ADDED o${i}`));
    expect(slow.sink.ended).toBe(true);
    const last = slow.sink.events().at(-1)!;
    expect(last.type).toBe('ERROR');
    expect(last.object).toMatchObject({ code: 410, reason: 'Expired' });
    expect(last.object.message).toContain('re-list and watch again');
    expect(slow.sink.events().length).toBeLessThan(40);
    const stats = svc.stats();
    expect(stats.slowWatchersEnded).toBe(1);
    expect(stats.watchers).toBe(1);
  });

  it('the server-wide backlog budget holds: the watchers furthest behind are ended with 410 first, reading watchers get every event', async () => {
    const BUDGET = 12_000;
    // each watcher alone may fall far behind (1 MiB): only the shared budget can end them
    const { store, svc } = await setup({ maxBacklogBytes: 1024 * 1024, backlogBudgetBytes: BUDGET });
    const readers = Array.from({ length: 3 }, () => watch(svc, store, { resourceVersion: '0' }));
    const early = Array.from({ length: 4 }, () => watch(svc, store, { resourceVersion: '0' }));
    const late = Array.from({ length: 4 }, () => watch(svc, store, { resourceVersion: '0' }));
    for (const w of early) w.sink.stall();
    const endedOrder: string[] = [];
    const seen = new Set<RecordingSink>();
    const noteEnded = () => {
      for (const [name, group] of [['early', early], ['late', late]] as const) {
        for (const w of group) if (w.sink.ended && !seen.has(w.sink)) (seen.add(w.sink), endedOrder.push(name));
      }
    };
    let maxBacklog = 0;
    for (let i = 0; i < 60; i++) {
      if (i === 10) for (const w of late) w.sink.stall();
      await put(store, configMaps, 'a', `o${String(i).padStart(2, '0')}`, { data: { pad: 'x'.repeat(200) } });
      await until(() => readers.every((r) => r.sink.events().length === i + 1));
      maxBacklog = Math.max(maxBacklog, svc.stats().backlogBytes);
      noteEnded();
    }
    expect(maxBacklog).toBeLessThanOrEqual(BUDGET);
    // readers are never chosen, and miss nothing
    const expected = Array.from({ length: 60 }, (_, i) => `ADDED o${String(i).padStart(2, '0')}`);
    for (const r of readers) {
      expect(r.sink.ended).toBe(false);
      expect(r.sink.summary()).toEqual(expected);
    }
    // the ones that stalled first hold the most and go first
    expect(endedOrder.length).toBeGreaterThan(0);
    expect(endedOrder.slice(0, early.length)).toEqual(early.map(() => 'early'));
    for (const w of [...early, ...late].filter((x) => x.sink.ended)) {
      const last = w.sink.events().at(-1)!;
      expect(last.type).toBe('ERROR');
      expect(last.object).toMatchObject({ code: 410, reason: 'Expired' });
      expect(last.object.message).toContain('watch buffers are full');
    }
    const stats = svc.stats();
    expect(stats.budgetWatchersEnded).toBe(endedOrder.length);
    expect(stats.slowWatchersEnded).toBe(0);
    expect(stats.watchers).toBe(3 + 8 - endedOrder.length);
  });

  it('fan-out runs in bounded slices that yield to the event loop, and every watcher still gets every event once, in order', async () => {
    const { store, svc } = await setup({ fanoutSlice: 3 });
    const watchers = Array.from({ length: 10 }, (_, i) => watch(svc, store, { resourceVersion: '0' }, i % 2 ? { namespace: 'a' } : {}));
    await sleep(5);
    // one burst: the writes are group-committed and applied in one turn
    await Promise.all(Array.from({ length: 20 }, (_, i) => put(store, configMaps, 'a', `o${String(i).padStart(2, '0')}`)));
    // the first slice has run; the rest waits for later turns, behind this callback
    await new Promise((r) => setImmediate(r));
    const delivered = (): number => watchers.reduce((n, w) => n + w.sink.events().length, 0);
    expect(delivered()).toBeGreaterThan(0);
    expect(delivered()).toBeLessThan(200);
    // a watcher that joins mid-pass starts after the pending events: no duplicates, nothing missed later
    const late = watch(svc, store, {});
    await until(() => delivered() === 200);
    const expected = Array.from({ length: 20 }, (_, i) => `ADDED o${String(i).padStart(2, '0')}`);
    for (const w of watchers) expect(w.sink.summary().sort()).toEqual(expected);
    for (const w of watchers) {
      const revs = w.sink.events().map((e) => Number(e.object.metadata?.resourceVersion));
      expect(revs).toEqual([...revs].sort((a, b) => a - b));
    }
    await until(() => late.sink.events().length === 20);
    const r = await put(store, configMaps, 'a', 'after');
    await until(() => late.sink.events().length === 21);
    expect(late.sink.events().at(-1)!.object.metadata?.resourceVersion).toBe(String(r));
    expect(new Set(late.sink.summary()).size).toBe(21);
    expect(svc.stats().fanoutYields).toBeGreaterThan(0);
  });

  it('one pass, several events: each watcher gets its events of the pass in one write, shared by watchers of the same namespace', async () => {
    const { store, svc } = await setup();
    const all1 = watch(svc, store, { resourceVersion: '0' });
    const all2 = watch(svc, store, { resourceVersion: '0' });
    const inA1 = watch(svc, store, { resourceVersion: '0' }, { namespace: 'a' });
    const inA2 = watch(svc, store, { resourceVersion: '0' }, { namespace: 'a' });
    const webInA = watch(svc, store, { resourceVersion: '0', labelSelector: 'app=web' }, { namespace: 'a' });
    await sleep(5);
    // applied in one turn (group commit), so they form one dispatch pass
    await Promise.all([
      put(store, configMaps, 'a', 'x', { labels: { app: 'web' } }),
      put(store, configMaps, 'b', 'y', { labels: { app: 'web' } }),
      put(store, configMaps, 'a', 'z'),
    ]);
    await until(() => all1.sink.events().length === 3 && all2.sink.events().length === 3 && inA1.sink.events().length === 2);
    await until(() => inA2.sink.events().length === 2 && webInA.sink.events().length === 1);
    await sleep(20);
    expect(all1.sink.summary()).toEqual(['ADDED x', 'ADDED y', 'ADDED z']);
    expect(inA1.sink.summary()).toEqual(['ADDED x', 'ADDED z']);
    expect(webInA.sink.summary()).toEqual(['ADDED x']);
    // one write each, the same Buffer for watchers of the same namespace and representation
    expect(all1.sink.chunks).toHaveLength(1);
    expect(inA1.sink.chunks).toHaveLength(1);
    expect(all1.sink.chunks[0]).toBe(all2.sink.chunks[0]);
    expect(inA1.sink.chunks[0]).toBe(inA2.sink.chunks[0]);
    expect(svc.stats().eventsSent).toBe(3 + 3 + 2 + 2 + 1);
  });

  it('watchers of the same representation share the very same encoded bytes', async () => {
    const { store, svc } = await setup();
    const a = watch(svc, store, { resourceVersion: '0' });
    const b = watch(svc, store, { resourceVersion: '0' }, { namespace: 'n' });
    await put(store, configMaps, 'n', 'x');
    await until(() => a.sink.chunks.length === 1 && b.sink.chunks.length === 1);
    expect(a.sink.chunks[0]).toBe(b.sink.chunks[0]);
  });

  it('table watches get one row per event; only the first carries column definitions', async () => {
    const { store, svc } = await setup();
    await put(store, widgets, '', 'w1', { spec: { size: 3 } });
    const { sink } = watch(svc, store, {}, { accept: { table: { group: 'meta.orch.io', version: 'v1' } } }, widgets);
    await put(store, widgets, '', 'w2', { spec: { size: 5 } });
    await until(() => sink.events().length === 2);
    const [first, second] = sink.events() as { type: string; object: { kind: string; columnDefinitions: { name: string }[]; rows: { cells: unknown[] }[] } }[];
    expect(first!.object.kind).toBe('Table');
    expect(first!.object.columnDefinitions.map((c) => c.name)).toEqual(['Name', 'Size', 'Age']);
    expect(first!.object.rows).toHaveLength(1);
    expect(first!.object.rows[0]!.cells.slice(0, 2)).toEqual(['w1', 3]);
    expect(second!.type).toBe('ADDED');
    expect(second!.object.columnDefinitions).toEqual([]);
    expect(second!.object.rows[0]!.cells.slice(0, 2)).toEqual(['w2', 5]);
  });
});
