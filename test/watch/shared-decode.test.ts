// One decode per write (docs/architecture.md "Write path cost"): the watch
// cache and the garbage collector read applied writes through decodeShared,
// which hands them the object a create/update of this process encoded (when
// the write says it may be shared) or decodes the stored bytes once.

import { afterEach, describe, expect, it } from 'vitest';
import { decodeObject, decodeShared } from '../../src/registry/generic-store.js';
import type { LocalStore } from '../../src/store/local-store.js';
import { WatchService } from '../../src/watch/service.js';
import { RecordingSink, cleanupDirs, configMaps, genericStore, openStore, request, until } from './helpers.js';

const open: { store: LocalStore; svc: WatchService }[] = [];
afterEach(async () => {
  for (const { store, svc } of open.splice(0)) {
    svc.close();
    await store.close();
  }
  await cleanupDirs();
});

async function setup(): Promise<{ store: LocalStore; svc: WatchService; sink: RecordingSink }> {
  const store = await openStore();
  const svc = new WatchService(store);
  open.push({ store, svc });
  const sink = new RecordingSink();
  svc.serve(request(configMaps, { resourceVersion: '0' }), genericStore(configMaps, store)).start(sink);
  return { store, svc, sink };
}

describe('shared decode of applied writes', () => {
  it('a shared create is not decoded again: the watch cache holds the very object the create returned', async () => {
    const { store, svc, sink } = await setup();
    const gs = genericStore(configMaps, store);
    const { object } = await gs.create('a', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, data: { k: 'v' } }, { dryRun: false, shareWritten: true });
    await until(() => sink.events().length === 1);
    const cached = svc.cacheFor(configMaps).snapshot('a')[0]!.object;
    expect(cached).toBe(object);
    // and it is what the store holds
    const kv = gs.readRaw('a', 'x')!;
    expect(cached).toEqual(decodeObject(kv));
    expect(sink.events()[0]!.object).toMatchObject({ metadata: { name: 'x', resourceVersion: String(kv.modRevision) }, data: { k: 'v' } });
  });

  it('an unshared write is decoded from its bytes, once for every consumer', async () => {
    const { store, svc, sink } = await setup();
    const gs = genericStore(configMaps, store);
    const { object } = await gs.create('a', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'y' }, data: { k: 'v' } }, { dryRun: false });
    await until(() => sink.events().length === 1);
    const cached = svc.cacheFor(configMaps).snapshot('a')[0]!.object;
    expect(cached).not.toBe(object);
    expect(cached).toEqual(object);
    const kv = gs.readRaw('a', 'y')!;
    expect(decodeShared(kv)).toBe(decodeShared(kv));
    // the same bytes at another revision are not mistaken for the shared object
    const other = decodeShared({ ...kv, modRevision: kv.modRevision + 7 });
    expect(other.metadata?.resourceVersion).toBe(String(kv.modRevision + 7));
    expect(decodeShared(kv).metadata?.resourceVersion).toBe(String(kv.modRevision));
  });

  it('a shared update that loses its compare-and-swap leaves nothing behind; the winner is what watchers see', async () => {
    const { store, sink } = await setup();
    const gs = genericStore(configMaps, store);
    await gs.create('a', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'z' }, data: { n: '0' } }, { dryRun: false, shareWritten: true });
    await Promise.all(
      ['1', '2', '3'].map((n) => gs.guaranteedUpdate('a', 'z', { dryRun: false, shareWritten: true }, (cur) => ({ ...cur!, metadata: { ...cur!.metadata, resourceVersion: '' }, data: { n } }))),
    );
    await until(() => sink.events().length === 4);
    const final = decodeObject(gs.readRaw('a', 'z')!);
    expect(sink.events().at(-1)!.object.data).toEqual(final.data);
    expect(sink.events().map((e) => (e.object.data as Record<string, string> | undefined)?.n).slice(1).sort()).toEqual(['1', '2', '3']);
  });
});
