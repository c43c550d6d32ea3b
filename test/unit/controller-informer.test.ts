// The controller runtime's informers (src/controllers/runtime/informer*.ts) on a real
// in-memory store: list + applied feed give the store's state, indexes follow
// changes, handlers see add/update/delete once, a relist after lost writes
// reports the difference, and objects are decoded once and shared.
import { afterEach, describe, expect, it } from 'vitest';
import { encodeObject } from '../../src/registry/generic-store.js';
import type { ApiObject } from '../../src/registry/types.js';
import { bucketOf, INLINE_ITEMS, InformerFactory, type InformerSource, prefixRange, sharedInformers } from '../../src/controllers/runtime/informer-factory.js';
import { ControllerLoop } from '../../src/controllers/runtime/controller-loop.js';
import { LocalStore } from '../../src/store/local-store.js';
import type { AppliedWrite } from '../../src/store/types.js';

const PREFIX = '/registry/core/configmaps/';
const cm = (ns: string, name: string, data: Record<string, string> = {}, labels: Record<string, string> = {}): ApiObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: ns, labels },
  data,
});

let stores: LocalStore[] = [];
afterEach(async () => {
  for (const s of stores) await s.close();
  stores = [];
});

async function newStore(): Promise<LocalStore> {
  const s = await LocalStore.openInMemory();
  stores.push(s);
  return s;
}

async function put(store: LocalStore, obj: ApiObject): Promise<number> {
  const key = `${PREFIX}${obj.metadata!.namespace}/${obj.metadata!.name}`;
  const r = await store.txn({ compare: [], success: [{ type: 'put', key, value: encodeObject(obj) }], failure: [] });
  return r.revision;
}

async function del(store: LocalStore, ns: string, name: string): Promise<void> {
  await store.txn({ compare: [], success: [{ type: 'delete', key: `${PREFIX}${ns}/${name}` }], failure: [] });
}

function names(objs: ApiObject[]): string[] {
  return objs.map((o) => `${o.metadata?.namespace}/${o.metadata?.name}`);
}

