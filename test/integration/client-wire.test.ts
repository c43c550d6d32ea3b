// What clients written for kube-apiserver 1.32 notice on the wire, each case
// against a real server and, where a tool shows it, the real kubectl 1.32:
// answers must be what kube-apiserver returns for the same request.

import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_WORKLOAD_CONTROLLERS, type TestServer, startTestServer } from '../helpers/server.js';
import { runKubectl } from '../helpers/kubectl.js';
import { CRDS, createCrd, openCrd } from '../helpers/crds.js';

let t: TestServer;
let dir: string;
type Obj = Record<string, any>;

const kubectl = (...args: string[]) => runKubectl(t.server.kubeconfigPath, args);

beforeAll(async () => {
  // the wire answers alone: no controller writes Deployments' status under the Scale table's columns
  t = await startTestServer({ authn: NO_WORKLOAD_CONTROLLERS });
  dir = await mkdtemp(join(tmpdir(), 'orch-client-wire-'));
});
afterAll(async () => {
  await t?.stop();
});

describe('empty metadata maps and lists (Go ObjectMeta omitempty)', () => {
  it('a create with labels {}, annotations {}, finalizers [] stores and serves them as absent, owning nothing', async () => {
    const r = await t.request('POST', '/api/v1/namespaces/default/configmaps', {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'empty-meta', labels: {}, annotations: {}, finalizers: [], ownerReferences: [] }, data: { a: 'b' } },
    });
    expect(r.status, r.text).toBe(201);
    const got = (await t.request('GET', '/api/v1/namespaces/default/configmaps/empty-meta')).json<Obj>();
    for (const k of ['labels', 'annotations', 'finalizers', 'ownerReferences']) expect(got.metadata).not.toHaveProperty(k);
    expect(got.metadata.managedFields[0].fieldsV1).toEqual({ 'f:data': { '.': {}, 'f:a': {} } });
  });

  it('a strategic merge patch adding annotations {} is a no-op: same resourceVersion, nothing served', async () => {
    const before = (await t.request('GET', '/api/v1/namespaces/default/configmaps/empty-meta')).json<Obj>();
    const r = await t.request('PATCH', '/api/v1/namespaces/default/configmaps/empty-meta', {
      headers: { 'Content-Type': 'application/strategic-merge-patch+json' },
      body: { metadata: { annotations: {}, labels: {} } },
    });
    expect(r.status, r.text).toBe(200);
    const after = r.json<Obj>();
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    expect(after.metadata).not.toHaveProperty('annotations');
  });

  it('kubectl diff of an unchanged object created without kubectl apply exits 0', async () => {
    // kubectl diff patches (dry run) with `metadata.annotations: {}` when the
    // live object has no last-applied annotation
    const f = join(dir, 'diff-cm.yaml');
    await writeFile(f, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: diff-cm\n  namespace: default\ndata:\n  a: b\n');
    expect((await kubectl('create', '-f', f)).code).toBe(0);
    const r = await kubectl('diff', '-f', f);
    expect(r.stdout).toBe('');
    expect(r.code, r.stderr).toBe(0);
    await writeFile(f, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: diff-cm\n  namespace: default\ndata:\n  a: c\n');
    const changed = await kubectl('diff', '-f', f);
    expect(changed.code, changed.stderr).toBe(1);
    expect(changed.stdout).toContain('+  a: c');
    expect(changed.stdout).not.toContain('annotations');
  });
});

