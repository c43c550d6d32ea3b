// A bounded fuzz of the resource API over HTTP/1.1 and HTTP/2 (fast-check): a few
// hundred malformed requests (bodies, content types, query parameters, patch
// payloads, headers) against a started server. Each answer is below 500 and, when
// an error, a Status whose code is the HTTP status (the project rule; spec 000 §7);
// the server stays ready; objects the fuzz never addresses are byte for byte as
// they were, and a deployment's replicas stay within what was written.

import { connect as h2connect, type ClientHttp2Session } from 'node:http2';
import fc from 'fast-check';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_NAMESPACE_DEFAULTS, NO_WORKLOAD_CONTROLLERS, type TestServer, startTestServer } from '../helpers/server.js';

const KEEP = 'keep';
const FUZZ = 'fuzz';

interface Answer {
  status: number;
  text: string;
  contentType: string;
}

/** an error body as the client asked for it: JSON, YAML, or the protobuf envelope of a Status */
function statusOf(a: Answer): unknown {
  if (a.contentType.includes('yaml')) return parseYaml(a.text);
  if (a.contentType.includes('protobuf')) {
    expect(a.text.startsWith('k8s\u0000')).toBe(true);
    expect(a.text).toContain('Status');
    return { kind: 'Status', status: 'Failure', code: a.status };
  }
  return JSON.parse(a.text);
}