describe('informers', () => {
  it('list + feed: the cache equals the store after every write, with resource versions', async () => {
    const store = await newStore();
    await put(store, cm('a', 'one'));
    await put(store, cm('b', 'two'));
    const f = new InformerFactory(store);
    const { informer, release } = f.use(prefixRange(PREFIX));
    expect(informer.hasSynced()).toBe(true);
    expect(informer.keys()).toEqual(['a/one', 'b/two']);
    const rev = await put(store, cm('a', 'three', { x: '1' }));
    await del(store, 'b', 'two');
    await put(store, cm('a', 'one', { y: '2' }));
    // the same set of keys and versions as a fresh read of the store
    const fromStore = store.range(prefixRange(PREFIX)).kvs.map((kv) => [kv.key.slice(PREFIX.length), String(kv.modRevision)]);
    expect(informer.list().map((o) => [`${o.metadata!.namespace}/${o.metadata!.name}`, o.metadata!.resourceVersion])).toEqual(fromStore);
    expect(informer.get('a/three')!.metadata!.resourceVersion).toBe(String(rev));
    expect(informer.get('a/one')!.data).toEqual({ y: '2' });
    expect(informer.lastRevision).toBe(store.revision);
    release();
    expect(informer.hasSynced()).toBe(false);
    expect(informer.list()).toEqual([]);
  });

  it('keeps the store revisions of each cached key from the list, the feed and a relist, and forgets deleted keys', async () => {
    const store = await newStore();
    const one = await put(store, cm('a', 'one'));
    const f = new InformerFactory(store);
    const { informer, release } = f.use(prefixRange(PREFIX));
    expect(informer.storedRevisions('a/one')).toEqual({ createRevision: one, modRevision: one });
    const two = await put(store, cm('a', 'two'));
    const oneAgain = await put(store, cm('a', 'one', { x: '1' }));
    expect(informer.storedRevisions('a/one')).toEqual({ createRevision: one, modRevision: oneAgain });
    expect(informer.storedRevisions('a/two')).toEqual({ createRevision: two, modRevision: two });
    await del(store, 'a', 'two');
    expect(informer.storedRevisions('a/two')).toBeUndefined();
    release();
    // a fresh list (the informer was dropped with its last user) reads them from the store again
    const again = f.use(prefixRange(PREFIX));
    expect(again.informer.storedRevisions('a/one')).toEqual({ createRevision: one, modRevision: oneAgain });
    expect(again.informer.storedRevisions('a/two')).toBeUndefined();
    again.release();
  });

  it('handlers see add, update and delete, and a late handler gets adds for what is cached', async () => {
    const store = await newStore();
    await put(store, cm('a', 'old'));
    const f = new InformerFactory(store);
    const seen: string[] = [];
    const use = f.use(prefixRange(PREFIX), {
      add: (o, k) => seen.push(`add ${k} ${o.metadata!.resourceVersion}`),
      update: (o, n, k) => seen.push(`update ${k} ${o.metadata!.resourceVersion}->${n.metadata!.resourceVersion}`),
      delete: (o, k) => seen.push(`delete ${k}`),
    });
    const r2 = await put(store, cm('a', 'new'));
    const r3 = await put(store, cm('a', 'new', { v: '1' }));
    await del(store, 'a', 'old');
    expect(seen).toEqual(['add a/old 1', `add a/new ${r2}`, `update a/new ${r2}->${r3}`, 'delete a/old']);
    const late: string[] = [];
    const second = f.use(prefixRange(PREFIX), { add: (_o, k) => late.push(k) });
    expect(late).toEqual(['a/new']);
    second.release();
    use.release();
  });

  it('indexes by namespace and by custom indexers follow updates and deletes', async () => {
    const store = await newStore();
    await put(store, cm('a', 'x', {}, { app: 'web' }));
    await put(store, cm('b', 'y', {}, { app: 'web' }));
    await put(store, cm('b', 'z', {}, { app: 'db' }));
    const f = new InformerFactory(store);
    const { informer, release } = f.use(prefixRange(PREFIX), undefined, { app: (o) => [o.metadata?.labels?.app ?? ''] });
    expect(names(informer.inNamespace('b'))).toEqual(['b/y', 'b/z']);
    expect(names(informer.byIndex('app', 'web'))).toEqual(['a/x', 'b/y']);
    await put(store, cm('b', 'y', {}, { app: 'db' }));
    await del(store, 'a', 'x');
    expect(names(informer.byIndex('app', 'web'))).toEqual([]);
    expect(names(informer.byIndex('app', 'db'))).toEqual(['b/y', 'b/z']);
    expect(names(informer.inNamespace('a'))).toEqual([]);
    expect(() => informer.byIndex('nope', 'x')).toThrow(/no index/);
    release();
  });

  it('one informer per prefix, shared; the object a handler sees is the cached one (decoded once)', async () => {
    const store = await newStore();
    const f = sharedInformers(store);
    expect(sharedInformers(store)).toBe(f);
    let decodes = 0;
    const counting = new InformerFactory(store, (kv) => {
      decodes++;
      return JSON.parse(new TextDecoder().decode(kv.value)) as ApiObject;
    });
    const got: ApiObject[] = [];
    const u1 = counting.use(prefixRange(PREFIX), { add: (o) => got.push(o) });
    const u2 = counting.use(prefixRange(PREFIX), { add: (o) => got.push(o) });
    expect(u1.informer).toBe(u2.informer);
    await put(store, cm('a', 'x'));
    expect(decodes).toBe(1);
    expect(got.length).toBe(2);
    expect(got[0]).toBe(got[1]);
    expect(got[0]).toBe(u1.informer.get('a/x'));
    u1.release();
    expect(u2.informer.hasSynced()).toBe(true); // still used
    u2.release();
    expect(u2.informer.hasSynced()).toBe(false);
  });

  it('every cache is updated before any handler of a multi-key write runs', async () => {
    const store = await newStore();
    const f = new InformerFactory(store);
    const other = '/registry/core/secrets/';
    const secrets = f.use(prefixRange(other));
    let seenSecret: ApiObject | undefined | null = null;
    const cms = f.use(prefixRange(PREFIX), { add: () => (seenSecret = secrets.informer.get('a/s')) });
    await store.txn({
      compare: [],
      success: [
        { type: 'put', key: `${PREFIX}a/c`, value: encodeObject(cm('a', 'c')) },
        { type: 'put', key: `${other}a/s`, value: encodeObject({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'a' } }) },
      ],
      failure: [],
    });
    expect(seenSecret).not.toBeNull();
    expect(seenSecret!.metadata!.name).toBe('s');
    cms.release();
    secrets.release();
  });

  it('an informer first used while a write is being published does not hide that write from the others', async () => {
    const store = await newStore();
    const f = new InformerFactory(store);
    const other = '/registry/core/secrets/';
    let late: ReturnType<InformerFactory['use']> | undefined;
    // subscribed before the factory, so it runs first: it starts a second informer mid-publish
    const unsub = store.onApplied(() => {
      late ??= f.use(prefixRange(other));
    });
    const cms = f.use(prefixRange(PREFIX));
    await put(store, cm('a', 'x'));
    unsub();
    expect(late!.informer.hasSynced()).toBe(true);
    await Promise.resolve();
    expect(cms.informer.keys()).toEqual(['a/x']);
    late!.release();
    cms.release();
  });

  it('resync after lost writes relists and reports the differences as events', async () => {
    const store = await newStore();
    // a feed that can be cut: writes published while cut never reach the informers
    let cut = false;
    const listeners = new Set<(w: AppliedWrite) => void>();
    store.onApplied((w) => {
      if (!cut) for (const l of listeners) l(w);
    });
    const source: InformerSource = {
      range: (r) => store.range(r),
      onApplied: (l) => {
        listeners.add(l);
        return () => listeners.delete(l);
      },
    };
    await put(store, cm('a', 'keep'));
    await put(store, cm('a', 'gone'));
    await put(store, cm('a', 'changed'));
    const f = new InformerFactory(source);
    const seen: string[] = [];
    const { informer, release } = f.use(prefixRange(PREFIX), {
      add: (_o, k) => seen.push(`add ${k}`),
      update: (_o, _n, k) => seen.push(`update ${k}`),
      delete: (_o, k) => seen.push(`delete ${k}`),
    });
    seen.length = 0;
    const keep = informer.get('a/keep');
    cut = true;
    await del(store, 'a', 'gone');
    await put(store, cm('a', 'changed', { v: '2' }));
    await put(store, cm('a', 'new'));
    cut = false;
    expect(informer.keys()).toEqual(['a/changed', 'a/gone', 'a/keep']); // stale
    f.resync();
    expect(seen.sort()).toEqual(['add a/new', 'delete a/gone', 'update a/changed']);
    expect(informer.keys()).toEqual(['a/changed', 'a/keep', 'a/new']);
    expect(informer.get('a/keep')).toBe(keep); // unchanged objects are not decoded again
    expect(informer.lastRevision).toBe(store.revision);
    release();
  });

  it('an undecodable value stays out of the cache and is reported as corrupt', async () => {
    const store = await newStore();
    const f = new InformerFactory(store);
    const { informer, release } = f.use(prefixRange(PREFIX));
    await put(store, cm('a', 'ok'));
    await store.txn({ compare: [], success: [{ type: 'put', key: `${PREFIX}a/bad`, value: new TextEncoder().encode('{not json') }], failure: [] });
    expect(informer.keys()).toEqual(['a/ok']);
    expect(informer.corruptKeys()).toEqual(['a/bad']);
    await del(store, 'a', 'bad');
    expect(informer.corruptKeys()).toEqual([]);
    release();
  });
});

