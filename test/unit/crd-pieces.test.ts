// The pure parts of CRD support (issue #16): printer-column JSONPath, the
// names verdict (same answer whatever order CRDs are seen in), string
// formats, structural checks and CEL rules with their cost budget.

import { describe, expect, it } from 'vitest';
import { customDefinitions, markerPrefixes, toSchema } from '../../src/registry/crd/convert.js';
import { JsonPathError, evalJsonPath, parseJsonPath } from '../../src/registry/crd/jsonpath.js';
import { acceptNames } from '../../src/registry/crd/names.js';
import { undefinedField } from '../../src/registry/crd/cel-fields.js';
import { structuralErrors } from '../../src/registry/crd/structural.js';
import { validateRules } from '../../src/machinery/schema/cel-rules.js';
import { compileSchema } from '../../src/machinery/schema/compile.js';
import { matchesFormat } from '../../src/machinery/schema/formats.js';

describe('printer column JSONPath', () => {
  const obj = { spec: { ports: [{ name: 'a', port: 1 }, { name: 'b', port: 2 }], 'x.y': 3 }, status: { conditions: [{ type: 'Ready', status: 'True' }, { type: 'Other', status: 'False' }] } };
  it('selects fields, indexes, wildcards, quoted keys and filters', () => {
    expect(evalJsonPath(parseJsonPath('.spec.ports[1].port'), obj)).toEqual([2]);
    expect(evalJsonPath(parseJsonPath('.spec.ports[*].name'), obj)).toEqual(['a', 'b']);
    expect(evalJsonPath(parseJsonPath(".spec['x.y']"), obj)).toEqual([3]);
    expect(evalJsonPath(parseJsonPath('.status.conditions[?(@.type=="Ready")].status'), obj)).toEqual(['True']);
    expect(evalJsonPath(parseJsonPath('{.spec.ports[-1].name}'), obj)).toEqual(['b']);
    expect(evalJsonPath(parseJsonPath('.spec.missing.deeper'), obj)).toEqual([]);
  });
  it('refuses what it cannot evaluate', () => {
    for (const bad of ['spec.x', '.spec..x', '.a[?(@.x > 1)]', '.a[1:2]', '.a[']) expect(() => parseJsonPath(bad), bad).toThrow(JsonPathError);
  });
});

describe('printer column cells (kube tableconvertor cellForJSONValue)', () => {
  const names = { plural: 'cells', kind: 'Cell' };
  const col = (type: string, jsonPath: string) => ({ name: type, type, jsonPath });
  const [def] = customDefinitions(
    {
      group: 'c.example.com',
      scope: 'Namespaced',
      names,
      versions: [{ name: 'v1', served: true, storage: true, additionalPrinterColumns: [col('string', '.spec.v'), col('integer', '.spec.v'), col('number', '.spec.v'), col('boolean', '.spec.v'), col('date', '.spec.v')] }],
    },
    'orch.io',
    names,
  );
  const cells = (v: unknown) => def!.strategy.columns!.map((c) => c.cell({ spec: { v } } as never, Date.parse('2026-01-01T00:10:00Z')));
  it('keeps a value only in a column of its type', () => {
    expect(cells('text')).toEqual(['text', null, null, null, '<invalid>']);
    expect(cells(2.7)).toEqual(['2.7', 2, 2.7, null, null]);
    expect(cells(true)).toEqual(['true', null, null, true, null]);
    expect(cells({ a: [1] })).toEqual(['{"a":[1]}', null, null, null, null]);
    expect(cells('2026-01-01T00:00:00Z')[4]).toBe('10m');
  });
});

