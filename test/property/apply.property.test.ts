// Properties of server-side apply (spec 000 §4.9) over random sequences of
// applies and updates by several managers.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { managedSetOf, recordUpdate, serverSideApply } from '../../src/machinery/apply/apply.js';
import { FieldSet, keyPE, path, pathToString, valuePE, type Path } from '../../src/machinery/apply/fieldpath.js';
import { decodeManagedFields } from '../../src/machinery/apply/managed.js';
import { deepEqual } from '../../src/machinery/apply/typed.js';
import type { Schema } from '../../src/machinery/schema/types.js';
import type { ApiObject, JSONObject, JSONValue } from '../../src/registry/types.js';

const schema: Schema = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        a: { type: 'integer' },
        b: { type: 'string' },
        tags: { type: 'array', 'x-orch-list-type': 'set', items: { type: 'string' } },
        items: {
          type: 'array',
          'x-orch-patch-strategy': 'merge',
          'x-orch-patch-merge-key': 'name',
          items: { type: 'object', properties: { name: { type: 'string' }, v: { type: 'integer' }, w: { type: 'string' } } },
        },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
        atom: { type: 'array', items: { type: 'integer' } },
        cfg: { type: 'object', 'x-orch-map-type': 'atomic', additionalProperties: { type: 'string' } },
        nested: { type: 'object', properties: { x: { type: 'integer' }, y: { type: 'integer' } } },
      },
    },
  },
};

const specArb: fc.Arbitrary<JSONObject> = fc.record(
  {
    a: fc.integer({ min: 0, max: 2 }),
    b: fc.constantFrom('x', 'y'),
    tags: fc.uniqueArray(fc.constantFrom('t1', 't2', 't3'), { maxLength: 3 }),
    items: fc.uniqueArray(
      fc.record({ name: fc.constantFrom('n1', 'n2', 'n3'), v: fc.integer({ min: 0, max: 2 }), w: fc.constantFrom('p', 'q') }, { requiredKeys: ['name'] }),
      { selector: (i) => i.name, maxLength: 3 },
    ),
    labels: fc.dictionary(fc.constantFrom('l1', 'l2', 'l3'), fc.constantFrom('p', 'q'), { maxKeys: 3 }),
    atom: fc.array(fc.integer({ min: 0, max: 2 }), { maxLength: 3 }),
    cfg: fc.dictionary(fc.constantFrom('c1', 'c2'), fc.constantFrom('p', 'q'), { maxKeys: 2 }),
    nested: fc.record({ x: fc.integer({ min: 0, max: 2 }), y: fc.integer({ min: 0, max: 2 }) }, { requiredKeys: [] }),
  },
  { requiredKeys: [] },
) as fc.Arbitrary<JSONObject>;

type Op =
  | { kind: 'apply'; manager: string; force: boolean; spec: JSONObject }
  | { kind: 'update'; manager: string; spec: JSONObject };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('apply' as const), manager: fc.constantFrom('m1', 'm2', 'm3'), force: fc.boolean(), spec: specArb }),
  fc.record({ kind: fc.constant('update' as const), manager: fc.constantFrom('u1', 'u2'), spec: specArb }),
);

const obj = (spec: JSONObject): ApiObject => ({ apiVersion: 'v1', kind: 'Thing', metadata: { name: 't' }, spec });

/** Does the object hold something at this path? */
function exists(v: JSONValue | undefined, p: Path): boolean {
  let cur: JSONValue | undefined = v;
  for (const pe of p) {
    if (cur === undefined || cur === null || typeof cur !== 'object') return false;
    if (pe.kind === 'field') {
      if (Array.isArray(cur)) return false;
      cur = cur[pe.name];
    } else if (!Array.isArray(cur)) return false;
    else if (pe.kind === 'key') cur = cur.find((it) => pe.fields.every(([k, x]) => (it as JSONObject)?.[k] === x));
    else if (pe.kind === 'value') cur = cur.find((it) => deepEqual(it, pe.value));
    else cur = cur[pe.index];
  }
  return cur !== undefined;
}

function run(ops: Op[], check: (before: ApiObject | undefined, op: Op, after: ApiObject, conflicts: number) => void): void {
  let live: ApiObject | undefined;
  let t = 0;
  for (const op of ops) {
    const now = new Date(Date.UTC(2024, 0, 1, 0, 0, t++)).toISOString();
    if (op.kind === 'apply') {
      const r = serverSideApply({ live, config: obj(op.spec), manager: op.manager, force: op.force, apiVersion: 'v1', now, schema });
      check(live, op, r.object, r.conflicts.length);
      if (r.conflicts.length === 0) live = r.object;
    } else {
      const base: ApiObject = live ? { ...live, spec: op.spec } : obj(op.spec);
      const next = recordUpdate({ live, updated: base, manager: op.manager, apiVersion: 'v1', now, schema });
      check(live, op, next, 0);
      live = next;
    }
  }
}

