import { describe, expect, it } from 'vitest';
import { MvccState } from '../../src/store/mvcc-state.js';
import { SortedKeyIndex } from '../../src/store/sorted-key-index.js';
import {
  CompactedError,
  FutureRevisionError,
  prefixEnd,
  type AppliedWrite,
  type Command,
  type Compare,
  type Op,
  type TxnResult,
} from '../../src/store/types.js';

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
const dec = (b: Uint8Array | undefined): string | undefined => (b === undefined ? undefined : new TextDecoder().decode(b));

class Harness {
  state = new MvccState();
  index = 0;
  time = 1_000;
  writes: AppliedWrite[] = [];
  constructor() {
    this.state.setWriteListener((w) => this.writes.push(w));
  }
  apply(cmd: Command) {
    return this.state.apply(++this.index, cmd);
  }
  txn(compare: Compare[], success: Op[], failure: Op[] = []): TxnResult {
    const r = this.apply({ type: 'txn', txn: { compare, success, failure }, time: (this.time += 10) });
    if (r.type !== 'txn') throw new Error('not a txn result');
    return r.result;
  }
  put(key: string, value: string): TxnResult {
    return this.txn([], [{ type: 'put', key, value: enc(value) }]);
  }
  del(key: string): TxnResult {
    return this.txn([], [{ type: 'delete', key }]);
  }
}

describe('MvccState txn and revisions', () => {
  it('advances the revision once per writing txn and tracks create/mod/version', () => {
    const h = new Harness();
    expect(h.state.revision).toBe(0);
    const r1 = h.put('a', '1');
    expect(r1.revision).toBe(1);
    expect(r1.results[0]).toMatchObject({ type: 'put', kv: { key: 'a', createRevision: 1, modRevision: 1, version: 1 } });
    expect((r1.results[0] as { prevKv?: unknown }).prevKv).toBeUndefined();
    const r2 = h.put('a', '2');
    expect(r2.revision).toBe(2);
    expect(r2.results[0]).toMatchObject({ kv: { createRevision: 1, modRevision: 2, version: 2 }, prevKv: { modRevision: 1, version: 1 } });
    // one txn writing two keys = one revision
    const r3 = h.txn([], [
      { type: 'put', key: 'b', value: enc('x') },
      { type: 'put', key: 'c', value: enc('y') },
    ]);
    expect(r3.revision).toBe(3);
    expect(h.state.get('b')?.modRevision).toBe(3);
    expect(h.state.get('c')?.modRevision).toBe(3);
  });

  it('does not advance the revision for gets or deletes of absent keys', () => {
    const h = new Harness();
    h.put('a', '1');
    const g = h.txn([], [{ type: 'get', key: 'a' }, { type: 'get', key: 'zz' }]);
    expect(g.revision).toBe(1);
    expect(dec((g.results[0] as { kv?: { value: Uint8Array } }).kv?.value)).toBe('1');
    expect((g.results[1] as { kv?: unknown }).kv).toBeUndefined();
    const d = h.del('nope');
    expect(d.revision).toBe(1);
    expect(d.results[0]).toEqual({ type: 'delete', deleted: false });
    expect(h.state.revision).toBe(1);
    expect(h.writes).toHaveLength(1);
    expect(h.state.appliedIndex).toBe(3);
  });

  it('deletes create a tombstone; re-creating starts a new incarnation', () => {
    const h = new Harness();
    h.put('a', '1');
    h.put('a', '2');
    const d = h.del('a');
    expect(d.revision).toBe(3);
    expect(d.results[0]).toMatchObject({ type: 'delete', deleted: true, prevKv: { modRevision: 2, version: 2 } });
    expect(h.state.get('a')).toBeUndefined();
    expect(h.state.get('a', 2)?.version).toBe(2);
    const p = h.put('a', '3');
    expect(p.results[0]).toMatchObject({ kv: { createRevision: 4, modRevision: 4, version: 1 } });
  });

  it('evaluates compares on mod, create and version with all operators; absent key is 0', () => {
    const h = new Harness();
    h.put('a', '1'); // rev 1
    h.put('a', '2'); // rev 2, version 2, create 1
    const cases: Array<[Compare, boolean]> = [
      [{ key: 'a', target: 'mod', op: '=', value: 2 }, true],
      [{ key: 'a', target: 'mod', op: '!=', value: 2 }, false],
      [{ key: 'a', target: 'mod', op: '<', value: 3 }, true],
      [{ key: 'a', target: 'mod', op: '>', value: 2 }, false],
      [{ key: 'a', target: 'create', op: '=', value: 1 }, true],
      [{ key: 'a', target: 'create', op: '>', value: 0 }, true],
      [{ key: 'a', target: 'version', op: '=', value: 2 }, true],
      [{ key: 'a', target: 'version', op: '<', value: 2 }, false],
      [{ key: 'missing', target: 'create', op: '=', value: 0 }, true],
      [{ key: 'missing', target: 'mod', op: '=', value: 0 }, true],
      [{ key: 'missing', target: 'version', op: '>', value: 0 }, false],
    ];
    for (const [cmp, expected] of cases) {
      const r = h.txn([cmp], [{ type: 'get', key: 'a' }], [{ type: 'get', key: 'missing' }]);
      expect(r.succeeded, JSON.stringify(cmp)).toBe(expected);
      expect(r.results).toHaveLength(1);
    }
    // all compares must hold
    const both = h.txn(
      [
        { key: 'a', target: 'version', op: '=', value: 2 },
        { key: 'a', target: 'mod', op: '=', value: 1 },
      ],
      [{ type: 'put', key: 'a', value: enc('no') }],
      [{ type: 'put', key: 'f', value: enc('failure-branch') }],
    );
    expect(both.succeeded).toBe(false);
    expect(dec(h.state.get('f')?.value)).toBe('failure-branch');
    expect(dec(h.state.get('a')?.value)).toBe('2');
  });

  it('gets inside a txn see earlier writes of the same txn', () => {
    const h = new Harness();
    const r = h.txn([], [
      { type: 'put', key: 'a', value: enc('v') },
      { type: 'get', key: 'a' },
    ]);
    expect(r.results[1]).toMatchObject({ type: 'get', kv: { modRevision: 1, version: 1 } });
  });
});