describe('PartialObjectMetadata (client-go metadata client and metadata informers)', () => {
  const ACCEPT_ONE =
    'application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';
  const ACCEPT_LIST =
    'application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
  // the JSON forms (protobuf first is answered in protobuf: client-wire-2.test.ts)
  const JSON_ONE = ACCEPT_ONE.slice(ACCEPT_ONE.indexOf(',') + 1);
  const JSON_LIST = ACCEPT_LIST.slice(ACCEPT_LIST.indexOf(',') + 1);
  const base = '/api/v1/namespaces/default/configmaps';

  beforeAll(async () => {
    for (const name of ['pm-1', 'pm-2']) {
      const r = await t.request('POST', base, { body: { metadata: { name, labels: { pm: 'yes' } }, data: { secret: 'not in metadata' } } });
      expect(r.status, r.text).toBe(201);
    }
  });

  it('GET answers one PartialObjectMetadata: type meta and metadata only', async () => {
    const r = await t.request('GET', `${base}/pm-1`, { headers: { Accept: JSON_ONE } });
    expect(r.status, r.text).toBe(200);
    expect(r.headers['content-type']).toBe('application/json');
    const o = r.json<Obj>();
    expect(Object.keys(o)).toEqual(['kind', 'apiVersion', 'metadata']);
    expect(o.kind).toBe('PartialObjectMetadata');
    expect(o.apiVersion).toBe('meta.k8s.io/v1');
    expect(o.metadata).toMatchObject({ name: 'pm-1', namespace: 'default', labels: { pm: 'yes' } });
    expect(o.metadata.uid).toBeTruthy();
    expect(o.metadata.resourceVersion).toBeTruthy();
  });

  it('LIST answers a PartialObjectMetadataList with the list metadata, paging included', async () => {
    const r = await t.request('GET', `${base}?labelSelector=pm%3Dyes&limit=1`, { headers: { Accept: JSON_LIST } });
    expect(r.status, r.text).toBe(200);
    const l = r.json<Obj>();
    expect(l.kind).toBe('PartialObjectMetadataList');
    expect(l.apiVersion).toBe('meta.k8s.io/v1');
    expect(l.metadata.resourceVersion).toBeTruthy();
    expect(l.metadata.continue).toBeTruthy();
    expect(l.items).toHaveLength(1);
    expect(l.items[0]).toEqual({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: expect.objectContaining({ name: 'pm-1' }) });
    expect(l.items[0]).not.toHaveProperty('data');
  });

  it('a list asked for as one object, or an object as a list, is 406 as in kube-apiserver', async () => {
    const one = await t.request('GET', base, { headers: { Accept: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1' } });
    expect(one.status).toBe(406);
    expect(one.json<Obj>().message).toBe('you requested PartialObjectMetadata, but the requested object is a list (*v1.ConfigMapList)');
    const list = await t.request('GET', `${base}/pm-1`, { headers: { Accept: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1' } });
    expect(list.status).toBe(406);
    expect(list.json<Obj>().reason).toBe('NotAcceptable');
  });

  it('WATCH sends PartialObjectMetadata objects, bookmarks included', async () => {
    const listed = (await t.request('GET', `${base}?labelSelector=pm%3Dyes`, { headers: { Accept: JSON_LIST } })).json<Obj>();
    const rv = listed.metadata.resourceVersion as string;
    const upd = await t.request('PATCH', `${base}/pm-2`, {
      headers: { 'Content-Type': 'application/merge-patch+json' },
      body: { metadata: { labels: { extra: '1' } } },
    });
    expect(upd.status, upd.text).toBe(200);
    // timeoutSeconds ends the stream; the events after rv are in the server's history
    const r = await t.request('GET', `${base}?watch=1&resourceVersion=${rv}&labelSelector=pm%3Dyes&timeoutSeconds=1`, { headers: { Accept: ACCEPT_ONE } });
    expect(r.status, r.text).toBe(200);
    const events = r.text.trim().split('\n').map((l) => JSON.parse(l) as Obj);
    expect(events[0]).toEqual({
      type: 'MODIFIED',
      object: { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: expect.objectContaining({ name: 'pm-2', labels: { pm: 'yes', extra: '1' } }) },
    });
    const initial = await t.request(
      'GET',
      `${base}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&labelSelector=pm%3Dyes&timeoutSeconds=1`,
      { headers: { Accept: ACCEPT_ONE } },
    );
    const lines = initial.text.trim().split('\n').map((l) => JSON.parse(l) as Obj);
    const bookmark = lines.find((e) => e.type === 'BOOKMARK');
    expect(bookmark?.object.kind).toBe('PartialObjectMetadata');
    expect(bookmark?.object.apiVersion).toBe('meta.k8s.io/v1');
    expect(bookmark?.object.metadata.annotations).toMatchObject({ 'k8s.io/initial-events-end': 'true' });
    expect(lines.filter((e) => e.type === 'ADDED').map((e) => e.object.metadata.name).sort()).toEqual(['pm-1', 'pm-2']);
  });
});

describe('a watch path with a name', () => {
  const base = '/api/v1/namespaces/default/configmaps';
  beforeAll(async () => {
    for (const name of ['nw-1', 'nw-2']) expect((await t.request('POST', base, { body: { metadata: { name }, data: { a: 'b' } } })).status).toBe(201);
  });

  it('/watch/…/{name} sends the events of that object only', async () => {
    const r = await t.request('GET', `/api/v1/watch/namespaces/default/configmaps/nw-1?timeoutSeconds=1`);
    expect(r.status, r.text).toBe(200);
    const names = r.text.trim().split('\n').map((l) => (JSON.parse(l) as Obj).object.metadata.name as string);
    expect(names).toEqual(['nw-1']);
  });

  it('a field selector naming another object is 400, as kube-apiserver answers', async () => {
    const r = await t.request('GET', `/api/v1/watch/namespaces/default/configmaps/nw-1?fieldSelector=metadata.name%3Dnw-2&timeoutSeconds=1`);
    expect(r.status).toBe(400);
    expect(r.json<Obj>().message).toBe("fieldSelector metadata.name doesn't match requested name");
  });

  it('…/{name}?watch=true is a get (kube reads `watch` only on a collection path)', async () => {
    const r = await t.request('GET', `${base}/nw-1?watch=true`);
    expect(r.status, r.text).toBe(200);
    const o = r.json<Obj>();
    expect(o.kind).toBe('ConfigMap');
    expect(o.metadata.name).toBe('nw-1');
  });
});

/** kube's finalizeDelete answer */
const successStatus = (details: Obj): Obj => ({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details });

describe('DELETE answers as kube-apiserver (ReturnDeletedObject)', () => {
  it('a removed ConfigMap is a Success Status naming it; one held by a finalizer is the marked object', async () => {
    const c = (await t.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'del-1' } } })).json<Obj>();
    const r = await t.request('DELETE', '/api/v1/namespaces/default/configmaps/del-1');
    expect(r.status, r.text).toBe(200);
    expect(r.json<Obj>()).toEqual(successStatus({ name: 'del-1', kind: 'configmaps', uid: c.metadata.uid }));
    await t.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'del-2', finalizers: ['example.com/hold'] } } });
    const held = await t.request('DELETE', '/api/v1/namespaces/default/configmaps/del-2');
    expect(held.status).toBe(200);
    expect(held.json<Obj>().kind).toBe('ConfigMap');
    expect(held.json<Obj>().metadata.deletionTimestamp).toBeTruthy();
  });

  it('a group kind names its group; kinds with ReturnDeletedObject (ServiceAccount) answer the object', async () => {
    const role = { metadata: { name: 'del-role' }, rules: [] };
    expect((await t.request('POST', '/apis/rbac.authorization.orch.io/v1/namespaces/default/roles', { body: role })).status).toBe(201);
    const r = await t.request('DELETE', '/apis/rbac.authorization.orch.io/v1/namespaces/default/roles/del-role');
    expect(r.json<Obj>().details).toMatchObject({ name: 'del-role', group: 'rbac.authorization.orch.io', kind: 'roles' });
    expect((await t.request('POST', '/api/v1/namespaces/default/serviceaccounts', { body: { metadata: { name: 'del-sa' } } })).status).toBe(201);
    const sa = await t.request('DELETE', '/api/v1/namespaces/default/serviceaccounts/del-sa');
    expect(sa.status).toBe(200);
    expect(sa.json<Obj>()).toMatchObject({ kind: 'ServiceAccount', metadata: { name: 'del-sa' } });
  });
});

