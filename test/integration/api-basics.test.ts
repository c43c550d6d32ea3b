// The foundation verbs against a real server (spec 000 §4.1, §4.4, §7),
// driven with @kubernetes/client-node and raw HTTPS.

import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestServer, startTestServer, NO_NAMESPACE_DEFAULTS } from '../helpers/server.js';

let t: TestServer;
let core: k8s.CoreV1Api;

beforeAll(async () => {
  t = await startTestServer({ authn: NO_NAMESPACE_DEFAULTS });
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(t.server.kubeconfigPath);
  core = kc.makeApiClient(k8s.CoreV1Api);
});

afterAll(async () => {
  await t?.stop();
});

describe('namespaces', () => {
  it('has the built-in namespaces from the start', async () => {
    const list = await core.listNamespace();
    const names = list.items.map((n) => n.metadata?.name).sort();
    expect(names).toEqual(['default', 'orch-node-lease', 'orch-public', 'orch-system']);
    expect(list.metadata?.resourceVersion).toMatch(/^\d+$/);
    for (const ns of list.items) expect(ns.status?.phase).toBe('Active');
  });

  it('refuses to delete a built-in namespace', async () => {
    const r = await t.request('DELETE', '/api/v1/namespaces/default');
    expect(r.status).toBe(403);
    expect(r.json().reason).toBe('Forbidden');
    expect((await core.readNamespace({ name: 'default' })).metadata?.name).toBe('default');
  });

  it('lets the node-lease namespace be deleted, as kube (its system namespaces controller re-creates it)', async () => {
    for (const name of ['orch-system', 'orch-public']) expect((await t.request('DELETE', `/api/v1/namespaces/${name}`)).status).toBe(403);
    const del = await t.request('DELETE', '/api/v1/namespaces/orch-node-lease');
    expect(del.status, del.text).toBe(200);
  });

  it('creates, gets and deletes a namespace, deleting its contents', async () => {
    await core.createNamespace({ body: { metadata: { name: 'team-a' } } });
    await core.createNamespacedConfigMap({ namespace: 'team-a', body: { metadata: { name: 'c1' }, data: { a: 'b' } } });
    const del = await t.request('DELETE', '/api/v1/namespaces/team-a');
    expect(del.status).toBe(200);
    // terminating, then gone once the controller has emptied it
    for (let i = 0; i < 100; i++) {
      const g = await t.request('GET', '/api/v1/namespaces/team-a');
      if (g.status === 404) break;
      expect(g.json<{ status: { phase: string } }>().status.phase).toBe('Terminating');
      await new Promise((r) => setTimeout(r, 50));
    }
    expect((await t.request('GET', '/api/v1/namespaces/team-a')).status).toBe(404);
    expect((await t.request('GET', '/api/v1/namespaces/team-a/configmaps/c1')).status).toBe(404);
  });
});