describe('MvccState range', () => {
  function filled(): Harness {
    const h = new Harness();
    h.put('/pods/a', 'a1'); // 1
    h.put('/pods/b', 'b1'); // 2
    h.put('/pods/c', 'c1'); // 3
    h.put('/svc/x', 'x1'); // 4
    h.put('/pods/a', 'a2'); // 5
    h.del('/pods/b'); // 6
    return h;
  }

  it('reads a single key, a [key, end) range and a prefix in key order', () => {
    const h = filled();
    expect(h.state.range({ key: '/pods/a' }).kvs.map((kv) => dec(kv.value))).toEqual(['a2']);
    const pods = h.state.range({ key: '/pods/', end: prefixEnd('/pods/') });
    expect(pods.kvs.map((kv) => kv.key)).toEqual(['/pods/a', '/pods/c']);
    expect(pods).toMatchObject({ count: 2, more: false, revision: 6 });
    const all = h.state.range({ key: '/', end: prefixEnd('/') });
    expect(all.kvs.map((kv) => kv.key)).toEqual(['/pods/a', '/pods/c', '/svc/x']);
    expect(h.state.range({ key: '/pods/b', end: '/pods/c' }).count).toBe(0);
    expect(h.state.range({ key: 'z', end: 'a' }).count).toBe(0);
  });

  it('applies limit with more and count, and countOnly', () => {
    const h = filled();
    const r = h.state.range({ key: '/', end: prefixEnd('/'), limit: 2 });
    expect(r.kvs.map((kv) => kv.key)).toEqual(['/pods/a', '/pods/c']);
    expect(r.count).toBe(3);
    expect(r.more).toBe(true);
    const c = h.state.range({ key: '/', end: prefixEnd('/'), countOnly: true });
    expect(c).toMatchObject({ kvs: [], count: 3, more: false });
  });

  it('skipCount stops at the limit: pages read at one revision give the whole range, none of it twice', () => {
    const h = filled();
    const at = h.state.revision;
    const whole = h.state.range({ key: '/', end: prefixEnd('/') }).kvs.map((kv) => `${kv.key}@${kv.modRevision}`);
    h.put('/pods/b', 'later'); // a write after the pages' revision is not in them
    const got: string[] = [];
    let key = '/';
    for (let more = true; more; ) {
      const r = h.state.range({ key, end: prefixEnd('/'), limit: 1, skipCount: true, revision: at });
      expect(r.kvs.length).toBeLessThanOrEqual(1);
      got.push(...r.kvs.map((kv) => `${kv.key}@${kv.modRevision}`));
      more = r.more;
      if (r.kvs.length > 0) key = `${r.kvs[r.kvs.length - 1]!.key}\u0000`;
    }
    expect(got).toEqual(whole);
    const last = h.state.range({ key: '/svc/', end: prefixEnd('/'), limit: 1, skipCount: true });
    expect(last.more).toBe(false);
  });

  it('reads at past revisions and rejects future ones', () => {
    const h = filled();
    const at2 = h.state.range({ key: '/pods/', end: prefixEnd('/pods/'), revision: 2 });
    expect(at2.kvs.map((kv) => `${kv.key}=${dec(kv.value)}`)).toEqual(['/pods/a=a1', '/pods/b=b1']);
    expect(at2.revision).toBe(2);
    expect(h.state.get('/pods/b', 5)?.modRevision).toBe(2);
    expect(h.state.get('/pods/b', 6)).toBeUndefined();
    expect(() => h.state.range({ key: 'a', revision: 7 })).toThrow(FutureRevisionError);
  });

  it('compaction keeps reads at >= the compact revision and fails older ones', () => {
    const h = filled();
    const before = h.state.range({ key: '/', end: prefixEnd('/'), revision: 5 });
    expect(h.state.compact(5)).toBe(5);
    expect(h.state.compactRevision).toBe(5);
    expect(h.state.range({ key: '/', end: prefixEnd('/'), revision: 5 })).toEqual(before);
    expect(() => h.state.range({ key: '/', end: prefixEnd('/'), revision: 4 })).toThrow(CompactedError);
    try {
      h.state.get('/pods/a', 1);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(CompactedError);
      expect((err as CompactedError).compactRevision).toBe(5);
    }
    expect(() => h.state.compact(99)).toThrow(FutureRevisionError);
    expect(h.state.compact(3)).toBe(5); // older: no-op
    // the deleted key's history goes once compaction passes its tombstone
    h.state.compact(6);
    h.put('/z', 'z'); // rev 7
    h.state.compact(7);
    expect(h.state.indexedKeys).toBe(4); // /pods/a, /pods/c, /svc/x, /z
  });

  it('a compact command clamps to the current revision instead of failing', () => {
    const h = filled();
    const r = h.apply({ type: 'compact', revision: 100, time: 0 });
    expect(r).toEqual({ type: 'compact', revision: 6 });
    expect(h.state.revision).toBe(6);
  });

  it('rejects a non-increasing log index', () => {
    const h = filled();
    expect(() => h.state.apply(h.index, { type: 'compact', revision: 1, time: 0 })).toThrow();
  });
});

