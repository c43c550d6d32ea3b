// Dry run over HTTP against a real server (spec 000 §4.7): `dryRun=All` on
// POST, PUT, PATCH (every type) and DELETE runs every stage but storage and
// returns what would have been stored with the normal status code; nothing
// is persisted and no watch event is emitted; an invalid value is 400.
//
// "No watch event" is checked without timing: a watch is opened first, the
// dry-run requests are made, then a real sentinel write; the watch must see
// the sentinel's event and nothing before it.

import { request as httpsRequest } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_WORKLOAD_CONTROLLERS, type RawResponse, type TestServer, startTestServer } from '../helpers/server.js';
import { eventually } from '../helpers/eventually.js';

let t: TestServer;
type Obj = Record<string, any>;

const NS = 'dry';
const CM = `/api/v1/namespaces/${NS}/configmaps`;
const PODS = `/api/v1/namespaces/${NS}/pods`;

interface WatchEvent {
  type: string;
  object: Obj;
}

/**
 * Opens a raw watch stream from a resourceVersion and collects its events.
 * Returns at once: the watch replays everything after that version, so it
 * need not be registered before the requests under test are made.
 */
function openWatch(path: string): { events: WatchEvent[]; until(pred: (e: WatchEvent) => boolean): Promise<void>; close(): void } {
  const events: WatchEvent[] = [];
  const waiters: { pred: (e: WatchEvent) => boolean; done: () => void }[] = [];
  const req = httpsRequest(
    {
      host: '127.0.0.1',
      port: t.server.port,
      method: 'GET',
      path,
      ca: t.server.caPem,
      cert: t.server.adminCertPem,
      key: t.server.adminKeyPem,
      agent: false,
    },
    (res) => {
      expect(res.statusCode).toBe(200);
      let buf = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buf += chunk;
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl).trim();
          buf = buf.slice(nl + 1);
          if (!line) continue;
          const e = JSON.parse(line) as WatchEvent;
          events.push(e);
          for (const w of [...waiters]) {
            if (w.pred(e)) {
              waiters.splice(waiters.indexOf(w), 1);
              w.done();
            }
          }
        }
      });
      res.on('error', () => {});
    },
  );
  req.on('error', () => {});
  req.end();
  return {
    events,
    until: (pred) => (events.some(pred) ? Promise.resolve() : new Promise<void>((done) => waiters.push({ pred, done }))),
    close: () => req.destroy(),
  };
}

let sentinelCount = 0;
/** a real write in the namespace; returns once the watch has seen it, with the events before it */
async function eventsBeforeSentinel(w: ReturnType<typeof openWatch>, collection = CM): Promise<WatchEvent[]> {
  const name = `sentinel-${++sentinelCount}`;
  const body =
    collection === PODS ? { metadata: { name }, spec: { containers: [{ name: 'c', image: 'busybox' }] } } : { metadata: { name }, data: { s: '1' } };
  const r = await t.request('POST', collection, { body });
  expect(r.status, r.text).toBe(201);
  await w.until((e) => e.object?.metadata?.name === name);
  const idx = w.events.findIndex((e) => e.object?.metadata?.name === name);
  const before = w.events.slice(0, idx).filter((e) => e.type !== 'BOOKMARK');
  w.events.splice(0, idx + 1);
  return before;
}

function req(method: string, path: string, body?: unknown, type = 'application/json'): Promise<RawResponse> {
  return t.request(method, path, {
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    headers: body === undefined ? {} : { 'Content-Type': type },
  });
}

async function rvNow(): Promise<string> {
  const r = await t.request('GET', CM);
  return r.json<Obj>().metadata.resourceVersion as string;
}

beforeAll(async () => {
  t = await startTestServer({ authn: NO_WORKLOAD_CONTROLLERS });
  const ns = await req('POST', '/api/v1/namespaces', { metadata: { name: NS } });
  expect(ns.status, ns.text).toBe(201);
  // the namespace's defaults are written by controllers, asynchronously: a
  // watch opened before orch-root-ca.crt lands would see it among the "no events"
  await eventually(async () => (await t.request('GET', `${CM}/orch-root-ca.crt`)).status === 200, 'orch-root-ca.crt in the namespace');
  await eventually(async () => (await t.request('GET', `/api/v1/namespaces/${NS}/serviceaccounts/default`)).status === 200, 'the default service account');
});
afterAll(async () => {
  await t?.stop();
});