describe('configmaps and secrets', () => {
  it('create, get, replace, delete', async () => {
    const created = await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'cfg', labels: { app: 'x' } }, data: { k: 'v' } },
    });
    expect(created.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.metadata?.creationTimestamp).toBeTruthy();
    const rv1 = created.metadata!.resourceVersion!;
    const got = await core.readNamespacedConfigMap({ name: 'cfg', namespace: 'default' });
    expect(got.data).toEqual({ k: 'v' });
    expect(got.metadata?.resourceVersion).toBe(rv1);

    got.data = { k: 'v2' };
    const replaced = await core.replaceNamespacedConfigMap({ name: 'cfg', namespace: 'default', body: got });
    expect(replaced.data).toEqual({ k: 'v2' });
    expect(replaced.metadata?.resourceVersion).not.toBe(rv1);
    expect(replaced.metadata?.uid).toBe(created.metadata?.uid);

    // a replace with the stale resourceVersion is a 409 Conflict and changes nothing
    const stale = { ...got, metadata: { ...got.metadata, resourceVersion: rv1 }, data: { k: 'lost' } };
    const r = await t.request('PUT', '/api/v1/namespaces/default/configmaps/cfg', { body: stale });
    expect(r.status).toBe(409);
    expect(r.json()).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Conflict', code: 409 });
    expect((await core.readNamespacedConfigMap({ name: 'cfg', namespace: 'default' })).data).toEqual({ k: 'v2' });

    await core.deleteNamespacedConfigMap({ name: 'cfg', namespace: 'default' });
    const gone = await t.request('GET', '/api/v1/namespaces/default/configmaps/cfg');
    expect(gone.status).toBe(404);
    expect(gone.json()).toMatchObject({ reason: 'NotFound', message: 'configmaps "cfg" not found', code: 404 });
  });

  it('ConfigMaps, Secrets and Namespaces carry no metadata.generation (as in Kubernetes)', async () => {
    const ns = await t.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'gen-check' } } });
    expect(ns.status).toBe(201);
    expect(ns.json<{ metadata: Record<string, unknown> }>().metadata.generation).toBeUndefined();
    const cm = await t.request('POST', '/api/v1/namespaces/default/configmaps', { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'gen-cm' }, data: { a: '1' } } });
    expect(cm.json<{ metadata: Record<string, unknown> }>().metadata.generation).toBeUndefined();
    const put = await t.request('PUT', '/api/v1/namespaces/default/configmaps/gen-cm', { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'gen-cm' }, data: { a: '2' } } });
    expect(put.status).toBe(200);
    expect(put.json<{ metadata: Record<string, unknown> }>().metadata.generation).toBeUndefined();
    const secret = await t.request('POST', '/api/v1/namespaces/default/secrets', { body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'gen-s' }, stringData: { a: '1' } } });
    expect(secret.json<{ metadata: Record<string, unknown> }>().metadata.generation).toBeUndefined();
  });

  it('creating twice is AlreadyExists', async () => {
    await core.createNamespacedSecret({ namespace: 'default', body: { metadata: { name: 's1' }, stringData: { p: 'w' } } });
    const r = await t.request('POST', '/api/v1/namespaces/default/secrets', {
      body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's1' } },
    });
    expect(r.status).toBe(409);
    expect(r.json().reason).toBe('AlreadyExists');
    const s = await core.readNamespacedSecret({ name: 's1', namespace: 'default' });
    expect(s.data?.p).toBe(Buffer.from('w').toString('base64'));
    expect(s.type).toBe('Opaque');
  });

  it('generateName makes a unique name', async () => {
    const a = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { generateName: 'gen-' } } });
    const b = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { generateName: 'gen-' } } });
    expect(a.metadata?.name).toMatch(/^gen-[a-z0-9]{5}$/);
    expect(a.metadata?.name).not.toBe(b.metadata?.name);
  });

  it('PUT on an absent object creates it', async () => {
    const r = await t.request('PUT', '/api/v1/namespaces/default/configmaps/put-created', {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'put-created' }, data: { a: '1' } },
    });
    expect(r.status).toBe(201);
    expect((await core.readNamespacedConfigMap({ name: 'put-created', namespace: 'default' })).data).toEqual({ a: '1' });
  });

  it('a no-op replace does not change the resourceVersion', async () => {
    const c = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'noop' }, data: { a: '1' } } });
    const r = await core.replaceNamespacedConfigMap({ name: 'noop', namespace: 'default', body: c });
    expect(r.metadata?.resourceVersion).toBe(c.metadata?.resourceVersion);
  });

  it('lists across namespaces and in one namespace with list metadata', async () => {
    await core.createNamespace({ body: { metadata: { name: 'ns-list' } } });
    await core.createNamespacedConfigMap({ namespace: 'ns-list', body: { metadata: { name: 'one' } } });
    const inNs = await t.request('GET', '/api/v1/namespaces/ns-list/configmaps');
    const body = inNs.json<{ kind: string; apiVersion: string; items: { metadata: { name: string } }[]; metadata: { resourceVersion: string } }>();
    expect(body.kind).toBe('ConfigMapList');
    expect(body.apiVersion).toBe('v1');
    expect(body.items.map((i) => i.metadata.name)).toEqual(['one']);
    const all = await core.listConfigMapForAllNamespaces();
    expect(all.items.some((i) => i.metadata?.namespace === 'ns-list')).toBe(true);
    expect(all.items.some((i) => i.metadata?.namespace === 'default')).toBe(true);
  });

  it('needs an existing namespace', async () => {
    const r = await t.request('POST', '/api/v1/namespaces/nope/configmaps', {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } },
    });
    expect(r.status).toBe(404);
    expect(r.json().message).toBe('namespaces "nope" not found');
  });
});

