// Property (spec 000 §4.5, §8): a watch cache created after the writes
// (backfilled from the store's history, RevisionedStore.writesAfter) serves a
// watch from any revision in the window exactly as a cache that saw every
// write live does: the same events, objects and versions, including deletes
// and multi-key txns that also touch another type.

import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { openWatch } from '../../src/endpoints/handlers/watch.js';
import { encodeObject, storageKey } from '../../src/registry/generic-store.js';
import type { ResourceDefinition } from '../../src/registry/types.js';
import type { Op } from '../../src/store/types.js';
import { WatchService } from '../../src/watch/service.js';
import { RecordingSink, cleanupDirs, configMaps, openStore, put, request, until, widgets } from './helpers.js';

interface Write {
  def: ResourceDefinition;
  ns: string;
  name: string;
  /** undefined = delete */
  data?: string;
}

const writeArb: fc.Arbitrary<Write> = fc.oneof(
  fc.record({
    def: fc.constant(configMaps),
    ns: fc.constantFrom('a', 'b'),
    name: fc.constantFrom('k0', 'k1', 'k2'),
    data: fc.option(fc.constantFrom('x', 'y', 'z'), { nil: undefined }),
  }),
  fc.record({ def: fc.constant(widgets), ns: fc.constant(''), name: fc.constantFrom('w0', 'w1'), data: fc.option(fc.constantFrom('x', 'y'), { nil: undefined }) }),
);

function toOp(w: Write): Op {
  const key = storageKey(w.def, w.ns, w.name);
  if (w.data === undefined) return { type: 'delete', key };
  const obj = {
    apiVersion: w.def.group ? `${w.def.group}/${w.def.version}` : w.def.version,
    kind: w.def.kind,
    metadata: { name: w.name, ...(w.ns ? { namespace: w.ns } : {}), creationTimestamp: '2024-01-01T00:00:00Z' },
    data: { v: w.data },
  };
  return { type: 'put', key, value: encodeObject(obj) };
}

afterAll(cleanupDirs);

describe('watch cache backfill property', () => {
  it('a cache created after the writes serves a watch from R as a cache that saw them live', async () => {
    await fc.assert(
      fc.asyncProperty(
        // txns of 1–3 writes (a branch writes a key at most once: duplicates are dropped)
        fc.array(fc.array(writeArb, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 15 }),
        fc.array(fc.nat(), { minLength: 1, maxLength: 3 }),
        fc.constantFrom('', 'a'),
        async (txns, picks, namespace) => {
          const store = await openStore();
          // one write before the services start: their history begins after it (a watch from 0 is not from history)
          await put(store, configMaps, 'b', 'seed');
          const live = new WatchService(store);
          const late = new WatchService(store);
          try {
            live.cacheFor(configMaps);
            const start = store.revision;
            for (const txn of txns) {
              const ops = new Map(txn.map((w) => [storageKey(w.def, w.ns, w.name), toOp(w)]));
              await store.txn({ compare: [], success: [...ops.values()], failure: [] });
            }
            expect(late.stats().caches).toBe(0);
            const revs = picks.map((p) => start + (p % (store.revision - start + 1)));
            const sinks = revs.map((r) => {
              const pair = [new RecordingSink(), new RecordingSink()] as const;
              openWatch(live, request(configMaps, { resourceVersion: String(r) }, { namespace })).start(pair[0]);
              openWatch(late, request(configMaps, { resourceVersion: String(r) }, { namespace })).start(pair[1]);
              return pair;
            });
            // a write every watch sees marks the end of the history
            await put(store, configMaps, namespace || 'a', 'flush');
            const done = (s: RecordingSink) => s.events().some((e) => e.object.metadata?.name === 'flush');
            await until(() => sinks.every(([a, b]) => done(a) && done(b)));
            for (const [a, b] of sinks) {
              expect(b.events()).toEqual(a.events());
              expect(b.text()).toBe(a.text());
            }
          } finally {
            live.close();
            late.close();
            await store.close();
          }
        },
      ),
      { numRuns: 40 },
    );
  });
});
