// List paging (spec 000 §4.5): limit/continue with a consistent snapshot at
// the first chunk's revision (also under concurrent writes), remainingItemCount
// rules, opaque tamper-proof expiring continue tokens; label and field
// selectors on list and deletecollection (malformed → 400, §7).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeObject, storageKey } from '../../src/registry/generic-store.js';
import type { ApiObject } from '../../src/registry/types.js';
import { type TestServer, startTestServer, NO_NAMESPACE_DEFAULTS, NO_SERVICE_ACCOUNT_ADMISSION } from '../helpers/server.js';

let t: TestServer;

interface Item {
  metadata: { name: string; namespace?: string; resourceVersion: string; labels?: Record<string, string> };
  data?: Record<string, string>;
}
interface List {
  metadata: { resourceVersion: string; continue?: string; remainingItemCount?: number };
  items: Item[];
}

async function mkns(name: string): Promise<void> {
  expect((await t.request('POST', '/api/v1/namespaces', { body: { metadata: { name } } })).status).toBe(201);
}

async function createMany(ns: string, n: number, labels: (i: number) => Record<string, string> = () => ({})): Promise<void> {
  const jobs: Promise<unknown>[] = [];
  for (let i = 0; i < n; i++) {
    const name = `cm-${String(i).padStart(4, '0')}`;
    jobs.push(
      t.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: { metadata: { name, labels: labels(i) }, data: { i: String(i) } } }).then((r) => {
        expect(r.status).toBe(201);
      }),
    );
    if (jobs.length >= 32) await Promise.all(jobs.splice(0));
  }
  await Promise.all(jobs);
}

async function getList(path: string): Promise<{ status: number; body: List; text: string }> {
  const r = await t.request('GET', path);
  return { status: r.status, body: r.status === 200 ? r.json<List>() : ({} as List), text: r.text };
}

/** follows continue tokens to the end; returns the chunks */
async function pageAll(path: string, limit: number): Promise<List[]> {
  const sep = path.includes('?') ? '&' : '?';
  const chunks: List[] = [];
  let token: string | undefined;
  for (;;) {
    const r = await getList(`${path}${sep}limit=${limit}${token ? `&continue=${encodeURIComponent(token)}` : ''}`);
    expect(r.status, r.text).toBe(200);
    chunks.push(r.body);
    token = r.body.metadata.continue;
    if (!token) return chunks;
  }
}

beforeAll(async () => {
  t = await startTestServer({ authn: NO_NAMESPACE_DEFAULTS, admissionPlugins: NO_SERVICE_ACCOUNT_ADMISSION });
});
afterAll(async () => {
  await t?.stop();
});