describe('errors are Status objects and store nothing (spec 000 §7)', () => {
  const path = '/api/v1/namespaces/default/configmaps';
  async function count(): Promise<number> {
    return (await t.request('GET', path)).json<{ items: unknown[] }>().items.length;
  }

  it('malformed JSON is 400', async () => {
    const before = await count();
    const r = await t.request('POST', path, { body: '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {' });
    expect(r.status).toBe(400);
    expect(r.json()).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'BadRequest', code: 400 });
    expect(await count()).toBe(before);
  });

  it('a wrong kind or apiVersion in the body is 400', async () => {
    const before = await count();
    const k = await t.request('POST', path, { body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'wrong-kind' } } });
    expect(k.status).toBe(400);
    expect(k.json().message).toContain('kind');
    const v = await t.request('POST', path, { body: { apiVersion: 'v2', kind: 'ConfigMap', metadata: { name: 'wrong-version' } } });
    expect(v.status).toBe(400);
    expect(await count()).toBe(before);
  });

  it('a name mismatch between path and body is 400', async () => {
    const r = await t.request('PUT', `${path}/a-name`, {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'other-name' } },
    });
    expect(r.status).toBe(400);
    expect(r.json().reason).toBe('BadRequest');
    expect((await t.request('GET', `${path}/a-name`)).status).toBe(404);
    expect((await t.request('GET', `${path}/other-name`)).status).toBe(404);
  });

  it('an unknown resource is 404', async () => {
    const r = await t.request('GET', '/api/v1/widgets');
    expect(r.status).toBe(404);
    expect(r.json()).toMatchObject({ kind: 'Status', reason: 'NotFound' });
    expect((await t.request('GET', '/apis/nope.example.com/v1/things')).status).toBe(404);
  });

  it('every answer says Cache-Control: no-cache, private (kube\'s WithCacheControl), errors and refusals too', async () => {
    const answers = [
      await t.request('GET', '/api/v1/namespaces/default/secrets'),
      await t.request('GET', '/api/v1/namespaces/default/configmaps/none'),
      await t.request('GET', '/api/v1/namespaces/default/secrets', { anonymous: true }),
      await t.request('GET', '/version'),
    ];
    expect(answers.map((r) => r.status)).toEqual([200, 404, 403, 200]);
    for (const r of answers) expect(r.headers['cache-control']).toBe('no-cache, private');
  });

  it('an invalid name is 422 Invalid with a cause', async () => {
    const r = await t.request('POST', path, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'Bad_Name' } } });
    expect(r.status).toBe(422);
    const s = r.json<{ reason: string; details: { causes: { field: string }[] } }>();
    expect(s.reason).toBe('Invalid');
    expect(s.details.causes[0]!.field).toBe('metadata.name');
  });

  it('a body over 3 MiB is 413 and the server stays up', async () => {
    const before = await count();
    const big = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'big' }, data: { x: 'a'.repeat(3 * 1024 * 1024 + 10) } });
    const r = await t.request('POST', path, { body: big });
    expect(r.status).toBe(413);
    expect(r.json().reason).toBe('RequestEntityTooLarge');
    expect(await count()).toBe(before);
    expect((await t.request('GET', '/livez')).status).toBe(200);
  });

  it('a request whose Accept types are all unsupported is 406', async () => {
    const r = await t.request('GET', path, { headers: { Accept: 'application/vnd.unknown' } });
    expect(r.status).toBe(406);
    expect(r.json()).toMatchObject({ kind: 'Status', reason: 'NotAcceptable', message: 'only the following media types are accepted: application/json, application/yaml, application/vnd.orch.protobuf' });
  });

  it('a method the resource does not serve is 405', async () => {
    const r = await t.request('POST', `${path}/x`, { body: {} });
    expect([404, 405]).toContain(r.status);
    expect(r.json().kind).toBe('Status');
  });
});

