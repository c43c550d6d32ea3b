// A create's managedFields built straight from the object
// (src/machinery/apply/created-fields.ts) against the field-set path it
// replaces (`recordUpdate`, which still compares `{}` with the object through
// typed.ts, subtracts SYSTEM_FIELDS and emits the set): the same JSON text,
// for every built-in kind, for random objects shaped by each kind's schema
// (with undeclared keys, wrong shapes, duplicate list items, key defaults and
// system fields), and for objects without a schema.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { recordUpdate, updateManagedFields, type UpdateArgs } from '../../src/machinery/apply/apply.js';
import { createdFieldsV1 } from '../../src/machinery/apply/created-fields.js';
import { resolveSchema } from '../../src/machinery/apply/typed.js';
import type { Definitions, Schema } from '../../src/machinery/schema/types.js';
import { builtinDefinitions, builtinSchemaDefinitions } from '../../src/registry/kinds/index.js';
import type { ApiObject, JSONObject, JSONValue } from '../../src/registry/types.js';
import { kindExamples } from '../fixtures/kind-examples.js';
import { workloadExamples } from '../fixtures/workload-examples.js';

const kinds = builtinDefinitions('orch.io');
const defs = builtinSchemaDefinitions('orch.io');

function args(updated: ApiObject, schema: Schema | undefined, subresource?: string): UpdateArgs {
  return { live: undefined, updated, manager: 'kubectl-client-side-apply', apiVersion: 'v1', now: '2026-11-27T13:00:00Z', schema, defs, subresource };
}

/** the new path and the reference give the same JSON text */
function same(updated: ApiObject, schema: Schema | undefined, subresource?: string): void {
  const a = args(updated, schema, subresource);
  const before = JSON.stringify(updated);
  const fast = JSON.stringify(updateManagedFields(a) ?? null);
  const reference = JSON.stringify(recordUpdate(a).metadata?.managedFields ?? null);
  expect(fast).toBe(reference);
  expect(JSON.stringify(updated)).toBe(before);
}

const STRINGS = ['a', 'b', 'web', '<&>', 'ü', '😀', ''];
const KEYS = ['name', 'x', 'data', 'labels', 'spec', 'ports', 'constructor', 'é', 'Z'];

/** any JSON, small */
const anyJson: fc.Arbitrary<JSONValue> = fc.letrec<{ v: JSONValue }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom<JSONValue>(null, true, false, 0, 1, -1.5),
    fc.constantFrom(...STRINGS),
    fc.array(tie('v'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom(...KEYS), tie('v'), { maxKeys: 3 }),
  ),
})).v;

/** values shaped by a schema (mostly), with undeclared keys and wrong shapes now and then */
function arbFor(schemaIn: Schema | undefined, d: Definitions, depth: number): fc.Arbitrary<JSONValue> {
  const s = resolveSchema(schemaIn, d);
  if (!s || depth > 5) return anyJson;
  let shaped: fc.Arbitrary<JSONValue>;
  if (s.type === 'array' || (s.type === undefined && s.items !== undefined)) {
    // items from a small pool, so keyed items repeat now and then
    shaped = fc.array(arbFor(s.items, d, depth + 1), { maxLength: 3 });
  } else if (s.type === 'object' || s.properties || s.additionalProperties) {
    const props = Object.keys(s.properties ?? {});
    // a few declared fields at a time: the kinds' schemas are large
    const declared = props.length === 0 ? fc.constant<[string, JSONValue][]>([]) : fc.array(fc.constantFrom(...props).chain((k) => arbFor(s.properties![k], d, depth + 1).map((v) => [k, v] as [string, JSONValue])), { maxLength: 4 });
    const extraVal = typeof s.additionalProperties === 'object' ? arbFor(s.additionalProperties, d, depth + 1) : anyJson;
    const extra = fc.array(fc.tuple(fc.constantFrom(...KEYS), extraVal), { maxLength: 2 });
    shaped = fc.tuple(declared, extra).map(([a, b]) => Object.fromEntries([...b, ...a]) as JSONObject);
  } else if (s.type === 'integer' || s.type === 'number') shaped = fc.integer({ min: -2, max: 80 });
  else if (s.type === 'boolean') shaped = fc.boolean();
  else if (s.enum && s.enum.length > 0) shaped = fc.constantFrom(...(s.enum as JSONValue[]));
  else shaped = fc.constantFrom(...STRINGS);
  return fc.oneof({ arbitrary: shaped, weight: 8 }, { arbitrary: anyJson, weight: 1 });
}