describe('limit and continue (spec 000 §4.5)', () => {
  it('pages through a collection with a constant resourceVersion and remainingItemCount', async () => {
    await mkns('pg-basic');
    await createMany('pg-basic', 25);
    const chunks = await pageAll('/api/v1/namespaces/pg-basic/configmaps', 7);
    expect(chunks.map((c) => c.items.length)).toEqual([7, 7, 7, 4]);
    expect(chunks.map((c) => c.metadata.remainingItemCount)).toEqual([18, 11, 4, undefined]);
    expect(new Set(chunks.map((c) => c.metadata.resourceVersion)).size).toBe(1);
    const names = chunks.flatMap((c) => c.items.map((i) => i.metadata.name));
    expect(names).toEqual(Array.from({ length: 25 }, (_, i) => `cm-${String(i).padStart(4, '0')}`));
    // the last chunk has an empty continue
    expect(chunks[3]!.metadata.continue ?? '').toBe('');
  });

  it('a limit that ends exactly at the last item gives no continue', async () => {
    const r = await getList('/api/v1/namespaces/pg-basic/configmaps?limit=25');
    expect(r.body.items).toHaveLength(25);
    expect(r.body.metadata.continue ?? '').toBe('');
    expect(r.body.metadata.remainingItemCount).toBeUndefined();
  });

  it('the union of all chunks equals the list at the first chunk\'s revision, under concurrent writes', async () => {
    await mkns('pg-conc');
    await createMany('pg-conc', 200);
    const path = '/api/v1/namespaces/pg-conc/configmaps';
    let stop = false;
    let writes = 0;
    const writer = (async () => {
      let k = 0;
      while (!stop) {
        k++;
        const i = k % 250;
        const name = `cm-${String(i).padStart(4, '0')}`;
        const jobs = [
          t.request('DELETE', `${path}/${name}`),
          t.request('POST', path, { body: { metadata: { name: `new-${k}` }, data: { k: String(k) } } }),
          t.request('PATCH', `${path}/cm-${String((i + 7) % 200).padStart(4, '0')}`, {
            body: { data: { touched: String(k) } },
            headers: { 'Content-Type': 'application/merge-patch+json' },
          }),
        ];
        await Promise.all(jobs);
        writes += jobs.length;
      }
    })();
    // let the writer start before paging
    while (writes < 9) await new Promise((r) => setTimeout(r, 5));
    const chunks: List[] = [];
    let token: string | undefined;
    do {
      const r = await getList(`${path}?limit=13${token ? `&continue=${encodeURIComponent(token)}` : ''}`);
      expect(r.status, r.text).toBe(200);
      chunks.push(r.body);
      token = r.body.metadata.continue;
      // keep pages slow enough that writes land between chunks
      await new Promise((r2) => setTimeout(r2, 5));
    } while (token);
    const writesDuring = writes;
    stop = true;
    await writer;
    expect(writesDuring).toBeGreaterThan(20);
    const rev = chunks[0]!.metadata.resourceVersion;
    expect(chunks.every((c) => c.metadata.resourceVersion === rev)).toBe(true);
    const exact = await getList(`${path}?resourceVersionMatch=Exact&resourceVersion=${rev}`);
    expect(exact.status).toBe(200);
    const union = chunks.flatMap((c) => c.items.map((i) => `${i.metadata.name}@${i.metadata.resourceVersion}`));
    expect(union).toEqual(exact.body.items.map((i) => `${i.metadata.name}@${i.metadata.resourceVersion}`));
    // and the collection really changed meanwhile
    const now = await getList(path);
    expect(now.body.items.map((i) => `${i.metadata.name}@${i.metadata.resourceVersion}`)).not.toEqual(union);
  });

  it('omits remainingItemCount with label or field selectors', async () => {
    await mkns('pg-sel');
    await createMany('pg-sel', 12, (i) => ({ parity: i % 2 === 0 ? 'even' : 'odd' }));
    const byLabel = await getList('/api/v1/namespaces/pg-sel/configmaps?limit=2&labelSelector=parity%3Deven');
    expect(byLabel.body.items.map((i) => i.metadata.name)).toEqual(['cm-0000', 'cm-0002']);
    expect(byLabel.body.metadata.continue).toBeTruthy();
    expect(byLabel.body.metadata.remainingItemCount).toBeUndefined();
    const byField = await getList('/api/v1/namespaces/pg-sel/configmaps?limit=2&fieldSelector=metadata.name!%3Dcm-0000');
    expect(byField.body.items).toHaveLength(2);
    expect(byField.body.metadata.continue).toBeTruthy();
    expect(byField.body.metadata.remainingItemCount).toBeUndefined();
    const all = await pageAll('/api/v1/namespaces/pg-sel/configmaps?labelSelector=parity%3Dodd', 4);
    expect(all.flatMap((c) => c.items.map((i) => i.metadata.name))).toEqual(['cm-0001', 'cm-0003', 'cm-0005', 'cm-0007', 'cm-0009', 'cm-0011']);
  });

  it('pages across all namespaces', async () => {
    const chunks = await pageAll('/api/v1/configmaps?labelSelector=parity', 5);
    expect(chunks.flatMap((c) => c.items).every((i) => i.metadata.namespace === 'pg-sel')).toBe(true);
    expect(chunks.flatMap((c) => c.items)).toHaveLength(12);
  });
});