describe('DELETE of custom resources and their definitions', () => {
  it('a removed custom resource is a Success Status (kube\'s customresource store has no ReturnDeletedObject); a CRD answers itself, Terminating', async () => {
    const crd = openCrd({ group: 'wire.example.com', plural: 'gizmos', kind: 'Gizmo' });
    await createCrd(t, crd);
    const base = '/apis/wire.example.com/v1/namespaces/default/gizmos';
    const g = (await t.request('POST', base, { body: { apiVersion: 'wire.example.com/v1', kind: 'Gizmo', metadata: { name: 'g1' } } })).json<Obj>();
    const r = await t.request('DELETE', `${base}/g1`);
    expect(r.status, r.text).toBe(200);
    expect(r.json<Obj>()).toEqual(successStatus({ name: 'g1', group: 'wire.example.com', kind: 'gizmos', uid: g.metadata.uid }));
    const d = await t.request('DELETE', `${CRDS}/gizmos.wire.example.com`);
    expect(d.status, d.text).toBe(200);
    expect(d.json<Obj>()).toMatchObject({ kind: 'CustomResourceDefinition', metadata: { name: 'gizmos.wire.example.com' } });
  });
});

describe('Status bodies end with a newline, as kube-apiserver encodes them', () => {
  it('errors and a delete\'s Success Status', async () => {
    const err = await t.request('GET', '/api/v1/namespaces/default/configmaps/does-not-exist');
    await t.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'nl-1' } } });
    const del = await t.request('DELETE', '/api/v1/namespaces/default/configmaps/nl-1');
    for (const r of [err, del]) {
      expect(r.text.endsWith('}\n')).toBe(true);
      expect(r.text.endsWith('}\n\n')).toBe(false);
    }
    expect(err.text).toBe(
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \\"does-not-exist\\" not found","reason":"NotFound","details":{"name":"does-not-exist","kind":"configmaps"},"code":404}\n',
    );
  });
});

