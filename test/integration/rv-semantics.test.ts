// Every row of the three resourceVersion tables of spec 000 §4.6 (get, list,
// watch) against a real server, with the invalid combinations (400, §7),
// `Exact` after compaction (410) and too-large versions (504, Retry-After,
// "Too large resource version").

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestServer, startTestServer, NO_NAMESPACE_DEFAULTS } from '../helpers/server.js';
import { openWatch } from '../helpers/watch-stream.js';

let t: TestServer;
const NS = 'rv-sem';
const base = `/api/v1/namespaces/${NS}/configmaps`;
/** the revision after creating a and b (a still holds {v: '1'}) */
let rvOld = 0;
/** the revision after updating a to {v: '2'} */
let rvNew = 0;

interface CmList {
  metadata: { resourceVersion: string; continue?: string; remainingItemCount?: number };
  items: { metadata: { name: string; resourceVersion: string }; data?: Record<string, string> }[];
}

async function create(name: string, data: Record<string, string>): Promise<number> {
  const r = await t.request('POST', base, { body: { metadata: { name }, data } });
  expect(r.status).toBe(201);
  return Number(r.json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion);
}

async function list(query: string): Promise<{ status: number; body: CmList; text: string; headers: Record<string, unknown> }> {
  const r = await t.request('GET', `${base}?${query}`);
  return { status: r.status, body: r.status === 200 ? r.json<CmList>() : ({} as CmList), text: r.text, headers: r.headers };
}

function dataOf(l: CmList, name: string): string | undefined {
  return l.items.find((i) => i.metadata.name === name)?.data?.v;
}

beforeAll(async () => {
  t = await startTestServer({ authn: NO_NAMESPACE_DEFAULTS });
  expect((await t.request('POST', '/api/v1/namespaces', { body: { metadata: { name: NS } } })).status).toBe(201);
  await create('a', { v: '1' });
  rvOld = await create('b', { v: '1' });
  const got = await t.request('GET', `${base}/a`);
  const a = got.json<{ metadata: Record<string, unknown>; data: Record<string, string> }>();
  a.data = { v: '2' };
  const put = await t.request('PUT', `${base}/a`, { body: a });
  expect(put.status).toBe(200);
  rvNew = Number(put.json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion);
  expect(rvNew).toBeGreaterThan(rvOld);
});

afterAll(async () => {
  await t?.stop();
});

describe('get table (spec 000 §4.6)', () => {
  it('unset: Most Recent', async () => {
    const r = await t.request('GET', `${base}/a`);
    expect(r.status).toBe(200);
    expect(r.json<{ data: Record<string, string> }>().data.v).toBe('2');
  });

  it('0: Any', async () => {
    const r = await t.request('GET', `${base}/a?resourceVersion=0`);
    expect(r.status).toBe(200);
    expect(r.json<{ metadata: { name: string } }>().metadata.name).toBe('a');
  });

  it('non-zero: Not older than (an older version still returns the current object)', async () => {
    const r = await t.request('GET', `${base}/a?resourceVersion=${rvOld}`);
    expect(r.status).toBe(200);
    const o = r.json<{ data: Record<string, string>; metadata: { resourceVersion: string } }>();
    expect(o.data.v).toBe('2');
    expect(o.metadata.resourceVersion).toBe(String(rvNew));
  });

  it('a too large version: 504 with Retry-After and "Too large resource version"', async () => {
    const r = await t.request('GET', `${base}/a?resourceVersion=${rvNew + 1000}`);
    expect(r.status).toBe(504);
    expect(r.headers['retry-after']).toBeDefined();
    expect(r.json<{ message: string }>().message).toContain('Too large resource version');
  });

  it('a malformed version is 400', async () => {
    expect((await t.request('GET', `${base}/a?resourceVersion=abc`)).status).toBe(400);
  });
});

