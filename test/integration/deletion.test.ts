// Deletion against a real server (spec 000 §3.1, §2.6, §4.7, §4.10):
// finalizers and deletionTimestamp, preconditions, dry run, deletecollection
// with selectors, namespace deletion, graceful pods.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

let t: TestServer;
const CMS = '/api/v1/namespaces/default/configmaps';

type Obj = { metadata: Record<string, unknown> & { name: string; uid: string; resourceVersion: string }; [k: string]: unknown };

async function create(name: string, meta: Record<string, unknown> = {}, path = CMS): Promise<Obj> {
  const r = await t.request('POST', path, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...meta }, data: { a: '1' } } });
  expect(r.status, r.text).toBe(201);
  return r.json<Obj>();
}

async function get(name: string, path = CMS): Promise<{ status: number; obj: Obj }> {
  const r = await t.request('GET', `${path}/${name}`);
  return { status: r.status, obj: r.json<Obj>() };
}

async function removeFinalizers(name: string, path = CMS): Promise<number> {
  const r = await t.request('PATCH', `${path}/${name}`, {
    body: { metadata: { finalizers: null } },
    headers: { 'Content-Type': 'application/merge-patch+json' },
  });
  return r.status;
}

/** polls until `f` holds (the namespace controller and the GC are asynchronous) */
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t?.stop();
});

describe('finalizers and deletionTimestamp (spec 000 §3.1)', () => {
  it('an object without finalizers is removed at once', async () => {
    await create('plain');
    const r = await t.request('DELETE', `${CMS}/plain`);
    expect(r.status).toBe(200);
    expect((await get('plain')).status).toBe(404);
  });

  it('finalizers keep the object Terminating until the last one is removed', async () => {
    await create('held', { finalizers: ['example.com/a', 'example.com/b'] });
    const del = await t.request('DELETE', `${CMS}/held`);
    expect(del.status).toBe(200);
    const marked = del.json<Obj>();
    expect(typeof marked.metadata.deletionTimestamp).toBe('string');
    expect(marked.metadata.deletionGracePeriodSeconds).toBe(0);

    const g = await get('held');
    expect(g.status).toBe(200);
    expect(g.obj.metadata.deletionTimestamp).toBe(marked.metadata.deletionTimestamp);

    // a second delete keeps the first deletionTimestamp and writes nothing
    const again = await t.request('DELETE', `${CMS}/held`);
    expect(again.json<Obj>().metadata.resourceVersion).toBe(g.obj.metadata.resourceVersion);

    // no new finalizer on a Terminating object
    const add = await t.request('PATCH', `${CMS}/held`, {
      body: [{ op: 'add', path: '/metadata/finalizers/-', value: 'example.com/c' }],
      headers: { 'Content-Type': 'application/json-patch+json' },
    });
    expect(add.status).toBe(422);
    expect(add.text).toContain('no new finalizers');

    // removing one finalizer: still Terminating
    const one = await t.request('PATCH', `${CMS}/held`, {
      body: [{ op: 'remove', path: '/metadata/finalizers/0' }],
      headers: { 'Content-Type': 'application/json-patch+json' },
    });
    expect(one.status, one.text).toBe(200);
    expect((await get('held')).obj.metadata.finalizers).toEqual(['example.com/b']);

    // removing the last: Removed
    expect(await removeFinalizers('held')).toBe(200);
    expect((await get('held')).status).toBe(404);
  });

  it('a replace (PUT) that empties the finalizers removes a Terminating object', async () => {
    await create('put-held', { finalizers: ['example.com/a'] });
    await t.request('DELETE', `${CMS}/put-held`);
    const cur = (await get('put-held')).obj;
    const r = await t.request('PUT', `${CMS}/put-held`, { body: { ...cur, metadata: { ...cur.metadata, finalizers: [] } } });
    expect(r.status, r.text).toBe(200);
    expect((await get('put-held')).status).toBe(404);
  });
});

