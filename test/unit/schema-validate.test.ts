import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { applyDefaults } from '../../src/machinery/schema/defaults.js';
import { findDuplicateFields, findDuplicateFieldsYaml } from '../../src/machinery/schema/duplicates.js';
import { validateObjectMeta } from '../../src/machinery/schema/object-meta.js';
import type { Definitions, Schema } from '../../src/machinery/schema/types.js';
import { validateAgainstSchema } from '../../src/machinery/schema/validate.js';
import { base64Error } from '../../src/machinery/schema/value-text.js';

const defs: Definitions = {
  Item: {
    type: 'object',
    properties: {
      name: { type: 'string', minLength: 1 },
      port: { type: 'integer' },
      protocol: { type: 'string', default: 'TCP', enum: ['TCP', 'UDP'] },
      target: { 'x-orch-int-or-string': true },
    },
    required: ['name'],
  },
};

const schema: Schema = {
  type: 'object',
  properties: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    spec: {
      type: 'object',
      properties: {
        replicas: { type: 'integer', default: 1 },
        items: { type: 'array', items: { $ref: 'Item' } },
        byName: { type: 'object', additionalProperties: { $ref: 'Item' } },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
        when: { type: 'string', format: 'date-time' },
        blob: { type: 'string', format: 'byte' },
        free: { type: 'object', 'x-orch-preserve-unknown-fields': true, properties: { known: { type: 'integer' } } },
        nested: {
          type: 'object',
          default: {},
          properties: { mode: { type: 'string', default: 'auto' }, deep: { type: 'object', properties: { x: { type: 'integer', default: 7 } } } },
        },
      },
      required: ['items'],
    },
  },
};

describe('validateAgainstSchema: types', () => {
  it('reports type errors with Kubernetes messages', () => {
    const obj = { spec: { replicas: 'string', items: [] } };
    const { errors } = validateAgainstSchema(obj, schema, defs);
    expect(errors).toEqual([
      {
        field: 'spec.replicas',
        type: 'FieldValueTypeInvalid',
        message: 'Invalid value: "string": spec.replicas in body must be of type integer: "string"',
        converter: 'unrecognized type: int64',
      },
    ]);
    expect(`${errors[0]!.field}: ${errors[0]!.message}`).toBe(
      'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"',
    );
  });

  it('type-checks inside arrays and maps with index and key paths', () => {
    const obj = { spec: { items: [{ name: 'a', port: 1.5 }, { name: 'b', port: 'x' }], byName: { k: { name: 'c', port: true } } } };
    const fields = validateAgainstSchema(obj, schema, defs).errors.map((e) => `${e.field}: ${e.message}`);
    expect(fields).toEqual([
      'spec.items[0].port: Invalid value: "number": spec.items[0].port in body must be of type integer: "number"',
      'spec.items[1].port: Invalid value: "string": spec.items[1].port in body must be of type integer: "string"',
      'spec.byName[k].port: Invalid value: "boolean": spec.byName[k].port in body must be of type integer: "boolean"',
    ]);
  });

  it('accepts int-or-string and rejects other types there', () => {
    const ok = { spec: { items: [{ name: 'a', target: 8080 }, { name: 'b', target: 'http' }] } };
    expect(validateAgainstSchema(ok, schema, defs).errors).toEqual([]);
    const bad = { spec: { items: [{ name: 'a', target: 1.5 }] } };
    expect(validateAgainstSchema(bad, schema, defs).errors[0]!.field).toBe('spec.items[0].target');
  });

  it('validates date-time and byte formats', () => {
    const obj = { spec: { items: [], when: 'yesterday', blob: 'not base64!' } };
    const errs = validateAgainstSchema(obj, schema, defs).errors;
    expect(errs.map((e) => e.field)).toEqual(['spec.when', 'spec.blob']);
    expect(errs[0]!.message).toContain('must be of type date-time');
    expect(errs[1]!.message).toBe('illegal base64 data at input byte 3');
    const good = { spec: { items: [], when: '2024-01-02T03:04:05Z', blob: 'aGVsbG8=' } };
    expect(validateAgainstSchema(good, schema, defs).errors).toEqual([]);
  });

  it('reports unsupported enum values', () => {
    const obj = { spec: { items: [{ name: 'a', protocol: 'ICMP' }] } };
    const [e] = validateAgainstSchema(obj, schema, defs).errors;
    expect(e).toEqual({
      field: 'spec.items[0].protocol',
      type: 'FieldValueNotSupported',
      message: 'Unsupported value: "ICMP": supported values: "TCP", "UDP"',
    });
  });

  it('drops nulls of non-nullable fields instead of failing', () => {
    const obj: Record<string, unknown> = { spec: { items: [], replicas: null } };
    expect(validateAgainstSchema(obj, schema, defs).errors).toEqual([]);
    expect(obj.spec).toEqual({ items: [] });
  });
});