describe('list table (spec 000 §4.6)', () => {
  describe('resourceVersionMatch unset, limit unset', () => {
    it('unset: Most Recent', async () => {
      const l = await list('');
      expect(l.status).toBe(200);
      expect(Number(l.body.metadata.resourceVersion)).toBeGreaterThanOrEqual(rvNew);
      expect(dataOf(l.body, 'a')).toBe('2');
      expect(l.body.items.map((i) => i.metadata.name)).toEqual(['a', 'b']);
    });
    it('0: Any', async () => {
      const l = await list('resourceVersion=0');
      expect(l.status).toBe(200);
      expect(l.body.items.map((i) => i.metadata.name)).toEqual(['a', 'b']);
    });
    it('non-zero: Not older than', async () => {
      const l = await list(`resourceVersion=${rvOld}`);
      expect(l.status).toBe(200);
      expect(Number(l.body.metadata.resourceVersion)).toBeGreaterThanOrEqual(rvOld);
      expect(dataOf(l.body, 'a')).toBe('2');
    });
  });

  describe('resourceVersionMatch unset, limit=n, no continue', () => {
    it('unset: Most Recent', async () => {
      const l = await list('limit=1');
      expect(l.status).toBe(200);
      expect(Number(l.body.metadata.resourceVersion)).toBeGreaterThanOrEqual(rvNew);
      expect(l.body.items.map((i) => i.metadata.name)).toEqual(['a']);
      expect(l.body.items[0]!.data?.v).toBe('2');
      expect(l.body.metadata.continue).toBeTruthy();
    });
    it('0: Any', async () => {
      const l = await list('limit=1&resourceVersion=0');
      expect(l.status).toBe(200);
      expect(l.body.items).toHaveLength(1);
    });
    it('non-zero: Exact', async () => {
      const l = await list(`limit=5&resourceVersion=${rvOld}`);
      expect(l.status).toBe(200);
      expect(l.body.metadata.resourceVersion).toBe(String(rvOld));
      expect(dataOf(l.body, 'a')).toBe('1');
    });
  });

  describe('resourceVersionMatch unset, limit=n, continue=<token>', () => {
    it('unset: Continue Token, Exact (the revision of the first chunk)', async () => {
      const first = await list(`limit=1&resourceVersion=${rvOld}`);
      expect(first.body.metadata.continue).toBeTruthy();
      const next = await list(`limit=1&continue=${encodeURIComponent(first.body.metadata.continue!)}`);
      expect(next.status).toBe(200);
      expect(next.body.metadata.resourceVersion).toBe(String(rvOld));
      expect(next.body.items.map((i) => i.metadata.name)).toEqual(['b']);
    });
    it('0: invalid, treated as Continue Token, Exact', async () => {
      const first = await list(`limit=1&resourceVersion=${rvOld}`);
      const next = await list(`limit=1&resourceVersion=0&continue=${encodeURIComponent(first.body.metadata.continue!)}`);
      expect(next.status).toBe(200);
      expect(next.body.metadata.resourceVersion).toBe(String(rvOld));
      expect(next.body.items.map((i) => i.metadata.name)).toEqual(['b']);
    });
    it('non-zero: invalid, 400', async () => {
      const first = await list('limit=1');
      const next = await list(`limit=1&resourceVersion=${rvNew}&continue=${encodeURIComponent(first.body.metadata.continue!)}`);
      expect(next.status).toBe(400);
    });
  });

  describe('resourceVersionMatch=Exact', () => {
    for (const paging of ['', 'limit=1&']) {
      const label = paging ? 'limit=n' : 'limit unset';
      it(`${label}, resourceVersion unset: invalid (422, kube's ValidateListOptions)`, async () => {
        expect((await list(`${paging}resourceVersionMatch=Exact`)).status).toBe(422);
      });
      it(`${label}, resourceVersion 0: invalid (422)`, async () => {
        expect((await list(`${paging}resourceVersionMatch=Exact&resourceVersion=0`)).status).toBe(422);
      });
      it(`${label}, non-zero: Exact`, async () => {
        const l = await list(`${paging}resourceVersionMatch=Exact&resourceVersion=${rvOld}`);
        expect(l.status).toBe(200);
        expect(l.body.metadata.resourceVersion).toBe(String(rvOld));
        expect(dataOf(l.body, 'a')).toBe('1');
      });
    }
  });

  describe('resourceVersionMatch=NotOlderThan', () => {
    for (const paging of ['', 'limit=1&']) {
      const label = paging ? 'limit=n' : 'limit unset';
      it(`${label}, resourceVersion unset: invalid (422)`, async () => {
        expect((await list(`${paging}resourceVersionMatch=NotOlderThan`)).status).toBe(422);
      });
      it(`${label}, resourceVersion 0: Any`, async () => {
        const l = await list(`${paging}resourceVersionMatch=NotOlderThan&resourceVersion=0`);
        expect(l.status).toBe(200);
        expect(l.body.items.length).toBeGreaterThan(0);
      });
      it(`${label}, non-zero: Not older than`, async () => {
        const l = await list(`${paging}resourceVersionMatch=NotOlderThan&resourceVersion=${rvOld}`);
        expect(l.status).toBe(200);
        expect(Number(l.body.metadata.resourceVersion)).toBeGreaterThanOrEqual(rvNew);
        expect(dataOf(l.body, 'a')).toBe('2');
      });
    }
  });

  describe('other invalid combinations', () => {
    it('an unsupported resourceVersionMatch is 422', async () => {
      expect((await list(`resourceVersionMatch=Newest&resourceVersion=${rvOld}`)).status).toBe(422);
    });
    it('resourceVersionMatch with continue is 422', async () => {
      const first = await list('limit=1');
      const r = await list(`limit=1&resourceVersionMatch=NotOlderThan&resourceVersion=0&continue=${encodeURIComponent(first.body.metadata.continue!)}`);
      expect(r.status).toBe(422);
    });
    it('a malformed resourceVersion or limit is 400', async () => {
      expect((await list('resourceVersion=x1')).status).toBe(400);
      expect((await list('limit=ten')).status).toBe(400);
    });
    it('a negative limit lists everything, unpaged, as kube (its storage pages only when limit > 0)', async () => {
      const all = await list('');
      const negative = await list('limit=-1');
      expect(negative.status).toBe(200);
      expect(negative.body.items.length).toBe(all.body.items.length);
      expect(negative.body.metadata.continue).toBeUndefined();
    });
  });

  describe('too large resource versions', () => {
    it('Not older than a future version: 504 with Retry-After', async () => {
      const l = await list(`resourceVersion=${rvNew + 1000}`);
      expect(l.status).toBe(504);
      expect(l.headers['retry-after']).toBeDefined();
      expect(l.text).toContain('Too large resource version');
    });
    it('Exact at a future version: 504', async () => {
      const l = await list(`resourceVersionMatch=Exact&resourceVersion=${rvNew + 1000}`);
      expect(l.status).toBe(504);
      expect(l.text).toContain('Too large resource version');
    });
  });

  it('an unpaged Most Recent list is served from the watch cache once it caught up', async () => {
    const before = t.server.watch.stats().caches;
    const r = await t.request('GET', `/api/v1/namespaces/${NS}/secrets`);
    expect(r.status).toBe(200);
    expect(r.json<CmList>().metadata.resourceVersion).toBe(String(t.server.store.revision));
    expect(t.server.watch.stats().caches).toBe(before + 1);
  });
});

