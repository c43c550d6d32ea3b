import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyJsonPatch } from '../../src/machinery/patch/json-patch.js';
import { formatPointer } from '../../src/machinery/patch/json-pointer.js';
import { applyMergePatch, createMergePatch } from '../../src/machinery/patch/merge-patch.js';
import { applyStrategicMergePatch, createStrategicMergePatch } from '../../src/machinery/patch/strategic-merge.js';
import type { Definitions, Schema } from '../../src/machinery/schema/types.js';
import type { JSONObject, JSONValue } from '../../src/registry/types.js';

// JSON without null (RFC 7386 cannot express a null member: null means delete)
const key = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'x-y', 'z/~');
const scalar = fc.oneof(fc.boolean(), fc.integer({ min: -5, max: 5 }), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.string({ maxLength: 4 }));
const { json: jsonNoNull } = fc.letrec<{ json: JSONValue }>((tie) => ({
  json: fc.oneof(
    { depthSize: 'small' },
    scalar,
    fc.array(tie('json'), { maxLength: 3 }),
    fc.dictionary(key, tie('json'), { maxKeys: 4 }),
  ),
}));
const objectNoNull = fc.dictionary(key, jsonNoNull, { maxKeys: 5 }) as fc.Arbitrary<JSONObject>;

describe('merge patch', () => {
  it('applyMergePatch(a, createMergePatch(a, b)) equals b', () => {
    fc.assert(
      fc.property(objectNoNull, objectNoNull, (a, b) => {
        const snap = JSON.stringify([a, b]);
        expect(applyMergePatch(a, createMergePatch(a, b))).toEqual(b);
        expect(JSON.stringify([a, b])).toBe(snap);
      }),
      { numRuns: 500 },
    );
  });
});

// A schema exercising every strategic-merge feature the two-way diff emits.
const defs: Definitions = {
  Port: { type: 'object', properties: { containerPort: { type: 'integer' }, protocol: { type: 'string' } } },
  Container: {
    type: 'object',
    properties: {
      name: { type: 'string' },
      image: { type: 'string' },
      args: { type: 'array', items: { type: 'string' } },
      ports: {
        type: 'array',
        items: { $ref: 'Port' },
        'x-orch-patch-strategy': 'merge',
        'x-orch-patch-merge-key': 'containerPort',
      },
      resources: { type: 'object', additionalProperties: { type: 'string' } },
    },
  },
  Volume: {
    type: 'object',
    properties: {
      name: { type: 'string' },
      emptyDir: { type: 'object', properties: { medium: { type: 'string' } } },
      hostPath: { type: 'object', properties: { path: { type: 'string' } } },
    },
  },
};
const schema: Schema = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    labels: { type: 'object', additionalProperties: { type: 'string' } },
    finalizers: { type: 'array', items: { type: 'string' }, 'x-orch-patch-strategy': 'merge' },
    containers: {
      type: 'array',
      items: { $ref: 'Container' },
      'x-orch-patch-strategy': 'merge',
      'x-orch-patch-merge-key': 'name',
    },
    volumes: {
      type: 'array',
      items: { $ref: 'Volume' },
      'x-orch-patch-strategy': 'merge,retainKeys',
      'x-orch-patch-merge-key': 'name',
    },
    strategy: {
      type: 'object',
      'x-orch-patch-strategy': 'retainKeys',
      properties: { type: { type: 'string' }, rollingUpdate: { type: 'object', properties: { maxSurge: { type: 'integer' } } } },
    },
    selector: { type: 'object', additionalProperties: { type: 'string' }, 'x-orch-patch-strategy': 'replace' },
    free: { type: 'object', 'x-orch-preserve-unknown-fields': true },
  },
};

const small = fc.constantFrom('p', 'q', 'r', 's', 't');
const strMap = fc.dictionary(small, small, { maxKeys: 3 });
const port = fc.record(
  { containerPort: fc.integer({ min: 1, max: 5 }), protocol: fc.constantFrom('TCP', 'UDP') },
  { requiredKeys: ['containerPort'] },
);
const container = fc.record(
  {
    name: small,
    image: small,
    args: fc.array(small, { maxLength: 3 }),
    ports: fc.uniqueArray(port, { selector: (p) => p.containerPort, maxLength: 3 }),
    resources: strMap,
  },
  { requiredKeys: ['name'] },
);
const volume = fc.record(
  {
    name: small,
    emptyDir: fc.record({ medium: small }, { requiredKeys: [] }),
    hostPath: fc.record({ path: small }, { requiredKeys: [] }),
  },
  { requiredKeys: ['name'] },
);
const shaped = fc.record(
  {
    name: small,
    labels: strMap,
    finalizers: fc.uniqueArray(small, { maxLength: 4 }),
    containers: fc.uniqueArray(container, { selector: (c) => c.name, maxLength: 4 }),
    volumes: fc.uniqueArray(volume, { selector: (v) => v.name, maxLength: 3 }),
    strategy: fc.record(
      { type: small, rollingUpdate: fc.record({ maxSurge: fc.integer({ min: 0, max: 3 }) }, { requiredKeys: [] }) },
      { requiredKeys: [] },
    ),
    selector: strMap,
    free: objectNoNull,
  },
  { requiredKeys: [] },
) as fc.Arbitrary<JSONObject>;

describe('strategic merge patch', () => {
  it('apply(a, create(a, b)) equals b for objects shaped by the schema', () => {
    fc.assert(
      fc.property(shaped, shaped, (a, b) => {
        const snap = JSON.stringify([a, b]);
        const patch = createStrategicMergePatch(a, b, schema, defs);
        expect(applyStrategicMergePatch(a, patch, schema, defs)).toEqual(b);
        expect(JSON.stringify([a, b])).toBe(snap);
      }),
      { numRuns: 1000 },
    );
  });

  it('an empty patch is the identity', () => {
    fc.assert(
      fc.property(shaped, (a) => {
        expect(createStrategicMergePatch(a, a, schema, defs)).toEqual({});
        expect(applyStrategicMergePatch(a, {}, schema, defs)).toEqual(a);
      }),
      { numRuns: 200 },
    );
  });
});

describe('JSON patch', () => {
  it('a test of a value just added succeeds', () => {
    const token = fc.string({ maxLength: 5 });
    fc.assert(
      fc.property(objectNoNull, fc.array(token, { minLength: 1, maxLength: 3 }), fc.jsonValue(), (doc, tokens, value) => {
        // build the containers along the path, then add and test at its end
        const ops: JSONValue[] = [];
        for (let i = 1; i < tokens.length; i++) ops.push({ op: 'add', path: formatPointer(tokens.slice(0, i)), value: {} });
        const path = formatPointer(tokens);
        ops.push({ op: 'add', path, value: value as JSONValue }, { op: 'test', path, value: value as JSONValue });
        const out = applyJsonPatch(doc, ops);
        let at: JSONValue = out;
        for (const t of tokens) at = (at as JSONObject)[t]!;
        expect(at).toEqual(value);
      }),
      { numRuns: 500 },
    );
  });
});