describe('informer dispatch by resource bucket', () => {
  it('bucketOf is the resource prefix of a storage key, or the key up to its last slash', () => {
    expect(bucketOf('/registry/core/configmaps/default/c-1')).toBe('/registry/core/configmaps/');
    expect(bucketOf('/registry/core/namespaces/default')).toBe('/registry/core/namespaces/');
    expect(bucketOf('/registry/x')).toBe('/registry/');
    expect(bucketOf('plain')).toBe('');
  });

  it('each write reaches exactly the informers whose range holds its key, including ones created after the first write, wider and narrower prefixes and odd keys', async () => {
    const store = await newStore();
    const f = new InformerFactory(store);
    const putKey = (key: string, name: string) => store.txn({ compare: [], success: [{ type: 'put', key, value: encodeObject(cm('ns', name)) }], failure: [] });
    const seen = new Map<string, string[]>();
    const watch = (label: string, range: { key: string; end: string }) =>
      f.use(range, { add: (o) => seen.set(label, [...(seen.get(label) ?? []), o.metadata!.name!]) });
    watch('configmaps', prefixRange('/registry/core/configmaps/'));
    watch('secrets', prefixRange('/registry/core/secrets/'));
    await putKey('/registry/core/configmaps/ns/a', 'a');
    await putKey('/registry/core/secrets/ns/b', 'b');
    // created after both buckets were memoised: must still get later writes
    watch('core', prefixRange('/registry/core/'));
    watch('namespace', prefixRange('/registry/core/configmaps/ns/'));
    watch('names', prefixRange('/registry/core/secrets/ns/a'));
    watch('odd', prefixRange('plain'));
    await putKey('/registry/core/configmaps/ns/z', 'z');
    await putKey('/registry/core/secrets/ns/a2', 'a2');
    await putKey('/registry/core/secrets/ns/d', 'd');
    await putKey('plainkey', 'p');
    await putKey('/registry/apps/deployments/ns/x', 'x');
    expect(Object.fromEntries(seen)).toEqual({
      configmaps: ['a', 'z'],
      secrets: ['b', 'a2', 'd'],
      // a late handler first gets adds for what its list found
      core: ['a', 'b', 'z', 'a2', 'd'],
      namespace: ['a', 'z'],
      names: ['a2'],
      odd: ['p'],
    });
  });
});

