// A PUT or PATCH whose object has no metadata.name, on a started server, as
// kube 1.32's handlers answer it (endpoints/handlers update.go and patch.go,
// rest.go checkName, namer.go ObjectName's errEmptyName): 400 BadRequest
// `the name of the object (<name> based on URL) was undeterminable: name must
// be provided`, for built-in kinds, custom resources and their sub-resources,
// and nothing is written. A patch that moves the object to another namespace is
// EnsureObjectNamespaceMatchesRequestNamespace's 400, checked first.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCrd, operatorCrd } from '../helpers/crds.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

let t: TestServer;
type Obj = Record<string, any>;
const CMS = '/api/v1/namespaces/default/configmaps';
const WA = '/apis/apps.example.com/v1/namespaces/default/webapps';

beforeAll(async () => {
  t = await startTestServer();
  await createCrd(t, operatorCrd());
});
afterAll(async () => {
  await t?.stop();
});

const nameless = (name: string) => ({
  kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'BadRequest', code: 400,
  message: `the name of the object (${name} based on URL) was undeterminable: name must be provided`,
});

async function send(method: string, path: string, body: object, type?: string): Promise<{ status: number; json: Obj }> {
  const r = await t.request(method, path, { body, ...(type ? { headers: { 'Content-Type': type } } : {}) });
  return { status: r.status, json: r.json<Obj>() };
}
const created = async (path: string, body: object): Promise<Obj> => {
  const r = await send('POST', path, body);
  expect(r.status, JSON.stringify(r.json)).toBe(201);
  return r.json;
};

describe('a PUT without metadata.name', () => {
  it('is 400 for a built-in kind (name absent, empty, or no metadata at all) and changes nothing', async () => {
    const cm = await created(CMS, { metadata: { name: 'cm' }, data: { a: '1' } });
    for (const body of [{ metadata: {}, data: { a: '2' } }, { metadata: { name: '' }, data: { a: '2' } }, { data: { a: '2' } }]) {
      const r = await send('PUT', `${CMS}/cm`, body);
      expect([r.status, r.json]).toEqual([400, nameless('cm')]);
    }
    expect((await send('GET', `${CMS}/cm`, {})).json.data).toEqual(cm.data);
    // a PUT that would create (kube's AllowCreateOnUpdate) is refused the same way
    expect((await send('PUT', `${CMS}/fresh`, { data: { a: '1' } })).json).toEqual(nameless('fresh'));
    expect((await t.request('GET', `${CMS}/fresh`)).status).toBe(404);
  });

  it('is 400 on a status sub-resource and on the update capabilities (scale, finalize)', async () => {
    await created('/api/v1/namespaces', { metadata: { name: 'named-ns' } });
    expect((await send('PUT', '/api/v1/namespaces/named-ns/status', { apiVersion: 'v1', kind: 'Namespace', status: { phase: 'Active' } })).json).toEqual(nameless('named-ns'));
    expect((await send('PUT', '/api/v1/namespaces/named-ns/finalize', { apiVersion: 'v1', kind: 'Namespace', spec: { finalizers: [] } })).json).toEqual(nameless('named-ns'));
    await created(WA, { apiVersion: 'apps.example.com/v1', kind: 'WebApp', metadata: { name: 'w' }, spec: { image: 'nginx:1.27' } });
    expect((await send('PUT', `${WA}/w/scale`, { apiVersion: 'autoscaling/v1', kind: 'Scale', spec: { replicas: 3 } })).json).toEqual(nameless('w'));
    const other = await send('PUT', `${WA}/w/scale`, { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'v' }, spec: { replicas: 3 } });
    expect([other.status, other.json.message]).toEqual([400, 'the name of the object (v) does not match the name on the URL (w)']);
    expect((await send('GET', `${WA}/w`, {})).json.spec.replicas).toBe(1);
  });

  it('is 400 for a custom resource and its status', async () => {
    const w = await created(WA, { apiVersion: 'apps.example.com/v1', kind: 'WebApp', metadata: { name: 'cr' }, spec: { image: 'nginx:1.27' } });
    const { name: _n, ...meta } = w.metadata;
    expect((await send('PUT', `${WA}/cr`, { ...w, metadata: meta, spec: { ...w.spec, image: 'nginx:2' } })).json).toEqual(nameless('cr'));
    expect((await send('PUT', `${WA}/cr/status`, { ...w, metadata: meta, status: { readyReplicas: 1 } })).json).toEqual(nameless('cr'));
    expect((await send('GET', `${WA}/cr`, {})).json.spec.image).toBe('nginx:1.27');
  });
});

describe('a PATCH', () => {
  it('that removes the name is the same 400 (kube\'s applyPatch runs checkName), built-in or custom', async () => {
    await created(CMS, { metadata: { name: 'patched' } });
    expect((await send('PATCH', `${CMS}/patched`, { metadata: { name: null } }, 'application/merge-patch+json')).json).toEqual(nameless('patched'));
    expect((await send('PATCH', `${CMS}/patched`, [{ op: 'remove', path: '/metadata/name' }], 'application/json-patch+json')).json).toEqual(nameless('patched'));
    expect((await send('PATCH', `${CMS}/patched`, { metadata: { name: null } }, 'application/strategic-merge-patch+json')).json).toEqual(nameless('patched'));
    await created(WA, { apiVersion: 'apps.example.com/v1', kind: 'WebApp', metadata: { name: 'crp' }, spec: { image: 'nginx:1.27' } });
    expect((await send('PATCH', `${WA}/crp`, { metadata: { name: null } }, 'application/merge-patch+json')).json).toEqual(nameless('crp'));
  });

  it('that moves the object to another namespace is EnsureObjectNamespaceMatchesRequestNamespace\'s 400', async () => {
    await created(CMS, { metadata: { name: 'moved' } });
    const r = await send('PATCH', `${CMS}/moved`, { metadata: { namespace: 'kube-system' } }, 'application/merge-patch+json');
    expect([r.status, r.json.message]).toEqual([400, 'the namespace of the provided object does not match the namespace sent on the request']);
  });
});
