// Server-side apply and managedFields over HTTP against a real server
// (spec 000 §2.4, §4.9, §7): create via apply, idempotent re-apply, shared
// ownership, conflicts (409 with one FieldManagerConflict cause per field),
// force, giving fields up, map lists, Update entries for PUT and non-apply
// PATCH (manager from fieldManager or User-Agent), managedFields reset rules.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RawResponse, type TestServer, startTestServer } from '../helpers/server.js';

let t: TestServer;
type Obj = Record<string, any>;

const CM = '/api/v1/namespaces/default/configmaps';
const PODS = '/api/v1/namespaces/default/pods';
const APPLY = 'application/apply-patch+yaml';

function apply(path: string, body: string | object, query: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  return t.request('PATCH', `${path}${query}`, {
    body: typeof body === 'string' ? body : JSON.stringify(body),
    headers: { 'Content-Type': APPLY, ...headers },
  });
}

function cmYaml(name: string, data: Record<string, string>, extra = ''): string {
  const lines = Object.entries(data).map(([k, v]) => `  ${k}: "${v}"`);
  return `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n${extra}data:\n${lines.join('\n')}\n`;
}

async function get(path: string): Promise<Obj> {
  const r = await t.request('GET', path);
  expect(r.status, r.text).toBe(200);
  return r.json<Obj>();
}

function entry(obj: Obj, manager: string, operation?: string): Obj | undefined {
  return (obj.metadata.managedFields as Obj[] | undefined)?.find(
    (e) => e.manager === manager && (operation === undefined || e.operation === operation),
  );
}

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t?.stop();
});