describe('preconditions (spec 000 §2.6)', () => {
  it('a uid or resourceVersion that does not match is 409; matching ones delete', async () => {
    const o = await create('pre');
    let r = await t.request('DELETE', `${CMS}/pre`, { body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: 'not-the-uid' } } });
    expect(r.status).toBe(409);
    // kube's rest.BeforeDelete: a Conflict on the kind, not the resource
    expect(r.json()).toEqual({
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'Conflict', code: 409,
      message: `Operation cannot be fulfilled on ConfigMap "pre": the UID in the precondition (not-the-uid) does not match the UID in record (${o.metadata.uid}). The object might have been deleted and then recreated`,
      details: { name: 'pre', kind: 'ConfigMap' },
    });
    r = await t.request('DELETE', `${CMS}/pre`, { body: { preconditions: { resourceVersion: '1' } } });
    expect(r.status).toBe(409);
    expect(r.json<{ message: string }>().message).toBe(
      `Operation cannot be fulfilled on ConfigMap "pre": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (${o.metadata.resourceVersion}). The object might have been modified`,
    );
    expect((await get('pre')).status).toBe(200);
    r = await t.request('DELETE', `${CMS}/pre`, {
      body: { preconditions: { uid: o.metadata.uid, resourceVersion: o.metadata.resourceVersion } },
    });
    expect(r.status, r.text).toBe(200);
    expect((await get('pre')).status).toBe(404);
  });
});

describe('delete options (kube ValidateDeleteOptions, rest.BeforeDelete)', () => {
  const invalidOptions = (causes: { reason: string; field: string; message: string }[]) => ({
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'Invalid', code: 422,
    message: `DeleteOptions.meta.orch.io "" is invalid: ${causes.length === 1 ? `${causes[0]!.field}: ${causes[0]!.message}` : `[${causes.map((c) => `${c.field}: ${c.message}`).join(', ')}]`}`,
    details: { group: 'meta.orch.io', kind: 'DeleteOptions', causes },
  });

  it('an unknown propagationPolicy, or one with orphanDependents, is 422 on DeleteOptions; nothing is deleted', async () => {
    await create('opt-bad');
    let r = await t.request('DELETE', `${CMS}/opt-bad?propagationPolicy=Foo`);
    expect(r.status, r.text).toBe(422);
    expect(r.json()).toEqual(invalidOptions([
      { reason: 'FieldValueNotSupported', field: 'propagationPolicy', message: 'Unsupported value: "Foo": supported values: "Foreground", "Background", "Orphan", "nil"' },
    ]));
    r = await t.request('DELETE', `${CMS}/opt-bad`, { body: { orphanDependents: true, propagationPolicy: 'Background' } });
    expect(r.status, r.text).toBe(422);
    expect(r.json()).toEqual(invalidOptions([
      { reason: 'FieldValueInvalid', field: 'propagationPolicy', message: 'Invalid value: "Background": orphanDependents and deletionPropagation cannot be both set' },
    ]));
    // every error at once, in kube's order; checked before the object is read (an absent one too)
    r = await t.request('DELETE', `${CMS}/opt-absent?orphanDependents=false&propagationPolicy=Foo&dryRun=x`);
    expect(r.json()).toEqual(invalidOptions([
      { reason: 'FieldValueInvalid', field: 'propagationPolicy', message: 'Invalid value: "Foo": orphanDependents and deletionPropagation cannot be both set' },
      { reason: 'FieldValueNotSupported', field: 'propagationPolicy', message: 'Unsupported value: "Foo": supported values: "Foreground", "Background", "Orphan", "nil"' },
      { reason: 'FieldValueNotSupported', field: 'dryRun', message: 'Unsupported value: []string{"x"}: supported values: "All"' },
    ]));
    // deletecollection validates them too
    expect((await t.request('DELETE', `${CMS}?propagationPolicy=Foo`)).status).toBe(422);
    expect((await get('opt-bad')).status).toBe(200);
  });

  it('a negative gracePeriodSeconds is taken as 1: a ConfigMap goes, a pod on a node gets one second', async () => {
    await create('opt-neg');
    const r = await t.request('DELETE', `${CMS}/opt-neg?gracePeriodSeconds=-5`);
    expect(r.status, r.text).toBe(200);
    expect((await get('opt-neg')).status).toBe(404);
    const PODS = '/api/v1/namespaces/default/pods';
    const c = await t.request('POST', PODS, { body: { metadata: { name: 'p-neg' }, spec: { nodeName: 'node-1', containers: [{ name: 'c', image: 'busybox' }] } } });
    expect(c.status, c.text).toBe(201);
    const d = await t.request('DELETE', `${PODS}/p-neg`, { body: { gracePeriodSeconds: -5 } });
    expect(d.status, d.text).toBe(200);
    expect(d.json<Obj>().metadata.deletionGracePeriodSeconds).toBe(1);
    expect((await t.request('DELETE', `${PODS}/p-neg?gracePeriodSeconds=0`)).status).toBe(200);
  });
});