const collections = [`/api/v1/namespaces/${FUZZ}/configmaps`, `/apis/apps/v1/namespaces/${FUZZ}/deployments`, `/api/v1/namespaces/${FUZZ}/secrets`, '/api/v1/namespaces', `/api/v1/namespaces/missing/configmaps`];
const objects = [`/api/v1/namespaces/${FUZZ}/configmaps/c1`, `/apis/apps/v1/namespaces/${FUZZ}/deployments/d1`, `/apis/apps/v1/namespaces/${FUZZ}/deployments/d1/scale`, `/apis/apps/v1/namespaces/${FUZZ}/deployments/d1/status`, `/api/v1/namespaces/${FUZZ}/configmaps/a%2Fb`, `/api/v1/namespaces/${FUZZ}/configmaps/..`];
const contentTypes = ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf', 'application/cbor', 'application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json', 'application/apply-patch+yaml', 'text/plain', 'application/json; =x', 'application/json;charset=latin1', ''];
const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`;
const bodies = [
  '', '{', '[]', 'null', '"x"', '1e400', '{"a":1,"a":2}', deep, '\u0000', '{"metadata":{"name":"c1","labels":[1]}}', '{"metadata":{"name":"c1","generation":18446744073709551616}}',
  '{"apiVersion":"v9","kind":"Nope"}', '{"metadata":{"name":"c1","creationTimestamp":"never"}}', '{"spec":{"replicas":99999999999}}', '[{"op":"move","from":"/metadata","path":"/metadata/x"}]',
  '[{"op":"test","path":"/data/x","value":1}]', '{"$patch":"bogus"}', '{"spec":{"strategy":{"$retainKeys":"x"}}}', 'a: &a [*a]', 'a: !!binary ???', '{"gracePeriodSeconds":"x"}',
  'k8s\u0000', 'k8s\u0000\n\u00ff\u00ff', '{"preconditions":{"uid":5}}',
];
const queries = ['', 'limit=-1', 'limit=abc', 'limit=1e9', 'continue=garbage', 'resourceVersion=abc', 'resourceVersionMatch=Bogus&resourceVersion=1', 'timeoutSeconds=-1', 'watch=maybe&timeoutSeconds=1', 'fieldSelector=a%3D%3D%3D', 'labelSelector=a%20in%20(b', 'dryRun=Nope', 'dryRun=All', 'fieldManager=%01', 'fieldValidation=Bogus', 'fieldValidation=Strict', 'propagationPolicy=bogus', 'pretty=x', 'gracePeriodSeconds=x', 'force=maybe'];
const accepts = [undefined, 'application/json;as=Table;v=bogus;g=meta.k8s.io', 'application/json;as=Table;v=v1;g=meta.k8s.io', 'text/html', 'application/yaml', 'application/vnd.kubernetes.protobuf', '*/*;q=0'];

const request = fc.record({
  h2: fc.boolean(),
  method: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'PROPFIND'),
  path: fc.oneof(fc.constantFrom(...collections, ...objects), fc.string({ maxLength: 12 }).map((s) => `/api/v1/namespaces/${FUZZ}/configmaps/${encodeURIComponent(s)}`)),
  query: fc.array(fc.constantFrom(...queries), { maxLength: 3 }).map((q) => q.filter((x) => x !== '').join('&')),
  contentType: fc.constantFrom(...contentTypes),
  accept: fc.constantFrom(...accepts),
  body: fc.oneof(fc.constantFrom(...bodies), fc.json({ maxDepth: 3 }), fc.string({ maxLength: 40 }), fc.uint8Array({ maxLength: 40 }).map((b) => Buffer.from(b))),
  impersonate: fc.constantFrom<Record<string, string> | undefined>(undefined, { 'Impersonate-Group': 'g' }, { 'Impersonate-User': 'system:serviceaccount:' }),
});

describe('HTTP fuzz', () => {
  let t: TestServer;
  let h2: ClientHttp2Session;
  const keep = [`/api/v1/namespaces/${KEEP}/configmaps/stable`, `/api/v1/namespaces/${KEEP}/secrets/stable`, `/apis/apps/v1/namespaces/${KEEP}/deployments/stable`];
  const before: string[] = [];

  const viaH2 = (method: string, path: string, headers: Record<string, string>, body: Buffer | string | undefined): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const s = h2.request({ ':method': method, ':path': path, ...Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v])) }, { endStream: body === undefined });
      let status = 0;
      let contentType = '';
      const chunks: Buffer[] = [];
      s.on('response', (h) => {
        status = Number(h[':status']);
        contentType = String(h['content-type'] ?? '');
      });
      s.on('data', (c: Buffer) => chunks.push(c));
      s.on('end', () => resolve({ status, contentType, text: Buffer.concat(chunks).toString('utf8') }));
      s.on('error', reject);
      if (body !== undefined) s.end(body);
    });

  beforeAll(async () => {
    t = await startTestServer({ authn: { controllers: [...NO_WORKLOAD_CONTROLLERS.controllers, ...NO_NAMESPACE_DEFAULTS.controllers.slice(1)] } });
    for (const ns of [KEEP, FUZZ]) expect((await t.request('POST', '/api/v1/namespaces', { body: { metadata: { name: ns } } })).status).toBe(201);
    const dep = (name: string) => ({ metadata: { name }, spec: { replicas: 2, selector: { matchLabels: { a: name } }, template: { metadata: { labels: { a: name } }, spec: { containers: [{ name: 'c', image: 'x' }] } } } });
    for (const ns of [KEEP, FUZZ]) {
      const name = ns === KEEP ? 'stable' : 'c1';
      expect((await t.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: { metadata: { name }, data: { k: 'v' } } })).status).toBe(201);
      expect((await t.request('POST', `/apis/apps/v1/namespaces/${ns}/deployments`, { body: dep(ns === KEEP ? 'stable' : 'd1') })).status).toBe(201);
    }
    expect((await t.request('POST', `/api/v1/namespaces/${KEEP}/secrets`, { body: { metadata: { name: 'stable' }, stringData: { p: 'q' } } })).status).toBe(201);
    for (const p of keep) before.push((await t.request('GET', p)).text);
    h2 = h2connect(`https://127.0.0.1:${t.server.port}`, { ca: t.server.caPem, cert: t.server.adminCertPem, key: t.server.adminKeyPem });
    h2.on('error', () => undefined);
  });
  afterAll(async () => {
    h2?.close();
    await t?.stop();
  });

  it('answers a few hundred malformed requests with a Status below 500 and loses nothing', async () => {
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const path = r.query ? `${r.path}?${r.query}` : r.path;
        const headers: Record<string, string> = { ...(r.impersonate ?? {}), ...(r.accept ? { Accept: r.accept } : {}) };
        const withBody = r.method !== 'GET' && r.method !== 'PROPFIND';
        if (withBody) headers['Content-Type'] = r.contentType;
        const answer: Answer = r.h2
          ? await viaH2(r.method, path, headers, withBody ? r.body : undefined)
          : await t.request(r.method, path, { headers, ...(withBody ? { body: r.body } : {}) }).then((a) => ({ ...a, contentType: String(a.headers['content-type'] ?? '') }));
        expect(answer.status, `${r.method} ${path}`).toBeGreaterThanOrEqual(200);
        expect(answer.status, `${r.method} ${path}: ${answer.text.slice(0, 300)}`).toBeLessThan(500);
        if (answer.status >= 400) {
          const st = statusOf(answer) as { kind: string; status: string; code: number };
          expect(st).toMatchObject({ kind: 'Status', status: 'Failure', code: answer.status });
        }
      }),
      { numRuns: 300, seed: 1 },
    );
    expect((await t.request('GET', '/readyz')).status).toBe(200);
    for (const [i, p] of keep.entries()) expect((await t.request('GET', p)).text).toBe(before[i]);
    // the fuzz may delete d1; while it is there, its replicas fit a Go int32
    const d1 = await t.request('GET', `/apis/apps/v1/namespaces/${FUZZ}/deployments/d1`);
    if (d1.status === 200) expect(d1.json<{ spec: { replicas: number } }>().spec.replicas).toBeLessThanOrEqual(2 ** 31 - 1);
  }, 60_000);
});