describe('validateAgainstSchema: required', () => {
  it('reports missing required fields, and empty strings when minLength is set', () => {
    const obj = { spec: { items: [{ port: 1 }, { name: '' }] } };
    const errs = validateAgainstSchema(obj, schema, defs).errors;
    expect(errs).toEqual([
      { field: 'spec.items[0].name', type: 'FieldValueRequired', message: 'Required value' },
      { field: 'spec.items[1].name', type: 'FieldValueRequired', message: 'Required value' },
    ]);
    expect(validateAgainstSchema({ spec: {} }, schema, defs).errors[0]!.field).toBe('spec.items');
  });
});

describe('validateAgainstSchema: unknown fields', () => {
  it('collects unknown field paths and prunes them', () => {
    const obj = { foo: 1, spec: { items: [{ name: 'a', bogus: true }], labels: { any: 'x' }, extra: { a: 1 } } };
    const { errors, unknownFields } = validateAgainstSchema(obj, schema, defs);
    expect(errors).toEqual([]);
    expect(unknownFields).toEqual(['foo', 'spec.items[0].bogus', 'spec.extra']);
    expect(obj).toEqual({ spec: { items: [{ name: 'a' }], labels: { any: 'x' } } });
    expect(unknownFields.map((f) => `unknown field "${f}"`)).toContain('unknown field "spec.items[0].bogus"');
  });

  it('does not prune when prune=false', () => {
    const obj = { spec: { items: [], extra: 1 } };
    expect(validateAgainstSchema(obj, schema, defs, { prune: false }).unknownFields).toEqual(['spec.extra']);
    expect(obj.spec.extra).toBe(1);
  });

  it('stops pruning below x-orch-preserve-unknown-fields but still validates known fields', () => {
    const obj = { spec: { items: [], free: { anything: { deep: [1, 2] }, known: 'no' } } };
    const { errors, unknownFields } = validateAgainstSchema(obj, schema, defs);
    expect(unknownFields).toEqual([]);
    expect(obj.spec.free.anything).toEqual({ deep: [1, 2] });
    expect(errors.map((e) => e.field)).toEqual(['spec.free.known']);
  });

  it('prunes exactly the generated unknown keys (property)', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.stringMatching(/^[a-z]{3,8}$/), { maxLength: 6 }), (keys) => {
        const unknown = keys.filter((k) => !['replicas', 'items', 'byName', 'labels', 'when', 'blob', 'free', 'nested'].includes(k));
        const spec: Record<string, unknown> = { items: [] };
        for (const k of unknown) spec[k] = 1;
        const obj = { spec };
        const res = validateAgainstSchema(obj, schema, defs);
        expect(res.unknownFields.sort()).toEqual(unknown.map((k) => `spec.${k}`).sort());
        expect(Object.keys(obj.spec)).toEqual(['items']);
      }),
    );
  });
});

describe('applyDefaults', () => {
  it('defaults absent fields recursively, inside array items and map values', () => {
    const obj: Record<string, unknown> = { spec: { items: [{ name: 'a' }, { name: 'b', protocol: 'UDP' }], byName: { x: { name: 'x' } } } };
    applyDefaults(obj, schema, defs);
    expect(obj).toEqual({
      spec: {
        replicas: 1,
        items: [
          { name: 'a', protocol: 'TCP' },
          { name: 'b', protocol: 'UDP' },
        ],
        byName: { x: { name: 'x', protocol: 'TCP' } },
        nested: { mode: 'auto' },
      },
    });
  });

  it('defaults inside a defaulted object and treats non-nullable null as absent', () => {
    const obj = { spec: { replicas: null, nested: { deep: {} } } };
    applyDefaults(obj, schema, defs);
    expect(obj.spec).toEqual({ replicas: 1, nested: { mode: 'auto', deep: { x: 7 } } });
  });

  it('never overwrites present values', () => {
    const obj = { spec: { replicas: 0, nested: { mode: '' } } };
    applyDefaults(obj, schema, defs);
    expect(obj.spec.replicas).toBe(0);
    expect(obj.spec.nested.mode).toBe('');
  });
});

