// The CustomResourceDefinition object itself (issue #16; spec 000 §9.3 CRD
// row): bad definitions are 422 Invalid with field paths (non-structural
// schemas, invalid CEL, bad names, versions, columns, scale paths), names that
// clash with an older CRD leave NamesAccepted False with a clear message, and
// deleting a CRD removes all its objects — also while objects are being
// written — through the customresourcecleanup finalizer.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CRDS, type Obj, createCrd, operatorCrd } from '../helpers/crds.js';
import { eventually } from '../helpers/eventually.js';
import { openWatch } from '../helpers/watch-stream.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

let t: TestServer;

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t?.stop();
});

/** a minimal CRD `<plural>.<group>` with the given schema for v1 */
function crd(plural: string, group: string, kind: string, schema: Obj = { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } }): Obj {
  return {
    apiVersion: 'apiextensions.orch.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: { group, scope: 'Namespaced', names: { plural, kind }, versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema } }] },
  };
}

function causes(r: { json<T>(): T }): Obj[] {
  return (r.json<Obj>().details?.causes ?? []) as Obj[];
}

describe('invalid definitions are 422 with field paths', () => {
  it('refuses non-structural schemas', async () => {
    const r = await t.request('POST', CRDS, {
      body: crd('things', 'bad.example.com', 'Thing', {
        type: 'object',
        properties: {
          spec: { properties: { a: { type: 'string' } } },
          other: { type: 'object', properties: { x: { type: 'string' } }, additionalProperties: { type: 'string' } },
          list: { type: 'array', items: [{ type: 'string' }] },
          alt: { type: 'string', anyOf: [{ type: 'string' }] },
          ref: { $ref: '#/definitions/x' },
        },
      }),
    });
    expect(r.status).toBe(422);
    expect(r.json<Obj>().reason).toBe('Invalid');
    const fields = causes(r).map((c) => `${c.field}: ${c.reason}`);
    // one version: kube reports its schema at the top (the internal form's spec.validation)
    const p = 'spec.validation.openAPIV3Schema';
    expect(fields).toEqual(expect.arrayContaining([
      `${p}.properties[spec].type: FieldValueRequired`,
      `${p}.properties[other].additionalProperties: FieldValueForbidden`,
      `${p}.properties[list].items: FieldValueForbidden`,
      `${p}.properties[alt].anyOf[0].type: FieldValueForbidden`,
      `${p}.properties[ref].$ref: FieldValueForbidden`,
    ]));
    expect((await t.request('GET', `${CRDS}/things.bad.example.com`)).status).toBe(404);
  });

  it('refuses invalid CEL rules, naming the rule', async () => {
    const r = await t.request('POST', CRDS, {
      body: crd('rules', 'bad.example.com', 'Rule', {
        type: 'object',
        properties: {
          spec: {
            type: 'object',
            'x-kubernetes-validations': [{ rule: 'self.size >' }, { rule: 'nosuch.size > 1' }, { rule: 'self.size > 1', messageExpression: '"x" +' }, { rule: 'self.sizes > 1' }],
            properties: { size: { type: 'integer' } },
          },
        },
      }),
    });
    expect(r.status).toBe(422);
    const fields = causes(r).map((c) => c.field);
    const p = 'spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations';
    expect(fields).toEqual(expect.arrayContaining([`${p}[0].rule`, `${p}[1].rule`, `${p}[2].messageExpression`]));
    expect(r.json<Obj>().message).toContain("undeclared reference to 'nosuch'");
    // fields are type-checked against the schema, as kube does when the CRD is written
    expect(causes(r).find((c) => c.field === `${p}[3].rule`)?.message).toBe(`Invalid value: "self.sizes > 1": compilation failed: ERROR: <input>:1:5: undefined field 'sizes'`);
  });

  it('refuses bad names, versions, columns, scale paths, defaults and markers', async () => {
    const bad = crd('widgets', 'nodot', 'widget kind');
    bad.metadata.name = 'wrong';
    bad.spec.versions.push({ name: 'v1', served: true, storage: true, schema: bad.spec.versions[0].schema });
    bad.spec.versions[0].additionalPrinterColumns = [{ name: 'X', type: 'float', jsonPath: 'spec..x' }];
    bad.spec.versions[0].subresources = { scale: { specReplicasPath: '.status.replicas', statusReplicasPath: '.spec.r' } };
    bad.spec.versions[0].schema = {
      openAPIV3Schema: {
        type: 'object',
        properties: {
          spec: {
            type: 'object',
            properties: {
              n: { type: 'integer', default: 'five' },
              l: { type: 'array', 'x-kubernetes-list-type': 'map', items: { type: 'object', properties: { k: { type: 'string' } } } },
            },
          },
        },
      },
    };
    bad.spec.conversion = { strategy: 'Bogus' };
    const r = await t.request('POST', CRDS, { body: bad });
    expect(r.status).toBe(422);
    const fields = causes(r).map((c) => c.field);
    expect(fields).toEqual(expect.arrayContaining([
      'metadata.name',
      'spec.group',
      'spec.names.kind',
      'spec.versions',
      'spec.versions[0].additionalPrinterColumns[0].type',
      'spec.versions[0].additionalPrinterColumns[0].JSONPath',
      'spec.versions[0].subresources.scale.specReplicasPath',
      'spec.versions[0].subresources.scale.statusReplicasPath',
      'spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[n].default',
      'spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[l].x-kubernetes-list-map-keys',
      'spec.conversion.strategy',
    ]));
  });

  it("names what is shared by every version at the top, with kube's messages", async () => {
    const keyed = { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['k'], items: { type: 'object', properties: { k: { type: 'string', nullable: true } } } };
    const bad = crd('gadgets', 'top.example.com', 'Gadget', { type: 'object', properties: { spec: { type: 'object', properties: { n: { type: 'integer', default: 'five' }, m: keyed } } } });
    bad.spec.names.shortNames = ['Bad_Short'];
    bad.spec.names.categories = ['9lives'];
    const v = bad.spec.versions[0];
    v.additionalPrinterColumns = [
      { name: 'A', type: 'float', jsonPath: '.spec.n' },
      { name: 'B', type: 'string', format: 'weird', jsonPath: 'spec.n' },
    ];
    v.subresources = { scale: { specReplicasPath: 'spec.r', statusReplicasPath: '.spec.r', labelSelectorPath: '.metadata.x' } };
    bad.spec.versions.push({ ...v, name: 'v2', storage: false });
    const r = await t.request('POST', CRDS, { body: bad });
    expect(r.status).toBe(422);
    const lines = causes(r).map((c) => `${c.field}: ${c.message}`);
    const dns1035 = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
    expect(lines).toEqual(expect.arrayContaining([
      `spec.names.shortNames[0]: Invalid value: "Bad_Short": ${dns1035}`,
      `spec.names.categories[0]: Invalid value: "9lives": ${dns1035}`,
      'spec.validation.openAPIV3Schema.properties[spec].properties[n].default: Invalid value: "string":  in body must be of type integer: "string"',
      'spec.validation.openAPIV3Schema.properties[spec].properties[m].items.properties[k].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property',
      'spec.validation.openAPIV3Schema.properties[spec].properties[m].items.properties[k].nullable: Forbidden: this property is in x-kubernetes-list-map-keys, so it cannot be nullable',
      'spec.additionalPrinterColumns[0].type: Invalid value: "float": must be one of boolean,date,integer,number,string',
      'spec.additionalPrinterColumns[1].format: Invalid value: "weird": must be one of byte,date,date-time,double,float,int32,int64,password',
      'spec.additionalPrinterColumns[1].JSONPath: Invalid value: "spec.n": must be a simple json path starting with .',
      'spec.subresources.scale.specReplicasPath: Invalid value: "spec.r": must be a simple json path starting with .',
      'spec.subresources.scale.statusReplicasPath: Invalid value: ".spec.r": should be a json path under .status',
      'spec.subresources.scale.labelSelectorPath: Invalid value: ".metadata.x": should be a json path under either .spec or .status',
    ]));
    // reported once, not per version
    expect(lines.filter((l) => l.startsWith('spec.versions[')).length).toBe(0);
    // the root: a type is required and must be object, and may not be nullable; items need a type too
    const rootless = crd('roots', 'top.example.com', 'Root', { nullable: true, properties: { l: { type: 'array', items: { description: 'x' } } } });
    const rr = await t.request('POST', CRDS, { body: rootless });
    expect(rr.status).toBe(422);
    expect(causes(rr).map((c) => `${c.field}: ${c.message}`)).toEqual(expect.arrayContaining([
      'spec.validation.openAPIV3Schema.type: Required value: must not be empty at the root',
      'spec.validation.openAPIV3Schema.nullable: Forbidden: nullable cannot be true at the root',
      'spec.validation.openAPIV3Schema.properties[l].items.type: Required value: must not be empty for specified array items',
    ]));
    expect(causes(rr).some((c) => c.message.includes('must be object at the root'))).toBe(false);
    // a deprecation warning belongs to a deprecated version
    const warned = crd('warneds', 'top.example.com', 'Warned');
    warned.spec.versions[0].deprecationWarning = 'old';
    const w = await t.request('POST', CRDS, { body: warned });
    expect(w.status).toBe(422);
    expect(causes(w).map((c) => `${c.field}: ${c.message}`)).toEqual(['spec.versions[0].deprecationWarning: Invalid value: "old": can only be set for deprecated versions']);
  });

  it('refuses a group of the built-in kinds', async () => {
    const r = await t.request('POST', CRDS, { body: crd('widgets', 'rbac.authorization.orch.io', 'Widget') });
    expect(r.status).toBe(422);
    expect(r.json<Obj>().message).toContain('served by built-in kinds');
  });

  it('keeps scope and group immutable', async () => {
    await createCrd(t, crd('immutables', 'imm.example.com', 'Immutable'));
    const cur = (await t.request('GET', `${CRDS}/immutables.imm.example.com`)).json<Obj>();
    cur.spec.scope = 'Cluster';
    const r = await t.request('PUT', `${CRDS}/immutables.imm.example.com`, { body: cur });
    expect(r.status).toBe(422);
    expect(r.json<Obj>().message).toContain('spec.scope: Invalid value: "Cluster": field is immutable');
  });
});