describe('aggregated discovery (the Accept client-go 1.32 sends on /api and /apis)', () => {
  const ACCEPT =
    'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';
  type Item = { metadata: Obj; versions: { version: string; freshness: string; resources: Obj[] }[] };

  it('/apis answers an APIGroupDiscoveryList with the same resources as the per-version lists', async () => {
    const r = await t.request('GET', '/apis', { headers: { Accept: ACCEPT } });
    expect(r.status, r.text).toBe(200);
    expect(r.headers['content-type']).toBe('application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList');
    expect(r.headers.etag).toBeTruthy();
    const doc = r.json<Obj>();
    expect(doc.kind).toBe('APIGroupDiscoveryList');
    expect(doc.apiVersion).toBe('apidiscovery.k8s.io/v2');
    const apps = (doc.items as Item[]).find((i) => i.metadata.name === 'apps')!;
    expect(apps.versions[0]!.version).toBe('v1');
    expect(apps.versions[0]!.freshness).toBe('Current');
    const deploy = apps.versions[0]!.resources.find((x) => x.resource === 'deployments')!;
    expect(deploy).toMatchObject({
      responseKind: { group: '', version: '', kind: 'Deployment' },
      scope: 'Namespaced',
      singularResource: 'deployment',
      shortNames: ['deploy'],
    });
    expect(deploy.subresources).toEqual(
      expect.arrayContaining([
        { subresource: 'scale', responseKind: { group: 'autoscaling', version: 'v1', kind: 'Scale' }, verbs: ['get', 'patch', 'update'] },
        { subresource: 'status', responseKind: { group: '', version: '', kind: 'Deployment' }, verbs: ['get', 'patch', 'update'] },
      ]),
    );
    // the same facts as the legacy document
    const legacy = (await t.request('GET', '/apis/apps/v1')).json<Obj>();
    const names = (legacy.resources as Obj[]).map((x) => x.name as string).filter((n) => !n.includes('/')).sort();
    expect(apps.versions[0]!.resources.map((x) => x.resource as string).sort()).toEqual(names);
    // If-None-Match with the ETag: 304
    const again = await t.request('GET', '/apis', { headers: { Accept: ACCEPT, 'If-None-Match': r.headers.etag as string } });
    expect(again.status).toBe(304);
  });

  it('/api answers the core group (no name); v2beta1 when asked only for it; plain Accept keeps the legacy documents', async () => {
    const core = (await t.request('GET', '/api', { headers: { Accept: ACCEPT } })).json<Obj>();
    expect(core.items).toHaveLength(1);
    expect(core.items[0].metadata.name).toBeUndefined();
    expect((core.items[0] as Item).versions[0]!.resources.some((x) => x.resource === 'pods')).toBe(true);
    const beta = await t.request('GET', '/apis', { headers: { Accept: 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList' } });
    expect(beta.status).toBe(200);
    expect(beta.headers['content-type']).toBe('application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList');
    expect(beta.json<Obj>().apiVersion).toBe('apidiscovery.k8s.io/v2beta1');
    expect((await t.request('GET', '/api', { headers: { Accept: 'application/json, */*' } })).json<Obj>().kind).toBe('APIVersions');
    expect((await t.request('GET', '/apis')).json<Obj>().kind).toBe('APIGroupList');
  });

  it('kubectl 1.32 works from it: api-resources, get, scale (with a fresh discovery cache)', async () => {
    const cache = await mkdtemp(join(tmpdir(), 'orch-client-wire-cache-'));
    const k = (...args: string[]) => runKubectl(t.server.kubeconfigPath, ['--cache-dir', cache, ...args]);
    const ar = await k('api-resources', '--api-group=apps', '-o', 'name');
    expect(ar.code, ar.stderr).toBe(0);
    expect(ar.stdout.split('\n')).toContain('deployments.apps');
    const f = join(dir, 'agg-deploy.yaml');
    await writeFile(
      f,
      'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: agg\n  namespace: default\nspec:\n  selector:\n    matchLabels: {app: agg}\n  template:\n    metadata:\n      labels: {app: agg}\n    spec:\n      containers:\n      - name: c\n        image: nginx\n',
    );
    expect((await k('apply', '-f', f)).code).toBe(0);
    const sc = await k('scale', 'deploy/agg', '--replicas=2', '-n', 'default');
    expect(sc.code, sc.stderr).toBe(0);
    expect((await k('get', 'deploy', 'agg', '-n', 'default', '-o', 'jsonpath={.spec.replicas}')).stdout).toBe('2');
  });
});

describe("boolean query parameters as kube reads them (the Python client's True/False)", () => {
  beforeAll(async () => {
    expect((await t.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'bool-1' } } })).status).toBe(201);
  });

  it('watch=False is a list, watch=True a watch; pretty=True indents', async () => {
    const list = await t.request('GET', '/api/v1/namespaces/default/configmaps?watch=False');
    expect(list.json<Obj>().kind).toBe('ConfigMapList');
    const watch = await t.request('GET', '/api/v1/namespaces/default/configmaps?watch=True&timeoutSeconds=1&fieldSelector=metadata.name%3Dbool-1');
    expect(JSON.parse(watch.text.trim().split('\n')[0]!).type).toBe('ADDED');
    const pretty = await t.request('GET', '/api/v1/namespaces/default?pretty=True');
    expect(pretty.text).toContain('\n  "kind": "Namespace"');
  });

  it('indents for curl, Wget and browsers unless pretty says otherwise, as kube does (watch events stay one a line)', async () => {
    const as = (ua: string, q = '') => t.request('GET', `/api/v1/namespaces/default${q}`, { headers: { 'user-agent': ua } });
    expect((await as('curl/8.5.0')).text).toContain('\n  "kind": "Namespace"');
    expect((await as('Wget/1.21')).text).toContain('\n  "kind": "Namespace"');
    expect((await as('Mozilla/5.0 (X11)')).text).toContain('\n  "kind": "Namespace"');
    expect((await as('curl/8.5.0', '?pretty=false')).text).not.toContain('\n');
    expect((await as('curl/8.5.0', '?pretty=nonsense')).text).not.toContain('\n');
    expect((await as('kubectl/v1.32.4 (linux/amd64)')).text).not.toContain('\n');
    const watch = await t.request('GET', '/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1&fieldSelector=metadata.name%3Dbool-1', { headers: { 'user-agent': 'curl/8.5.0' } });
    expect(JSON.parse(watch.text.trim().split('\n')[0]!).type).toBe('ADDED');
  });

  it('allowWatchBookmarks=True asks for bookmarks', async () => {
    const r = await t.request(
      'GET',
      '/api/v1/namespaces/default/configmaps?watch=1&sendInitialEvents=True&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=True&timeoutSeconds=1&fieldSelector=metadata.name%3Dbool-1',
    );
    const types = r.text.trim().split('\n').map((l) => (JSON.parse(l) as Obj).type as string);
    expect(types).toEqual(['ADDED', 'BOOKMARK']);
  });
});