describe('dry run (spec 000 §4.7)', () => {
  it('dryRun=All stores nothing, emits no watch event and returns the would-be result', async () => {
    const plain = await create('dry-plain');
    const held = await create('dry-held', { finalizers: ['example.com/a'] });
    const from = held.metadata.resourceVersion;

    let r = await t.request('DELETE', `${CMS}/dry-plain?dryRun=All`);
    expect(r.status).toBe(200);
    // a ConfigMap that would be removed: kube's Success Status naming it (finalizeDelete)
    expect(r.json<Obj>()).toMatchObject({ kind: 'Status', status: 'Success', details: { name: 'dry-plain', kind: 'configmaps', uid: plain.metadata.uid } });
    r = await t.request('DELETE', `${CMS}/dry-held?dryRun=All`);
    expect(r.status).toBe(200);
    expect(typeof r.json<Obj>().metadata.deletionTimestamp).toBe('string');
    r = await t.request('DELETE', CMS + '?dryRun=All&labelSelector=' + encodeURIComponent('!nothing'));
    expect(r.status).toBe(200);

    const p = await get('dry-plain');
    expect(p.status).toBe(200);
    expect(p.obj.metadata.resourceVersion).toBe(plain.metadata.resourceVersion);
    const h = await get('dry-held');
    expect(h.obj.metadata.deletionTimestamp).toBeUndefined();
    expect(h.obj.metadata.resourceVersion).toBe(held.metadata.resourceVersion);

    // the only event after `from` is the marker written now
    await create('dry-marker');
    const w = await t.request('GET', `${CMS}?watch=1&resourceVersion=${from}&timeoutSeconds=1`);
    const events = w.text
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as { type: string; object: Obj });
    expect(events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual(['ADDED dry-marker']);
  });
});

describe('deletecollection with selectors', () => {
  it('deletes what matches the label selector; finalizers keep theirs Terminating', async () => {
    await create('dc-a', { labels: { app: 'dc' } });
    await create('dc-b', { labels: { app: 'dc' }, finalizers: ['example.com/a'] });
    await create('dc-other', { labels: { app: 'other' } });

    const dry = await t.request('DELETE', `${CMS}?labelSelector=app%3Ddc&dryRun=All`);
    expect(dry.status).toBe(200);
    expect((await get('dc-a')).status).toBe(200);

    const r = await t.request('DELETE', `${CMS}?labelSelector=app%3Ddc`);
    expect(r.status, r.text).toBe(200);
    const body = r.json<{ kind: string; items: Obj[] }>();
    expect(body.kind).toBe('ConfigMapList');
    expect(body.items.map((i) => i.metadata.name).sort()).toEqual(['dc-a', 'dc-b']);

    expect((await get('dc-a')).status).toBe(404);
    const b = await get('dc-b');
    expect(b.status).toBe(200);
    expect(typeof b.obj.metadata.deletionTimestamp).toBe('string');
    expect((await get('dc-other')).status).toBe(200);

    expect(await removeFinalizers('dc-b')).toBe(200);
    expect((await get('dc-b')).status).toBe(404);
  });

  it('with limit deletes one page and answers it with its continue token', async () => {
    for (const n of ['dl-1', 'dl-2', 'dl-3']) await create(n, { labels: { app: 'dl' } });
    const r = await t.request('DELETE', `${CMS}?labelSelector=app%3Ddl&limit=2`);
    expect(r.status, r.text).toBe(200);
    const page = r.json<{ metadata: { resourceVersion: string; continue?: string; remainingItemCount?: number }; items: Obj[] }>();
    expect(page.items.map((i) => i.metadata.name)).toEqual(['dl-1', 'dl-2']);
    // a label selector leaves the count unknown (kube's too)
    expect(page.metadata.remainingItemCount).toBeUndefined();
    expect(page.metadata.continue).toBeTruthy();
    expect((await get('dl-1')).status).toBe(404);
    expect((await get('dl-2')).status).toBe(404);
    expect((await get('dl-3')).status).toBe(200);
    // the token goes on with the rest
    const rest = await t.request('DELETE', `${CMS}?labelSelector=app%3Ddl&limit=2&continue=${encodeURIComponent(page.metadata.continue!)}`);
    expect(rest.status, rest.text).toBe(200);
    expect(rest.json<{ items: Obj[] }>().items.map((i) => i.metadata.name)).toEqual(['dl-3']);
    expect((await get('dl-3')).status).toBe(404);
  });

  it('deletes by field selector', async () => {
    await create('dc-f1');
    await create('dc-f2');
    const r = await t.request('DELETE', `${CMS}?fieldSelector=metadata.name%3Ddc-f1`);
    expect(r.status).toBe(200);
    expect((await get('dc-f1')).status).toBe(404);
    expect((await get('dc-f2')).status).toBe(200);
  });
});