describe('duplicate fields', () => {
  it('finds duplicated keys in JSON with their paths', () => {
    const text = '{"metadata":{"name":"a","name":"b","labels":{"x":"1","x":"2"}},"spec":{"containers":[{"name":"c"},{"name":"d","image":"i","image":"j"}]},"kind":"Pod","kind":"Pod"}';
    expect(findDuplicateFields(text)).toEqual(['metadata.name', 'metadata.labels.x', 'spec.containers[1].image', 'kind']);
  });

  it('handles escapes, strings containing structure characters, and clean documents', () => {
    expect(findDuplicateFields('{"a":"}{,[\\"","\\u0061":1}')).toEqual(['a']);
    expect(findDuplicateFields('{"a":[1,{"b":2},[3,{"c":{"d":1,"d":2}}]]}')).toEqual(['a[2][1].c.d']);
    expect(findDuplicateFields(JSON.stringify({ a: { b: [1, 2, { c: 3 }] }, d: 'x' }))).toEqual([]);
  });

  it('finds duplicated keys in YAML', () => {
    const text = 'metadata:\n  name: a\n  name: b\nspec:\n  containers:\n  - name: c\n    image: x\n    image: y\n';
    expect(findDuplicateFieldsYaml(text)).toEqual(['metadata.name', 'spec.containers[0].image']);
    expect(findDuplicateFieldsYaml('a: 1\nb: 2\n')).toEqual([]);
  });

  it('agrees with JSON.parse on documents without duplicates (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(findDuplicateFields(JSON.stringify(v))).toEqual([]);
      }),
    );
  });
});

describe('base64', () => {
  it('accepts standard padded base64 and locates the first bad byte', () => {
    expect(base64Error('aGVsbG8=')).toBe(-1);
    expect(base64Error('')).toBe(-1);
    expect(base64Error('aGVs\nbG8=')).toBe(-1);
    expect(base64Error('aGV$')).toBe(3);
    expect(base64Error('abc')).toBe(0);
    expect(base64Error('aGVsbG8')).toBe(4);
  });
});

