// Less central watch behaviours: CBOR sequences (spec 000 §4.3), request
// abort, idle caches, table DELETED rows, and consistent lists from the cache.

import { decodeMultiple } from 'cbor-x';
import { afterEach, describe, expect, it } from 'vitest';
import type { ApiRequest } from '../../src/endpoints/request.js';
import type { LocalStore } from '../../src/store/local-store.js';
import { listMostRecentFromCache } from '../../src/watch/consistent-read.js';
import { openWatch } from '../../src/endpoints/handlers/watch.js';
import { WatchService, type WatchServiceOptions } from '../../src/watch/service.js';
import { RecordingSink, cleanupDirs, configMaps, del, genericStore, openStore, put, request, sleep, until, widgets } from './helpers.js';

const open: { store: LocalStore; svc: WatchService }[] = [];

async function setup(opts: WatchServiceOptions = {}): Promise<{ store: LocalStore; svc: WatchService }> {
  const store = await openStore();
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

describe('watch extras', () => {
  it('CBOR watches stream a CBOR sequence of events', async () => {
    const { store, svc } = await setup();
    const resp = openWatch(svc, request(configMaps, { resourceVersion: '0' }, { accept: { format: 'cbor' } }));
    expect(resp.contentType).toBe('application/cbor-seq');
    const sink = new RecordingSink();
    resp.start(sink);
    await put(store, configMaps, 'a', 'x');
    await del(store, configMaps, 'a', 'x');
    await until(() => sink.chunks.length === 2);
    const items = decodeMultiple(Buffer.concat(sink.chunks)) as unknown as { type: string; object: { kind: string; metadata: { name: string } } }[];
    expect(items.map((i) => `${i.type} ${i.object.kind} ${i.object.metadata.name}`)).toEqual(['ADDED ConfigMap x', 'DELETED ConfigMap x']);
  });

  it('the request abort signal frees a watcher that is still waiting for its version', async () => {
    const { store, svc } = await setup();
    const ac = new AbortController();
    const req: ApiRequest = { ...request(configMaps, { resourceVersion: '1000' }), signal: ac.signal };
    const sink = new RecordingSink();
    openWatch(svc, req).start(sink);
    expect(svc.stats().watchers).toBe(1);
    ac.abort();
    expect(svc.stats().watchers).toBe(0);
    expect(sink.chunks).toHaveLength(0);
  });

  it('an idle cache is dropped and a later watch still replays the retained history', async () => {
    const { store, svc } = await setup({ windowMs: 60 });
    svc.cacheFor(configMaps);
    await put(store, configMaps, 'a', 'x');
    await until(() => svc.stats().caches === 0);
    // writes made while no cache exists are replayed from the service's recent-writes ring
    const m = await put(store, configMaps, 'a', 'y');
    await put(store, configMaps, 'a', 'z');
    const sink = new RecordingSink();
    openWatch(svc, request(configMaps, { resourceVersion: String(m) })).start(sink);
    await until(() => sink.events().length === 1);
    expect(sink.summary()).toEqual(['ADDED z']);
    expect(svc.stats().caches).toBe(1);
  });

  it('table watches show a deleted object as a DELETED row', async () => {
    const { store, svc } = await setup();
    await put(store, widgets, '', 'w', { spec: { size: 1 } });
    const sink = new RecordingSink();
    openWatch(svc, request(widgets, { resourceVersion: '0' }, { accept: { table: { group: 'meta.orch.io', version: 'v1' } } }))
      .start(sink);
    await del(store, widgets, '', 'w');
    await until(() => sink.events().length === 2);
    const [, gone] = sink.events() as { type: string; object: { kind: string; rows: { cells: unknown[]; object: { metadata: { name: string } } }[] } }[];
    expect(gone!.type).toBe('DELETED');
    expect(gone!.object.kind).toBe('Table');
    expect(gone!.object.rows[0]!.cells[0]).toBe('w');
    expect(gone!.object.rows[0]!.object.metadata.name).toBe('w');
  });

  it('consistent lists from the cache match the store and filter like a list', async () => {
    const { store, svc } = await setup();
    await put(store, configMaps, 'a', 'x', { labels: { app: 'web' } });
    await put(store, configMaps, 'a', 'y');
    await put(store, configMaps, 'b', 'z', { labels: { app: 'web' } });
    const gs = genericStore(configMaps, store);
    const all = await listMostRecentFromCache(svc, gs, { namespace: '', labelSelector: [], fieldSelector: [] });
    expect(all!.items.map((o) => o.metadata!.name)).toEqual(['x', 'y', 'z']);
    expect(all!.resourceVersion).toBe(String(store.revision));
    expect(all!.items[0]!.kind).toBe('ConfigMap');
    const web = await listMostRecentFromCache(svc, gs, {
      namespace: 'a',
      labelSelector: [{ key: 'app', op: '=', values: ['web'] }],
      fieldSelector: [],
    });
    expect(web!.items.map((o) => o.metadata!.name)).toEqual(['x']);
    // items are copies: changing one does not change the cache
    web!.items[0]!.metadata!.name = 'changed';
    await sleep(1);
    const again = await listMostRecentFromCache(svc, gs, { namespace: 'a', labelSelector: [], fieldSelector: [] });
    expect(again!.items.map((o) => o.metadata!.name)).toEqual(['x', 'y']);
  });
});