describe('CEL rules select declared fields (kube type-check at CRD write)', () => {
  const marker = (j: Record<string, unknown>, name: string) => j[`x-kubernetes-${name}`];
  const spec = {
    type: 'object',
    properties: {
      replicas: { type: 'integer' },
      'x-prop': { type: 'string' },
      namespace: { type: 'string' },
      labels: { type: 'object', additionalProperties: { type: 'string' } },
      free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      items: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } } } },
      tmpl: { type: 'object', 'x-kubernetes-embedded-resource': true, properties: { spec: { type: 'object', properties: {} } } },
    },
  };
  it('reports the first undefined field with its position', () => {
    expect(undefinedField('self.nonExistingField > 0', spec, false, marker)).toBe("compilation failed: ERROR: <input>:1:5: undefined field 'nonExistingField'");
    expect(undefinedField('self.replicas > 0 &&\n  oldSelf.replicaz == 1', spec, false, marker)).toBe("compilation failed: ERROR: <input>:2:10: undefined field 'replicaz'");
    expect(undefinedField('self.tmpl.spec.x == 1', spec, false, marker)).toBe("compilation failed: ERROR: <input>:1:15: undefined field 'x'");
  });
  it('accepts declared, escaped, implicit and dynamic fields', () => {
    for (const ok of [
      'self.replicas > 0',
      'self.x__dash__prop == "a" && self.__namespace__ == "b"',
      'self.labels.anything == "x" && self.free.whatever == 1',
      'self.items.all(i, i.name != "" && i.nosuch == 1)',
      'self.tmpl.kind == "X" && self.tmpl.metadata.name == "y"',
      'has(self.replicas)',
    ]) expect(undefinedField(ok, spec, false, marker), ok).toBeUndefined();
    expect(undefinedField('self.metadata.name == "a" && self.kind == "K"', { type: 'object', properties: { spec: { type: 'object' } } }, true, marker)).toBeUndefined();
  });
});

describe('names verdict', () => {
  const crd = (name: string, rev: number, plural: string, kind: string, shortNames?: string[]) => ({
    name,
    createRevision: rev,
    spec: { group: 'g.example.com', scope: 'Namespaced' as const, names: { plural, kind, shortNames }, versions: [] },
  });
  it('gives a name to the oldest CRD, whatever order they are seen in', () => {
    const a = crd('as.g.example.com', 5, 'as', 'A', ['x']);
    const b = crd('bs.g.example.com', 7, 'bs', 'B', ['x']);
    for (const order of [[a, b], [b, a]]) {
      const v = acceptNames(order);
      expect(v.get(a.name)).toEqual({ accepted: true });
      expect(v.get(b.name)).toEqual({ accepted: false, reason: 'ShortNamesConflict', message: '"x" is already in use' });
    }
  });
  it("names the last conflict found, with kube's naming-controller reasons", () => {
    const a = crd('as.g.example.com', 1, 'as', 'A', ['x', 'y']);
    const b = crd('bs.g.example.com', 2, 'bs', 'B', ['x', 'y']);
    expect(acceptNames([a, b]).get(b.name)).toEqual({ accepted: false, reason: 'ShortNamesConflict', message: '["x" is already in use, "y" is already in use]' });
    const c = crd('cs.g.example.com', 3, 'as', 'A');
    expect(acceptNames([a, c]).get(c.name)).toEqual({ accepted: false, reason: 'ListKindConflict', message: '"AList" is already in use' });
    const d = crd('ds.g.example.com', 4, 'as', 'D');
    expect(acceptNames([a, d]).get(d.name)).toEqual({ accepted: false, reason: 'PluralConflict', message: '"as" is already in use' });
  });
  it('treats the same names in different groups as distinct', () => {
    const a = crd('as.g.example.com', 1, 'as', 'A');
    const b = { ...crd('as.h.example.com', 2, 'as', 'A'), spec: { ...crd('', 2, 'as', 'A').spec, group: 'h.example.com' } };
    const v = acceptNames([a, b]);
    expect(v.get(b.name)?.accepted).toBe(true);
  });
});