// Differences an audit found against kube-apiserver 1.32 (apiextensions validation.go,
// schema/defaulting/validation.go; the cases mirror TestValidateCustomResourceDefinition*)
describe("kube 1.32's CRD checks", () => {
  const DRY = `${CRDS}?dryRun=All`;
  const lines = (r: { json<T>(): T }): string[] => causes(r).map((c) => `${c.field}: ${c.message}`);
  const V = 'spec.validation.openAPIV3Schema';
  const objWith = (props: Obj): Obj => ({ type: 'object', properties: props });

  it('runs the CEL rules on defaults (defaulting.ValidateDefaults)', async () => {
    const bad = crd('defs', 'cel.example.com', 'Def', objWith({
      a: { type: 'string', default: 'x', 'x-kubernetes-validations': [{ rule: "self == 'y'" }] },
      // a rule below the defaulted node runs on the default too
      o: { type: 'object', default: { f1: 2, f2: 1 }, 'x-kubernetes-validations': [{ rule: 'self.f1 < self.f2', message: 'f1 below f2' }], properties: { f1: { type: 'integer' }, f2: { type: 'integer' } } },
    }));
    const r = await t.request('POST', DRY, { body: bad });
    expect(r.status).toBe(422);
    expect(lines(r)).toEqual([
      `${V}.properties[a].default: Invalid value: "string": failed rule: self == 'y'`,
      `${V}.properties[o].default: Invalid value: "object": f1 below f2`,
    ]);
    // valid defaults, and a transition rule (oldSelf is the default itself)
    const good = crd('defs', 'cel.example.com', 'Def', objWith({
      a: { type: 'string', default: 'y', 'x-kubernetes-validations': [{ rule: "self == 'y'" }, { rule: 'self == oldSelf', message: 'immutable' }] },
      o: { type: 'object', default: { f1: 1, f2: 2 }, 'x-kubernetes-validations': [{ rule: 'self.f1 < self.f2' }], properties: { f1: { type: 'integer' }, f2: { type: 'integer' } } },
    }));
    expect((await t.request('POST', DRY, { body: good })).status).toBe(201);
  });

  it("checks a rule's oldSelf, optionalOldSelf, message, messageExpression and fieldPath", async () => {
    const rule = (r: Obj): Obj[] => [r];
    const bad = crd('rules', 'cel.example.com', 'Rule', objWith({
      // oldSelf where old values do not correlate: items of atomic and set lists, properties of atomic maps
      l: { type: 'array', items: { type: 'string', 'x-kubernetes-validations': rule({ rule: 'self == oldSelf' }) } },
      s: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'array', 'x-kubernetes-list-type': 'atomic', items: { type: 'string', 'x-kubernetes-validations': rule({ rule: 'self == oldSelf' }) } } },
      m: { type: 'object', 'x-kubernetes-map-type': 'atomic', properties: { x: { type: 'string', 'x-kubernetes-validations': rule({ rule: 'self == oldSelf' }) } } },
      o: { type: 'string', 'x-kubernetes-validations': rule({ rule: 'self.size() > 1', optionalOldSelf: true }) },
      msg: { type: 'string', 'x-kubernetes-validations': rule({ rule: 'self.size() > 1', message: ' ' }) },
      ml: { type: 'string', 'x-kubernetes-validations': rule({ rule: 'self.size() > 1', message: 'too\nshort' }) },
      lines: { type: 'string', 'x-kubernetes-validations': rule({ rule: 'self.size() > 1 &&\nself.size() < 9' }) },
      expr: { type: 'string', 'x-kubernetes-validations': rule({ rule: 'self.size() > 1', messageExpression: ' ' }) },
      fp: { type: 'object', properties: { a: { type: 'string' } }, 'x-kubernetes-validations': rule({ rule: 'true', fieldPath: '.nosuch' }) },
    }));
    const r = await t.request('POST', DRY, { body: bad });
    expect(r.status).toBe(422);
    const p = (prop: string): string => `${V}.properties[${prop}]`;
    const rv = 'x-kubernetes-validations[0]';
    expect(lines(r).sort()).toEqual([
      `${p('expr')}.${rv}.messageExpression: Required value: messageExpression must be non-empty if specified`,
      `${p('fp')}.${rv}.fieldPath: Invalid value: ".nosuch": must be a valid path`,
      `${p('l')}.items.${rv}.rule: Invalid value: "self == oldSelf": oldSelf cannot be used on the uncorrelatable portion of the schema within ${p('l')}`,
      `${p('lines')}.${rv}.message: Required value: message must be specified if rule contains line breaks`,
      `${p('m')}.properties[x].${rv}.rule: Invalid value: "self == oldSelf": oldSelf cannot be used on the uncorrelatable portion of the schema within ${p('m')}`,
      `${p('ml')}.${rv}.message: Invalid value: "too\\nshort": must not contain line breaks`,
      `${p('msg')}.${rv}.message: Invalid value: " ": must be non-empty if specified`,
      `${p('o')}.${rv}.optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used in rule`,
      // the highest uncorrelatable path is named
      `${p('s')}.items.items.${rv}.rule: Invalid value: "self == oldSelf": oldSelf cannot be used on the uncorrelatable portion of the schema within ${p('s')}`,
    ]);
    // map lists and granular maps correlate; fieldPath may step by name, quoted name, map key or index
    const good = crd('rules', 'cel.example.com', 'Rule', objWith({
      ml: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['k'], items: { type: 'object', required: ['k'], properties: { k: { type: 'string' } }, 'x-kubernetes-validations': rule({ rule: 'self == oldSelf', optionalOldSelf: true }) } },
      gm: { type: 'object', properties: { x: { type: 'string', 'x-kubernetes-validations': rule({ rule: 'self == oldSelf' }) } } },
      fp: {
        type: 'object',
        properties: { a: { type: 'object', properties: { 'b.c': { type: 'string' } } }, m: { type: 'object', additionalProperties: { type: 'string' } }, l: { type: 'array', items: { type: 'string' } } },
        'x-kubernetes-validations': [{ rule: 'true', fieldPath: ".a['b.c']" }, { rule: 'true', fieldPath: ".m.anykey" }, { rule: 'true', fieldPath: '.l[0]' }],
      },
    }));
    const g = await t.request('POST', DRY, { body: good });
    expect(lines(g)).toEqual([]);
    expect(g.status).toBe(201);
  });

  it('protected groups need the api-approved.kubernetes.io annotation (validateAPIApproval)', async () => {
    const missing = 'metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must have approval annotation "api-approved.kubernetes.io", see https://github.com/kubernetes/enhancements/pull/1111';
    // kube's k8s.io and kubernetes.io, and orch's API domain (orch.io stands for k8s.io)
    for (const group of ['k8s.io', 'x.k8s.io', 'kubernetes.io', 'a.b.kubernetes.io', 'orch.io', 'widgets.orch.io']) {
      const r = await t.request('POST', DRY, { body: crd('widgets', group, 'Widget') });
      expect(lines(r), group).toEqual([missing]);
    }
    for (const group of ['notk8s.io', 'k8s.io.example.com']) expect((await t.request('POST', DRY, { body: crd('widgets', group, 'Widget') })).status, group).toBe(201);
    const annotated = (v: string): Obj => {
      const c = crd('widgets', 'x.k8s.io', 'Widget');
      c.metadata.annotations = { 'api-approved.kubernetes.io': v };
      return c;
    };
    const bad = await t.request('POST', DRY, { body: annotated('bogus') });
    expect(lines(bad)).toEqual(['metadata.annotations[api-approved.kubernetes.io]: Invalid value: "bogus": protected groups must have approval annotation "api-approved.kubernetes.io" with either a URL or a reason starting with "unapproved", see https://github.com/kubernetes/enhancements/pull/1111']);
    for (const v of ['https://github.com/kubernetes/enhancements/pull/1111', 'unapproved, experimental']) expect((await t.request('POST', DRY, { body: annotated(v) })).status, v).toBe(201);
    // an update that leaves the approval state as it was never fails on it; changing it to missing does
    await createCrd(t, annotated('unapproved, testing'));
    const cur = (await t.request('GET', `${CRDS}/widgets.x.k8s.io`)).json<Obj>();
    cur.metadata.annotations['api-approved.kubernetes.io'] = 'unapproved, still testing';
    expect((await t.request('PUT', `${CRDS}/widgets.x.k8s.io`, { body: cur })).status).toBe(200);
    const cur2 = (await t.request('GET', `${CRDS}/widgets.x.k8s.io`)).json<Obj>();
    delete cur2.metadata.annotations['api-approved.kubernetes.io'];
    expect(lines(await t.request('PUT', `${CRDS}/widgets.x.k8s.io`, { body: cur2 }))).toEqual([missing]);
  });

  it('with the status sub-resource only some fields may be set at the root', async () => {
    const allowed = '[Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs Example XPreserveUnknownFields XValidations]';
    const c = crd('stats', 'status.example.com', 'Stat', { type: 'object', maxProperties: 5, properties: { status: { type: 'object' } } });
    expect((await t.request('POST', DRY, { body: c })).status).toBe(201);
    c.spec.versions[0].subresources = { status: {} };
    const r = await t.request('POST', DRY, { body: c });
    expect(causes(r).map((x) => x.field)).toEqual([V]);
    expect(lines(r)[0]).toMatch(new RegExp(`^${V.replace(/\./g, '\\.')}: Invalid value: .*: only ${allowed.replace(/[[\]]/g, '\\$&')} fields are allowed at the root of the schema if the status subresource is enabled$`));
    // allowed: description, required, rules, preserve-unknown-fields
    c.spec.versions[0].schema.openAPIV3Schema = { type: 'object', description: 'd', required: ['status'], 'x-kubernetes-preserve-unknown-fields': true, 'x-kubernetes-validations': [{ rule: 'true' }], properties: { status: { type: 'object' } } };
    expect(lines(await t.request('POST', DRY, { body: c }))).toEqual([]);
    // per version: only the version with status is checked
    const two = crd('stats', 'status.example.com', 'Stat', { type: 'object', minProperties: 1 });
    two.spec.versions.push({ name: 'v2', served: true, storage: false, subresources: { status: {} }, schema: { openAPIV3Schema: { type: 'object', minProperties: 2 } } });
    expect(causes(await t.request('POST', DRY, { body: two })).map((x) => x.field)).toEqual(['spec.versions[1].schema.openAPIV3Schema']);
  });

  it('accepts a CRD whose versions are all unserved (kube has no such check)', async () => {
    const c = crd('unserveds', 'unserved.example.com', 'Unserved');
    c.spec.versions[0].served = false;
    c.spec.versions.push({ name: 'v2', served: false, storage: false, schema: c.spec.versions[0].schema });
    await createCrd(t, c);
    expect((await t.request('GET', '/apis/unserved.example.com/v1/namespaces/default/unserveds')).status).toBe(404);
  });

  it("words duplicate versions, scope, columns and preserveUnknownFields as kube does, once each", async () => {
    const dup = crd('dups', 'msg.example.com', 'Dup');
    dup.spec.versions.push({ ...dup.spec.versions[0], storage: false });
    const d = await t.request('POST', DRY, { body: dup });
    expect(causes(d).map((x) => x.field)).toEqual(['spec.versions']);
    expect(lines(d)[0]).toMatch(/^spec\.versions: Invalid value: .*: must contain unique version names$/);
    const scope = crd('scopes', 'msg.example.com', 'Scope');
    scope.spec.scope = 'Global';
    expect(lines(await t.request('POST', DRY, { body: scope }))).toEqual(['spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"']);
    const cols = crd('cols', 'msg.example.com', 'Col');
    cols.spec.versions[0].additionalPrinterColumns = [{ type: 'string', jsonPath: '.spec.size' }, { name: 'F', type: 'string', format: 'name', jsonPath: '.spec.size' }, { name: 'P', type: 'integer', priority: -1, jsonPath: '.spec.size' }];
    expect(lines(await t.request('POST', DRY, { body: cols }))).toEqual([
      'spec.additionalPrinterColumns[0].name: Required value',
      'spec.additionalPrinterColumns[1].format: Invalid value: "name": must be one of byte,date,date-time,double,float,int32,int64,password',
    ]);
    const pres = crd('press', 'msg.example.com', 'Pres');
    pres.spec.preserveUnknownFields = true;
    expect(lines(await t.request('POST', DRY, { body: pres }))).toEqual(['spec.preserveUnknownFields: Invalid value: true: cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead']);
  });
});

