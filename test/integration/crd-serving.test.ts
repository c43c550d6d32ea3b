// Custom resources over HTTP (issue #16; spec 000 §2.3, §4.3, §4.8, §4.9):
// a CRD is served as soon as it is created, its objects are created, read as
// Tables with the printer columns, watched, patched (merge patch and
// server-side apply with the list markers), scaled through /scale and their
// status written through /status; protobuf and strategic merge patch are
// refused as the spec says; discovery and OpenAPI show the kind.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CRDS, type Obj, createCrd, fixture, operatorCrd } from '../helpers/crds.js';
import { type TestServer, startTestServer } from '../helpers/server.js';
import { openWatch } from '../helpers/watch-stream.js';

let t: TestServer;
const WA = '/apis/apps.example.com/v1/namespaces/default/webapps';
const TABLE = 'application/json;as=Table;g=meta.orch.io;v=v1';

beforeAll(async () => {
  t = await startTestServer();
  await createCrd(t, operatorCrd());
});
afterAll(async () => {
  await t?.stop();
});

const webapp = (name: string, spec: Obj = {}): Obj => ({
  apiVersion: 'apps.example.com/v1',
  kind: 'WebApp',
  metadata: { name },
  spec: { image: 'nginx:1.27', ...spec },
});

describe('serving a CRD kind', () => {
  it('creates, reads and lists objects with schema defaults and generation', async () => {
    const r = await t.request('POST', WA, { body: webapp('a1') });
    expect(r.status).toBe(201);
    const o = r.json<Obj>();
    // defaults from the schema (replicas 1, maxReplicas 10, tier frontend)
    expect(o.spec).toMatchObject({ image: 'nginx:1.27', replicas: 1, maxReplicas: 10, tier: 'frontend' });
    expect(o.metadata.generation).toBe(1);
    expect(o.metadata.uid).toBeTruthy();
    const g = await t.request('GET', `${WA}/a1`);
    expect(g.status).toBe(200);
    expect(g.json<Obj>().spec.replicas).toBe(1);
    const l = await t.request('GET', WA);
    expect(l.json<Obj>()).toMatchObject({ kind: 'WebAppList', apiVersion: 'apps.example.com/v1' });
    expect(l.json<Obj>().items.map((i: Obj) => i.metadata.name)).toContain('a1');
  });

  it('serves Table output with the printer columns (spec 000 §2.3)', async () => {
    await t.request('POST', WA, { body: webapp('tbl', { replicas: 3, ports: [{ name: 'http', port: 80 }] }) });
    await t.request('PUT', `${WA}/tbl/status`, {
      body: { ...(await t.request('GET', `${WA}/tbl`)).json<Obj>(), status: { replicas: 3, conditions: [{ type: 'Ready', status: 'True' }] } },
    });
    const r = await t.request('GET', `${WA}/tbl`, { headers: { Accept: TABLE } });
    expect(r.status).toBe(200);
    const table = r.json<Obj>();
    expect(table.kind).toBe('Table');
    expect(table.columnDefinitions.map((c: Obj) => c.name)).toEqual(['Name', 'Image', 'Replicas', 'Ready', 'Port', 'Age']);
    expect(table.columnDefinitions.find((c: Obj) => c.name === 'Port').priority).toBe(1);
    const cells = table.rows[0].cells;
    expect(cells.slice(0, 5)).toEqual(['tbl', 'nginx:1.27', 3, 'True', 80]);
    // a date column shows an age, as kubectl prints it
    expect(cells[5]).toMatch(/^\d+s$/);
  });

  it('filters lists by the selectable fields', async () => {
    await t.request('POST', WA, { body: webapp('sel-b', { tier: 'backend' }) });
    await t.request('POST', WA, { body: webapp('sel-f') });
    const r = await t.request('GET', `${WA}?fieldSelector=spec.tier%3Dbackend`);
    expect(r.status).toBe(200);
    expect(r.json<Obj>().items.map((i: Obj) => i.metadata.name)).toEqual(['sel-b']);
    const unknown = await t.request('GET', `${WA}?fieldSelector=spec.image%3Dx`);
    expect(unknown.status).toBe(400);
  });

  it('watches objects of the kind', async () => {
    const w = openWatch(t.server, `${WA}?watch=1&resourceVersion=0&fieldSelector=metadata.name%3Dwatched`);
    try {
      await new Promise((r) => setTimeout(r, 50));
      await t.request('POST', WA, { body: webapp('watched') });
      await t.request('PATCH', `${WA}/watched`, { body: { spec: { replicas: 2 } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
      await t.request('DELETE', `${WA}/watched`);
      const evs = await w.waitFor(3);
      expect(evs.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
      expect(evs[1]!.object.spec).toMatchObject({ replicas: 2 });
      expect(evs[0]!.object.apiVersion).toBe('apps.example.com/v1');
    } finally {
      w.close();
    }
  });

  it('merge patch changes the spec and bumps generation; status changes do not', async () => {
    await t.request('POST', WA, { body: webapp('mp') });
    const p = await t.request('PATCH', `${WA}/mp`, { body: { spec: { replicas: 4 } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
    expect(p.status).toBe(200);
    expect(p.json<Obj>().spec.replicas).toBe(4);
    expect(p.json<Obj>().metadata.generation).toBe(2);
    // the main resource ignores status (status sub-resource)
    const s = await t.request('PATCH', `${WA}/mp`, { body: { status: { replicas: 9 } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
    expect(s.json<Obj>().status).toBeUndefined();
    const st = await t.request('PATCH', `${WA}/mp/status`, { body: { status: { replicas: 9 }, spec: { replicas: 7 } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
    expect(st.status).toBe(200);
    expect(st.json<Obj>().status.replicas).toBe(9);
    expect(st.json<Obj>().spec.replicas).toBe(4);
    expect(st.json<Obj>().metadata.generation).toBe(2);
  });

  it('PUT needs a resourceVersion (kube: custom resources and CRDs allow no unconditional update)', async () => {
    await t.request('POST', WA, { body: webapp('rv') });
    for (const rv of [undefined, '0']) {
      const body = webapp('rv', { replicas: 2 });
      if (rv) body.metadata.resourceVersion = rv;
      const r = await t.request('PUT', `${WA}/rv`, { body });
      expect(r.status, r.text).toBe(422);
      expect(r.json<Obj>().message).toBe('webapps.apps.example.com "rv" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update');
      expect(r.json<Obj>().details).toMatchObject({ name: 'rv', group: 'apps.example.com', kind: 'webapps' });
    }
    const cur = (await t.request('GET', `${WA}/rv`)).json<Obj>();
    const ok = await t.request('PUT', `${WA}/rv`, { body: { ...cur, spec: { ...cur.spec, replicas: 2 } } });
    expect(ok.status, ok.text).toBe(200);
    const crdPath = `${CRDS}/webapps.apps.example.com`;
    const crd = (await t.request('GET', crdPath)).json<Obj>();
    delete crd.metadata.resourceVersion;
    const c = await t.request('PUT', crdPath, { body: crd });
    expect(c.status).toBe(422);
    expect(c.json<Obj>().message).toContain('metadata.resourceVersion: Invalid value: 0x0: must be specified for an update');
  });

  it('server-side apply honours the list markers (map list by name, set list) (spec 000 §4.9)', async () => {
    const apply = (manager: string, body: Obj, force = false) =>
      t.request('PATCH', `${WA}/ssa?fieldManager=${manager}${force ? '&force=true' : ''}`, { body: JSON.stringify(body), headers: { 'Content-Type': 'application/apply-patch+yaml' } });
    const a = await apply('alice', webapp('ssa', { ports: [{ name: 'http', port: 80 }], tags: ['a'] }));
    expect(a.status).toBe(201);
    // bob adds another port (a different key) and tag: merged, not replaced
    const b = await apply('bob', { apiVersion: 'apps.example.com/v1', kind: 'WebApp', metadata: { name: 'ssa' }, spec: { image: 'nginx:1.27', ports: [{ name: 'metrics', port: 9090 }], tags: ['b'] } });
    expect(b.status).toBe(200);
    const spec = b.json<Obj>().spec;
    expect(spec.ports).toEqual([{ name: 'http', port: 80 }, { name: 'metrics', port: 9090 }]);
    expect(spec.tags).toEqual(['a', 'b']);
    // changing alice's port is a conflict for bob
    const c = await apply('bob', { apiVersion: 'apps.example.com/v1', kind: 'WebApp', metadata: { name: 'ssa' }, spec: { image: 'nginx:1.27', ports: [{ name: 'http', port: 81 }] } });
    expect(c.status).toBe(409);
    expect(c.json<Obj>().message).toContain('.spec.ports[name="http"].port');
    // alice gives up her port entry: it goes, bob's stays
    const d = await apply('alice', webapp('ssa', { tags: ['a'] }));
    expect(d.json<Obj>().spec.ports).toEqual([{ name: 'metrics', port: 9090 }]);
    const mf = d.json<Obj>().metadata.managedFields as Obj[];
    expect(mf.map((e) => e.manager).sort()).toEqual(['alice', 'bob']);
  });

  it('refuses strategic merge patch with 415 (spec 000 §4.3)', async () => {
    await t.request('POST', WA, { body: webapp('smp') });
    const r = await t.request('PATCH', `${WA}/smp`, { body: { spec: { replicas: 2 } }, headers: { 'Content-Type': 'application/strategic-merge-patch+json' } });
    expect(r.status).toBe(415);
    expect(r.json<Obj>().reason).toBe('UnsupportedMediaType');
  });

  it('refuses protobuf: 406 when only protobuf is accepted, 415 for a protobuf body, JSON on fallback (spec 000 §4.3)', async () => {
    const only = await t.request('GET', WA, { headers: { Accept: 'application/vnd.orch.protobuf' } });
    expect(only.status).toBe(406);
    const fallback = await t.request('GET', WA, { headers: { Accept: 'application/vnd.orch.protobuf, application/json' } });
    expect(fallback.status).toBe(200);
    expect(fallback.headers['content-type']).toBe('application/json');
    const body = await t.request('POST', WA, { body: Buffer.from([0x6b, 0x38, 0x73, 0x00, 1, 2, 3]), headers: { 'Content-Type': 'application/vnd.orch.protobuf' } });
    expect(body.status).toBe(415);
  });

  it('scales through /scale (autoscaling/v1 Scale)', async () => {
    await t.request('POST', WA, { body: webapp('sc', { replicas: 2 }) });
    await t.request('PATCH', `${WA}/sc/status`, { body: { status: { replicas: 2, selector: 'app=sc' } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
    const g = await t.request('GET', `${WA}/sc/scale`);
    expect(g.status).toBe(200);
    expect(g.json<Obj>()).toMatchObject({ kind: 'Scale', apiVersion: 'autoscaling/v1', spec: { replicas: 2 }, status: { replicas: 2, selector: 'app=sc' } });
    const p = await t.request('PATCH', `${WA}/sc/scale`, { body: { spec: { replicas: 5 } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
    expect(p.status).toBe(200);
    expect(p.json<Obj>().spec.replicas).toBe(5);
    expect((await t.request('GET', `${WA}/sc`)).json<Obj>().spec.replicas).toBe(5);
    const put = await t.request('PUT', `${WA}/sc/scale`, { body: { kind: 'Scale', apiVersion: 'autoscaling/v1', metadata: { name: 'sc' }, spec: { replicas: 1 } } });
    expect(put.json<Obj>().spec.replicas).toBe(1);
  });

  it('shows the kind in discovery and the OpenAPI v2 and v3 documents', async () => {
    const d = (await t.request('GET', '/apis/apps.example.com/v1')).json<Obj>();
    const res = d.resources.find((r: Obj) => r.name === 'webapps');
    expect(res).toMatchObject({ singularName: 'webapp', namespaced: true, kind: 'WebApp', shortNames: ['wa'], categories: ['all', 'example'] });
    expect(d.resources.map((r: Obj) => r.name)).toEqual(expect.arrayContaining(['webapps/status', 'webapps/scale']));
    const groups = (await t.request('GET', '/apis')).json<Obj>().groups.map((g: Obj) => g.name);
    expect(groups).toContain('apps.example.com');
    const v3 = (await t.request('GET', '/openapi/v3/apis/apps.example.com/v1')).json<Obj>();
    const schema = v3.components.schemas['com.example.apps.v1.WebApp'];
    expect(schema.properties.spec.properties.ports['x-kubernetes-list-type']).toBe('map');
    expect(schema.properties.spec.properties.replicas.default).toBe(1);
    // the CEL rules are published in v3 as declared (kube's structural ToKubeOpenAPI keeps them)
    expect(schema.properties.spec['x-kubernetes-validations']).toEqual([
      { rule: 'self.replicas <= self.maxReplicas', message: 'replicas must not exceed maxReplicas' },
      { rule: "!has(oldSelf.image) || self.image.startsWith(oldSelf.image.split(':')[0])", message: 'the image repository cannot change' },
    ]);
    const v2 = (await t.request('GET', '/openapi/v2')).json<Obj>();
    expect(v2.definitions['com.example.apps.v1.WebApp'].properties.spec['x-kubernetes-validations']).toBeUndefined();
    expect(v2.definitions['com.example.apps.v1.WebApp']['x-kubernetes-group-version-kind']).toEqual([{ group: 'apps.example.com', kind: 'WebApp', version: 'v1' }]);
  });
});

describe('several versions, one storage version (conversion None)', () => {
  const V1 = '/apis/tools.example.com/v1/gadgets';
  const BETA = '/apis/tools.example.com/v1beta1/gadgets';

  beforeAll(async () => {
    await createCrd(t, fixture('multiversion.yaml')[0]!);
  });

  it('stores in v1 and shows each version its own apiVersion', async () => {
    const c = await t.request('POST', BETA, { body: { apiVersion: 'tools.example.com/v1beta1', kind: 'Gadget', metadata: { name: 'g1' }, spec: { size: 'large' } } });
    expect(c.status).toBe(201);
    expect(c.json<Obj>().apiVersion).toBe('tools.example.com/v1beta1');
    // a deprecated version warns
    expect(String(c.headers.warning)).toContain('tools.example.com/v1beta1 Gadget is deprecated');
    const viaV1 = await t.request('GET', `${V1}/g1`);
    expect(viaV1.json<Obj>()).toMatchObject({ apiVersion: 'tools.example.com/v1', spec: { size: 'large' } });
    const viaBeta = await t.request('GET', `${BETA}/g1`);
    expect(viaBeta.json<Obj>().apiVersion).toBe('tools.example.com/v1beta1');
    const list = await t.request('GET', BETA);
    expect(list.json<Obj>().items.map((i: Obj) => i.apiVersion)).toEqual(['tools.example.com/v1beta1']);
    // stored in the storage version
    const kv = t.server.store.range({ key: '/registry/tools.example.com/gadgets/g1' }).kvs[0]!;
    expect(JSON.parse(Buffer.from(kv.value).toString('utf8')).apiVersion).toBe('tools.example.com/v1');
    // each version validates with its own schema: v1 prunes nothing of these, v1beta1 prunes colour
    const u = await t.request('PATCH', `${BETA}/g1`, { body: { spec: { colour: 'red' } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
    expect(u.json<Obj>().spec.colour).toBeUndefined();
    const u1 = await t.request('PATCH', `${V1}/g1`, { body: { spec: { colour: 'red' } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
    expect(u1.json<Obj>().spec.colour).toBe('red');
    const groups = (await t.request('GET', '/apis/tools.example.com')).json<Obj>();
    expect(groups.preferredVersion.version).toBe('v1');
  });
});