describe('formats', () => {
  it('checks the formats Kubernetes knows and ignores others', () => {
    expect(matchesFormat('email', 'a@b.io')).toBe(true);
    expect(matchesFormat('email', 'nope')).toBe(false);
    expect(matchesFormat('ipv4', '10.0.0.1')).toBe(true);
    expect(matchesFormat('ipv4', '10.0.0.256')).toBe(false);
    expect(matchesFormat('ipv6', '::1')).toBe(true);
    expect(matchesFormat('ipv6', 'fe80::1::2')).toBe(false);
    expect(matchesFormat('cidr', '10.0.0.0/8')).toBe(true);
    expect(matchesFormat('cidr', '10.0.0.0/33')).toBe(false);
    expect(matchesFormat('uuid', '123e4567-e89b-12d3-a456-426614174000')).toBe(true);
    expect(matchesFormat('duration', '1h30m')).toBe(true);
    expect(matchesFormat('date', '2024-02-29')).toBe(true);
    expect(matchesFormat('my-own-format', 'anything')).toBe(true);
  });

  // kube-openapi strfmt/duration_test.go (TestDurationParser, TestIsDuration_Caveats, TestDurationInvalidToken, TestDuration)
  it('accepts Go and Scala-style durations as kube-openapi does', () => {
    for (const ok of ['1h30m', '0', '-1.5h', '1µs', '1d', '3w', '1 h', '1 hour', '1wk', '1  week', '1nanos', '1  milliseconds', '1w2s', '1d2h3m5s', '1s 2m', '1w 2d 3h 4m', '45 weeks', '45 weekz', '12 hours', '12 minutes']) {
      expect(matchesFormat('duration', ok), ok).toBe(true);
    }
    for (const bad of ['yada', 'three week', '9999999999999999999999999999999999999999999999999999999 weeks', '12 parsecs', '12 y', '45 wekk', '45 weeekks', '12 phours', '1s invalid', 'invalid 1s', '1s 2m invalid', '1s invalid 2m', '', '-1d']) {
      expect(matchesFormat('duration', bad), bad).toBe(false);
    }
  });

  // Go url.ParseRequestURI (strfmt `uri`, govalidator.IsRequestURI)
  it('checks uri as url.ParseRequestURI: absolute URIs and absolute paths', () => {
    for (const ok of ['/path', '/a/b?x=1', 'https://example.com/x', 'mailto:a@b.io', 'http://[::1]:80/', '*']) expect(matchesFormat('uri', ok), ok).toBe(true);
    for (const bad of ['relative/path', '', ':nope', 'http://host:port/', '/bad%zz', 'a b']) expect(matchesFormat('uri', bad), bad).toBe(false);
  });

  // strfmt IsDate (time.Parse "2006-01-02") and IsDateTime (split at "t" after lower-casing, time pattern)
  it('checks date and date-time as kube-openapi: real calendar days, t/z in either case, no space separator', () => {
    expect(matchesFormat('date', '2024-02-30')).toBe(false);
    expect(matchesFormat('date', '2023-02-29')).toBe(false);
    expect(matchesFormat('date', '2000-02-29')).toBe(true);
    expect(matchesFormat('date', '2024-1-01')).toBe(false);
    expect(matchesFormat('date-time', '2024-02-30T00:00:00Z')).toBe(false);
    expect(matchesFormat('date-time', '2024-02-29t10:20:30.5z')).toBe(true);
    expect(matchesFormat('date-time', '2024-02-29T10:20:30+05:30')).toBe(true);
    expect(matchesFormat('date-time', '2024-02-29 10:20:30Z')).toBe(false);
    expect(matchesFormat('date-time', '2024-02-29T24:00:00Z')).toBe(false);
    expect(matchesFormat('datetime', '2024-02-29T10:20:30Z')).toBe(true);
  });

  // apiextensions formats.go: the 1.0 set (isbn, ssn, rgbcolor…), names without dashes; ParseIPSloppy for ipv4
  it('checks the rest of kube 1.32\'s CRD formats', () => {
    expect(matchesFormat('ipv4', '010.000.000.001')).toBe(true);
    expect(matchesFormat('uuid4', '123e4567-e89b-12d3-a456-426614174000')).toBe(false);
    expect(matchesFormat('uuid3', '123e4567-e89b-32d3-a456-426614174000')).toBe(true);
    expect(matchesFormat('mac', '00:00:5e:00:53:01')).toBe(true);
    expect(matchesFormat('mac', '0000.5e00.5301')).toBe(true);
    expect(matchesFormat('mac', '00:00:5e-00:53:01')).toBe(false);
    expect(matchesFormat('ssn', '123-45-6789')).toBe(true);
    expect(matchesFormat('rgbcolor', 'rgb(255, 0, 0)')).toBe(true);
    expect(matchesFormat('isbn', '0321751043')).toBe(true);
    expect(matchesFormat('isbn13', '978-0321751041')).toBe(true);
    expect(matchesFormat('isbn10', '0321751044')).toBe(false);
    expect(matchesFormat('creditcard', '4111 1111 1111 1111')).toBe(true);
    expect(matchesFormat('creditcard', '4111 1111 1111 1112')).toBe(false);
    expect(matchesFormat('bsonobjectid', '507f1f77bcf86cd799439011')).toBe(true);
    expect(matchesFormat('hostname', 'example.com')).toBe(true);
    expect(matchesFormat('hostname', 'foo.1')).toBe(false);
    expect(matchesFormat('u-u-i-d', 'nope')).toBe(false);
  });
});

