// The informers' sliced first lists and replays (src/controllers/runtime/
// informer-factory.ts, docs/controllers.md "Start in slices") against a
// reference model: the store itself. Random writes, deletes, compactions,
// turns of the event loop (a slice each), new handlers and releases are
// interleaved with a list read a page at a time and replayed an object at a
// time. Each handler must see every object exactly once as an add, then its
// changes in order (an update's old object is the one it was last handed,
// resource versions only grow), nothing after its release, and once its use
// says synced, exactly the store's objects.
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { InformerFactory, prefixRange } from '../../src/controllers/runtime/informer-factory.js';
import { encodeObject } from '../../src/registry/generic-store.js';
import type { ApiObject } from '../../src/registry/types.js';
import { LocalStore } from '../../src/store/local-store.js';
import type { InformerUse } from '../../src/controllers/runtime/index.js';

const PREFIX = '/registry/core/configmaps/';
const KEYS = 8;

type Step = { t: 'put'; k: number; v: number } | { t: 'del'; k: number } | { t: 'turn' } | { t: 'use' } | { t: 'release'; i: number } | { t: 'compact' };

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ t: fc.constant('put' as const), k: fc.nat(KEYS - 1), v: fc.nat(9) }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('del' as const), k: fc.nat(KEYS - 1) }) },
  { weight: 4, arbitrary: fc.constant({ t: 'turn' as const }) },
  { weight: 1, arbitrary: fc.constant({ t: 'use' as const }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('release' as const), i: fc.nat(3) }) },
  { weight: 1, arbitrary: fc.constant({ t: 'compact' as const }) },
);

const keyOf = (k: number) => `ns/k${k}`;
const cm = (k: number, v: number): ApiObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `k${k}`, namespace: 'ns' }, data: { v: String(v) } });
const turn = () => new Promise<void>((r) => setImmediate(r));

/** one registration's view, folded from what its handlers were handed; a broken rule is recorded */
class Seen {
  readonly view = new Map<string, string>();
  /** the informer catches what a handler throws (one handler must not starve the others): kept here */
  readonly broken: string[] = [];
  released = false;
  use!: InformerUse;
  private fail(msg: string): never {
    this.broken.push(msg);
    throw new Error(msg);
  }
  add(o: ApiObject, k: string): void {
    if (this.released) this.fail(`add ${k} after release`);
    if (this.view.has(k)) this.fail(`second add of ${k}`);
    this.view.set(k, o.metadata!.resourceVersion!);
  }
  update(old: ApiObject, o: ApiObject, k: string): void {
    if (this.released) this.fail(`update ${k} after release`);
    const had = this.view.get(k);
    if (had === undefined) this.fail(`update of ${k} before its add`);
    if (old.metadata!.resourceVersion !== had) this.fail(`update of ${k}: old ${old.metadata!.resourceVersion}, handed ${had}`);
    if (Number(o.metadata!.resourceVersion) <= Number(had)) this.fail(`update of ${k} goes back: ${had} -> ${o.metadata!.resourceVersion}`);
    this.view.set(k, o.metadata!.resourceVersion!);
  }
  delete(o: ApiObject, k: string): void {
    if (this.released) this.fail(`delete ${k} after release`);
    const had = this.view.get(k);
    if (had === undefined) this.fail(`delete of ${k} never added`);
    if (o.metadata!.resourceVersion !== had) this.fail(`delete of ${k}: last ${o.metadata!.resourceVersion}, handed ${had}`);
    this.view.delete(k);
  }
}

let stores: LocalStore[] = [];
afterEach(async () => {
  for (const s of stores) await s.close();
  stores = [];
});

describe('informers listed and replayed in slices', () => {
  it('every object once as an add, then its changes in order, none lost; synced means the store', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ k: fc.nat(KEYS - 1), v: fc.nat(9) }), { maxLength: 12 }),
        fc.record({ inlineItems: fc.nat(3), sliceItems: fc.integer({ min: 1, max: 3 }), listPage: fc.integer({ min: 1, max: 3 }) }),
        fc.array(step, { maxLength: 40 }),
        async (initial, opts, steps) => {
          const store = await LocalStore.openInMemory();
          stores.push(store);
          const write = (k: number, v: number | undefined) =>
            store.txn({ compare: [], success: [v === undefined ? { type: 'delete', key: PREFIX + keyOf(k) } : { type: 'put', key: PREFIX + keyOf(k), value: encodeObject(cm(k, v)) }], failure: [] });
          for (const { k, v } of initial) await write(k, v);
          const f = new InformerFactory(store, undefined, opts);
          const all: Seen[] = [];
          const stored = () => new Map(store.range(prefixRange(PREFIX)).kvs.map((kv) => [kv.key.slice(PREFIX.length), String(kv.modRevision)]));
          const open = (): void => {
            const s = new Seen();
            s.use = f.use(prefixRange(PREFIX), { add: (o, k) => s.add(o, k), update: (a, b, k) => s.update(a, b, k), delete: (o, k) => s.delete(o, k) });
            all.push(s);
          };
          const check = (): void => {
            const want = stored();
            for (const s of all) {
              expect(s.broken).toEqual([]);
              if (s.released || !s.use.hasSynced()) continue;
              expect(s.view).toEqual(want);
              // the cache too, with the stored resource versions
              expect(new Map(s.use.informer.list().map((o) => [`ns/${o.metadata!.name}`, o.metadata!.resourceVersion]))).toEqual(want);
            }
          };
          open();
          for (const st of steps) {
            if (st.t === 'put') await write(st.k, st.v);
            else if (st.t === 'del') await write(st.k, undefined);
            else if (st.t === 'turn') await turn();
            else if (st.t === 'use') open();
            else if (st.t === 'compact') await store.compact(store.revision);
            else {
              const live = all.filter((s) => !s.released);
              const s = live[st.i % Math.max(1, live.length)];
              if (s) {
                s.use.release();
                s.released = true;
              }
            }
            check();
          }
          // the rest of the slices: every live registration syncs and holds the store
          const live = all.filter((s) => !s.released);
          for (let i = 0; i < 500 && !live.every((s) => s.use.hasSynced()); i++) await turn();
          for (const s of live) expect(s.use.hasSynced()).toBe(true);
          check();
          // the feed goes on after the replay
          await write(0, 100);
          await write(1, undefined);
          check();
          for (const s of live) s.use.release();
          await store.close();
          stores = stores.filter((x) => x !== store);
        },
      ),
      { numRuns: 150 },
    );
  });
});