describe('a Scale asked for as a Table', () => {
  it('has kube\'s Scale columns: kubectl get deploy --subresource=scale', async () => {
    const f = join(dir, 'scale-table.yaml');
    await writeFile(
      f,
      'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: st\n  namespace: default\nspec:\n  replicas: 3\n  selector:\n    matchLabels: {app: st}\n  template:\n    metadata:\n      labels: {app: st}\n    spec:\n      containers:\n      - name: c\n        image: nginx\n',
    );
    expect((await kubectl('apply', '-f', f)).code).toBe(0);
    const r = await kubectl('get', 'deploy', 'st', '-n', 'default', '--subresource=scale');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.split('\n')[0]!.split(/\s+/)).toEqual(['NAME', 'DESIRED', 'AVAILABLE']);
    expect(r.stdout.split('\n')[1]!.split(/\s+/)).toEqual(['st', '3', '0']);
    const raw = await t.request('GET', '/apis/apps/v1/namespaces/default/deployments/st/scale', { headers: { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } });
    expect(raw.json<Obj>().rows[0].object).toMatchObject({ kind: 'PartialObjectMetadata', metadata: { name: 'st' } });
  });
});

describe("field selectors kube's GetAttrs serves", () => {
  it('Services by spec.type and spec.clusterIP, ReplicaSets by status.replicas, Jobs by status.successful', async () => {
    const svc = await t.request('POST', '/api/v1/namespaces/default/services', { body: { metadata: { name: 'fs-svc' }, spec: { ports: [{ port: 80 }] } } });
    expect(svc.status, svc.text).toBe(201);
    const ip = svc.json<Obj>().spec.clusterIP as string;
    const names = async (path: string): Promise<string[]> => {
      const r = await t.request('GET', path);
      expect(r.status, r.text).toBe(200);
      return (r.json<Obj>().items as Obj[]).map((o) => o.metadata.name as string);
    };
    expect(await names('/api/v1/namespaces/default/services?fieldSelector=spec.type%3DClusterIP')).toContain('fs-svc');
    expect(await names('/api/v1/namespaces/default/services?fieldSelector=spec.type%3DNodePort')).not.toContain('fs-svc');
    expect(await names(`/api/v1/namespaces/default/services?fieldSelector=spec.clusterIP%3D${ip}`)).toEqual(['fs-svc']);
    const rs = await t.request('POST', '/apis/apps/v1/namespaces/default/replicasets', {
      body: { metadata: { name: 'fs-rs' }, spec: { replicas: 2, selector: { matchLabels: { app: 'fs' } }, template: { metadata: { labels: { app: 'fs' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } } },
    });
    expect(rs.status, rs.text).toBe(201);
    // no controller runs in this file's server: status.replicas is absent, which kube reads as 0
    expect(await names('/apis/apps/v1/namespaces/default/replicasets?fieldSelector=status.replicas%3D0')).toContain('fs-rs');
    expect(await names('/apis/apps/v1/namespaces/default/replicasets?fieldSelector=status.replicas%3D2')).not.toContain('fs-rs');
    expect((await t.request('GET', '/apis/batch/v1/namespaces/default/jobs?fieldSelector=status.successful%3D0')).status).toBe(200);
    const bad = await t.request('GET', '/apis/apps/v1/namespaces/default/replicasets?fieldSelector=spec.replicas%3D2');
    expect(bad.status, bad.text).toBe(400);
  });
});
