// Kubernetes' e2e "[sig-api-machinery] FieldValidation" tests
// (test/e2e/apimachinery/field_validation.go) on a started orch server with
// kube's group names: fieldValidation=Strict on a typed create (unknown and
// duplicate fields, unknown metadata) and on server-side apply of custom
// resources (a valid object, a schema-less CRD, fields the schema does not
// declare at the root, in metadata and in an embedded resource's metadata,
// and a duplicate YAML key under x-kubernetes-preserve-unknown-fields).

import { beforeAll, describe, expect, it } from 'vitest';
import {
  type Obj, type TestServer, createCrdAndWait, crPath, cronSpecSchema, deleteCrdAndWait, newNamespace, portsSchema, randomNameMultiVersionCrd, useKubeServer,
} from '../helpers/kube-e2e.js';

let t: TestServer;
let ns: string;
useKubeServer((s) => (t = s));
beforeAll(async () => {
  ns = await newNamespace(t, 'field-validation');
});

const STRICT = '?fieldManager=field_validation_mgr&fieldValidation=Strict';

async function createDeploymentStrict(body: string): Promise<Obj> {
  const r = await t.request('POST', `/apis/apps/v1/namespaces/${ns}/deployments${STRICT}`, { body, headers: { 'content-type': 'application/json' } });
  expect(r.status, r.text).toBe(400);
  return r.json<Obj>();
}


/** the e2e tests' schema; `spec` adds to the spec's own schema */
function schema(spec: Obj = {}, extraProps: Obj = {}): Obj {
  return {
    openAPIV3Schema: {
      type: 'object',
      properties: { spec: { type: 'object', ...spec, properties: { ...extraProps, foo: { type: 'string' }, cronSpec: cronSpecSchema, ports: portsSchema } } },
    },
  };
}

/** a random multi-version CRD with `validation` on every version (none: the fixture's allow-all schema) */
async function crdWith(validation?: Obj): Promise<Obj> {
  const crd = randomNameMultiVersionCrd('Cluster');
  if (validation) for (const v of crd.spec.versions as Obj[]) v.schema = structuredClone(validation);
  return createCrdAndWait(t, crd);
}

/** server-side apply of a YAML body with fieldValidation=Strict, to the CRD's first version */
async function applyYaml(crd: Obj, name: string, yaml: string): Promise<{ status: number; text: string }> {
  return t.request('PATCH', `${crPath(crd)}/${name}${STRICT}`, { body: yaml, headers: { 'content-type': 'application/apply-patch+yaml' } });
}

const header = (crd: Obj, name: string): string =>
  `\napiVersion: ${crd.spec.group}/${crd.spec.versions[0].name}\nkind: ${crd.spec.names.kind}\nmetadata:\n  name: ${name}\n`;
const PORTS = '  cronSpec: "* * * * */5"\n  ports:\n  - name: x\n    containerPort: 80\n    protocol: TCP';

