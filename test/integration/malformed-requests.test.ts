// Malformed and hostile requests answered as kube-apiserver 1.32 answers them, with
// nothing written (spec 000 §7; the project rule: a clear Status, no partial write):
// integers beyond their Go type, DeleteOptions of the wrong types, query integers,
// a negative watch timeout, a missing namespace before validation, Content-Type
// parameters, a bare protobuf prefix, timestamps that are not times, YAML merge
// keys, and request heads uWS would hold without a word.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_NAMESPACE_DEFAULTS, NO_WORKLOAD_CONTROLLERS, type TestServer, startTestServer } from '../helpers/server.js';
import { adminTls, closedByServer } from '../helpers/raw-tls.js';

const NS = 'malformed';
const CM = `/api/v1/namespaces/${NS}/configmaps`;
const DEPLOY = `/apis/apps/v1/namespaces/${NS}/deployments`;

const deployment = (name: string, replicas: number) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: { replicas, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'x' }] } } },
});

describe('malformed requests', () => {
  let t: TestServer;
  const status = async (method: string, path: string, body?: unknown, contentType?: string) => {
    const r = await t.request(method, path, { body: body as object, headers: contentType ? { 'Content-Type': contentType } : {} });
    const s = r.status >= 400 ? r.json<{ code: number; reason?: string; message: string }>() : undefined;
    if (s) expect(s.code).toBe(r.status);
    return { status: r.status, reason: s?.reason, message: s?.message ?? '', body: r };
  };

  beforeAll(async () => {
    t = await startTestServer({ authn: { controllers: [...NO_WORKLOAD_CONTROLLERS.controllers, ...NO_NAMESPACE_DEFAULTS.controllers.slice(1)] } });
    expect((await t.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } })).status).toBe(201);
    expect((await t.request('POST', DEPLOY, { body: deployment('web', 1) })).status).toBe(201);
  });
  afterAll(async () => t.stop());

  it('refuses an integer its Go field cannot hold, and stores nothing', async () => {
    const r = await status('POST', DEPLOY, deployment('huge', 99999999999));
    expect(r).toMatchObject({ status: 400, reason: 'BadRequest' });
    expect(r.message).toContain('spec.replicas in body must be of type int32');
    expect((await t.request('GET', `${DEPLOY}/huge`)).status).toBe(404);
    const p = await status('PATCH', `${DEPLOY}/web`, { spec: { replicas: 2 ** 31 } }, 'application/merge-patch+json');
    expect(p).toMatchObject({ status: 400, reason: 'BadRequest' });
    const s = await status('PATCH', `${DEPLOY}/web/scale`, { spec: { replicas: 1e20 } }, 'application/merge-patch+json');
    expect(s).toMatchObject({ status: 422, reason: 'Invalid' });
    const g = await status('POST', CM, { metadata: { name: 'gen', generation: 2 ** 64 } });
    expect(g).toMatchObject({ status: 400, reason: 'BadRequest' });
    expect((await t.request('GET', `${DEPLOY}/web`)).json<{ spec: { replicas: number } }>().spec.replicas).toBe(1);
  });

  it('refuses DeleteOptions of the wrong types before anything is deleted', async () => {
    expect((await t.request('POST', CM, { body: { metadata: { name: 'keep' } } })).status).toBe(201);
    for (const body of [{ gracePeriodSeconds: 'x' }, { preconditions: { uid: 5 } }, { dryRun: 'All' }, { orphanDependents: 'false' }]) {
      const r = await status('DELETE', `${CM}/keep`, body);
      expect(r).toMatchObject({ status: 400, reason: 'BadRequest' });
      expect(r.message).toMatch(/^json: cannot unmarshal \w+ into Go struct field /);
    }
    expect((await t.request('GET', `${CM}/keep`)).status).toBe(200);
  });

  it('reads query integers as strconv.ParseInt for list and watch alike', async () => {
    for (const q of ['limit=99999999999999999999', 'limit=', 'timeoutSeconds=abc', 'watch=1&limit=abc']) {
      const r = await status('GET', `${CM}?${q}`);
      expect(r, q).toMatchObject({ status: 400, reason: 'BadRequest' });
      expect(r.message).toMatch(/^strconv\.ParseInt: parsing ".*": (invalid syntax|value out of range)$/);
    }
    // a negative timeout is a watch whose time is up: 200 and no events (kube validates none)
    const rv = (await t.request('GET', CM)).json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion;
    const w = await t.request('GET', `${CM}?watch=1&timeoutSeconds=-1&resourceVersion=${rv}`);
    expect(w.status).toBe(200);
    expect(w.text).toBe('');
  });

  it('answers a create in a missing namespace 404 before validating the object', async () => {
    const r = await status('POST', '/api/v1/namespaces/absent/configmaps', { metadata: { name: 'Not_Valid' } });
    expect(r).toMatchObject({ status: 404, reason: 'NotFound', message: 'namespaces "absent" not found' });
  });

  it('refuses a body it cannot decode with kube codes, writing nothing', async () => {
    expect(await status('POST', CM, { metadata: { name: 'ct' } }, 'application/json; =x')).toMatchObject({ status: 415, reason: 'UnsupportedMediaType' });
    const prefixOnly = await t.request('POST', CM, { body: Buffer.from([0x6b, 0x38, 0x73, 0x00]), headers: { 'Content-Type': 'application/vnd.kubernetes.protobuf' } });
    expect(prefixOnly.status).toBe(400);
    expect(prefixOnly.text).toContain('empty body');
    for (const meta of [{ name: 'ts1', creationTimestamp: 'yesterday' }, { name: 'ts2', deletionTimestamp: 5 }]) {
      const r = await status('POST', CM, { metadata: meta });
      expect(r).toMatchObject({ status: 400, reason: 'BadRequest' });
      expect(r.message).toContain(`cannot be handled as a ConfigMap: metadata.`);
    }
    expect((await t.request('GET', `${CM}/ts1`)).status).toBe(404);
    // yaml.v2 reads merge keys: kube creates the object
    const merged = await t.request('POST', CM, { body: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  <<: {name: merged}\n', headers: { 'Content-Type': 'application/yaml' } });
    expect(merged.status).toBe(201);
  });

  it('answers request heads uWS would hold open: absolute-form, OPTIONS *, control characters', async () => {
    const exchange = async (raw: string) => {
      const s = await adminTls(t);
      s.write(raw);
      return closedByServer(s, 5_000);
    };
    expect(await exchange(`GET https://127.0.0.1/api/v1/namespaces/${NS} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)).toMatch(/^HTTP\/1\.1 200 [^]*"name":"malformed"/);
    expect(await exchange('OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n')).toMatch(/^HTTP\/1\.1 200 [^]*Content-Length: 0\r\n\r\n$/);
    expect(await exchange('GET /version HTTP/1.1\r\nHost: x\r\nX-A: a\u0000b\r\n\r\n')).toMatch(/^HTTP\/1\.1 400 [^]*"kind":"Status"/);
    expect(await exchange('\u0000\u0001\u0002 garbage\r\n\r\n')).toMatch(/^HTTP\/1\.1 400 /);
  });
});
