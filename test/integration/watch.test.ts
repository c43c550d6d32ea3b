// Watch over real HTTPS (spec 000 §2.5, §4.2, §4.5, §6, §7): selectors on
// watch, bookmarks, streaming lists (sendInitialEvents), chunked encoding,
// 410 for versions older than the window, freeing watchers on disconnect,
// and graceful shutdown.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestServer, startTestServer, NO_NAMESPACE_DEFAULTS, NO_SERVICE_ACCOUNT_ADMISSION } from '../helpers/server.js';
import { eventually } from '../helpers/eventually.js';
import { type WatchEvent, openWatch } from '../helpers/watch-stream.js';

let t: TestServer;

/** creates a namespace; returns its resourceVersion (a start for watches that must see every later change) */
async function mkns(name: string): Promise<number> {
  const r = await t.request('POST', '/api/v1/namespaces', { body: { metadata: { name } } });
  expect(r.status).toBe(201);
  return Number(r.json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion);
}

async function cm(ns: string, name: string, labels: Record<string, string> = {}, server: TestServer = t): Promise<number> {
  const r = await server.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: { metadata: { name, labels } } });
  expect(r.status, r.text).toBe(201);
  return Number(r.json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion);
}

async function relabel(ns: string, name: string, labels: Record<string, string | null>): Promise<void> {
  const r = await t.request('PATCH', `/api/v1/namespaces/${ns}/configmaps/${name}`, {
    body: { metadata: { labels } },
    headers: { 'Content-Type': 'application/merge-patch+json' },
  });
  expect(r.status, r.text).toBe(200);
}

const summary = (e: WatchEvent): string => `${e.type} ${e.object.metadata?.name ?? ''}`;

beforeAll(async () => {
  t = await startTestServer({ watchBookmarkIntervalMs: 100, authn: NO_NAMESPACE_DEFAULTS, admissionPlugins: NO_SERVICE_ACCOUNT_ADMISSION });
});
afterAll(async () => {
  await t?.stop();
});

describe('the stream', () => {
  it('is chunked JSON lines with ADDED, MODIFIED and DELETED events', async () => {
    const rv = await mkns('w-basic');
    const w = openWatch(t.server, `/api/v1/namespaces/w-basic/configmaps?watch=1&resourceVersion=${rv}`);
    await cm('w-basic', 'x');
    const { status, headers } = await w.response;
    expect(status).toBe(200);
    expect(headers['transfer-encoding']).toBe('chunked');
    expect(headers['content-length']).toBeUndefined();
    expect(headers['content-type']).toContain('application/json');
    await relabel('w-basic', 'x', { a: 'b' });
    expect((await t.request('DELETE', '/api/v1/namespaces/w-basic/configmaps/x')).status).toBe(200);
    const events = await w.waitFor(3);
    expect(events.map(summary)).toEqual(['ADDED x', 'MODIFIED x', 'DELETED x']);
    expect(events.map((e) => e.object.kind)).toEqual(['ConfigMap', 'ConfigMap', 'ConfigMap']);
    const rvs = events.map((e) => Number(e.object.metadata?.resourceVersion));
    expect(rvs[0]!).toBeLessThan(rvs[1]!);
    expect(rvs[1]!).toBeLessThan(rvs[2]!);
    w.close();
  });

  it('timeoutSeconds ends the stream cleanly', async () => {
    const w = openWatch(t.server, '/api/v1/namespaces/w-basic/configmaps?watch=1&timeoutSeconds=1');
    expect(await w.ended).toBe(true);
  });
});