describe('dryRun=All', () => {
  it('POST returns 201 with the object that would be stored; nothing stored, no event', async () => {
    const w = openWatch(`${CM}?watch=1&resourceVersion=${await rvNow()}`);
    try {
      const r = await req('POST', `${CM}?dryRun=All`, { metadata: { name: 'd1', labels: { a: 'b' } }, data: { k: 'v' } });
      expect(r.status, r.text).toBe(201);
      const o = r.json<Obj>();
      expect(o.kind).toBe('ConfigMap');
      expect(o.metadata.name).toBe('d1');
      expect(o.metadata.namespace).toBe(NS);
      expect(o.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
      expect(o.metadata.creationTimestamp).toBeTruthy();
      expect(o.metadata.managedFields?.[0]?.operation).toBe('Update');
      expect(o.data).toEqual({ k: 'v' });
      // generateName is resolved too
      const g = await req('POST', `${CM}?dryRun=All`, { metadata: { generateName: 'gen-' }, data: {} });
      expect(g.status).toBe(201);
      expect(g.json<Obj>().metadata.name).toMatch(/^gen-[a-z0-9]{5}$/);
      expect((await t.request('GET', `${CM}/d1`)).status).toBe(404);
      expect(await eventsBeforeSentinel(w)).toEqual([]);
    } finally {
      w.close();
    }
  });

  it('POST still runs validation, and refuses a name that exists', async () => {
    const bad = await req('POST', `${PODS}?dryRun=All`, { metadata: { name: 'p' }, spec: { containers: [{ image: 'x' }] } });
    expect(bad.status).toBe(422);
    const c = await req('POST', CM, { metadata: { name: 'exists' }, data: { k: 'v' } });
    expect(c.status).toBe(201);
    const dup = await req('POST', `${CM}?dryRun=All`, { metadata: { name: 'exists' }, data: { k: 'w' } });
    expect(dup.status).toBe(409);
    expect(dup.json<Obj>().reason).toBe('AlreadyExists');
  });

  it('PUT returns 200 with the would-be object; stored object and resourceVersion unchanged, no event', async () => {
    const c = (await req('POST', CM, { metadata: { name: 'd2' }, data: { k: 'v' } })).json<Obj>();
    const w = openWatch(`${CM}?watch=1&resourceVersion=${await rvNow()}`);
    try {
      const r = await req('PUT', `${CM}/d2?dryRun=All`, { ...c, data: { k: 'changed' } });
      expect(r.status, r.text).toBe(200);
      expect(r.json<Obj>().data).toEqual({ k: 'changed' });
      expect(r.json<Obj>().metadata.uid).toBe(c.metadata.uid);
      // nothing was written: the answer has the stored resourceVersion (kubectl diff compares it)
      expect(r.json<Obj>().metadata.resourceVersion).toBe(c.metadata.resourceVersion);
      // PUT of an absent object creates it (201) — dry run too
      const absent = await req('PUT', `${CM}/d2-new?dryRun=All`, { metadata: { name: 'd2-new' }, data: { k: 'v' } });
      expect(absent.status, absent.text).toBe(201);
      const stored = (await t.request('GET', `${CM}/d2`)).json<Obj>();
      expect(stored.data).toEqual({ k: 'v' });
      expect(stored.metadata.resourceVersion).toBe(c.metadata.resourceVersion);
      expect((await t.request('GET', `${CM}/d2-new`)).status).toBe(404);
      expect(await eventsBeforeSentinel(w)).toEqual([]);
    } finally {
      w.close();
    }
  });

  it('PATCH (json, merge, strategic, apply) returns the merged object; nothing stored, no event', async () => {
    const c = (await req('POST', PODS, { metadata: { name: 'dp' }, spec: { containers: [{ name: 'a', image: 'nginx:1' }] } })).json<Obj>();
    const w = openWatch(`${PODS}?watch=1&resourceVersion=${await rvNow()}`);
    try {
      const jp = await req('PATCH', `${PODS}/dp?dryRun=All`, [{ op: 'add', path: '/metadata/labels', value: { x: 'y' } }], 'application/json-patch+json');
      expect(jp.status, jp.text).toBe(200);
      expect(jp.json<Obj>().metadata.labels).toEqual({ x: 'y' });
      const mp = await req('PATCH', `${PODS}/dp?dryRun=All`, { metadata: { annotations: { n: 'm' } } }, 'application/merge-patch+json');
      expect(mp.status, mp.text).toBe(200);
      expect(mp.json<Obj>().metadata.annotations).toEqual({ n: 'm' });
      const sp = await req('PATCH', `${PODS}/dp?dryRun=All`, { spec: { containers: [{ name: 'a', image: 'nginx:2' }] } }, 'application/strategic-merge-patch+json');
      expect(sp.status, sp.text).toBe(200);
      expect(sp.json<Obj>().spec.containers[0].image).toBe('nginx:2');
      for (const r of [jp, mp, sp]) expect(r.json<Obj>().metadata.resourceVersion).toBe(c.metadata.resourceVersion);
      const ap = await req(
        'PATCH',
        `${PODS}/dp?dryRun=All&fieldManager=tool`,
        'apiVersion: v1\nkind: Pod\nmetadata:\n  name: dp\n  labels:\n    applied: "yes"\n',
        'application/apply-patch+yaml',
      );
      expect(ap.status, ap.text).toBe(200);
      expect(ap.json<Obj>().metadata.labels).toEqual({ applied: 'yes' });
      expect(ap.json<Obj>().metadata.managedFields.some((e: Obj) => e.manager === 'tool' && e.operation === 'Apply')).toBe(true);
      expect(ap.json<Obj>().metadata.resourceVersion).toBe(c.metadata.resourceVersion);
      // apply that would create: 201, nothing created
      const apc = await req(
        'PATCH',
        `${CM}/dry-applied?dryRun=All&fieldManager=tool`,
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dry-applied\ndata:\n  a: b\n',
        'application/apply-patch+yaml',
      );
      expect(apc.status, apc.text).toBe(201);
      expect((await t.request('GET', `${CM}/dry-applied`)).status).toBe(404);
      const stored = (await t.request('GET', `${PODS}/dp`)).json<Obj>();
      expect(stored).toEqual(c);
      expect(await eventsBeforeSentinel(w, PODS)).toEqual([]);
    } finally {
      w.close();
    }
  });

  it('DELETE returns 200 with the Status or the marked object; it stays, no event', async () => {
    const c = (await req('POST', CM, { metadata: { name: 'd3' }, data: { k: 'v' } })).json<Obj>();
    const f = (await req('POST', CM, { metadata: { name: 'd3f', finalizers: ['example.com/hold'] }, data: {} })).json<Obj>();
    const w = openWatch(`${CM}?watch=1&resourceVersion=${await rvNow()}`);
    try {
      const r = await req('DELETE', `${CM}/d3?dryRun=All`);
      expect(r.status, r.text).toBe(200);
      // a ConfigMap that would be removed: kube's Success Status naming it (finalizeDelete)
      expect(r.json<Obj>()).toMatchObject({ kind: 'Status', status: 'Success', details: { name: 'd3', kind: 'configmaps', uid: c.metadata.uid } });
      // dryRun in DeleteOptions in the body works as well
      const b = await req('DELETE', `${CM}/d3`, { kind: 'DeleteOptions', apiVersion: 'v1', dryRun: ['All'] });
      expect(b.status, b.text).toBe(200);
      // with a finalizer the would-be result carries a deletionTimestamp
      const fr = await req('DELETE', `${CM}/d3f?dryRun=All`);
      expect(fr.status, fr.text).toBe(200);
      expect(fr.json<Obj>().metadata.deletionTimestamp).toBeTruthy();
      expect((await t.request('GET', `${CM}/d3`)).json<Obj>().metadata.resourceVersion).toBe(c.metadata.resourceVersion);
      const fStored = (await t.request('GET', `${CM}/d3f`)).json<Obj>();
      expect(fStored.metadata.deletionTimestamp).toBeUndefined();
      expect(fStored.metadata.resourceVersion).toBe(f.metadata.resourceVersion);
      // a collection delete in dry run deletes nothing either
      const dc = await req('DELETE', `${CM}?dryRun=All`);
      expect(dc.status, dc.text).toBe(200);
      expect((dc.json<Obj>().items as Obj[]).length).toBeGreaterThan(0);
      expect((await t.request('GET', `${CM}/d3`)).status).toBe(200);
      expect(await eventsBeforeSentinel(w)).toEqual([]);
    } finally {
      w.close();
    }
  });

  it("an invalid dryRun value is kube's 422 on every write verb's options kind, and nothing happens", async () => {
    const c = (await req('POST', CM, { metadata: { name: 'd4' }, data: { k: 'v' } })).json<Obj>();
    const cases: [string, string, unknown, string?][] = [
      ['POST', `${CM}?dryRun=Nope`, { metadata: { name: 'd4-new' }, data: {} }],
      ['PUT', `${CM}/d4?dryRun=true`, { ...c, data: { k: 'x' } }],
      ['PATCH', `${CM}/d4?dryRun=all`, { data: { k: 'x' } }, 'application/merge-patch+json'],
      ['DELETE', `${CM}/d4?dryRun=Yes`, undefined],
    ];
    for (const [method, path, body, type] of cases) {
      const r = await req(method, path, body, type);
      expect(r.status, `${method} ${path}`).toBe(422);
      const s = r.json<Obj>();
      expect(s.reason).toBe('Invalid');
      expect(s.details.causes[0].field).toBe('dryRun');
    }
    const stored = (await t.request('GET', `${CM}/d4`)).json<Obj>();
    expect(stored.metadata.resourceVersion).toBe(c.metadata.resourceVersion);
    expect((await t.request('GET', `${CM}/d4-new`)).status).toBe(404);
  });

  it('an empty dryRun value is a normal request', async () => {
    const r = await req('POST', `${CM}?dryRun=`, { metadata: { name: 'd5' }, data: {} });
    expect(r.status).toBe(201);
    expect((await t.request('GET', `${CM}/d5`)).status).toBe(200);
  });
});
