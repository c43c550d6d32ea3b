// Property (spec 000 §4.5, §4.6): a watcher started at revision R and fed
// random writes sees exactly the store's history after R, filtered by its
// namespace and label selector, with selector transitions as ADDED/DELETED.
// A second watcher started with resourceVersion=0 sees the state at R as
// synthetic ADDED events, then the same history.

import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { openWatch } from '../../src/endpoints/handlers/watch.js';
import { WatchService } from '../../src/watch/service.js';
import { RecordingSink, cleanupDirs, configMaps, del, genericStore, openStore, put, request, until } from './helpers.js';

type Label = 'web' | 'db' | undefined;
type Op = { kind: 'put'; ns: string; name: string; app: Label } | { kind: 'del'; ns: string; name: string };

const nsArb = fc.constantFrom('a', 'b');
const nameArb = fc.constantFrom('k0', 'k1', 'k2');
const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('put' as const), ns: nsArb, name: nameArb, app: fc.constantFrom<Label>('web', 'db', undefined) }),
  fc.record({ kind: fc.constant('del' as const), ns: nsArb, name: nameArb }),
);

/** the selectors under test and an independent model of each */
const selectors: Record<string, (app: Label) => boolean> = {
  '': () => true,
  'app=web': (a) => a === 'web',
  'app!=web': (a) => a !== 'web',
  'app in (web,db)': (a) => a === 'web' || a === 'db',
  '!app': (a) => a === undefined,
};

afterAll(cleanupDirs);

describe('watch history property', () => {
  it('a watcher from R sees exactly the filtered history after R', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(opArb, { maxLength: 8 }),
        fc.array(opArb, { minLength: 1, maxLength: 20 }),
        fc.constantFrom('', 'a'),
        fc.constantFrom(...Object.keys(selectors)),
        // fan-out in slices of 1 delivery per turn up to the default (docs/watch.md "Fan-out in slices")
        fc.constantFrom(1, 2, 256),
        async (before, after, namespace, selector, fanoutSlice) => {
          const store = await openStore();
          const svc = new WatchService(store, { fanoutSlice });
          try {
            const model = new Map<string, Label>();
            const apply = async (op: Op): Promise<number | undefined> => {
              const key = `${op.ns}/${op.name}`;
              if (op.kind === 'put') {
                model.set(key, op.app);
                return put(store, configMaps, op.ns, op.name, op.app ? { labels: { app: op.app } } : {});
              }
              if (!model.has(key)) return undefined; // deleting nothing is no write
              model.delete(key);
              return del(store, configMaps, op.ns, op.name);
            };
            for (const op of before) await apply(op);
            const r = store.revision;
            const match = selectors[selector]!;
            const inNs = (ns: string) => namespace === '' || ns === namespace;
            const q: Record<string, string> = selector ? { labelSelector: selector } : {};
            const gs = genericStore(configMaps, store);
            const fromR = new RecordingSink();
            openWatch(svc, request(configMaps, { ...q, resourceVersion: String(r) }, { namespace })).start(fromR);
            const fromZero = new RecordingSink();
            openWatch(svc, request(configMaps, { ...q, resourceVersion: '0' }, { namespace })).start(fromZero);

            const initial = [...model.entries()]
              .filter(([k, app]) => inNs(k.split('/')[0]!) && match(app))
              .map(([k]) => k)
              .sort()
              .map((k) => `ADDED ${k}`);
            const expected: string[] = [];
            for (const op of after) {
              const key = `${op.ns}/${op.name}`;
              const had = model.has(key);
              const prev = model.get(key);
              const rev = await apply(op);
              if (rev === undefined || !inNs(op.ns)) continue;
              const wasIn = had && match(prev);
              const isIn = model.has(key) && match(model.get(key));
              if (isIn && wasIn) expected.push(`MODIFIED ${key} ${rev}`);
              else if (isIn) expected.push(`ADDED ${key} ${rev}`);
              else if (wasIn) expected.push(`DELETED ${key} ${rev}`);
            }
            const seen = (s: RecordingSink) =>
              s.events().map((e) => `${e.type} ${e.object.metadata?.namespace}/${e.object.metadata?.name} ${e.object.metadata?.resourceVersion}`);
            await until(() => fromR.events().length >= expected.length && fromZero.events().length >= initial.length + expected.length);
            // one more write outside everything's interest flushes any stray event before comparing
            await put(store, configMaps, 'zz', 'flush', { labels: { app: 'none' } });
            await new Promise((res) => setImmediate(res));
            expect(seen(fromR).filter((l) => !l.includes('zz/flush'))).toEqual(expected);
            const zero = seen(fromZero).filter((l) => !l.includes('zz/flush'));
            expect(zero.slice(0, initial.length).map((l) => l.split(' ').slice(0, 2).join(' '))).toEqual(initial);
            expect(zero.slice(initial.length)).toEqual(expected);
          } finally {
            svc.close();
            await store.close();
          }
        },
      ),
      { numRuns: 40 },
    );
  });
});