describe('watch table (spec 000 §4.6)', () => {
  it('unset: Get State and Start at Most Recent (synthetic ADDED, then changes)', async () => {
    const w = openWatch(t.server, `${base}?watch=1`);
    const initial = await w.waitFor(2);
    expect(initial.map((e) => [e.type, e.object.metadata?.name])).toEqual([
      ['ADDED', 'a'],
      ['ADDED', 'b'],
    ]);
    expect((initial[0]!.object as { data: { v: string } }).data.v).toBe('2');
    await create('c', { v: '1' });
    const third = (await w.waitFor(3))[2]!;
    expect([third.type, third.object.metadata?.name]).toEqual(['ADDED', 'c']);
    w.close();
    expect((await t.request('DELETE', `${base}/c`)).status).toBe(200);
  });

  it('0: Get State and Start at Any (synthetic ADDED)', async () => {
    const w = openWatch(t.server, `${base}?watch=1&resourceVersion=0`);
    const initial = await w.waitFor(2);
    expect(initial.every((e) => e.type === 'ADDED')).toBe(true);
    expect(initial.map((e) => e.object.metadata?.name).sort()).toEqual(['a', 'b']);
    w.close();
  });

  it('non-zero: Start at Exact (the changes after that version, no synthetic events)', async () => {
    const w = openWatch(t.server, `${base}?watch=1&resourceVersion=${rvOld}`);
    const [first] = await w.waitFor(1);
    expect(first!.type).toBe('MODIFIED');
    expect(first!.object.metadata?.name).toBe('a');
    expect(first!.object.metadata?.resourceVersion).toBe(String(rvNew));
    // the earlier test created and deleted c after rvOld: the replay has exactly those changes, then live ones
    const d = await create('d', { v: '1' });
    const all = await w.waitFor(4);
    expect(all.map((e) => [e.type, e.object.metadata?.name])).toEqual([
      ['MODIFIED', 'a'],
      ['ADDED', 'c'],
      ['DELETED', 'c'],
      ['ADDED', 'd'],
    ]);
    expect(all[3]!.object.metadata?.resourceVersion).toBe(String(d));
    expect(w.events.filter((e) => e.type !== 'BOOKMARK')).toHaveLength(4);
    w.close();
    expect((await t.request('DELETE', `${base}/d`)).status).toBe(200);
  });

  it('invalid watch combinations are 422 (kube ValidateListOptions) or 400 (unreadable values)', async () => {
    for (const [q, code] of [
      ['watch=1&sendInitialEvents=true', 422],
      ['watch=1&resourceVersionMatch=NotOlderThan', 422],
      ['watch=1&sendInitialEvents=true&resourceVersionMatch=Exact', 422],
      ['watch=1&continue=abc', 400],
      ['watch=1&resourceVersion=zz', 400],
    ] as const) {
      const w = openWatch(t.server, `${base}?${q}`);
      expect((await w.response).status, q).toBe(code);
      await w.body();
    }
  });
});

describe('after compaction (spec 000 §4.6 Exact, §7)', () => {
  it('Exact at a compacted version is 410 Gone; Not older than still works', async () => {
    const first = await list(`limit=1&resourceVersion=${rvOld}`);
    const token = first.body.metadata.continue!;
    await t.server.store.compact(rvNew);
    const exact = await list(`resourceVersionMatch=Exact&resourceVersion=${rvOld}`);
    expect(exact.status).toBe(410);
    const paged = await list(`limit=1&resourceVersion=${rvOld}`);
    expect(paged.status).toBe(410);
    // a continue token whose revision was compacted is 410 too
    const cont = await list(`limit=1&continue=${encodeURIComponent(token)}`);
    expect(cont.status).toBe(410);
    const notOlder = await list(`resourceVersion=${rvOld}`);
    expect(notOlder.status).toBe(200);
    expect(dataOf(notOlder.body, 'a')).toBe('2');
  });
});