describe('structural schemas', () => {
  const prefixes = markerPrefixes('orch.io');
  it('accepts a structural schema with int-or-string and preserve-unknown nodes', () => {
    const s = { type: 'object', properties: { a: { 'x-kubernetes-int-or-string': true }, b: { 'x-orch-preserve-unknown-fields': true }, c: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' } } };
    expect(structuralErrors(s, 'root', prefixes)).toEqual([]);
  });
  it('reads markers in either spelling into the internal schema', () => {
    const s = toSchema({ type: 'array', 'x-kubernetes-list-type': 'map', 'x-orch-list-map-keys': ['k'], items: { type: 'object' } }, prefixes);
    expect(s['x-orch-list-type']).toBe('map');
    expect(s['x-orch-list-map-keys']).toEqual(['k']);
  });
  it('takes `additionalProperties: true` beside properties, and refuses a map schema there (kube: mutually exclusive)', () => {
    const withTrue = { type: 'object', properties: { status: { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: true } } };
    expect(structuralErrors(withTrue, 'root', prefixes)).toEqual([]);
    const withMap = { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: { type: 'string' } };
    expect(structuralErrors(withMap, 'root', prefixes)).toEqual([expect.objectContaining({ field: 'root.additionalProperties', message: 'Forbidden: additionalProperties and properties are mutual exclusive' })]);
  });
  it('refuses a root that is not an object and defaults that break their schema', () => {
    const errs = structuralErrors({ type: 'string', default: 5 }, 'root', prefixes).map((e) => e.field);
    expect(errs).toEqual(expect.arrayContaining(['root.type', 'root.default']));
  });
});

describe('CEL rules', () => {
  const schema = compileSchema(
    {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          'x-orch-validations': [
            { rule: 'self.n % 2 == 0', message: 'n must be even' },
            { rule: 'self.n >= oldSelf.n', message: 'n may not decrease', reason: 'FieldValueForbidden' },
            { rule: 'self.items.all(i, i.size() < 4)', fieldPath: '.items' },
          ],
          properties: { n: { type: 'integer' }, items: { type: 'array', items: { type: 'string' } } },
        },
      },
    },
    {},
  );
  it('evaluates integers as CEL ints and reports with the rule message', () => {
    expect(validateRules({ spec: { n: 3, items: [] } }, undefined, schema)).toEqual([
      { field: 'spec', type: 'FieldValueInvalid', message: 'Invalid value: "object": n must be even' },
    ]);
  });
  it('runs transition rules only with an old value', () => {
    expect(validateRules({ spec: { n: 2, items: [] } }, undefined, schema)).toEqual([]);
    expect(validateRules({ spec: { n: 2, items: [] } }, { spec: { n: 4, items: [] } }, schema)).toEqual([
      { field: 'spec', type: 'FieldValueForbidden', message: 'Forbidden: n may not decrease' },
    ]);
  });
  it('reports at fieldPath and stops when the cost budget runs out', () => {
    const r = validateRules({ spec: { n: 2, items: ['abcdef'] } }, undefined, schema);
    expect(r.map((e) => e.field)).toEqual(['spec.items']);
    const big = { spec: { n: 2, items: Array.from({ length: 1000 }, () => 'a') } };
    const out = validateRules(big, undefined, schema, 5_000);
    expect(out.at(-1)?.message).toContain('running out of cost budget');
  });
});
