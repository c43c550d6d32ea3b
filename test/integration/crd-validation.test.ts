// Validation of custom objects through their CRD's schema (issue #16; spec 000
// §4.8): types, formats, enums, required, bounds, pattern, nullable, the
// preserve-unknown / int-or-string / embedded-resource markers, set and map
// list uniqueness, CEL rules (x-kubernetes-validations) including transition
// rules on oldSelf, defaults, pruning and the three field validation levels.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CRDS, type Obj, createCrd, operatorCrd } from '../helpers/crds.js';
import { eventually } from '../helpers/eventually.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

let t: TestServer;
const WA = '/apis/apps.example.com/v1/namespaces/default/webapps';

beforeAll(async () => {
  t = await startTestServer();
  const crd = operatorCrd();
  const spec = crd.spec.versions[0].schema.openAPIV3Schema.properties.spec;
  spec.properties.name = { type: 'string', pattern: '^[a-z]+$', maxLength: 8, nullable: true };
  spec.properties.ratio = { type: 'number', exclusiveMinimum: true, minimum: 0, maximum: 1 };
  spec.properties.labels = { type: 'object', additionalProperties: { type: 'string' }, maxProperties: 2 };
  crd.spec.versions[0].schema.openAPIV3Schema.properties.metadata = { type: 'object', properties: { name: { type: 'string', maxLength: 12, pattern: '^[a-z0-9-]+$' } } };
  await createCrd(t, crd);
});
afterAll(async () => {
  await t?.stop();
});

const create = (name: string, spec: Obj, query = '') =>
  t.request('POST', `${WA}${query}`, { body: { apiVersion: 'apps.example.com/v1', kind: 'WebApp', metadata: { name }, spec: { image: 'nginx:1', ...spec } } });

function causes(r: { json<T>(): T }): string[] {
  return ((r.json<Obj>().details?.causes ?? []) as Obj[]).map((c) => `${c.field}: ${c.reason}`);
}

describe('schema validation of custom objects', () => {
  it('rejects wrong types, enums, bounds, formats and patterns with 422 and one cause per field', async () => {
    const r = await create('bad1', { replicas: 'three', tier: 'middle', maxReplicas: -1.5, contact: 'not-an-email', name: 'ABC', ratio: 0, ports: [{ name: 'p', port: 70000 }] });
    expect(r.status).toBe(422);
    expect(r.json<Obj>().reason).toBe('Invalid');
    const c = causes(r);
    expect(c).toEqual(expect.arrayContaining([
      'spec.replicas: FieldValueTypeInvalid',
      'spec.tier: FieldValueNotSupported',
      'spec.maxReplicas: FieldValueTypeInvalid',
      'spec.contact: FieldValueTypeInvalid', // a format failure is errors.InvalidType (apiextensions validation.go: field.TypeInvalid)
      'spec.name: FieldValueInvalid',
      'spec.ratio: FieldValueInvalid',
      'spec.ports[0].port: FieldValueInvalid',
    ]));
    expect(r.json<Obj>().message).toContain('spec.contact in body must be of type email');
    expect(r.json<Obj>().message).toContain('spec.ratio in body should be greater than 0');
    // nothing was written
    expect((await t.request('GET', `${WA}/bad1`)).status).toBe(404);
  });

  it('applies the schema\'s restrictions of metadata.name', async () => {
    const r = await create('much-too-long-name', {});
    expect(r.status).toBe(422);
    expect(causes(r)).toContain('metadata.name: FieldValueTooLong');
    expect((await create('fine-name', {})).status).toBe(201);
  });

  it('requires required fields and minLength', async () => {
    const r = await t.request('POST', WA, { body: { apiVersion: 'apps.example.com/v1', kind: 'WebApp', metadata: { name: 'noimg' }, spec: {} } });
    expect(r.status).toBe(422);
    expect(causes(r)).toContain('spec.image: FieldValueRequired');
    const empty = await create('emptyimg', { image: '' });
    expect(empty.status).toBe(422);
    expect(causes(empty)).toContain('spec.image: FieldValueRequired');
  });

  it('accepts null for a nullable field and int-or-string values; rejects other shapes', async () => {
    expect((await create('ok1', { name: null, targetPort: 8080 })).status).toBe(201);
    expect((await create('ok2', { targetPort: 'http' })).status).toBe(201);
    const bad = await create('bad2', { targetPort: true });
    expect(bad.status).toBe(422);
    expect(causes(bad)).toContain('spec.targetPort: FieldValueTypeInvalid');
  });

  it('refuses duplicates in set and map lists (spec 000 §4.9) and too many map entries', async () => {
    const r = await create('dup', { tags: ['a', 'a'], ports: [{ name: 'x', port: 1 }, { name: 'x', port: 2 }], labels: { a: '1', b: '2', c: '3' } });
    expect(r.status).toBe(422);
    expect(causes(r)).toEqual(expect.arrayContaining(['spec.tags[1]: FieldValueDuplicate', 'spec.ports[1]: FieldValueDuplicate', 'spec.labels: FieldValueTooMany']));
  });

  it('keeps unknown fields under preserve-unknown-fields and checks embedded resources', async () => {
    const ok = await create('emb', { settings: { anything: { goes: [1, 2] } }, template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'x' }, spec: { free: true } } });
    expect(ok.status).toBe(201);
    expect(ok.json<Obj>().spec.settings).toEqual({ anything: { goes: [1, 2] } });
    expect(ok.json<Obj>().spec.template.spec).toEqual({ free: true });
    const bad = await create('emb2', { template: { metadata: { name: 'x' } } });
    expect(bad.status).toBe(422);
    expect(causes(bad)).toEqual(expect.arrayContaining(['spec.template.apiVersion: FieldValueRequired', 'spec.template.kind: FieldValueRequired']));
  });
});