const metaArb: fc.Arbitrary<JSONValue> = fc.oneof(
  { weight: 8, arbitrary: fc.record(
    {
      name: fc.oneof(fc.constantFrom('a', 'b'), anyJson),
      namespace: fc.constantFrom('d', 'e'),
      uid: fc.constant('u'),
      resourceVersion: fc.constant('5'),
      generation: fc.constant(1),
      creationTimestamp: fc.constant('2026-11-27T13:00:00Z'),
      labels: fc.dictionary(fc.constantFrom('app', 'tier', 'a.b/c'), fc.constantFrom('web', 'x'), { maxKeys: 3 }),
      annotations: fc.dictionary(fc.constantFrom('note', 'k'), fc.constantFrom('v', ''), { maxKeys: 2 }),
      finalizers: fc.array(fc.constantFrom('f1', 'f2'), { maxLength: 3 }),
      ownerReferences: fc.array(fc.record({ apiVersion: fc.constant('v1'), kind: fc.constant('Pod'), name: fc.constantFrom('o1', 'o2'), uid: fc.constantFrom('u1', 'u2') }, { requiredKeys: ['uid'] }), { maxLength: 2 }),
      managedFields: fc.constantFrom<JSONValue>(null, []),
    },
    { requiredKeys: [] },
  ) as fc.Arbitrary<JSONValue> },
  { weight: 1, arbitrary: anyJson },
);

function objectArb(schema: Schema | undefined, apiVersion: string, kind: string): fc.Arbitrary<ApiObject> {
  const root = resolveSchema(schema, defs);
  const bodyKeys = Object.keys(root?.properties ?? {}).filter((k) => k !== 'metadata' && k !== 'apiVersion' && k !== 'kind');
  const body = bodyKeys.length === 0 ? fc.constant<[string, JSONValue][]>([]) : fc.array(fc.constantFrom(...bodyKeys).chain((k) => arbFor(root!.properties![k], defs, 1).map((v) => [k, v] as [string, JSONValue])), { maxLength: 3 });
  return fc.tuple(metaArb, body, fc.array(fc.tuple(fc.constantFrom(...KEYS), anyJson), { maxLength: 1 })).map(
    ([metadata, b, extra]) => ({ ...Object.fromEntries(extra), apiVersion, kind, metadata, ...Object.fromEntries(b) }) as ApiObject,
  );
}

describe('managedFields of a create without field sets', () => {
  it('equals the field-set path for every built-in example', () => {
    const examples = [...kindExamples, ...workloadExamples];
    expect(examples.length).toBeGreaterThan(10);
    for (const [group, kind, obj] of examples) {
      const def = kinds.find((k) => k.group === group && k.kind === kind)!;
      same(structuredClone(obj), def.schema);
      same(structuredClone(obj), def.schema, 'status');
    }
  });

  it('equals it for a 1 KiB ConfigMap and decides it itself', () => {
    const def = kinds.find((k) => k.group === '' && k.kind === 'ConfigMap')!;
    const cm: ApiObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'd', labels: { app: 'x' } }, data: { a: 'x'.repeat(1024), b: '' } };
    same(cm, def.schema);
    expect(createdFieldsV1(cm as JSONObject, { schema: def.schema, defs })).toEqual({
      'f:data': { '.': {}, 'f:a': {}, 'f:b': {} },
      'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
    });
    // only system fields: no entry at all
    same({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'd' } }, def.schema);
    expect(updateManagedFields(args({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } }, def.schema))).toBeUndefined();
  });

  it('leaves duplicate list items and inherited top-level names to the field sets', () => {
    const pod = kinds.find((k) => k.group === '' && k.kind === 'Pod')!;
    const dup: ApiObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'a', image: 'x' }, { name: 'a', args: ['1'] }] } };
    expect(createdFieldsV1(dup as JSONObject, { schema: pod.schema, defs })).toBeNull();
    same(dup, pod.schema);
    const odd = { apiVersion: 'v1', kind: 'Thing', metadata: { name: 't' }, constructor: 1 } as unknown as ApiObject;
    expect(createdFieldsV1(odd as JSONObject, {})).toBeNull();
  });

  for (const def of kinds) {
    it(`equals it for random ${def.group || 'core'}/${def.kind} objects`, () => {
      fc.assert(
        fc.property(objectArb(def.schema, def.group ? `${def.group}/v1` : 'v1', def.kind), fc.constantFrom(undefined, 'status'), (obj, sub) => same(obj, def.schema, sub)),
        { numRuns: 40 },
      );
    });
  }

  it('equals it for objects without a schema', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom(...KEYS, 'metadata', 'apiVersion', 'kind'), anyJson, { maxKeys: 5 }), (o) => same(o as ApiObject, undefined)),
      { numRuns: 300 },
    );
  });
});