describe('representations', () => {
  it('serves YAML when asked', async () => {
    const r = await t.request('GET', '/api/v1/namespaces/default', { headers: { Accept: 'application/yaml' } });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/yaml');
    expect(r.text).toContain('kind: Namespace');
  });

  it('serves a Table with meta.k8s.io and meta.orch.io', async () => {
    for (const g of ['meta.k8s.io', 'meta.orch.io']) {
      const r = await t.request('GET', '/api/v1/namespaces', { headers: { Accept: `application/json;as=Table;v=v1;g=${g}, application/json` } });
      const tbl = r.json<{ kind: string; apiVersion: string; columnDefinitions: { name: string }[]; rows: { cells: unknown[] }[] }>();
      expect(tbl.kind).toBe('Table');
      expect(tbl.apiVersion).toBe(`${g}/v1`);
      expect(tbl.columnDefinitions[0]!.name).toBe('Name');
      expect(tbl.rows.map((row) => row.cells[0])).toContain('default');
    }
  });

  it('gzips large lists when the client accepts it', async () => {
    for (let i = 0; i < 40; i++) {
      await t.request('POST', '/api/v1/namespaces/default/configmaps', {
        body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `gz-${i}` }, data: { v: 'x'.repeat(4000) } },
      });
    }
    const r = await t.request('GET', '/api/v1/namespaces/default/configmaps', { headers: { 'Accept-Encoding': 'gzip' } });
    expect(r.headers['content-encoding']).toBe('gzip');
    const { gunzipSync } = await import('node:zlib');
    const list = JSON.parse(gunzipSync(r.raw).toString()) as { items: unknown[] };
    expect(list.items.length).toBeGreaterThanOrEqual(40);
  });
});

describe('health (spec 000 §4.11)', () => {
  it('livez, readyz, healthz, verbose, exclude and single checks', async () => {
    for (const p of ['/livez', '/readyz', '/healthz']) {
      const r = await t.request('GET', p);
      expect(r.status).toBe(200);
      expect(r.text).toBe('ok');
    }
    const v = await t.request('GET', '/readyz?verbose');
    expect(v.text).toContain('[+]ping ok');
    expect(v.text).toContain('[+]etcd ok');
    expect(v.text).toContain('[+]shutdown ok');
    expect(v.text).toContain('[+]poststarthook/bootstrap-namespaces ok');
    expect(v.text.trim().split('\n').pop()).toBe('healthz check passed');
    const ex = await t.request('GET', '/livez?verbose&exclude=etcd');
    expect(ex.text).toContain('[+]etcd excluded: ok');
    expect((await t.request('GET', '/livez/ping')).text).toBe('ok');
    expect((await t.request('GET', '/livez/nonexistent')).status).toBe(404);
    expect((await t.request('GET', '/livez/shutdown')).status).toBe(404);
    expect((await t.request('GET', '/readyz/shutdown')).status).toBe(200);
  });
});

describe('identity', () => {
  it('anonymous requests are system:anonymous and reach only what system:public-info-viewer grants (default Node,RBAC)', async () => {
    const r = await t.request('GET', '/api/v1/namespaces', { anonymous: true });
    expect(r.status).toBe(403);
    expect(r.json()).toMatchObject({
      kind: 'Status',
      reason: 'Forbidden',
      code: 403,
      message: 'namespaces is forbidden: User "system:anonymous" cannot list resource "namespaces" in API group "" at the cluster scope',
      details: { kind: 'namespaces' },
    });
    expect((await t.request('GET', '/version', { anonymous: true })).status).toBe(200);
  });

  it('an unknown bearer token is 401, not anonymous', async () => {
    const r = await t.request('GET', '/api/v1/namespaces', { anonymous: true, headers: { Authorization: 'Bearer nope' } });
    expect(r.status).toBe(401);
    expect(r.json()).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });
  });
});