describe('continue tokens (spec 000 §4.5)', () => {
  it('a forged or tampered token is 400, not a crash', async () => {
    const first = await getList('/api/v1/namespaces/pg-basic/configmaps?limit=5');
    const token = first.body.metadata.continue!;
    const [body, mac] = token.split('.');
    const decoded = JSON.parse(Buffer.from(body!, 'base64url').toString('utf8')) as Record<string, unknown>;
    const forgedBody = Buffer.from(JSON.stringify({ ...decoded, start: '/registry/core/secrets/' })).toString('base64url');
    for (const bad of [
      'garbage',
      '',
      '.',
      `${forgedBody}.${mac}`,
      `${body}.${mac!.slice(0, -2)}AA`,
      `${body}`,
      Buffer.from('{"v":1,"rv":1,"start":"/","iat":0}').toString('base64'),
      '%%%',
    ]) {
      if (bad === '') continue;
      const r = await t.request('GET', `/api/v1/namespaces/pg-basic/configmaps?limit=5&continue=${encodeURIComponent(bad)}`);
      expect(r.status, bad).toBe(400);
      expect(r.json<{ kind: string }>().kind).toBe('Status');
    }
    // the server is fine afterwards
    const again = await getList(`/api/v1/namespaces/pg-basic/configmaps?limit=5&continue=${encodeURIComponent(token)}`);
    expect(again.status).toBe(200);
    expect(again.body.items[0]!.metadata.name).toBe('cm-0005');
  });

  it('a genuine token used on another collection is 400', async () => {
    const first = await getList('/api/v1/namespaces/pg-basic/configmaps?limit=5');
    const token = encodeURIComponent(first.body.metadata.continue!);
    expect((await t.request('GET', `/api/v1/namespaces/pg-sel/configmaps?limit=5&continue=${token}`)).status).toBe(400);
    expect((await t.request('GET', `/api/v1/namespaces/pg-basic/secrets?limit=5&continue=${token}`)).status).toBe(400);
  });

  it('tokens expire: 410 Gone after the token lifetime', async () => {
    const short = await startTestServer({ continueTokenTtlMs: 300, authn: NO_NAMESPACE_DEFAULTS });
    try {
      for (let i = 0; i < 3; i++) {
        const r = await short.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: `e${i}` } } });
        expect(r.status).toBe(201);
      }
      const first = await short.request('GET', '/api/v1/namespaces/default/configmaps?limit=1');
      const token = encodeURIComponent(first.json<List>().metadata.continue!);
      const fresh = await short.request('GET', `/api/v1/namespaces/default/configmaps?limit=1&continue=${token}`);
      expect(fresh.status).toBe(200);
      await new Promise((r) => setTimeout(r, 400));
      const old = await short.request('GET', `/api/v1/namespaces/default/configmaps?limit=1&continue=${token}`);
      expect(old.status).toBe(410);
      expect(old.json<{ reason: string }>().reason).toBe('Expired');
    } finally {
      await short.stop();
    }
  });
});

describe('label selectors', () => {
  beforeAll(async () => {
    await mkns('sel');
    const specs: [string, Record<string, string>][] = [
      ['s1', { app: 'web', tier: 'front' }],
      ['s2', { app: 'web', tier: 'back' }],
      ['s3', { app: 'db', tier: 'back' }],
      ['s4', { app: 'cache' }],
      ['s5', {}],
    ];
    for (const [name, labels] of specs) {
      expect((await t.request('POST', '/api/v1/namespaces/sel/configmaps', { body: { metadata: { name, labels } } })).status).toBe(201);
    }
  });

  const cases: [string, string[]][] = [
    ['app=web', ['s1', 's2']],
    ['app==web', ['s1', 's2']],
    ['app!=web', ['s3', 's4', 's5']],
    ['app in (web,db)', ['s1', 's2', 's3']],
    ['app notin (web,db)', ['s4', 's5']],
    ['tier', ['s1', 's2', 's3']],
    ['!tier', ['s4', 's5']],
    ['app=web,tier=back', ['s2']],
    ['app in (web),tier notin (front)', ['s2']],
    ['app,!tier', ['s4']],
  ];
  for (const [sel, expected] of cases) {
    it(`list: ${sel}`, async () => {
      const r = await getList(`/api/v1/namespaces/sel/configmaps?labelSelector=${encodeURIComponent(sel)}`);
      expect(r.status, r.text).toBe(200);
      expect(r.body.items.map((i) => i.metadata.name)).toEqual(expected);
      // the paged path (store) agrees with the unpaged one (watch cache)
      const paged = await pageAll(`/api/v1/namespaces/sel/configmaps?labelSelector=${encodeURIComponent(sel)}`, 1);
      expect(paged.flatMap((c) => c.items.map((i) => i.metadata.name))).toEqual(expected);
    });
  }

  for (const bad of ['app in web', 'app=(x', 'in (a,b)', '!', 'a b', 'app notin', 'app=web,,', 'app=' + 'x'.repeat(70)]) {
    it(`malformed label selector ${JSON.stringify(bad)} is 400 on list and deletecollection`, async () => {
      const q = `labelSelector=${encodeURIComponent(bad)}`;
      const l = await t.request('GET', `/api/v1/namespaces/sel/configmaps?${q}`);
      expect(l.status).toBe(400);
      const d = await t.request('DELETE', `/api/v1/namespaces/sel/configmaps?${q}`);
      expect(d.status).toBe(400);
    });
  }
});