describe('validateObjectMeta', () => {
  const fmt = (meta: Parameters<typeof validateObjectMeta>[0], rules: Parameters<typeof validateObjectMeta>[1]) =>
    validateObjectMeta(meta, rules).map((e) => `${e.field}: ${e.message}`);

  it('requires name or generateName', () => {
    expect(fmt({ namespace: 'default' }, { namespaced: true })).toEqual(['metadata.name: Required value: name or generateName is required']);
  });

  it('uses DNS-1123 subdomain names by default', () => {
    expect(fmt({ name: 'Bad_Name', namespace: 'default' }, { namespaced: true })).toEqual([
      "metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    ]);
    expect(fmt({ name: 'a.b-c', namespace: 'default' }, { namespaced: true })).toEqual([]);
    expect(fmt({ name: 'a'.repeat(254), namespace: 'x' }, { namespaced: true })[0]).toBe(
      `metadata.name: Invalid value: "${'a'.repeat(254)}": must be no more than 253 characters`,
    );
  });

  it('uses DNS-1123 labels for namespaces', () => {
    expect(fmt({ name: 'a.b' }, { namespaced: false, nameIsDNSLabel: true })).toEqual([
      "metadata.name: Invalid value: \"a.b\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
    ]);
    expect(fmt({ name: 'a'.repeat(64) }, { namespaced: false, nameIsDNSLabel: true })[0]).toContain('must be no more than 63 characters');
  });

  it('allows a trailing dash in generateName', () => {
    expect(fmt({ generateName: 'web-', namespace: 'default' }, { namespaced: true })).toEqual([]);
  });

  it('checks namespace presence by scope', () => {
    expect(fmt({ name: 'a' }, { namespaced: true })).toEqual(['metadata.namespace: Required value']);
    expect(fmt({ name: 'a', namespace: 'x' }, { namespaced: false })).toEqual(['metadata.namespace: Forbidden: not allowed on this type']);
  });

  it('validates label keys and values', () => {
    expect(fmt({ name: 'a', labels: { 'example.com/app': 'web', 'bad key': 'v', k: 'bad value' } }, { namespaced: false })).toEqual([
      "metadata.labels: Invalid value: \"bad key\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
      "metadata.labels: Invalid value: \"bad value\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
    ]);
    expect(fmt({ name: 'a', labels: { 'a/b/c': 'x' } }, { namespaced: false })[0]).toContain("with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')");
  });

  it('validates annotation keys case-insensitively and the total size', () => {
    expect(fmt({ name: 'a', annotations: { 'Example.COM/Thing': 'x' } }, { namespaced: false })).toEqual([]);
    expect(fmt({ name: 'a', annotations: { big: 'x'.repeat(256 * 1024) } }, { namespaced: false })).toEqual([
      'metadata.annotations: Too long: may not be more than 262144 bytes',
    ]);
  });

  it('validates finalizer names', () => {
    expect(fmt({ name: 'a', finalizers: ['example.com/cleanup', 'orphan'] }, { namespaced: false })).toEqual([]);
    expect(fmt({ name: 'a', finalizers: ['cleanup'] }, { namespaced: false })).toEqual([
      'metadata.finalizers: Invalid value: "cleanup": name is neither a standard finalizer name nor is it fully qualified',
    ]);
  });

  it('uses DNS-1035 labels and path segments when the kind says so', () => {
    expect(fmt({ name: '1svc', namespace: 'd' }, { namespaced: true, nameValidation: 'DNS1035Label' })[0]).toContain('a DNS-1035 label must consist');
    expect(fmt({ name: 'system:admin' }, { namespaced: false, nameValidation: 'PathSegment' })).toEqual([]);
    expect(fmt({ name: 'a/b' }, { namespaced: false, nameValidation: 'PathSegment' })).toEqual([
      'metadata.name: Invalid value: "a/b": may not contain \'/\'',
    ]);
  });
});

describe('findDuplicateFields: strings with escapes', () => {
  it('finds keys after strings holding escaped quotes and backslashes, and long values', async () => {
    const { findDuplicateFields } = await import('../../src/machinery/schema/duplicates.js');
    const long = 'x'.repeat(5000);
    const text = `{"a":"q\\"uo\\\\te","b":{"c\\"d":1,"c\\"d":2},"v":"${long}","a":"\\\\","e\\\\":[{"k":"\\"","k":0}],"e\\\\":null}`;
    expect(JSON.parse(text)).toBeTruthy();
    expect(findDuplicateFields(text)).toEqual(['b.c"d', 'a', 'e\\[0].k', 'e\\']);
  });
});

describe('dropEmptyMaps (Go omitempty maps)', () => {
  const mapSchema: Schema = {
    type: 'object',
    properties: {
      data: { type: 'object', additionalProperties: { type: 'string' } },
      required: { type: 'object', additionalProperties: { type: 'string' } },
      struct: { type: 'object', properties: { a: { type: 'string' } } },
      free: { type: 'object', 'x-orch-preserve-unknown-fields': true },
      fields: { type: 'object', additionalProperties: { type: 'string' }, 'x-orch-proto-type': 'FieldsV1' },
      items: { type: 'array', items: { type: 'object', additionalProperties: { type: 'string' } } },
    },
    required: ['required'],
  };

  it('drops an empty typed map but keeps structs, free-form objects, FieldsV1, list items and required maps', () => {
    const obj = { data: {}, required: {}, struct: {}, free: {}, fields: {}, items: [{}] };
    const r = validateAgainstSchema(obj, mapSchema, {}, { dropEmptyMaps: true });
    expect(r.errors).toEqual([]);
    expect(obj).toEqual({ required: {}, struct: {}, free: {}, fields: {}, items: [{}] });
  });

  it('keeps a map that has keys, and every empty map without the option (custom resources)', () => {
    const a = { data: { k: 'v' } };
    validateAgainstSchema(a, mapSchema, {}, { dropEmptyMaps: true });
    expect(a).toEqual({ data: { k: 'v' } });
    const b = { data: {}, required: {} };
    validateAgainstSchema(b, mapSchema, {});
    expect(b).toEqual({ data: {}, required: {} });
  });
});

describe('validateAgainstSchema: kube-openapi value checks of custom resources', () => {
  const s = (props: Record<string, Schema>): Schema => ({ type: 'object', properties: { spec: { type: 'object', properties: props } } });
  const msgs = (schema: Schema, spec: unknown) =>
    validateAgainstSchema({ spec }, schema, {}, { enumBesideTypeError: true }).errors.map((e) => `${e.field}: ${e.type}: ${e.message}`);

  // patterns are Go RE2 (kube-openapi validate.Pattern: regexp.MatchString)
  it('matches patterns with RE2 syntax and semantics', () => {
    expect(msgs(s({ a: { type: 'string', pattern: '(?i)^[a-z]+$' } }), { a: 'ABC' })).toEqual([]);
    expect(msgs(s({ a: { type: 'string', pattern: '^\\pL+$' } }), { a: 'héllo' })).toEqual([]);
    expect(msgs(s({ a: { type: 'string', pattern: '^[[:alpha:]]+\\z' } }), { a: 'abc' })).toEqual([]);
    expect(msgs(s({ a: { type: 'string', pattern: '^(?P<x>a)b$' } }), { a: 'ab' })).toEqual([]);
    expect(msgs(s({ a: { type: 'string', pattern: '^.$' } }), { a: '😀' })).toEqual([]);
    // kube-openapi errors.FailedPattern: "%s in %s should match '%s'"
    expect(msgs(s({ a: { type: 'string', pattern: '^\\pL+$' } }), { a: 'h3llo' })).toEqual([
      'spec.a: FieldValueInvalid: Invalid value: "h3llo": spec.a in body should match \'^\\pL+$\'',
    ]);
    // a pattern Go cannot compile fails every value (validate.Pattern: "%s, but pattern is invalid: %s")
    expect(msgs(s({ a: { type: 'string', pattern: '^(?=a)' } }), { a: 'a' })).toEqual([
      'spec.a: FieldValueInvalid: Invalid value: "a": spec.a in body should match \'^(?=a), but pattern is invalid: error parsing regexp: invalid or unsupported Perl syntax: `(?=`\'',
    ]);
  });

  // kube-openapi validate.MaxLength/MinLength count utf8.RuneCount
  it('counts string lengths in runes', () => {
    expect(msgs(s({ a: { type: 'string', maxLength: 2 } }), { a: '😀😀' })).toEqual([]);
    expect(msgs(s({ a: { type: 'string', maxLength: 2 } }), { a: '😀😀😀' })).toEqual(['spec.a: FieldValueTooLong: Too long: may not be more than 2 bytes']);
    expect(msgs(s({ a: { type: 'string', minLength: 3 } }), { a: '😀😀' })).toEqual([
      'spec.a: FieldValueInvalid: Invalid value: "😀😀": spec.a in body should be at least 3 chars long',
    ]);
    expect(msgs(s({ a: { type: 'array', items: { type: 'string' }, maxItems: 1 } }), { a: ['😀', 'b'] })).toEqual(['spec.a: FieldValueTooMany: Too many: 2: must have at most 1 items']);
  });

  it('words type and enum errors as kube does', () => {
    // validate/type.go joins the types of x-kubernetes-int-or-string: "integer,string"
    expect(msgs(s({ a: { 'x-orch-int-or-string': true } }), { a: 1.5 })).toEqual([
      'spec.a: FieldValueTypeInvalid: Invalid value: "number": spec.a in body must be of type integer,string: "number"',
    ]);
    // apiextensions validation.go kubeOpenAPIResultToFieldErrors: non-string enum values as JSON, then field.NotSupported quotes each
    expect(msgs(s({ a: { type: 'integer', enum: [1, 2] } }), { a: 3 })).toEqual(['spec.a: FieldValueNotSupported: Unsupported value: 3: supported values: "1", "2"']);
    // kube-openapi runs the enum (common) validator beside the type validator
    expect(msgs(s({ a: { type: 'string', enum: ['x', 'y'] } }), { a: 5 })).toEqual([
      'spec.a: FieldValueTypeInvalid: Invalid value: "integer": spec.a in body must be of type string: "integer"',
      'spec.a: FieldValueNotSupported: Unsupported value: 5: supported values: "x", "y"',
    ]);
    // int-or-string strings get the string checks, integers the number checks
    expect(msgs(s({ a: { 'x-orch-int-or-string': true, pattern: '^[0-9]+%$' } }), { a: 'x' })).toEqual([
      'spec.a: FieldValueInvalid: Invalid value: "x": spec.a in body should match \'^[0-9]+%$\'',
    ]);
    // a format failure is errors.InvalidType, a type error (field.TypeInvalid)
    expect(msgs(s({ a: { type: 'string', format: 'date' } }), { a: '2024-02-30' })).toEqual([
      'spec.a: FieldValueTypeInvalid: Invalid value: "2024-02-30": spec.a in body must be of type date: "2024-02-30"',
    ]);
  });
});