describe('ControllerLoop uses', () => {
  it('an informer used for a while and released leaves the run: the loop stays synced, and its stop releases the rest once', async () => {
    const { ControllerLoop } = await import('../../src/controllers/runtime/controller-loop.js');
    const store = await newStore();
    await put(store, cm('a', 'one'));
    await put(store, cm('b', 'two'));
    const loop = new ControllerLoop(store, { name: 'test' });
    loop.begin(async () => undefined);
    const all = loop.inform(prefixRange(PREFIX));
    expect(loop.hasSynced()).toBe(true);
    // a namespace's contents, listed for one pass (what the namespace controller does)
    const pass = loop.use(prefixRange(`${PREFIX}a/`));
    expect(pass.informer.keys()).toEqual(['one']);
    pass.release();
    pass.release(); // a second release is harmless
    expect(loop.hasSynced()).toBe(true);
    expect(all.hasSynced()).toBe(true);
    loop.end();
    expect(loop.hasSynced()).toBe(false);
    // the shared informer was released by the stop: a new use lists afresh and sees later writes
    await put(store, cm('a', 'three'));
    const again = sharedInformers(store).use(prefixRange(PREFIX));
    expect(again.informer.keys()).toEqual(['a/one', 'a/three', 'b/two']);
    again.release();
  });

  it('a name selection caches only the objects of that name, from the list and from the feed', async () => {
    const store = await newStore();
    await put(store, cm('a', 'ca.crt', { c: '1' }));
    await put(store, cm('a', 'other', { big: 'x'.repeat(100) }));
    const f = new InformerFactory(store);
    const seen: string[] = [];
    const { informer } = f.use({ ...prefixRange(PREFIX), name: 'ca.crt' }, { add: (_o, k) => seen.push(`add ${k}`), update: (_a, _b, k) => seen.push(`update ${k}`), delete: (_o, k) => seen.push(`delete ${k}`) });
    await put(store, cm('b', 'ca.crt'));
    await put(store, cm('b', 'xca.crt'));
    await put(store, cm('b', 'other'));
    await put(store, cm('a', 'ca.crt', { c: '2' }));
    await del(store, 'a', 'other');
    await del(store, 'b', 'ca.crt');
    expect(informer.keys()).toEqual(['a/ca.crt']);
    expect(informer.get('a/other')).toBeUndefined();
    expect(seen).toEqual(['add a/ca.crt', 'add b/ca.crt', 'update a/ca.crt', 'delete b/ca.crt']);
    // not shared with the informer of the whole range
    const all = f.use(prefixRange(PREFIX)).informer;
    expect(all).not.toBe(informer);
    expect(all.keys()).toEqual(['a/ca.crt', 'b/other', 'b/xca.crt']);
  });

  it('a metadata-only informer keeps apiVersion, kind and the shared metadata, not the rest', async () => {
    const store = await newStore();
    await put(store, cm('a', 'one', { payload: 'x'.repeat(100) }));
    const f = new InformerFactory(store);
    const full = f.use(prefixRange(PREFIX)).informer;
    const meta = f.use({ ...prefixRange(PREFIX), metadataOnly: true }).informer;
    expect(meta).not.toBe(full);
    await put(store, cm('a', 'two', { payload: 'y' }, { l: 'v' }));
    for (const key of ['a/one', 'a/two']) {
      const m = meta.get(key)! as ApiObject & { data?: unknown };
      expect(Object.keys(m).sort()).toEqual(['apiVersion', 'kind', 'metadata']);
      expect(m.data).toBeUndefined();
      expect(m.metadata!.resourceVersion).toBe(full.get(key)!.metadata!.resourceVersion);
      // one decode: the metadata object is the full object's own
      expect(m.metadata).toBe(full.get(key)!.metadata);
    }
    expect(meta.get('a/two')!.metadata!.labels).toEqual({ l: 'v' });
  });

  it('a metadata-only informer drops managedFields and keeps the rest of the metadata, from the list and from the feed', async () => {
    const store = await newStore();
    const managed = (name: string): ApiObject => {
      const o = cm('a', name, { payload: 'x' }, { l: name });
      o.metadata!.ownerReferences = [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'o', uid: 'u1' }];
      o.metadata!.managedFields = [{ manager: 'm', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:payload': {} } } }];
      return o;
    };
    await put(store, managed('listed'));
    const f = new InformerFactory(store);
    const full = f.use(prefixRange(PREFIX)).informer;
    const meta = f.use({ ...prefixRange(PREFIX), metadataOnly: true }).informer;
    await put(store, managed('fed'));
    for (const key of ['a/listed', 'a/fed']) {
      const m = meta.get(key)!.metadata!;
      const whole = full.get(key)!.metadata!;
      expect(m.managedFields).toBeUndefined();
      expect('managedFields' in m).toBe(false);
      // the full object is untouched, and everything else is the same
      expect(whole.managedFields).toHaveLength(1);
      const { managedFields: _m, ...rest } = whole;
      expect(m).toEqual(rest);
      expect(m.ownerReferences).toBe(whole.ownerReferences);
    }
  });

  it('a large first list comes in slices: synced only after every add, and the workers wait for it', async () => {
    const store = await newStore();
    const n = 2 * INLINE_ITEMS + 50;
    for (let i = 0; i < n; i++) await put(store, cm('a', `c${i}`));
    // slices of 20 objects: the workers get turns while the adds are still coming
    sharedInformers(store, { sliceItems: 20 });
    const loop = new ControllerLoop(store, { name: 'test' });
    const synced: boolean[] = [];
    const added = new Set<string>();
    loop.begin(async () => {
      synced.push(loop.hasSynced() && added.size === n);
    });
    const informer = loop.inform(prefixRange(PREFIX), {
      add: (_o, k) => {
        added.add(k);
        loop.enqueue(k);
      },
    });
    // more than a turn's inline share: not synced when `inform` returns
    expect(loop.hasSynced()).toBe(false);
    expect(added.size).toBeLessThan(n);
    expect(await loop.synced()).toBe(true);
    expect(added.size).toBe(n);
    expect(informer.keys().length).toBe(n);
    await loop.queue!.idle();
    expect(synced.length).toBeGreaterThan(0);
    expect(synced.every(Boolean)).toBe(true);
    loop.end();
    expect(await loop.synced()).toBe(false);
  });
});