describe('metrics', () => {
  it('exposes request counters and store gauges in Prometheus format', async () => {
    await t.request('GET', '/api/v1/namespaces/default');
    const r = await t.request('GET', '/metrics');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toContain('text/plain');
    expect(r.text).toMatch(/apiserver_request_total\{verb="GET",group="",version="v1",resource="namespaces",subresource="",code="200"\} \d+/);
    const rev = /orch_store_revision (\d+)/.exec(r.text);
    expect(Number(rev?.[1])).toBeGreaterThan(0);
  });
});

describe('watch stream start', () => {
  it('sends the status line and headers before the first event', async () => {
    const { request } = await import('node:https');
    const rv = (await t.request('GET', '/api/v1/namespaces/default/configmaps')).json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion;
    const headers = await new Promise<Record<string, unknown>>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: t.server.port,
          path: `/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${rv}`,
          ca: t.server.caPem,
          cert: t.server.adminCertPem,
          key: t.server.adminKeyPem,
          agent: false,
        },
        (res) => {
          resolve({ status: res.statusCode, ...res.headers });
          res.destroy();
        },
      );
      req.on('error', reject);
      req.end();
    });
    // no object changed after rv, so only the stream start can have produced the headers
    expect(headers.status).toBe(200);
    expect(headers['transfer-encoding']).toBe('chunked');
    expect(headers['content-type']).toBe('application/json');
  });
});

describe('large request heads', () => {
  // 100 ms between pieces: the front held a partial head only 50 ms, then uWS got it in
  // several reads and closed the connection (seen under CI load with 1 ms between pieces)
  it('a 20 KB bearer token written in 1 KB pieces 100 ms apart gets a clean 401', async () => {
    const { connect } = await import('node:tls');
    const text = await new Promise<string>((resolve, reject) => {
      const s = connect({ host: '127.0.0.1', port: t.server.port, ca: t.server.caPem, servername: 'localhost' }, async () => {
        const req = Buffer.from(`GET /api/v1/namespaces HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${'x'.repeat(20_000)}\r\nConnection: close\r\n\r\n`);
        for (let i = 0; i < req.length; i += 1024) {
          s.write(req.subarray(i, i + 1024));
          await new Promise((r) => setTimeout(r, 100));
        }
      });
      let out = '';
      s.on('data', (d: Buffer) => (out += d.toString()));
      s.on('end', () => resolve(out));
      s.on('close', () => resolve(out));
      s.on('error', reject);
    });
    expect(text.startsWith('HTTP/1.1 401')).toBe(true);
    expect(text).toContain('"reason":"Unauthorized"');
  });
});

describe('namespace finalize sub-resource', () => {
  it('a namespace finalizer of another controller keeps the namespace until it is removed through /finalize', async () => {
    await core.createNamespace({ body: { metadata: { name: 'fin' } } });
    const ns = (await t.request('GET', '/api/v1/namespaces/fin')).json<{ spec: { finalizers: string[] } }>();
    expect(ns.spec.finalizers).toEqual(['kubernetes']);
    const put = await t.request('PUT', '/api/v1/namespaces/fin/finalize', {
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'fin' }, spec: { finalizers: ['kubernetes', 'example.com/cleanup'] } },
    });
    expect(put.status).toBe(200);
    expect(put.json<{ spec: { finalizers: string[] } }>().spec.finalizers).toEqual(['kubernetes', 'example.com/cleanup']);
    expect((await t.request('DELETE', '/api/v1/namespaces/fin')).status).toBe(200);
    // the controller drops `kubernetes`; the other finalizer keeps it Terminating
    let spec: { finalizers: string[] } = { finalizers: [] };
    for (let i = 0; i < 100; i++) {
      const g = (await t.request('GET', '/api/v1/namespaces/fin')).json<{ spec: { finalizers: string[] }; status: { phase: string } }>();
      expect(g.status.phase).toBe('Terminating');
      spec = g.spec;
      if (!spec.finalizers.includes('kubernetes')) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(spec.finalizers).toEqual(['example.com/cleanup']);
    const done = await t.request('PUT', '/api/v1/namespaces/fin/finalize', {
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'fin' }, spec: { finalizers: [] } },
    });
    expect(done.status).toBe(200);
    expect((await t.request('GET', '/api/v1/namespaces/fin')).status).toBe(404);
  });
});