describe('selectors on watch', () => {
  it('label selectors (set-based) filter events; moving in is ADDED, moving out is DELETED', async () => {
    const rv = await mkns('w-sel');
    const w = openWatch(
      t.server,
      `/api/v1/namespaces/w-sel/configmaps?watch=1&resourceVersion=${rv}&labelSelector=${encodeURIComponent('app in (web,api),!legacy')}`,
    );
    await cm('w-sel', 'in1', { app: 'web' });
    await cm('w-sel', 'out1', { app: 'db' });
    await cm('w-sel', 'out2', { app: 'api', legacy: 'true' });
    await relabel('w-sel', 'out1', { app: 'api' }); // moves in
    await relabel('w-sel', 'in1', { legacy: 'yes' }); // moves out
    await relabel('w-sel', 'out1', { tier: 'x' }); // stays in
    const events = await w.waitFor(4);
    expect(events.map(summary)).toEqual(['ADDED in1', 'ADDED out1', 'DELETED in1', 'MODIFIED out1']);
    w.close();
  });

  it('field selectors on pods (spec.nodeName, status.phase)', async () => {
    const rv = await mkns('w-pods');
    const byNode = openWatch(t.server, `/api/v1/pods?watch=1&resourceVersion=${rv}&fieldSelector=spec.nodeName%3Dnode-1`);
    const byPhase = openWatch(
      t.server,
      `/api/v1/namespaces/w-pods/pods?watch=1&resourceVersion=${rv}&fieldSelector=status.phase%3DPending,metadata.name!%3Dp2`,
    );
    for (const [name, node] of [
      ['p1', 'node-1'],
      ['p2', 'node-2'],
      ['p3', 'node-1'],
    ]) {
      const r = await t.request('POST', '/api/v1/namespaces/w-pods/pods', {
        body: { metadata: { name }, spec: { nodeName: node, containers: [{ name: 'c', image: 'busybox:1' }] } },
      });
      expect(r.status, r.text).toBe(201);
    }
    expect((await byNode.waitFor(2)).map(summary)).toEqual(['ADDED p1', 'ADDED p3']);
    expect((await byPhase.waitFor(2)).map(summary)).toEqual(['ADDED p1', 'ADDED p3']);
    byNode.close();
    byPhase.close();
  });

  it('a malformed or unsupported selector is 400', async () => {
    for (const q of ['labelSelector=app%20in%20web', 'fieldSelector=spec.nodeName', 'fieldSelector=spec.nodeName%3Dx']) {
      const w = openWatch(t.server, `/api/v1/namespaces/w-sel/configmaps?watch=1&${q}`);
      expect((await w.response).status, q).toBe(400);
      expect(JSON.parse(await w.body()).code).toBe(400);
    }
  });
});

describe('bookmarks and streaming lists (spec 000 §4.5)', () => {
  it('sends BOOKMARK events with only kind, apiVersion and resourceVersion', async () => {
    await mkns('w-bm');
    const w = openWatch(t.server, '/api/v1/namespaces/w-bm/configmaps?watch=1&allowWatchBookmarks=true');
    const bm = await w.waitUntil((e) => e.type === 'BOOKMARK');
    expect(Object.keys(bm.object).sort()).toEqual(['apiVersion', 'kind', 'metadata']);
    expect(Object.keys(bm.object.metadata!)).toEqual(['resourceVersion']);
    expect(bm.object.kind).toBe('ConfigMap');
    expect(Number(bm.object.metadata!.resourceVersion)).toBeGreaterThan(0);
    w.close();
  });

  it('without allowWatchBookmarks there are none', async () => {
    const w = openWatch(t.server, '/api/v1/namespaces/w-bm/configmaps?watch=1&timeoutSeconds=1');
    await w.ended;
    expect(w.events.filter((e) => e.type === 'BOOKMARK')).toEqual([]);
  });

  it('sendInitialEvents: synthetic ADDED, the initial-events-end BOOKMARK at the synced version, then changes', async () => {
    await mkns('w-stream');
    await cm('w-stream', 'a');
    const rvB = await cm('w-stream', 'b');
    const w = openWatch(
      t.server,
      '/api/v1/namespaces/w-stream/configmaps?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true',
    );
    const first = await w.waitFor(3);
    expect(first.map(summary)).toEqual(['ADDED a', 'ADDED b', 'BOOKMARK ']);
    const bm = first[2]!;
    expect(bm.object.metadata?.annotations?.['k8s.io/initial-events-end']).toBe('true');
    expect(Number(bm.object.metadata?.resourceVersion)).toBeGreaterThanOrEqual(rvB);
    await cm('w-stream', 'c');
    await w.waitUntil((e) => e.type === 'ADDED' && e.object.metadata?.name === 'c');
    w.close();
  });

  it('sendInitialEvents with a resourceVersion: the bookmark is not older than it', async () => {
    const rv = await cm('w-stream', 'd');
    const w = openWatch(
      t.server,
      `/api/v1/namespaces/w-stream/configmaps?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=${rv}`,
    );
    const bm = await w.waitUntil((e) => e.type === 'BOOKMARK' && e.object.metadata?.annotations?.['k8s.io/initial-events-end'] === 'true');
    expect(Number(bm.object.metadata?.resourceVersion)).toBeGreaterThanOrEqual(rv);
    const before = w.events.slice(0, w.events.indexOf(bm));
    expect(before.map(summary)).toEqual(['ADDED a', 'ADDED b', 'ADDED c', 'ADDED d']);
    w.close();
  });
});