describe('MvccState applied writes and history', () => {
  it('notifies each write with its events and prevKv', () => {
    const h = new Harness();
    h.put('a', '1');
    h.txn([], [
      { type: 'put', key: 'a', value: enc('2') },
      { type: 'put', key: 'b', value: enc('1') },
    ]);
    h.del('a');
    h.del('zz');
    expect(h.writes.map((w) => w.revision)).toEqual([1, 2, 3]);
    expect(h.writes[1]!.events).toHaveLength(2);
    expect(h.writes[1]!.events[0]).toMatchObject({ type: 'put', kv: { key: 'a', version: 2 }, prevKv: { key: 'a', version: 1 } });
    expect(h.writes[1]!.events[1]!.prevKv).toBeUndefined();
    const del = h.writes[2]!.events[0];
    expect(del!.type).toBe('delete');
    expect(del!.kv).toMatchObject({ key: 'a', modRevision: 3, version: 0, createRevision: 0 });
    expect(del!.kv.value.byteLength).toBe(0);
    expect(dec(del!.prevKv?.value)).toBe('2');
    expect(h.writes[2]!.time).toBe(1030);
  });

  it('rebuilds the same writes from retained history, also after compaction', () => {
    const h = new Harness();
    h.put('a', '1');
    h.put('b', '1');
    h.txn([], [
      { type: 'put', key: 'a', value: enc('2') },
      { type: 'delete', key: 'b' },
    ]);
    h.put('c', '1');
    expect(h.state.writesSince(1)).toEqual(h.writes);
    expect(h.state.writesSince(3)).toEqual(h.writes.slice(2));
    const onlyA = h.state.writesSince(1, (k) => k === 'a');
    expect(onlyA.map((w) => w.revision)).toEqual([1, 3]);
    expect(onlyA[1]!.events).toHaveLength(1);
    h.state.compact(3);
    expect(h.state.writesSince(3)).toEqual(h.writes.slice(2)); // prevKv of writes at the compact revision kept
    expect(() => h.state.writesSince(2)).toThrow(CompactedError);
  });

  it('maps times to revisions', () => {
    const h = new Harness();
    h.put('a', '1'); // time 1010
    h.put('a', '2'); // time 1020
    h.put('a', '3'); // time 1030
    expect(h.state.newestRevisionAtOrBefore(1000)).toBeUndefined();
    expect(h.state.newestRevisionAtOrBefore(1010)).toBe(1);
    expect(h.state.newestRevisionAtOrBefore(1025)).toBe(2);
    expect(h.state.newestRevisionAtOrBefore(1e12)).toBe(3);
  });
});