describe('field selectors', () => {
  beforeAll(async () => {
    await mkns('fs-a');
    await mkns('fs-b');
    const pod = (name: string, nodeName: string): object => ({
      metadata: { name },
      spec: { nodeName, containers: [{ name: 'c', image: 'busybox:1' }] },
    });
    for (const [ns, name, node] of [
      ['fs-a', 'p1', 'n1'],
      ['fs-a', 'p2', 'n2'],
      ['fs-b', 'p3', 'n1'],
    ] as const) {
      const r = await t.request('POST', `/api/v1/namespaces/${ns}/pods`, { body: pod(name, node) });
      expect(r.status, r.text).toBe(201);
    }
    // status is written by the node agent; here straight through the server's store
    const def = t.server.registry.lookup('', 'v1', 'pods')!;
    const kv = t.server.store.range({ key: storageKey(def, 'fs-a', 'p2') }).kvs[0]!;
    const obj = JSON.parse(new TextDecoder().decode(kv.value)) as ApiObject;
    (obj.status as { phase: string }).phase = 'Running';
    await t.server.store.txn({ compare: [], success: [{ type: 'put', key: kv.key, value: encodeObject(obj) }], failure: [] });
  });

  const cases: [string, string, string[]][] = [
    ['/api/v1/pods', 'spec.nodeName=n1', ['p1', 'p3']],
    ['/api/v1/pods', 'spec.nodeName!=n1', ['p2']],
    ['/api/v1/pods', 'status.phase=Running', ['p2']],
    ['/api/v1/pods', 'status.phase=Pending,spec.nodeName=n1', ['p1', 'p3']],
    ['/api/v1/pods', 'metadata.namespace=fs-b', ['p3']],
    ['/api/v1/pods', 'metadata.name=p2', ['p2']],
    ['/api/v1/namespaces/fs-a/pods', 'metadata.name=p1', ['p1']],
    ['/api/v1/namespaces/fs-a/pods', 'metadata.name==p3', []],
    ['/api/v1/namespaces/fs-a/pods', 'spec.nodeName=n1', ['p1']],
  ];
  for (const [path, sel, expected] of cases) {
    it(`list ${path}: ${sel}`, async () => {
      const r = await getList(`${path}?fieldSelector=${encodeURIComponent(sel)}`);
      expect(r.status, r.text).toBe(200);
      expect(r.body.items.map((i) => i.metadata.name)).toEqual(expected);
      const paged = await pageAll(`${path}?fieldSelector=${encodeURIComponent(sel)}`, 1);
      expect(paged.flatMap((c) => c.items.map((i) => i.metadata.name))).toEqual(expected);
    });
  }

  it('a malformed or unsupported field selector is 400', async () => {
    for (const bad of ['spec.nodeName', 'spec.unknownField=x', 'status.phase>Running', '=x']) {
      const r = await t.request('GET', `/api/v1/pods?fieldSelector=${encodeURIComponent(bad)}`);
      expect(r.status, bad).toBe(400);
      const d = await t.request('DELETE', `/api/v1/namespaces/fs-a/pods?fieldSelector=${encodeURIComponent(bad)}`);
      expect(d.status, bad).toBe(400);
    }
    // configmaps have no spec.nodeName
    expect((await t.request('GET', '/api/v1/configmaps?fieldSelector=spec.nodeName%3Dn1')).status).toBe(400);
  });

  it('deletecollection deletes only what the selectors match', async () => {
    // pods bound to a node are deleted gracefully; grace period 0 removes them at once
    const d = await t.request('DELETE', `/api/v1/namespaces/fs-a/pods?gracePeriodSeconds=0&fieldSelector=${encodeURIComponent('status.phase=Running')}`);
    expect(d.status, d.text).toBe(200);
    expect(d.json<List>().items.map((i) => i.metadata.name)).toEqual(['p2']);
    const left = await getList('/api/v1/pods');
    expect(left.body.items.map((i) => i.metadata.name)).toEqual(['p1', 'p3']);

    const dl = await t.request('DELETE', `/api/v1/namespaces/sel/configmaps?labelSelector=${encodeURIComponent('app in (web,db),tier!=front')}`);
    expect(dl.status, dl.text).toBe(200);
    expect(dl.json<List>().items.map((i) => i.metadata.name).sort()).toEqual(['s2', 's3']);
    const rest = await getList('/api/v1/namespaces/sel/configmaps');
    expect(rest.body.items.map((i) => i.metadata.name)).toEqual(['s1', 's4', 's5']);
  });
});