describe('410 and re-list signals', () => {
  it('a watch from a version older than the window gets an ERROR event with 410 Expired', async () => {
    const small = await startTestServer({ watchWindowMs: 200, authn: NO_NAMESPACE_DEFAULTS });
    try {
      // a watch keeps the type's cache alive; its window ages out
      const keep = openWatch(small.server, '/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=0');
      const old = await cm('default', 'old', {}, small);
      await new Promise((r) => setTimeout(r, 500));
      await cm('default', 'newer', {}, small);
      const w = openWatch(small.server, `/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${old - 1}`);
      expect((await w.response).status).toBe(200);
      const [err] = await w.waitFor(1);
      expect(err!.type).toBe('ERROR');
      expect(err!.object).toMatchObject({ kind: 'Status', code: 410, reason: 'Expired' });
      expect(await w.ended).toBe(true);
      keep.close();
    } finally {
      await small.stop();
    }
  });

  it('expireWatchers ends open watches with 410 so clients re-list', async () => {
    const w = openWatch(t.server, '/api/v1/namespaces/w-basic/configmaps?watch=1');
    await eventually(() => t.server.watch.stats().watchers >= 1, 'the watcher to register');
    expect(t.server.watch.expireWatchers()).toBeGreaterThanOrEqual(1);
    const err = await w.waitUntil((e) => e.type === 'ERROR');
    expect(err.object.code).toBe(410);
    expect(await w.ended).toBe(true);
  });
});

describe('lifecycle', () => {
  it('a client that disconnects frees its watcher at once', async () => {
    await eventually(() => t.server.watch.stats().watchers === 0, 'earlier watchers to go');
    const streams = Array.from({ length: 5 }, () => openWatch(t.server, '/api/v1/namespaces/w-basic/configmaps?watch=1&allowWatchBookmarks=true'));
    await eventually(() => t.server.watch.stats().watchers === 5, 'five watchers');
    streams[0]!.close();
    streams[1]!.close();
    await eventually(() => t.server.watch.stats().watchers === 3, 'two watchers freed');
    for (const s of streams.slice(2)) s.close();
    await eventually(() => t.server.watch.stats().watchers === 0, 'all watchers freed');
  });

  it('graceful shutdown ends watches cleanly', async () => {
    const s = await startTestServer({ authn: NO_NAMESPACE_DEFAULTS });
    const streams = [
      openWatch(s.server, '/api/v1/namespaces/default/configmaps?watch=1'),
      openWatch(s.server, '/api/v1/namespaces?watch=1&allowWatchBookmarks=true'),
    ];
    await eventually(() => s.server.watch.stats().watchers === 2, 'two watchers');
    await s.stop();
    expect(await Promise.all(streams.map((w) => w.ended))).toEqual([true, true]);
    expect(s.server.watch.stats().watchers).toBe(0);
  });
});