describe('CEL rules (x-kubernetes-validations)', () => {
  it('runs rules on create with their message', async () => {
    const r = await create('cel1', { replicas: 20, maxReplicas: 5 });
    expect(r.status).toBe(422);
    expect(r.json<Obj>().message).toContain('spec: Invalid value: "object": replicas must not exceed maxReplicas');
    expect((await create('cel2', { replicas: 5, maxReplicas: 5 })).status).toBe(201);
  });

  it('runs rules beside non-blocking schema errors, and says so when a blocking one stops them (kube hasBlockingErr)', async () => {
    // a pattern error does not block: the rule's error is reported beside it
    const both = await create('celb1', { name: 'UPPER', replicas: 20, maxReplicas: 5 });
    expect(both.status).toBe(422);
    expect(causes(both)).toEqual(['spec.name: FieldValueInvalid', 'spec: FieldValueInvalid']);
    expect(both.json<Obj>().message).toContain('replicas must not exceed maxReplicas');
    // a type error blocks: no rule runs, one fieldless error tells why
    const blocked = await create('celb2', { replicas: 'many', maxReplicas: 5 });
    expect(blocked.status).toBe(422);
    expect(causes(blocked)).toEqual(['spec.replicas: FieldValueTypeInvalid', '<nil>: FieldValueInvalid']);
    expect(blocked.json<Obj>().message).toContain(
      '<nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
    );
    expect(blocked.json<Obj>().message).not.toContain('replicas must not exceed');
  });

  it('runs transition rules against oldSelf on update only', async () => {
    expect((await create('cel3', { image: 'registry/app:1' })).status).toBe(201);
    const same = await t.request('PATCH', `${WA}/cel3`, { body: { spec: { image: 'registry/app:2' } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
    expect(same.status).toBe(200);
    const moved = await t.request('PATCH', `${WA}/cel3`, { body: { spec: { image: 'elsewhere/app:2' } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
    expect(moved.status).toBe(422);
    expect(moved.json<Obj>().message).toContain('the image repository cannot change');
    expect((await t.request('GET', `${WA}/cel3`)).json<Obj>().spec.image).toBe('registry/app:2');
  });
});

describe('defaults, pruning and field validation levels (spec 000 §4.8)', () => {
  it('prunes unknown fields with a warning by default, silently with Ignore, and refuses them with Strict', async () => {
    const warn = await create('fv1', { bogus: 1 });
    expect(warn.status).toBe(201);
    expect(warn.json<Obj>().spec.bogus).toBeUndefined();
    expect(String(warn.headers.warning)).toBe(`299 - "unknown field \\"spec.bogus\\""`);
    const ignore = await create('fv2', { bogus: 1 }, '?fieldValidation=Ignore');
    expect(ignore.status).toBe(201);
    expect(ignore.headers.warning).toBeUndefined();
    const strict = await create('fv3', { bogus: 1 }, '?fieldValidation=Strict');
    expect(strict.status).toBe(400);
    expect(strict.json<Obj>().message).toBe('WebApp in version "v1" cannot be handled as a WebApp: strict decoding error: unknown field "spec.bogus"');
    expect((await t.request('GET', `${WA}/fv3`)).status).toBe(404);
  });

  it('fills defaults on create and keeps given values', async () => {
    const r = await create('def1', { replicas: 0, tier: 'backend' });
    expect(r.json<Obj>().spec).toMatchObject({ replicas: 0, tier: 'backend', maxReplicas: 10 });
  });
});

describe('validation ratcheting (kube CRDValidationRatcheting, on by default since 1.30)', () => {
  const R = '/apis/ratchet.example.com/v1/namespaces/default/gizmos';
  const schema = (strict: boolean): Obj => ({
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: {
          name: strict ? { type: 'string', pattern: '^[a-z]+$', 'x-kubernetes-validations': [{ rule: 'self.size() <= 3', message: 'name too long' }] } : { type: 'string' },
          count: strict ? { type: 'integer', maximum: 10 } : { type: 'integer' },
          ports: {
            type: 'array',
            'x-kubernetes-list-type': 'map',
            'x-kubernetes-list-map-keys': ['name'],
            items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, port: strict ? { type: 'integer', maximum: 65535 } : { type: 'integer' } } },
          },
          tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
        },
      },
    },
  });
  const gizmo = (name: string, spec: Obj): Obj => ({ apiVersion: 'ratchet.example.com/v1', kind: 'Gizmo', metadata: { name }, spec });
  const put = async (name: string, change: (o: Obj) => void) => {
    const cur = (await t.request('GET', `${R}/${name}`)).json<Obj>();
    change(cur);
    return t.request('PUT', `${R}/${name}`, { body: cur });
  };

  beforeAll(async () => {
    const crd: Obj = {
      apiVersion: 'apiextensions.orch.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'gizmos.ratchet.example.com' },
      spec: { group: 'ratchet.example.com', scope: 'Namespaced', names: { plural: 'gizmos', kind: 'Gizmo' }, versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema(false) } }] },
    };
    await createCrd(t, crd);
    const old = { name: 'UPPER', count: 50, ports: [{ name: 'a', port: 70000 }], tags: ['x'] };
    expect((await t.request('POST', R, { body: gizmo('g1', old) })).status).toBe(201);
    expect((await t.request('POST', R, { body: gizmo('g2', old) })).status).toBe(201);
    // the CRD becomes stricter: both objects are now invalid
    const cur = (await t.request('GET', `${CRDS}/gizmos.ratchet.example.com`)).json<Obj>();
    cur.spec.versions[0].schema.openAPIV3Schema = schema(true);
    expect((await t.request('PUT', `${CRDS}/gizmos.ratchet.example.com`, { body: cur })).status).toBe(200);
    await eventually(async () => (await t.request('POST', R, { body: gizmo('probe', { count: 11 }) })).status === 422, 'stricter schema served');
  });

  it('a new object is validated in full', async () => {
    const r = await t.request('POST', R, { body: gizmo('g3', { name: 'UPPER', count: 50 }) });
    expect(r.status).toBe(422);
    // the pattern error does not block the name's rule: both are reported
    expect(causes(r).sort()).toEqual(['spec.count: FieldValueInvalid', 'spec.name: FieldValueInvalid', 'spec.name: FieldValueInvalid']);
  });

  it('an update that leaves the invalid values as stored is accepted (schema checks and CEL rules)', async () => {
    const r = await put('g1', (o) => (o.metadata.labels = { touched: 'yes' }));
    expect(r.status).toBe(200);
    expect(r.json<Obj>().spec).toEqual({ name: 'UPPER', count: 50, ports: [{ name: 'a', port: 70000 }], tags: ['x'] });
    // a change beside them in the same object: map-list items correlate by key, so item a is unchanged
    const more = await put('g1', (o) => {
      o.spec.ports.push({ name: 'b', port: 80 });
      o.spec.tags.push('y');
    });
    expect(more.status).toBe(200);
  });

  it('a changed value is validated again, the unchanged ones stay ratcheted', async () => {
    const count = await put('g2', (o) => (o.spec.count = 40));
    expect(count.status).toBe(422);
    expect(causes(count)).toEqual(['spec.count: FieldValueInvalid']);
    const port = await put('g2', (o) => (o.spec.ports[0].port = 70001));
    expect(port.status).toBe(422);
    expect(causes(port)).toEqual(['spec.ports[0].port: FieldValueInvalid']);
    // the name's rule runs again when the name changes, beside its pattern error
    const name = await put('g2', (o) => (o.spec.name = 'LONGER'));
    expect(name.status).toBe(422);
    expect(name.json<Obj>().message).toContain("spec.name in body should match '^[a-z]+$'");
    expect(name.json<Obj>().message).toContain('name too long');
  });
});