describe('namespace deletion', () => {
  it('Terminating while content remains; content with finalizers holds it; then everything goes', async () => {
    const ns = await t.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'del-ns' } } });
    expect(ns.status).toBe(201);
    const path = '/api/v1/namespaces/del-ns/configmaps';
    await create('inside', {}, path);
    await create('inside-held', { finalizers: ['example.com/a'] }, path);

    const del = await t.request('DELETE', '/api/v1/namespaces/del-ns');
    expect(del.status).toBe(200);
    expect((del.json<{ status: { phase: string } }>()).status.phase).toBe('Terminating');

    await eventually(async () => (await get('inside', path)).status === 404, 'plain content deleted');
    await eventually(async () => typeof (await get('inside-held', path)).obj.metadata.deletionTimestamp === 'string', 'held content marked');
    const still = await t.request('GET', '/api/v1/namespaces/del-ns');
    expect(still.status).toBe(200);
    // the status conditions say what holds the namespace (as Kubernetes reports it)
    type Cond = { type: string; status: string; message: string };
    const conditions = async () =>
      (await t.request('GET', '/api/v1/namespaces/del-ns')).json<{ status: { conditions?: Cond[] } }>().status.conditions ?? [];
    await eventually(
      async () => (await conditions()).some((c) => c.type === 'NamespaceFinalizersRemaining' && c.status === 'True'),
      'finalizers condition',
    );
    const fin = (await conditions()).find((c) => c.type === 'NamespaceFinalizersRemaining')!;
    expect(fin.message).toContain('example.com/a in 1 resource instances');
    expect((await conditions()).find((c) => c.type === 'NamespaceContentRemaining')?.message).toContain('configmaps. has 1 resource instances');
    // nothing new may be created in a Terminating namespace
    const refused = await t.request('POST', path, { body: { metadata: { name: 'late' } } });
    expect(refused.status).toBe(403);

    expect(await removeFinalizers('inside-held', path)).toBe(200);
    await eventually(async () => (await t.request('GET', '/api/v1/namespaces/del-ns')).status === 404, 'namespace removed');
  });
});

describe('graceful deletion of pods', () => {
  const PODS = '/api/v1/namespaces/default/pods';
  const pod = (name: string, nodeName?: string) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: { ...(nodeName ? { nodeName } : {}), containers: [{ name: 'c', image: 'busybox' }] },
  });

  it('an unscheduled pod goes at once', async () => {
    expect((await t.request('POST', PODS, { body: pod('p-free') })).status).toBe(201);
    expect((await t.request('DELETE', `${PODS}/p-free`)).status).toBe(200);
    expect((await t.request('GET', `${PODS}/p-free`)).status).toBe(404);
  });

  it('a pod on a node is Terminating for its grace period until a zero-grace delete confirms', async () => {
    const c = await t.request('POST', PODS, { body: pod('p-bound', 'node-1') });
    expect(c.status, c.text).toBe(201);
    const del = await t.request('DELETE', `${PODS}/p-bound?gracePeriodSeconds=20`);
    expect(del.status).toBe(200);
    const marked = del.json<Obj>();
    expect(marked.metadata.deletionGracePeriodSeconds).toBe(20);
    expect(Date.parse(marked.metadata.deletionTimestamp as string)).toBeGreaterThan(Date.now());
    expect((await t.request('GET', `${PODS}/p-bound`)).status).toBe(200);
    expect((await t.request('DELETE', `${PODS}/p-bound`, { body: { gracePeriodSeconds: 0 } })).status).toBe(200);
    expect((await t.request('GET', `${PODS}/p-bound`)).status).toBe(404);
  });
});