describe('apply creates and is idempotent', () => {
  it('creates with 201, then re-applying the same configuration is a no-op (same resourceVersion)', async () => {
    const first = await apply(`${CM}/a1`, cmYaml('a1', { k: 'v' }), '?fieldManager=m1');
    expect(first.status, first.text).toBe(201);
    const created = first.json<Obj>();
    expect(created.kind).toBe('ConfigMap');
    expect(created.apiVersion).toBe('v1');
    expect(created.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.metadata.managedFields).toEqual([
      {
        manager: 'm1',
        operation: 'Apply',
        apiVersion: 'v1',
        time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:data': { 'f:k': {} } },
      },
    ]);
    // key order of an entry is Kubernetes'
    expect(Object.keys(created.metadata.managedFields[0])).toEqual(['manager', 'operation', 'apiVersion', 'time', 'fieldsType', 'fieldsV1']);

    const second = await apply(`${CM}/a1`, cmYaml('a1', { k: 'v' }), '?fieldManager=m1');
    expect(second.status, second.text).toBe(200);
    expect(second.json<Obj>().metadata.resourceVersion).toBe(created.metadata.resourceVersion);
    expect(second.json<Obj>()).toEqual(created);
    expect((await get(`${CM}/a1`)).metadata.resourceVersion).toBe(created.metadata.resourceVersion);
  });

  it('accepts JSON bodies (JSON is YAML)', async () => {
    const r = await apply(`${CM}/a2`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a2' }, data: { x: 'y' } }, '?fieldManager=m1');
    expect(r.status, r.text).toBe(201);
    expect(r.json<Obj>().data).toEqual({ x: 'y' });
  });

  it('changes a field it owns and keeps the entry single', async () => {
    await apply(`${CM}/a3`, cmYaml('a3', { k: 'v' }), '?fieldManager=m1');
    const r = await apply(`${CM}/a3`, cmYaml('a3', { k: 'w', l: 'x' }), '?fieldManager=m1');
    expect(r.status, r.text).toBe(200);
    const o = r.json<Obj>();
    expect(o.data).toEqual({ k: 'w', l: 'x' });
    expect(o.metadata.managedFields).toHaveLength(1);
    expect(o.metadata.managedFields[0].fieldsV1).toEqual({ 'f:data': { 'f:k': {}, 'f:l': {} } });
  });
});

describe('apply request errors', () => {
  it('fieldManager is required: 422 Invalid naming fieldManager', async () => {
    const r = await apply(`${CM}/e1`, cmYaml('e1', { k: 'v' }), '');
    expect(r.status).toBe(422);
    const s = r.json<Obj>();
    expect(s.reason).toBe('Invalid');
    expect(s.details.causes[0].field).toBe('fieldManager');
    expect(s.message).toContain('fieldManager');
    expect((await t.request('GET', `${CM}/e1`)).status).toBe(404);
  });

  it('a fieldManager longer than 128 bytes is 422', async () => {
    const r = await apply(`${CM}/e1`, cmYaml('e1', { k: 'v' }), `?fieldManager=${'m'.repeat(129)}`);
    expect(r.status).toBe(422);
    expect(r.json<Obj>().details.causes[0].field).toBe('fieldManager');
  });

  it('managedFields in the configuration is 400', async () => {
    const r = await apply(
      `${CM}/e2`,
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: e2\n  managedFields:\n  - manager: x\ndata:\n  k: v\n',
      '?fieldManager=m1',
    );
    expect(r.status).toBe(400);
    expect(r.json<Obj>().message).toContain('managedFields');
  });

  it('a body that is not an object is 400; wrong kind or apiVersion is 400', async () => {
    for (const body of ['- a\n- b\n', '"text"', '42', 'a: [']) {
      const r = await apply(`${CM}/e3`, body, '?fieldManager=m1');
      expect(r.status, body).toBe(400);
      expect(r.json<Obj>().reason).toBe('BadRequest');
    }
    const k = await apply(`${CM}/e3`, 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: e3\n', '?fieldManager=m1');
    expect(k.status).toBe(400);
    const v = await apply(`${CM}/e3`, 'apiVersion: v2\nkind: ConfigMap\nmetadata:\n  name: e3\n', '?fieldManager=m1');
    expect(v.status).toBe(400);
    const n = await apply(`${CM}/e3`, cmYaml('other', { k: 'v' }), '?fieldManager=m1');
    expect(n.status).toBe(400);
    expect((await t.request('GET', `${CM}/e3`)).status).toBe(404);
  });

  it('a resourceVersion in the configuration is a precondition', async () => {
    const c = (await apply(`${CM}/e4`, cmYaml('e4', { k: 'v' }), '?fieldManager=m1')).json<Obj>();
    await apply(`${CM}/e4`, cmYaml('e4', { k: 'w' }), '?fieldManager=m1');
    const stale = await apply(`${CM}/e4`, cmYaml('e4', { k: 'x' }, `  resourceVersion: "${c.metadata.resourceVersion}"\n`), '?fieldManager=m1');
    expect(stale.status).toBe(409);
    expect((await get(`${CM}/e4`)).data).toEqual({ k: 'w' });
    // on an absent object the precondition cannot hold: 409, nothing created (PUT alike, every kind)
    const absent = await apply(`${CM}/e4-none`, cmYaml('e4-none', { k: 'x' }, '  resourceVersion: "5"\n'), '?fieldManager=m1');
    expect(absent.status).toBe(409);
    const put = await t.request('PUT', `${CM}/e4-none`, { body: { metadata: { name: 'e4-none', resourceVersion: '5' }, data: {} } });
    expect(put.status).toBe(409);
    expect((await t.request('GET', `${CM}/e4-none`)).status).toBe(404);
    const EP = CM.replace('/configmaps', '/endpoints');
    const putEp = await t.request('PUT', `${EP}/e4-none`, { body: { metadata: { name: 'e4-none', resourceVersion: '5' } } });
    expect(putEp.status).toBe(409);
    expect((await t.request('GET', `${EP}/e4-none`)).status).toBe(404);
  });
});

describe('ownership between managers', () => {
  it('same value → shared ownership; a later change conflicts (409, one cause per field naming the manager)', async () => {
    await apply(`${CM}/o1`, cmYaml('o1', { a: '1', b: '2' }), '?fieldManager=alice');
    const shared = await apply(`${CM}/o1`, cmYaml('o1', { a: '1', b: '2' }), '?fieldManager=bob');
    expect(shared.status, shared.text).toBe(200);
    const o = shared.json<Obj>();
    expect(entry(o, 'alice', 'Apply')!.fieldsV1).toEqual({ 'f:data': { 'f:a': {}, 'f:b': {} } });
    expect(entry(o, 'bob', 'Apply')!.fieldsV1).toEqual({ 'f:data': { 'f:a': {}, 'f:b': {} } });

    const c = await apply(`${CM}/o1`, cmYaml('o1', { a: 'x', b: 'y' }), '?fieldManager=alice');
    expect(c.status).toBe(409);
    const s = c.json<Obj>();
    expect(s.kind).toBe('Status');
    expect(s.status).toBe('Failure');
    expect(s.reason).toBe('Conflict');
    expect(s.code).toBe(409);
    // Kubernetes' wording: conflicts grouped per manager
    expect(s.message).toBe('Apply failed with 2 conflicts: conflicts with "bob":\n- .data.a\n- .data.b');
    expect(s.details.causes).toEqual([
      { reason: 'FieldManagerConflict', message: 'conflict with "bob"', field: '.data.a' },
      { reason: 'FieldManagerConflict', message: 'conflict with "bob"', field: '.data.b' },
    ]);
    expect((await get(`${CM}/o1`)).data).toEqual({ a: '1', b: '2' });
  });

  it('force=true takes the fields from the other manager', async () => {
    await apply(`${CM}/o2`, cmYaml('o2', { a: '1', b: '2' }), '?fieldManager=alice');
    const c = await apply(`${CM}/o2`, cmYaml('o2', { a: 'x' }), '?fieldManager=bob');
    expect(c.status).toBe(409);
    expect(c.json<Obj>().details.causes).toEqual([{ reason: 'FieldManagerConflict', message: 'conflict with "alice"', field: '.data.a' }]);
    const f = await apply(`${CM}/o2`, cmYaml('o2', { a: 'x' }), '?fieldManager=bob&force=true');
    expect(f.status, f.text).toBe(200);
    const o = f.json<Obj>();
    expect(o.data).toEqual({ a: 'x', b: '2' });
    expect(entry(o, 'alice', 'Apply')!.fieldsV1).toEqual({ 'f:data': { 'f:b': {} } });
    expect(entry(o, 'bob', 'Apply')!.fieldsV1).toEqual({ 'f:data': { 'f:a': {} } });
  });

  it('a conflict with an Update owner names it (kubectl edit style write, then apply)', async () => {
    await apply(`${CM}/o3`, cmYaml('o3', { a: '1' }), '?fieldManager=alice');
    const p = await t.request('PATCH', `${CM}/o3?fieldManager=editor`, {
      body: JSON.stringify({ data: { a: '2' } }),
      headers: { 'Content-Type': 'application/merge-patch+json' },
    });
    expect(p.status, p.text).toBe(200);
    expect(entry(p.json<Obj>(), 'editor', 'Update')!.fieldsV1).toEqual({ 'f:data': { 'f:a': {} } });
    // the Update took the field from alice (an update never conflicts)
    expect(entry(p.json<Obj>(), 'alice')).toBeUndefined();
    const c = await apply(`${CM}/o3`, cmYaml('o3', { a: '3' }), '?fieldManager=bob');
    expect(c.status).toBe(409);
    expect(c.json<Obj>().details.causes[0]).toEqual({
      reason: 'FieldManagerConflict',
      // an Update owner is named with its API version, as Kubernetes does
      message: 'conflict with "editor" using v1',
      field: '.data.a',
    });
  });

  it('giving a field up removes it when nobody else owns it, keeps it when shared', async () => {
    await apply(`${CM}/o4`, cmYaml('o4', { a: '1', b: '2', c: '3' }), '?fieldManager=alice');
    await apply(`${CM}/o4`, cmYaml('o4', { c: '3' }), '?fieldManager=bob');
    const r = await apply(`${CM}/o4`, cmYaml('o4', { a: '1' }), '?fieldManager=alice');
    expect(r.status, r.text).toBe(200);
    // b was alice's alone: removed; c is still bob's: kept
    expect(r.json<Obj>().data).toEqual({ a: '1', c: '3' });
  });

  it('map lists: two managers own different containers of a pod by name', async () => {
    const pod = (containers: string) =>
      `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ap1\nspec:\n  containers:\n${containers}`;
    const r1 = await apply(`${PODS}/ap1`, pod('  - name: web\n    image: nginx:1\n'), '?fieldManager=alice');
    expect(r1.status, r1.text).toBe(201);
    const fields = entry(r1.json<Obj>(), 'alice', 'Apply')!.fieldsV1;
    expect(fields['f:spec']['f:containers']['k:{"name":"web"}']).toEqual({ '.': {}, 'f:image': {}, 'f:name': {} });
    const r2 = await apply(`${PODS}/ap1`, pod('  - name: web\n    image: nginx:1\n'), '?fieldManager=bob');
    expect(r2.status, r2.text).toBe(200);
    const r3 = await apply(`${PODS}/ap1`, pod('  - name: web\n    image: nginx:2\n'), '?fieldManager=bob');
    expect(r3.status).toBe(409);
    expect(r3.json<Obj>().details.causes).toEqual([
      { reason: 'FieldManagerConflict', message: 'conflict with "alice"', field: '.spec.containers[name="web"].image' },
    ]);
  });

  it('sets: finalizers are owned item by item', async () => {
    const withFinalizers = (items: string[]) =>
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: o6\n  finalizers:\n${items.map((f) => `  - ${f}\n`).join('')}`;
    expect((await apply(`${CM}/o6`, withFinalizers(['example.com/a']), '?fieldManager=alice')).status).toBe(201);
    const r = await apply(`${CM}/o6`, withFinalizers(['example.com/b']), '?fieldManager=bob');
    expect(r.status, r.text).toBe(200);
    const o = r.json<Obj>();
    expect([...o.metadata.finalizers].sort()).toEqual(['example.com/a', 'example.com/b']);
    expect(entry(o, 'bob', 'Apply')!.fieldsV1).toEqual({ 'f:metadata': { 'f:finalizers': { 'v:"example.com/b"': {} } } });
    // alice gives hers up: only bob's remains
    const g = await apply(`${CM}/o6`, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: o6\n', '?fieldManager=alice');
    expect(g.status, g.text).toBe(200);
    expect(g.json<Obj>().metadata.finalizers).toEqual(['example.com/b']);
    // clean up so the object can go
    await apply(`${CM}/o6`, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: o6\n', '?fieldManager=bob');
  });

  it('labels are a granular map: each manager owns its own keys', async () => {
    await apply(`${CM}/o5`, cmYaml('o5', { a: '1' }, '  labels:\n    one: "1"\n'), '?fieldManager=alice');
    const r = await apply(`${CM}/o5`, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: o5\n  labels:\n    two: "2"\n', '?fieldManager=bob');
    expect(r.status, r.text).toBe(200);
    const o = r.json<Obj>();
    expect(o.metadata.labels).toEqual({ one: '1', two: '2' });
    expect(entry(o, 'bob', 'Apply')!.fieldsV1).toEqual({ 'f:metadata': { 'f:labels': { 'f:two': {} } } });
  });
});

describe('Update entries for PUT and non-apply PATCH', () => {
  it('POST and PUT record Update entries with the fieldManager', async () => {
    const c = await t.request('POST', `${CM}?fieldManager=creator`, { body: { metadata: { name: 'u1' }, data: { a: '1' } } });
    expect(c.status, c.text).toBe(201);
    expect(c.json<Obj>().metadata.managedFields).toEqual([
      {
        manager: 'creator',
        operation: 'Update',
        apiVersion: 'v1',
        time: expect.any(String),
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:data': { '.': {}, 'f:a': {} } },
      },
    ]);
    const cur = c.json<Obj>();
    const u = await t.request('PUT', `${CM}/u1?fieldManager=replacer`, {
      body: { ...cur, data: { a: '1', b: '2' } },
    });
    expect(u.status, u.text).toBe(200);
    const o = u.json<Obj>();
    expect(entry(o, 'creator', 'Update')!.fieldsV1).toEqual({ 'f:data': { '.': {}, 'f:a': {} } });
    expect(entry(o, 'replacer', 'Update')!.fieldsV1).toEqual({ 'f:data': { 'f:b': {} } });
  });

  it('without fieldManager the manager is the User-Agent product', async () => {
    const ua = { 'User-Agent': 'kubectl/v1.32.0 (linux/amd64) kubernetes/abcdef' };
    const c = await t.request('POST', CM, { body: { metadata: { name: 'u2' }, data: { a: '1' } }, headers: ua });
    expect(c.status, c.text).toBe(201);
    expect(c.json<Obj>().metadata.managedFields[0].manager).toBe('kubectl');
    const p = await t.request('PATCH', `${CM}/u2`, {
      body: JSON.stringify({ data: { b: '2' } }),
      headers: { 'Content-Type': 'application/merge-patch+json', 'User-Agent': 'my-controller/1.0' },
    });
    expect(p.status, p.text).toBe(200);
    expect(entry(p.json<Obj>(), 'my-controller', 'Update')!.fieldsV1).toEqual({ 'f:data': { 'f:b': {} } });
    const jp = await t.request('PATCH', `${CM}/u2?fieldManager=jp`, {
      body: JSON.stringify([{ op: 'add', path: '/data/c', value: '3' }]),
      headers: { 'Content-Type': 'application/json-patch+json', 'User-Agent': 'ignored/1.0' },
    });
    expect(jp.status, jp.text).toBe(200);
    expect(entry(jp.json<Obj>(), 'jp', 'Update')!.fieldsV1).toEqual({ 'f:data': { 'f:c': {} } });
    expect(entry(jp.json<Obj>(), 'ignored')).toBeUndefined();
  });

  it('a bad fieldManager on POST/PUT/PATCH is 422 Invalid on the options kind', async () => {
    const long = await t.request('POST', `${CM}?fieldManager=${'x'.repeat(129)}`, { body: { metadata: { name: 'u-bad' } } });
    expect(long.status).toBe(422);
    expect(long.json<Obj>().details).toMatchObject({ kind: 'CreateOptions', causes: [{ field: 'fieldManager', reason: 'FieldValueTooLong' }] });
    const ctrl = await t.request('POST', `${CM}?fieldManager=a%01b`, { body: { metadata: { name: 'u-bad' } } });
    expect(ctrl.status).toBe(422);
    expect(ctrl.json<Obj>().details.causes[0].field).toBe('fieldManager');
    expect((await t.request('GET', `${CM}/u-bad`)).status).toBe(404);
    const p = await t.request('PATCH', `${CM}/u-bad?fieldManager=${'x'.repeat(129)}`, {
      body: '{}',
      headers: { 'Content-Type': 'application/merge-patch+json' },
    });
    expect(p.status).toBe(422);
    expect(p.json<Obj>().details.kind).toBe('PatchOptions');
  });

  it('an update that changes nothing leaves managedFields (and the resourceVersion) alone', async () => {
    const c = (await t.request('POST', `${CM}?fieldManager=m`, { body: { metadata: { name: 'u3' }, data: { a: '1' } } })).json<Obj>();
    const p = await t.request('PATCH', `${CM}/u3?fieldManager=other`, {
      body: JSON.stringify({ data: { a: '1' } }),
      headers: { 'Content-Type': 'application/merge-patch+json' },
    });
    expect(p.status).toBe(200);
    expect(p.json<Obj>().metadata.resourceVersion).toBe(c.metadata.resourceVersion);
    expect(p.json<Obj>().metadata.managedFields).toEqual(c.metadata.managedFields);
  });
});

describe('managedFields reset rules (spec 000 §4.9)', () => {
  it('[{}] strips managedFields; [] does not reset', async () => {
    await apply(`${CM}/r1`, cmYaml('r1', { a: '1' }), '?fieldManager=alice');
    const empty = await t.request('PATCH', `${CM}/r1?fieldManager=x`, {
      body: JSON.stringify({ metadata: { managedFields: [] } }),
      headers: { 'Content-Type': 'application/merge-patch+json' },
    });
    expect(empty.status, empty.text).toBe(200);
    expect(entry(empty.json<Obj>(), 'alice', 'Apply')).toBeDefined();

    const reset = await t.request('PATCH', `${CM}/r1?fieldManager=x`, {
      body: JSON.stringify({ metadata: { managedFields: [{}] } }),
      headers: { 'Content-Type': 'application/merge-patch+json' },
    });
    expect(reset.status, reset.text).toBe(200);
    expect(reset.json<Obj>().metadata.managedFields).toBeUndefined();
    expect((await get(`${CM}/r1`)).metadata.managedFields).toBeUndefined();
    // with nobody owning anything, a different applier no longer conflicts
    const b = await apply(`${CM}/r1`, cmYaml('r1', { a: '2' }), '?fieldManager=bob');
    expect(b.status, b.text).toBe(200);
  });

  it('reset combined with a change: the writer then owns what it changed', async () => {
    await apply(`${CM}/r2`, cmYaml('r2', { a: '1' }), '?fieldManager=alice');
    const cur = await get(`${CM}/r2`);
    const u = await t.request('PUT', `${CM}/r2?fieldManager=resetter`, {
      body: { ...cur, metadata: { ...cur.metadata, managedFields: [{}] }, data: { a: '1', b: '2' } },
    });
    expect(u.status, u.text).toBe(200);
    const mf = u.json<Obj>().metadata.managedFields as Obj[];
    expect(mf).toHaveLength(1);
    expect(mf[0]!.manager).toBe('resetter');
    expect(mf[0]!.operation).toBe('Update');
    expect(mf[0]!.fieldsV1).toEqual({ 'f:data': { 'f:b': {} } });
  });

  it('a client may replace managedFields with its own entries', async () => {
    await apply(`${CM}/r3`, cmYaml('r3', { a: '1' }), '?fieldManager=alice');
    const mine = [{ manager: 'carol', operation: 'Apply', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:a': {} } } }];
    const p = await t.request('PATCH', `${CM}/r3?fieldManager=x`, {
      body: JSON.stringify({ metadata: { managedFields: mine } }),
      headers: { 'Content-Type': 'application/merge-patch+json' },
    });
    expect(p.status, p.text).toBe(200);
    const mf = p.json<Obj>().metadata.managedFields as Obj[];
    expect(mf.map((e) => e.manager)).toEqual(['carol']);
    const c = await apply(`${CM}/r3`, cmYaml('r3', { a: '2' }), '?fieldManager=dave');
    expect(c.status).toBe(409);
    expect(c.json<Obj>().details.causes[0].message).toBe('conflict with "carol"');
  });
});
