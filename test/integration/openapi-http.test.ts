// /openapi/v2 and /openapi/v3 over HTTP (issue #11 item 5): every served kind
// is described, ETags and 304 Not Modified on If-None-Match, and the gnostic
// protobuf form of /openapi/v2 that kubectl asks for first.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import protobuf from 'protobufjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestServer, startTestServer } from '../helpers/server.js';

const PB = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';
let t: TestServer;

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t?.stop();
});

const header = (h: Record<string, string | string[] | undefined>, k: string): string => String(h[k] ?? '');

describe('OpenAPI documents', () => {
  it('/openapi/v2 describes every served kind with its group-version-kind', async () => {
    const doc = (await t.request('GET', '/openapi/v2')).json<{ definitions: Record<string, { 'x-kubernetes-group-version-kind'?: { group: string; version: string; kind: string }[] }> }>();
    const gvks = new Set(Object.values(doc.definitions).flatMap((d) => (d['x-kubernetes-group-version-kind'] ?? []).map((g) => `${g.group}/${g.version}/${g.kind}`)));
    for (const k of ['apps/v1/Deployment', 'apps/v1/StatefulSet', 'batch/v1/CronJob', 'autoscaling/v2/HorizontalPodAutoscaler', 'policy/v1/PodDisruptionBudget',
      'networking.orch.io/v1/Ingress', 'networking.orch.io/v1/NetworkPolicy', '/v1/PersistentVolumeClaim', 'storage.orch.io/v1/StorageClass', 'events.orch.io/v1/Event']) {
      expect(gvks.has(k), k).toBe(true);
    }
  });

  it('/openapi/v2 answers a matching If-None-Match with 304 and no body', async () => {
    const first = await t.request('GET', '/openapi/v2');
    const etag = header(first.headers, 'etag');
    expect(etag).toMatch(/^"[0-9A-F]{128}"$/);
    const again = await t.request('GET', '/openapi/v2', { headers: { 'If-None-Match': etag } });
    expect(again.status).toBe(304);
    expect(again.raw.length).toBe(0);
    const other = await t.request('GET', '/openapi/v2', { headers: { 'If-None-Match': '"stale"' } });
    expect(other.status).toBe(200);
  });

  it('/openapi/v3 index and group-version documents carry ETags too', async () => {
    const index = await t.request('GET', '/openapi/v3');
    const paths = index.json<{ paths: Record<string, { serverRelativeURL: string }> }>().paths;
    expect(Object.keys(paths)).toEqual(expect.arrayContaining(['apis/apps/v1', 'apis/batch/v1', 'apis/autoscaling/v2', 'apis/policy/v1']));
    expect((await t.request('GET', '/openapi/v3', { headers: { 'If-None-Match': header(index.headers, 'etag') } })).status).toBe(304);
    const apps = await t.request('GET', paths['apis/apps/v1']!.serverRelativeURL);
    expect(apps.status).toBe(200);
    expect(header(apps.headers, 'cache-control')).toContain('immutable');
    expect((await t.request('GET', '/openapi/v3/apis/apps/v1', { headers: { 'If-None-Match': header(apps.headers, 'etag') } })).status).toBe(304);
  });

  it('/openapi/v2 answers the gnostic protobuf form kubectl asks for', async () => {
    const r = await t.request('GET', '/openapi/v2', { headers: { Accept: `${PB}, application/json` } });
    expect(r.status).toBe(200);
    // the dotted form: Go's mime parser (kubectl) rejects `@` in a response type
    expect(header(r.headers, 'content-type')).toBe('application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
    const root = protobuf.parse(readFileSync(join(import.meta.dirname, '..', '..', 'proto', 'openapi-v2.proto'), 'utf8'), { keepCase: true }).root;
    const doc = root.lookupType('openapi.v2.Document').toObject(root.lookupType('openapi.v2.Document').decode(r.raw), { defaults: false }) as {
      swagger: string;
      definitions: { additional_properties: { name: string; value: { vendor_extension?: { name: string; value: { yaml: string } }[]; properties?: { additional_properties: { name: string }[] } } }[] };
    };
    expect(doc.swagger).toBe('2.0');
    const dep = doc.definitions.additional_properties.find((d) => d.name === 'io.orch.api.apps.v1.Deployment')!;
    expect(dep.value.properties!.additional_properties.map((p) => p.name)).toEqual(expect.arrayContaining(['apiVersion', 'kind', 'metadata', 'spec', 'status']));
    const gvk = dep.value.vendor_extension!.find((e) => e.name === 'x-kubernetes-group-version-kind')!;
    expect(JSON.parse(gvk.value.yaml)).toEqual([{ group: 'apps', kind: 'Deployment', version: 'v1' }]);
    // one ETag per document version, whatever its form (as kube-openapi)
    const etag = header(r.headers, 'etag');
    expect(etag).toBe(header((await t.request('GET', '/openapi/v2')).headers, 'etag'));
    expect(header(r.headers, 'vary')).toBe('Accept');
    expect((await t.request('GET', '/openapi/v2', { headers: { Accept: PB, 'If-None-Match': etag } })).status).toBe(304);
  });
});
