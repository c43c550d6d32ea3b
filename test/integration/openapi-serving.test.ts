// OpenAPI as clients fetch it (issue #11 item 5): ETags with 304 Not
// Modified, and /openapi/v2 in gnostic's protobuf, which kubectl needs to
// validate `kind: List` documents and kinds it does not know.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import protobuf from 'protobufjs';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKubectl } from '../helpers/kubectl.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

// the part of gnostic's openapi.v2 schema this test reads (field numbers of OpenAPIv2.proto)
const GNOSTIC_SUBSET = `
syntax = "proto3";
package openapi.v2;
message Any { string yaml = 2; }
message NamedAny { string name = 1; Any value = 2; }
message TypeItem { repeated string value = 1; }
message NamedSchema { string name = 1; Schema value = 2; }
message Properties { repeated NamedSchema additional_properties = 1; }
message Schema { string _ref = 1; string description = 4; TypeItem type = 22; Properties properties = 25; repeated NamedAny vendor_extension = 31; }
message Definitions { repeated NamedSchema additional_properties = 1; }
message Info { string title = 1; string version = 2; }
message Document { string swagger = 1; Info info = 2; Definitions definitions = 9; }
`;

type NamedSchema = { name: string; value: { description?: string; properties?: { additionalProperties: NamedSchema[] }; vendorExtension?: { name: string; value: { yaml: string } }[] } };

describe('OpenAPI serving', () => {
  let t: TestServer;
  let dir: string;
  beforeAll(async () => {
    t = await startTestServer({ apiDomain: 'k8s.io' });
    dir = await mkdtemp(join(tmpdir(), 'orch-openapi-'));
  });
  afterAll(async () => {
    await t.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('answers 304 Not Modified to a matching If-None-Match on v2, the v3 index and a v3 document', async () => {
    for (const path of ['/openapi/v2', '/openapi/v3', '/openapi/v3/apis/apps/v1']) {
      const first = await t.request('GET', path, { headers: { Accept: 'application/json' } });
      expect(first.status).toBe(200);
      const etag = first.headers['etag'] as string;
      expect(etag).toMatch(/^"[0-9A-F]+(-pb)?"$/);
      const again = await t.request('GET', path, { headers: { Accept: 'application/json', 'If-None-Match': etag } });
      expect(again.status).toBe(304);
      expect(again.raw.length).toBe(0);
      expect((await t.request('GET', path, { headers: { 'If-None-Match': '"other"' } })).status).toBe(200);
    }
  });

  it('serves /openapi/v2 as gnostic protobuf with every kind and its group-version-kind', async () => {
    const r = await t.request('GET', '/openapi/v2', { headers: { Accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf' } });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
    const Document = protobuf.parse(GNOSTIC_SUBSET).root.lookupType('openapi.v2.Document');
    const doc = Document.toObject(Document.decode(r.raw), { defaults: false }) as { swagger: string; definitions: { additionalProperties: NamedSchema[] } };
    expect(doc.swagger).toBe('2.0');
    const byName = new Map(doc.definitions.additionalProperties.map((d) => [d.name, d.value]));
    const deployment = byName.get('io.k8s.api.apps.v1.Deployment');
    expect(deployment).toBeDefined();
    expect(deployment!.properties!.additionalProperties.map((p) => p.name)).toEqual(expect.arrayContaining(['apiVersion', 'kind', 'metadata', 'spec', 'status']));
    const gvk = deployment!.vendorExtension!.find((e) => e.name === 'x-kubernetes-group-version-kind');
    // YAML (JSON is YAML too) of the group-version-kind list
    expect(parseYaml(gvk!.value.yaml)).toEqual([{ group: 'apps', version: 'v1', kind: 'Deployment' }]);
    expect(byName.get('io.k8s.api.core.v1.ConfigMap')).toBeDefined();
  });

  it('lets kubectl apply a List of several objects (as `kubectl get -o yaml` prints them)', async () => {
    const list = {
      apiVersion: 'v1',
      kind: 'List',
      items: [
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'l1', namespace: 'default' }, data: { a: '1' } },
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'l2', namespace: 'default' }, data: { b: '2' } },
      ],
    };
    const f = join(dir, 'list.json');
    await writeFile(f, JSON.stringify(list));
    const r = await runKubectl(t.server.kubeconfigPath, ['apply', '-f', f]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('configmap/l1 created');
    expect(r.stdout).toContain('configmap/l2 created');
  });
});