describe('MvccState snapshot', () => {
  it('round-trips the whole state including history, compaction and the applied index', () => {
    const h = new Harness();
    for (let i = 0; i < 50; i++) h.put(`k${i % 7}`, `v${i}`);
    h.del('k3');
    h.state.compact(20);
    const bytes = h.state.snapshot();
    const r = MvccState.restore(bytes);
    expect(r.revision).toBe(h.state.revision);
    expect(r.compactRevision).toBe(20);
    expect(r.appliedIndex).toBe(h.index);
    for (let rev = 20; rev <= h.state.revision; rev++) {
      expect(r.range({ key: '', end: prefixEnd(''), revision: rev })).toEqual(
        h.state.range({ key: '', end: prefixEnd(''), revision: rev }),
      );
    }
    expect(r.writesSince(20)).toEqual(h.state.writesSince(20));
    // and it keeps working identically
    const cmd: Command = { type: 'txn', txn: { compare: [], success: [{ type: 'put', key: 'k1', value: enc('x') }], failure: [] }, time: 5 };
    expect(r.apply(h.index + 1, cmd)).toEqual(h.state.apply(h.index + 1, cmd));
    expect(r.snapshot()).toEqual(h.state.snapshot());
  });
});

describe('SortedKeyIndex', () => {
  it('keeps 100,000 keys ordered with inserts, deletes and range scans', () => {
    const idx = new SortedKeyIndex();
    const keys: string[] = [];
    // deterministic pseudo-random order
    let x = 12345;
    for (let i = 0; i < 100_000; i++) {
      x = (x * 1103515245 + 12345) % 2 ** 31;
      keys.push(`/registry/pods/ns${x % 97}/p${x}`);
    }
    for (const k of keys) idx.insert(k);
    const unique = [...new Set(keys)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    expect(idx.size).toBe(unique.length);
    expect(idx.keys()).toEqual(unique);
    for (let i = 0; i < unique.length; i += 3) expect(idx.delete(unique[i]!)).toBe(true);
    const left = unique.filter((_, i) => i % 3 !== 0);
    expect(idx.keys()).toEqual(left);
    expect(idx.has(unique[0]!)).toBe(false);
    expect(idx.has(left[0]!)).toBe(true);
    const prefix = '/registry/pods/ns5/';
    const scanned: string[] = [];
    idx.scan(prefix, prefixEnd(prefix), (k) => {
      scanned.push(k);
    });
    expect(scanned).toEqual(left.filter((k) => k.startsWith(prefix)));
    expect(scanned.length).toBeGreaterThan(0);
  });
});

describe('MvccState compactable keys', () => {
  it('visits on compaction only keys with more than one entry or a tombstone, and compacts them as before', () => {
    const h = new Harness();
    for (let i = 0; i < 20; i++) h.put(`/k/${i}`, `v${i}`);
    // creates hold one live entry each: nothing for compaction to shrink
    expect(h.state.compactableKeys).toBe(0);
    h.put('/k/1', 'v1b'); // two entries
    h.del('/k/2'); // a tombstone
    h.txn([], [{ type: 'put', key: '/k/3', value: enc('v3b') }, { type: 'delete', key: '/k/4' }]);
    expect(h.state.compactableKeys).toBe(4);
    h.put('/other', 'x'); // a create: compaction at its revision keeps nothing older of the keys above
    h.state.compact(h.state.revision);
    // /k/1 and /k/3 shrink to their live value, /k/2 and /k/4 disappear
    expect(h.state.compactableKeys).toBe(0);
    expect(h.state.indexedKeys).toBe(19);
    expect(dec(h.state.get('/k/1')?.value)).toBe('v1b');
    expect(dec(h.state.get('/k/3')?.value)).toBe('v3b');
    expect(h.state.get('/k/2')).toBeUndefined();
    expect(dec(h.state.get('/k/0')?.value)).toBe('v0');
    // a key created and then updated after the compaction becomes compactable again
    h.put('/k/0', 'v0b');
    expect(h.state.compactableKeys).toBe(1);
    // the restored state carries the same set
    expect(MvccState.restore(h.state.snapshot()).compactableKeys).toBe(1);
  });
});