// kube 1.32's value checks (kube-openapi validate + strfmt, apiextensions formats.go and validation.go)
describe('kube-openapi value checks: RE2 patterns, formats, rune lengths, messages', () => {
  const GADGETS = '/apis/values.example.com/v1/namespaces/default/gadgets';
  const gadgetCrd = (props: Obj, name = 'gadgets') => ({
    apiVersion: 'apiextensions.orch.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${name}.values.example.com` },
    spec: {
      group: 'values.example.com',
      scope: 'Namespaced',
      names: { plural: name, singular: name.slice(0, -1), kind: name === 'gadgets' ? 'Gadget' : 'Broken' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: props } } } } }],
    },
  });
  const gadget = (name: string, spec: Obj) =>
    t.request('POST', GADGETS, { body: { apiVersion: 'values.example.com/v1', kind: 'Gadget', metadata: { name }, spec } });
  const messages = (r: { json<T>(): T }) => ((r.json<Obj>().details?.causes ?? []) as Obj[]).map((c) => `${c.field}: ${c.reason}: ${c.message}`);

  beforeAll(async () => {
    await createCrd(t, gadgetCrd({
      ci: { type: 'string', pattern: '(?i)^[a-z]+$' },
      letters: { type: 'string', pattern: '^\\pL+$' },
      short: { type: 'string', maxLength: 2 },
      every: { type: 'string', format: 'duration' },
      link: { type: 'string', format: 'uri' },
      day: { type: 'string', format: 'date' },
      at: { type: 'string', format: 'date-time' },
      port: { 'x-kubernetes-int-or-string': true },
      level: { type: 'integer', enum: [1, 2] },
      mode: { type: 'string', enum: ['a', 'b'] },
    }));
  });

  it('accepts what kube accepts', async () => {
    const r = await gadget('ok', { ci: 'ABC', letters: 'héllo', short: '😀😀', every: '1d', link: '/path', day: '2024-02-29', at: '2024-02-29t10:00:00z', port: 'http', level: 2 });
    expect(r.status, r.text).toBe(201);
    for (const every of ['3w', '1 h', '1h30m']) expect((await gadget(`d-${every.replace(/[^a-z0-9]/g, '')}`, { every })).status, every).toBe(201);
  });

  it('rejects what kube rejects, in kube\'s words', async () => {
    const r = await gadget('bad', { letters: 'h3llo', short: '😀😀😀', every: '1 parsec', link: 'relative/path', day: '2024-02-30', at: '2024-02-29 10:00:00Z', port: 1.5, level: 3, mode: 5 });
    expect(r.status).toBe(422);
    expect(messages(r)).toEqual(expect.arrayContaining([
      // kube-openapi errors.FailedPattern
      "spec.letters: FieldValueInvalid: Invalid value: \"h3llo\": spec.letters in body should match '^\\pL+$'",
      // field.TooLong via kubeOpenAPIResultToFieldErrors; utf8.RuneCount
      'spec.short: FieldValueTooLong: Too long: may not be more than 2 bytes',
      // errors.InvalidType of the format validator
      'spec.every: FieldValueTypeInvalid: Invalid value: "1 parsec": spec.every in body must be of type duration: "1 parsec"',
      'spec.link: FieldValueTypeInvalid: Invalid value: "relative/path": spec.link in body must be of type uri: "relative/path"',
      'spec.day: FieldValueTypeInvalid: Invalid value: "2024-02-30": spec.day in body must be of type date: "2024-02-30"',
      'spec.at: FieldValueTypeInvalid: Invalid value: "2024-02-29 10:00:00Z": spec.at in body must be of type date-time: "2024-02-29 10:00:00Z"',
      // validate/type.go: the x-kubernetes-int-or-string types joined
      'spec.port: FieldValueTypeInvalid: Invalid value: "number": spec.port in body must be of type integer,string: "number"',
      // field.NotSupported with JSON-encoded, Go-quoted values
      'spec.level: FieldValueNotSupported: Unsupported value: 3: supported values: "1", "2"',
      // the type validator and the enum (common) validator both report
      'spec.mode: FieldValueTypeInvalid: Invalid value: "integer": spec.mode in body must be of type string: "integer"',
      'spec.mode: FieldValueNotSupported: Unsupported value: 5: supported values: "a", "b"',
    ]));
    expect(messages(r)).toHaveLength(10);
  });

  it('refuses a CRD whose pattern Go cannot compile (apiserver/schema/validation.go)', async () => {
    const r = await t.request('POST', CRDS, { body: gadgetCrd({ p: { type: 'string', pattern: '^(?=a)' }, q: { type: 'string', pattern: '+' } }, 'brokens') });
    expect(r.status).toBe(422);
    expect(messages(r)).toEqual([
      'spec.validation.openAPIV3Schema.properties[spec].properties[p].pattern: FieldValueInvalid: Invalid value: "^(?=a)": must be a valid regular expression, but isn\'t: error parsing regexp: invalid or unsupported Perl syntax: `(?=`',
      // kube's own test case ("invalid regex pattern", apiserver/schema/validation_test.go)
      'spec.validation.openAPIV3Schema.properties[spec].properties[q].pattern: FieldValueInvalid: Invalid value: "+": must be a valid regular expression, but isn\'t: error parsing regexp: missing argument to repetition operator: `+`',
    ]);
  });
});