describe('server-side apply properties', () => {
  it('applying the same configuration twice gives an identical object', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 8 }), fc.constantFrom('m1', 'm2', 'm3'), specArb, (ops, manager, spec) => {
        let live: ApiObject | undefined;
        run(ops, (_b, _op, after, conflicts) => {
          if (conflicts === 0) live = after;
        });
        const first = serverSideApply({ live, config: obj(spec), manager, force: true, apiVersion: 'v1', now: '2030-01-01T00:00:00Z', schema });
        const second = serverSideApply({ live: first.object, config: obj(spec), manager, force: false, apiVersion: 'v1', now: '2031-01-01T00:00:00Z', schema });
        expect(second.conflicts).toEqual([]);
        expect(second.object).toEqual(first.object);
        expect(second.changed).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it('no manager ever owns a field the object does not have', () => {
    fc.assert(
      fc.property(fc.array(opArb, { minLength: 1, maxLength: 10 }), (ops) => {
        run(ops, (_before, _op, after) => {
          for (const e of decodeManagedFields(after.metadata?.managedFields as JSONValue)) {
            for (const p of e.set.paths()) {
              if (!exists(after as JSONObject, p)) throw new Error(`${e.manager} owns ${pathToString(p)} which is absent`);
            }
          }
        });
      }),
      { numRuns: 300 },
    );
  });

  it('a successful apply leaves the applier owning exactly its configuration, with the values it applied', () => {
    fc.assert(
      fc.property(fc.array(opArb, { minLength: 1, maxLength: 10 }), (ops) => {
        run(ops, (before, op, after, conflicts) => {
          if (op.kind !== 'apply') return;
          if (conflicts > 0) {
            expect(op.force).toBe(false);
            expect(after).toEqual(before ?? obj(op.spec));
            return;
          }
          const mine = managedSetOf(after, op.manager);
          const spec = after.spec as JSONObject;
          for (const [k, v] of Object.entries(op.spec)) {
            if (['a', 'b', 'atom', 'cfg'].includes(k)) {
              expect(spec[k]).toEqual(v);
              expect(mine.has(path('spec', k))).toBe(true);
            }
          }
          for (const tag of (op.spec.tags as string[] | undefined) ?? []) {
            expect(mine.has(path('spec', 'tags', valuePE(tag)))).toBe(true);
          }
          for (const it of (op.spec.items as JSONObject[] | undefined) ?? []) {
            expect(mine.has(path('spec', 'items', keyPE({ name: it.name! })))).toBe(true);
          }
        });
      }),
      { numRuns: 300 },
    );
  });

  it('updates never conflict and leave other entries without the fields they changed', () => {
    fc.assert(
      fc.property(fc.array(opArb, { minLength: 1, maxLength: 10 }), (ops) => {
        run(ops, (before, op, after) => {
          if (op.kind !== 'update' || !before) return;
          const entries = decodeManagedFields(after.metadata?.managedFields as JSONValue);
          const writer = entries.find((e) => e.manager === op.manager);
          if (!writer) return;
          for (const e of entries) {
            if (e === writer) continue;
            const shared = e.set.intersection(writer.set);
            // whatever both own must be something this update did not change
            for (const p of shared.paths()) {
              const get = (o: ApiObject | undefined) => pick(o as JSONObject | undefined, p);
              // containers (maps, non-atomic lists) may be co-owned while their content changes
              const last = p[p.length - 1]!;
              const atomic = last.kind === 'field' && (last.name === 'atom' || last.name === 'cfg');
              const isContainer = (v: JSONValue | undefined) => v !== null && typeof v === 'object';
              if (!atomic && (isContainer(get(before)) || isContainer(get(after)))) continue;
              expect(deepEqual(get(before), get(after))).toBe(true);
            }
          }
        });
      }),
      { numRuns: 200 },
    );
  });
});

function pick(v: JSONValue | undefined, p: Path): JSONValue | undefined {
  let cur: JSONValue | undefined = v;
  for (const pe of p) {
    if (cur === undefined || cur === null || typeof cur !== 'object') return undefined;
    if (pe.kind === 'field') cur = Array.isArray(cur) ? undefined : cur[pe.name];
    else if (!Array.isArray(cur)) return undefined;
    else if (pe.kind === 'key') cur = cur.find((it) => pe.fields.every(([k, x]) => (it as JSONObject)?.[k] === x));
    else if (pe.kind === 'value') cur = cur.find((it) => deepEqual(it, pe.value));
    else cur = cur[pe.index];
  }
  return cur;
}

describe('FieldsV1 properties', () => {
  const peArb = fc.oneof(
    fc.string({ maxLength: 6 }).map((s) => ({ kind: 'field' as const, name: s })),
    fc.dictionary(fc.constantFrom('name', 'port', 'protocol'), fc.oneof(fc.string({ maxLength: 4 }), fc.integer({ min: -5, max: 500 })), { minKeys: 1, maxKeys: 3 }).map((d) => keyPE(d)),
    fc.oneof(fc.string({ maxLength: 4 }), fc.integer(), fc.boolean()).map((v) => valuePE(v)),
    fc.nat(20).map((i) => ({ kind: 'index' as const, index: i })),
  );
  const setArb = fc.array(fc.array(peArb, { minLength: 1, maxLength: 4 }), { maxLength: 12 }).map((ps) => FieldSet.fromPaths(ps));

  it('encoding then decoding gives the same set, and re-encoding the same bytes', () => {
    fc.assert(
      fc.property(setArb, (set) => {
        const json = set.toFieldsV1JSON();
        const back = FieldSet.fromFieldsV1(JSON.parse(json));
        expect(back.equals(set)).toBe(true);
        expect(back.toFieldsV1JSON()).toBe(json);
      }),
      { numRuns: 300 },
    );
  });

  it('set algebra laws hold', () => {
    fc.assert(
      fc.property(setArb, setArb, (a, b) => {
        expect(a.union(b).equals(b.union(a))).toBe(true);
        expect(a.difference(b).intersection(b).isEmpty()).toBe(true);
        expect(a.difference(b).union(a.intersection(b)).equals(a)).toBe(true);
        expect(a.union(b).size).toBe(a.size + b.size - a.intersection(b).size);
      }),
      { numRuns: 300 },
    );
  });
});