describe('names', () => {
  it('a CRD whose names clash with an older one is not served and says why', async () => {
    await createCrd(t, crd('foos', 'names.example.com', 'Foo'));
    const clash = crd('bars', 'names.example.com', 'Foo');
    const c = await t.request('POST', CRDS, { body: clash });
    expect(c.status).toBe(201);
    let cond: Obj | undefined;
    await eventually(async () => {
      const s = (await t.request('GET', `${CRDS}/bars.names.example.com`)).json<Obj>().status;
      cond = (s?.conditions as Obj[] | undefined)?.find((x) => x.type === 'NamesAccepted');
      return cond !== undefined;
    }, 'NamesAccepted condition');
    expect(cond).toMatchObject({ status: 'False', reason: 'ListKindConflict', message: '"FooList" is already in use' });
    const est = ((await t.request('GET', `${CRDS}/bars.names.example.com`)).json<Obj>().status.conditions as Obj[]).find((x) => x.type === 'Established');
    expect(est?.status).toBe('False');
    expect((await t.request('GET', '/apis/names.example.com/v1/namespaces/default/bars')).status).toBe(404);
    // the older CRD still serves
    expect((await t.request('GET', '/apis/names.example.com/v1/namespaces/default/foos')).status).toBe(200);
  });
});

describe('deletion', () => {
  it('removes every object of the kind, then the CRD', async () => {
    await createCrd(t, crd('pets', 'del.example.com', 'Pet'));
    const P = '/apis/del.example.com/v1/namespaces/default/pets';
    for (let i = 0; i < 5; i++) expect((await t.request('POST', P, { body: { apiVersion: 'del.example.com/v1', kind: 'Pet', metadata: { name: `p${i}` } } })).status).toBe(201);
    const created = (await t.request('GET', `${CRDS}/pets.del.example.com`)).json<Obj>();
    expect(created.metadata.finalizers).toEqual(['customresourcecleanup.apiextensions.orch.io']);
    const d = await t.request('DELETE', `${CRDS}/pets.del.example.com`);
    expect(d.status).toBe(200);
    await eventually(async () => (await t.request('GET', `${CRDS}/pets.del.example.com`)).status === 404, 'CRD gone');
    expect(t.server.store.range({ key: '/registry/del.example.com/', end: '/registry/del.example.com0' }).count).toBe(0);
    expect((await t.request('GET', P)).status).toBe(404);
  });

  it('an object with its own finalizer holds the CRD Terminating; the last write says InstancesDeleted', async () => {
    await createCrd(t, crd('holds', 'hold.example.com', 'Hold'));
    const P = '/apis/hold.example.com/v1/namespaces/default/holds';
    const body = { apiVersion: 'hold.example.com/v1', kind: 'Hold', metadata: { name: 'h1', finalizers: ['example.com/keep'] } };
    expect((await t.request('POST', P, { body })).status).toBe(201);
    const w = openWatch(t.server, `${CRDS}?watch=1&fieldSelector=metadata.name%3Dholds.hold.example.com`);
    try {
      expect((await t.request('DELETE', `${CRDS}/holds.hold.example.com`)).status).toBe(200);
      const terminating = (o: Obj): Obj | undefined => (o.status?.conditions ?? []).find((c: Obj) => c.type === 'Terminating');
      await eventually(async () => terminating((await t.request('GET', `${CRDS}/holds.hold.example.com`)).json<Obj>())?.reason === 'InstanceDeletionInProgress', 'Terminating');
      expect(terminating((await t.request('GET', `${CRDS}/holds.hold.example.com`)).json<Obj>())).toMatchObject({ status: 'True', message: 'CustomResource deletion is in progress' });
      // still served, so the finalizer can be removed; new objects are refused
      const more = await t.request('POST', P, { body: { ...body, metadata: { name: 'h2' } } });
      expect(more.status).toBe(405);
      expect(more.json<Obj>().message).toBe('create not allowed while custom resource definition is terminating');
      const unhold = await t.request('PATCH', `${P}/h1`, { body: { metadata: { finalizers: null } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
      expect(unhold.status).toBe(200);
      const gone = await w.waitUntil((e) => e.type === 'DELETED');
      expect(terminating(gone.object as Obj)).toMatchObject({ status: 'False', reason: 'InstancesDeleted', message: 'instances deleted' });
    } finally {
      w.close();
    }
  });

  it('a CRD deleted while objects are being written leaves nothing behind and serves errors, not crashes', async () => {
    await createCrd(t, crd('races', 'race.example.com', 'Race'));
    const P = '/apis/race.example.com/v1/namespaces/default/races';
    let stop = false;
    const statuses = new Map<number, number>();
    const writer = async (w: number): Promise<void> => {
      for (let i = 0; !stop && i < 400; i++) {
        const r = await t.request('POST', P, { body: { apiVersion: 'race.example.com/v1', kind: 'Race', metadata: { name: `w${w}-${i}` }, spec: { size: i } } });
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        if (r.status >= 500) throw new Error(`server error ${r.status}: ${r.text}`);
      }
    };
    const writers = [0, 1, 2, 3].map(writer);
    await eventually(async () => (statuses.get(201) ?? 0) >= 10, 'some objects written');
    expect((await t.request('DELETE', `${CRDS}/races.race.example.com`)).status).toBe(200);
    await eventually(async () => (await t.request('GET', `${CRDS}/races.race.example.com`)).status === 404, 'CRD gone');
    stop = true;
    await Promise.all(writers);
    // refusals while terminating (405) and after (404) are the only failures
    for (const code of statuses.keys()) expect([201, 404, 405]).toContain(code);
    expect(t.server.store.range({ key: '/registry/race.example.com/', end: '/registry/race.example.com0' }).count).toBe(0);
    expect((await t.request('GET', '/healthz')).status).toBe(200);
    // the kind can be defined again, empty
    await createCrd(t, crd('races', 'race.example.com', 'Race'));
    expect((await t.request('GET', P)).json<Obj>().items).toEqual([]);
  });
});