describe('FieldValidation (field_validation.go)', () => {
  it('[Conformance] should detect unknown and duplicate fields of a typed object', async () => {
    const status = await createDeploymentStrict(`{
      "apiVersion": "apps/v1", "kind": "Deployment",
      "metadata": { "name": "my-dep", "labels": {"app": "nginx"} },
      "spec": {
        "unknownField": "foo",
        "replicas": 2,
        "replicas": 3,
        "selector": { "matchLabels": { "app": "nginx" } },
        "template": { "metadata": { "labels": { "app": "nginx" } }, "spec": { "containers": [{ "name": "nginx", "image": "nginx:latest" }] } }
      }
    }`);
    expect(status.reason).toBe('BadRequest');
    expect(status.message).toContain('strict decoding error: unknown field "spec.unknownField", duplicate field "spec.replicas"');
  });

  it('[Conformance] should detect unknown metadata fields of a typed object', async () => {
    const status = await createDeploymentStrict(`{
      "apiVersion": "apps/v1", "kind": "Deployment",
      "metadata": { "name": "my-dep", "unknownMeta": "foo", "labels": {"app": "nginx"} },
      "spec": {
        "selector": { "matchLabels": { "app": "nginx" } },
        "template": { "metadata": { "labels": { "app": "nginx" } }, "spec": { "containers": [{ "name": "nginx", "image": "nginx:latest" }] } }
      }
    }`);
    expect(status.message).toContain('strict decoding error: unknown field "metadata.unknownMeta"');
  });

  it('[Conformance] should create/apply a valid CR for CRD with validation schema', async () => {
    const crd = await crdWith(schema());
    const r = await applyYaml(crd, 'mytest', `${header(crd, 'mytest')}spec:\n  foo: foo1\n${PORTS}`);
    expect(r.status, r.text).toBe(201);
    await deleteCrdAndWait(t, crd.metadata.name);
  });

  it('[Conformance] should create/apply a CR with unknown fields for CRD with no validation schema', async () => {
    const crd = await crdWith();
    const r = await applyYaml(crd, 'mytest', `${header(crd, 'mytest')}spec:\n  unknown: uk1\n${PORTS}`);
    expect(r.status, r.text).toBe(201);
    await deleteCrdAndWait(t, crd.metadata.name);
  });

  it('[Conformance] should create/apply an invalid CR with extra properties for CRD with validation schema', async () => {
    const crd = await crdWith(schema());
    const r = await applyYaml(crd, 'mytest', `${header(crd, 'mytest')}unknownField: unknown\nspec:\n  foo: foo1\n${PORTS}`);
    expect(r.status, r.text).toBe(400);
    expect(r.text).toContain('.unknownField: field not declared in schema');
    await deleteCrdAndWait(t, crd.metadata.name);
  });

  it('[Conformance] should detect unknown metadata fields in both the root and embedded object of a CR', async () => {
    const template = {
      type: 'object',
      'x-kubernetes-embedded-resource': true,
      properties: { metadata: { type: 'object', properties: { name: { type: 'string' } } }, spec: { type: 'object' } },
    };
    const crd = await crdWith(schema({ 'x-kubernetes-preserve-unknown-fields': true }, { template }));
    const yaml = `\napiVersion: ${crd.spec.group}/${crd.spec.versions[0].name}\nkind: ${crd.spec.names.kind}\nmetadata:\n  name: mytest\n  unknownMeta: unknown\n`
      + `spec:\n  template:\n    apiversion: foo/v1\n    kind: Sub\n    metadata:\n        unknownSubMeta: unknown\n        name: subobject\n        namespace: ${ns}\n  foo: foo1\n${PORTS}`;
    const r = await applyYaml(crd, 'mytest', yaml);
    expect(r.status, r.text).toBe(400);
    // kube names both
    expect(r.text).toContain('.metadata.unknownMeta: field not declared in schema');
    expect(r.text).toContain('.spec.template.metadata.unknownSubMeta: field not declared in schema');
    // an embedded resource's metadata is an ObjectMeta: its namespace is a known field, kept
    expect(r.text).not.toContain('metadata.namespace');
    const ok = await applyYaml(crd, 'mytest', yaml.replace('  unknownMeta: unknown\n', '').replace('        unknownSubMeta: unknown\n', '').replace('apiversion', 'apiVersion'));
    expect(ok.status, ok.text).toBe(201);
    expect(JSON.parse(ok.text).spec.template.metadata).toEqual({ name: 'subobject', namespace: ns });
    await deleteCrdAndWait(t, crd.metadata.name);
  });

  it('[Conformance] should detect duplicates in a CR when preserving unknown fields', async () => {
    const crd = await crdWith(schema({ 'x-kubernetes-preserve-unknown-fields': true }));
    const r = await applyYaml(crd, 'mytest', `${header(crd, 'mytest')}spec:\n  unknown: uk1\n  foo: foo1\n  foo: foo2\n${PORTS}`);
    expect(r.status, r.text).toBe(400);
    expect(r.text).toContain('line 9: key \\"foo\\" already set in map');
    await deleteCrdAndWait(t, crd.metadata.name);
  });
});
