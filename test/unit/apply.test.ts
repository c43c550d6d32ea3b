// Server-side apply scenarios (spec 000 §2.4, §4.9) on a Deployment-like schema.
import { describe, expect, it } from 'vitest';
import {
  fieldManagerFromUserAgent,
  inferFieldManager,
  managedSetOf,
  recordUpdate,
  serverSideApply,
  validateFieldManager,
  type ApplyArgs,
} from '../../src/machinery/apply/apply.js';
import { conflictStatusError } from '../../src/machinery/apply/conflict-status.js';
import { path, keyPE, valuePE, pathToString } from '../../src/machinery/apply/fieldpath.js';
import { StatusError } from '../../src/core/errors.js';
import type { Definitions, Schema } from '../../src/machinery/schema/types.js';
import type { ApiObject, JSONObject } from '../../src/registry/types.js';

const defs: Definitions = {
  Container: {
    type: 'object',
    properties: {
      name: { type: 'string' },
      image: { type: 'string' },
      args: { type: 'array', items: { type: 'string' } }, // no marker: atomic
      ports: {
        type: 'array',
        'x-orch-list-type': 'map',
        'x-orch-list-map-keys': ['containerPort', 'protocol'],
        items: { type: 'object', properties: { containerPort: { type: 'integer' }, protocol: { type: 'string', default: 'TCP' } } },
      },
    },
  },
};

const schema: Schema = {
  type: 'object',
  properties: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object' },
    spec: {
      type: 'object',
      properties: {
        replicas: { type: 'integer' },
        paused: { type: 'boolean' },
        // Kubernetes-style list: patch strategy merge + merge key, no list type → map keyed by name
        containers: { type: 'array', 'x-orch-patch-strategy': 'merge', 'x-orch-patch-merge-key': 'name', items: { $ref: '#/definitions/Container' } },
        tolerations: { type: 'array', 'x-orch-list-type': 'atomic', items: { type: 'object', properties: { key: { type: 'string' } } } },
        tags: { type: 'array', 'x-orch-list-type': 'set', items: { type: 'string' } },
        nodeSelector: { type: 'object', additionalProperties: { type: 'string' } },
        config: { type: 'object', 'x-orch-map-type': 'atomic', additionalProperties: { type: 'string' } },
        selector: { type: 'object', 'x-orch-map-type': 'atomic', properties: { matchLabels: { type: 'object', additionalProperties: { type: 'string' } } } },
        extra: { type: 'object', 'x-orch-preserve-unknown-fields': true },
      },
    },
  },
};

let clock = 0;
const tick = (): string => new Date(Date.UTC(2024, 0, 1, 0, 0, clock++)).toISOString().replace('.000Z', 'Z');

function deploy(spec: JSONObject, meta: JSONObject = {}): ApiObject {
  return { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', ...meta }, spec };
}

function apply(live: ApiObject | undefined, config: ApiObject, manager: string, extra: Partial<ApplyArgs> = {}) {
  return serverSideApply({ live, config, manager, force: false, apiVersion: 'apps/v1', now: tick(), schema, defs, ...extra });
}

function applyOk(live: ApiObject | undefined, config: ApiObject, manager: string, extra: Partial<ApplyArgs> = {}): ApiObject {
  const r = apply(live, config, manager, extra);
  expect(r.conflicts).toEqual([]);
  return r.object;
}

function update(live: ApiObject | undefined, updated: ApiObject, manager: string): ApiObject {
  return recordUpdate({ live, updated, manager, apiVersion: 'apps/v1', now: tick(), schema, defs });
}

const owned = (obj: ApiObject, manager: string, op: 'Apply' | 'Update' = 'Apply') => managedSetOf(obj, manager, op).paths().map(pathToString);
const spec = (obj: ApiObject) => obj.spec as JSONObject;

describe('apply creates and records ownership', () => {
  it('apply on an absent object creates it with one Apply entry', () => {
    const cfg = deploy({ replicas: 2, containers: [{ name: 'c', image: 'nginx', ports: [{ containerPort: 80 }] }] }, { labels: { app: 'web' } });
    const r = apply(undefined, cfg, 'kubectl', { now: '2024-05-01T10:00:00Z' });
    expect(r.conflicts).toEqual([]);
    expect(r.object.spec).toEqual(cfg.spec);
    expect(r.object.metadata!.managedFields).toEqual([
      {
        manager: 'kubectl',
        operation: 'Apply',
        apiVersion: 'apps/v1',
        time: '2024-05-01T10:00:00Z',
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:metadata': { 'f:labels': { 'f:app': {} } },
          'f:spec': {
            'f:containers': {
              'k:{"name":"c"}': {
                '.': {},
                'f:image': {},
                'f:name': {},
                // the omitted key field takes its schema default
                'f:ports': { 'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} } },
              },
            },
            'f:replicas': {},
          },
        },
      },
    ]);
  });

  it('does not modify its inputs', () => {
    const live = applyOk(undefined, deploy({ replicas: 1 }), 'a');
    const liveCopy = structuredClone(live);
    const cfg = deploy({ replicas: 3, tags: ['x'] });
    const cfgCopy = structuredClone(cfg);
    apply(live, cfg, 'b', { force: true });
    expect(live).toEqual(liveCopy);
    expect(cfg).toEqual(cfgCopy);
  });

  it('applying the same configuration twice is a no-op', () => {
    const cfg = deploy({ replicas: 2, tags: ['a', 'b'], containers: [{ name: 'c', image: 'i' }], nodeSelector: { zone: 'z' } });
    const first = applyOk(undefined, cfg, 'kubectl');
    const second = apply(first, cfg, 'kubectl');
    expect(second.object).toEqual(first);
    expect(second.changed).toBe(false);
  });

  it('rejects managedFields in the configuration', () => {
    const cfg = deploy({ replicas: 1 }, { managedFields: [] });
    expect(() => apply(undefined, cfg, 'kubectl')).toThrow(StatusError);
    try {
      apply(undefined, cfg, 'kubectl');
    } catch (e) {
      expect((e as StatusError).code).toBe(400);
      expect((e as StatusError).message).toBe('metadata.managedFields must be nil');
    }
  });

  it('rejects duplicate keys and items missing their keys', () => {
    expect(() => apply(undefined, deploy({ containers: [{ name: 'c' }, { name: 'c' }] }), 'k')).toThrow(/duplicate entries/);
    expect(() => apply(undefined, deploy({ containers: [{ image: 'x' }] }), 'k')).toThrow(/omits key field/);
    expect(() => apply(undefined, deploy({ tags: ['a', 'a'] }), 'k')).toThrow(/duplicate entries/);
  });
});

describe('conflicts between managers', () => {
  it('a different value for a field another manager owns is a conflict', () => {
    const live = applyOk(undefined, deploy({ replicas: 1 }), 'alice');
    const r = apply(live, deploy({ replicas: 2 }), 'bob');
    expect(r.conflicts.map((c) => [c.manager, c.operation, c.field])).toEqual([['alice', 'Apply', '.spec.replicas']]);
    expect(r.object).toEqual(live);
    const st = conflictStatusError(r.conflicts).toStatus();
    expect(st.code).toBe(409);
    expect(st.reason).toBe('Conflict');
    expect(st.message).toBe('Apply failed with 1 conflict: conflict with "alice": .spec.replicas');
    expect(st.details!.causes).toEqual([{ reason: 'FieldManagerConflict', message: 'conflict with "alice"', field: '.spec.replicas' }]);
  });

  it('force takes the field: value overwritten, ownership moved', () => {
    const live = applyOk(undefined, deploy({ replicas: 1, paused: true }), 'alice');
    const r = apply(live, deploy({ replicas: 2 }), 'bob', { force: true });
    expect(r.conflicts).toEqual([]);
    expect(spec(r.object).replicas).toBe(2);
    expect(owned(r.object, 'alice')).toEqual(['.spec.paused']);
    expect(owned(r.object, 'bob')).toEqual(['.spec.replicas']);
  });

  it('equal values are shared; a later change by either side conflicts', () => {
    let obj = applyOk(undefined, deploy({ replicas: 1 }), 'alice');
    obj = applyOk(obj, deploy({ replicas: 1 }), 'bob');
    expect(owned(obj, 'alice')).toEqual(['.spec.replicas']);
    expect(owned(obj, 'bob')).toEqual(['.spec.replicas']);
    const r = apply(obj, deploy({ replicas: 5 }), 'alice');
    expect(r.conflicts.map((c) => `${c.manager} ${c.field}`)).toEqual(['bob .spec.replicas']);
  });

  it('conflicts with Update managers name their apiVersion; several conflicts are grouped', () => {
    let obj = applyOk(undefined, deploy({ replicas: 1, paused: false }), 'kubectl');
    obj = update(obj, deploy({ replicas: 3, paused: true }, { managedFields: obj.metadata!.managedFields! }), 'kube-controller-manager');
    const r = apply(obj, deploy({ replicas: 1, paused: false }), 'kubectl');
    expect(r.conflicts.map((c) => c.field)).toEqual(['.spec.paused', '.spec.replicas']);
    const st = conflictStatusError(r.conflicts).toStatus();
    expect(st.message).toBe(
      'Apply failed with 2 conflicts: conflicts with "kube-controller-manager" using apps/v1:\n- .spec.paused\n- .spec.replicas',
    );
    expect(st.details!.causes![0]).toEqual({
      reason: 'FieldManagerConflict',
      message: 'conflict with "kube-controller-manager" using apps/v1',
      field: '.spec.paused',
    });
  });
});

describe('giving fields up', () => {
  it('a field the applier drops is removed when nobody else owns it', () => {
    let obj = applyOk(undefined, deploy({ replicas: 1, paused: true }, { labels: { a: '1', b: '2' } }), 'alice');
    obj = applyOk(obj, deploy({ replicas: 1 }, { labels: { a: '1' } }), 'alice');
    expect(spec(obj).paused).toBeUndefined();
    expect(obj.metadata!.labels).toEqual({ a: '1' });
    expect(owned(obj, 'alice')).toEqual(['.metadata.labels.a', '.spec.replicas']);
  });

  it('a co-owned field is kept and only the ownership is dropped', () => {
    let obj = applyOk(undefined, deploy({ replicas: 1, paused: true }), 'alice');
    obj = applyOk(obj, deploy({ paused: true }), 'bob');
    obj = applyOk(obj, deploy({ replicas: 1 }), 'alice');
    expect(spec(obj).paused).toBe(true);
    expect(owned(obj, 'alice')).toEqual(['.spec.replicas']);
    expect(owned(obj, 'bob')).toEqual(['.spec.paused']);
  });

  it('a field owned by an Update manager is not removed', () => {
    let obj = applyOk(undefined, deploy({ replicas: 1, tags: ['a'] }), 'alice');
    obj = update(obj, deploy({ replicas: 1, tags: ['a'], paused: true }), 'editor');
    obj = applyOk(obj, deploy({ replicas: 1, paused: true, tags: ['a'] }), 'alice');
    obj = applyOk(obj, deploy({ replicas: 1 }), 'alice');
    expect(spec(obj).paused).toBe(true);
    expect(spec(obj).tags).toBeUndefined();
  });

  it('dropping a whole list item removes the item with its unowned fields', () => {
    let obj = applyOk(undefined, deploy({ containers: [{ name: 'a', image: 'x' }, { name: 'b', image: 'y' }] }), 'alice');
    obj = applyOk(obj, deploy({ containers: [{ name: 'a', image: 'x' }] }), 'alice');
    expect(spec(obj).containers).toEqual([{ name: 'a', image: 'x' }]);
  });
});

describe('list types', () => {
  it('atomic lists are one field, replaced wholesale', () => {
    let obj = applyOk(undefined, deploy({ tolerations: [{ key: 'a' }, { key: 'b' }] }), 'alice');
    expect(owned(obj, 'alice')).toEqual(['.spec.tolerations']);
    const r = apply(obj, deploy({ tolerations: [{ key: 'c' }] }), 'bob');
    expect(r.conflicts.map((c) => c.field)).toEqual(['.spec.tolerations']);
    obj = apply(obj, deploy({ tolerations: [{ key: 'c' }] }), 'bob', { force: true }).object;
    expect(spec(obj).tolerations).toEqual([{ key: 'c' }]);
    expect(owned(obj, 'alice')).toEqual([]);
    // a list with no marker at all is atomic too
    obj = applyOk(obj, deploy({ containers: [{ name: 'c', args: ['1', '2'] }] }), 'bob');
    const r2 = apply(obj, deploy({ containers: [{ name: 'c', args: ['3'] }] }), 'carol');
    expect(r2.conflicts.map((c) => c.field)).toEqual(['.spec.containers[name="c"].args']);
  });

  it('sets are merged as a union, items owned by value', () => {
    let obj = applyOk(undefined, deploy({ tags: ['x', 'y'] }), 'alice');
    obj = applyOk(obj, deploy({ tags: ['y', 'z'] }), 'bob');
    expect(spec(obj).tags).toEqual(['x', 'y', 'z']);
    expect(owned(obj, 'bob')).toEqual(['.spec.tags[="y"]', '.spec.tags[="z"]']);
    obj = applyOk(obj, deploy({ tags: [] }), 'alice');
    // x was alice's alone: removed; y is still bob's
    expect(spec(obj).tags).toEqual(['y', 'z']);
    const fv = (obj.metadata!.managedFields as JSONObject[]).find((e) => e.manager === 'bob')!.fieldsV1;
    expect(fv).toEqual({ 'f:spec': { 'f:tags': { 'v:"y"': {}, 'v:"z"': {} } } });
  });

  it('map lists merge item by item; items are owned by key', () => {
    let obj = applyOk(undefined, deploy({ containers: [{ name: 'a', image: 'a:1' }] }), 'alice');
    obj = applyOk(obj, deploy({ containers: [{ name: 'b', image: 'b:1' }] }), 'bob');
    expect(spec(obj).containers).toEqual([{ name: 'a', image: 'a:1' }, { name: 'b', image: 'b:1' }]);
    // alice may change her own item
    obj = applyOk(obj, deploy({ containers: [{ name: 'a', image: 'a:2' }] }), 'alice');
    expect((spec(obj).containers as JSONObject[])[0]!.image).toBe('a:2');
    // bob changing alice's image conflicts, on the key path
    const r = apply(obj, deploy({ containers: [{ name: 'b', image: 'b:1' }, { name: 'a', image: 'a:3' }] }), 'bob');
    expect(r.conflicts.map((c) => c.field)).toEqual(['.spec.containers[name="a"].image']);
    // both may add fields to the same item
    obj = applyOk(obj, deploy({ containers: [{ name: 'b', image: 'b:1' }, { name: 'a', args: ['x'] }] }), 'bob');
    expect((spec(obj).containers as JSONObject[]).find((c) => c.name === 'a')).toEqual({ name: 'a', image: 'a:2', args: ['x'] });
    expect(managedSetOf(obj, 'bob').has(path('spec', 'containers', keyPE({ name: 'a' }), 'args'))).toBe(true);
  });

  it('multi-key map lists use all keys, defaults filling omitted keys', () => {
    let obj = applyOk(undefined, deploy({ containers: [{ name: 'c', ports: [{ containerPort: 80 }, { containerPort: 80, protocol: 'UDP' }] }] }), 'a');
    const ports = path('spec', 'containers', keyPE({ name: 'c' }), 'ports');
    expect(managedSetOf(obj, 'a').has([...ports, keyPE({ containerPort: 80, protocol: 'TCP' })])).toBe(true);
    expect(managedSetOf(obj, 'a').has([...ports, keyPE({ containerPort: 80, protocol: 'UDP' })])).toBe(true);
    obj = applyOk(obj, deploy({ containers: [{ name: 'c', ports: [{ containerPort: 80, protocol: 'UDP' }] }] }), 'a');
    expect((spec(obj).containers as JSONObject[])[0]!.ports).toEqual([{ containerPort: 80, protocol: 'UDP' }]);
  });
});

describe('map types', () => {
  it('granular maps are owned key by key', () => {
    let obj = applyOk(undefined, deploy({ nodeSelector: { a: '1' } }), 'alice');
    obj = applyOk(obj, deploy({ nodeSelector: { b: '2' } }), 'bob');
    expect(spec(obj).nodeSelector).toEqual({ a: '1', b: '2' });
  });

  it('atomic maps are one field, replaced wholesale', () => {
    let obj = applyOk(undefined, deploy({ config: { a: '1' }, selector: { matchLabels: { app: 'x' } } }), 'alice');
    expect(owned(obj, 'alice')).toEqual(['.spec.config', '.spec.selector']);
    const r = apply(obj, deploy({ config: { b: '2' } }), 'bob');
    expect(r.conflicts.map((c) => c.field)).toEqual(['.spec.config']);
    obj = apply(obj, deploy({ config: { b: '2' } }), 'bob', { force: true }).object;
    expect(spec(obj).config).toEqual({ b: '2' });
  });
});

describe('unstructured objects', () => {
  const ustr = (spec: JSONObject): ApiObject => ({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec });
  const run = (live: ApiObject | undefined, cfg: ApiObject, manager: string, force = false) =>
    serverSideApply({ live, config: cfg, manager, force, apiVersion: 'example.com/v1', now: tick() });

  it('every key is a field owned on its own and every list is atomic', () => {
    const r = run(undefined, ustr({ size: 1, ports: [1, 2], nested: { a: 1 } }), 'alice');
    const fv = (r.object.metadata!.managedFields as JSONObject[])[0]!.fieldsV1;
    expect(fv).toEqual({ 'f:spec': { '.': {}, 'f:nested': { '.': {}, 'f:a': {} }, 'f:ports': {}, 'f:size': {} } });
    const r2 = run(r.object, ustr({ ports: [3] }), 'bob');
    expect(r2.conflicts.map((c) => c.field)).toEqual(['.spec.ports']);
    const r3 = run(r.object, ustr({ nested: { b: 2 } }), 'bob');
    expect(r3.conflicts).toEqual([]);
    expect(spec(r3.object).nested).toEqual({ a: 1, b: 2 });
  });

  it('preserve-unknown-fields parts of a schema are unstructured', () => {
    const obj = applyOk(undefined, deploy({ extra: { anything: { deep: [1] } } }), 'alice');
    expect(owned(obj, 'alice')).toEqual(['.spec.extra.anything', '.spec.extra.anything.deep']);
  });
});

describe('Update operations (recordUpdate)', () => {
  it('the writer owns what it changed, others lose it, and no conflict arises', () => {
    let obj = applyOk(undefined, deploy({ replicas: 1, paused: false }), 'kubectl');
    obj = update(obj, { ...obj, spec: { replicas: 4, paused: false } }, 'hpa');
    expect(spec(obj).replicas).toBe(4);
    expect(owned(obj, 'kubectl')).toEqual(['.spec.paused']);
    expect(owned(obj, 'hpa', 'Update')).toEqual(['.spec.replicas']);
    const entries = obj.metadata!.managedFields as JSONObject[];
    // Apply entries sort before Update entries
    expect(entries.map((e) => `${e.operation}:${e.manager}`)).toEqual(['Apply:kubectl', 'Update:hpa']);
  });

  it('create records every field of the new object, with "." for new maps and lists', () => {
    const obj = update(undefined, deploy({ replicas: 1, tags: ['a'] }, { labels: { app: 'x' } }), 'kubectl-create');
    expect((obj.metadata!.managedFields as JSONObject[])[0]).toMatchObject({
      manager: 'kubectl-create',
      operation: 'Update',
      apiVersion: 'apps/v1',
      fieldsType: 'FieldsV1',
      fieldsV1: {
        'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
        'f:spec': { '.': {}, 'f:replicas': {}, 'f:tags': { '.': {}, 'v:"a"': {} } },
      },
    });
  });

  it('an update that changes nothing leaves managedFields as they were', () => {
    const obj = applyOk(undefined, deploy({ replicas: 1 }), 'kubectl');
    const again = update(obj, structuredClone(obj), 'someone');
    expect(again).toEqual(obj);
  });

  it('removing a field takes it from every owner', () => {
    let obj = applyOk(undefined, deploy({ replicas: 1, paused: true }), 'kubectl');
    obj = update(obj, { ...obj, spec: { replicas: 1 } }, 'editor');
    expect(owned(obj, 'kubectl')).toEqual(['.spec.replicas']);
    expect(owned(obj, 'editor', 'Update')).toEqual([]);
  });

  it('a list with one empty object resets managedFields', () => {
    const obj = applyOk(undefined, deploy({ replicas: 1 }), 'kubectl');
    const reset = update(obj, { ...obj, metadata: { ...obj.metadata, managedFields: [{}] } }, 'admin');
    expect(reset.metadata!.managedFields).toBeUndefined();
    // the object without entries is not tracked by later updates (as in Kubernetes) ...
    const later = update(reset, { ...reset, spec: { replicas: 9 } }, 'admin');
    expect(later.metadata!.managedFields).toBeUndefined();
    // ... until the next apply
    const applied = applyOk(later, deploy({ paused: true }), 'kubectl');
    expect(owned(applied, 'kubectl')).toEqual(['.spec.paused']);
  });

  it('a reset combined with changes leaves the writer owning what it changed', () => {
    const obj = applyOk(undefined, deploy({ replicas: 1, paused: true }), 'kubectl');
    const r = update(obj, { ...obj, metadata: { ...obj.metadata, managedFields: [{}] }, spec: { replicas: 2, paused: true } }, 'admin');
    expect((r.metadata!.managedFields as JSONObject[]).map((e) => e.manager)).toEqual(['admin']);
    expect(owned(r, 'admin', 'Update')).toEqual(['.spec.replicas']);
  });

  it('an empty list does not reset managedFields', () => {
    const obj = applyOk(undefined, deploy({ replicas: 1 }), 'kubectl');
    const r = update(obj, { ...obj, metadata: { ...obj.metadata, managedFields: [] } }, 'admin');
    expect(r.metadata!.managedFields).toEqual(obj.metadata!.managedFields);
  });

  it('managedFields edited directly by the writer are honoured', () => {
    const obj = applyOk(undefined, deploy({ replicas: 1, paused: true }), 'kubectl');
    const edited = (obj.metadata!.managedFields as JSONObject[]).map((e) => ({ ...e, manager: 'renamed' }));
    const r = update(obj, { ...obj, metadata: { ...obj.metadata, managedFields: edited } }, 'admin');
    expect((r.metadata!.managedFields as JSONObject[]).map((e) => e.manager)).toEqual(['renamed']);
  });

  it('keeps at most ten Update entries, folding the oldest into ancient-changes', () => {
    let obj = applyOk(undefined, deploy({ nodeSelector: { base: 'x' } }), 'kubectl');
    for (let i = 0; i < 12; i++) {
      obj = update(obj, { ...obj, spec: { ...spec(obj), nodeSelector: { ...(spec(obj).nodeSelector as JSONObject), [`k${i}`]: 'v' } } }, `writer-${i}`);
    }
    const entries = obj.metadata!.managedFields as JSONObject[];
    const updates = entries.filter((e) => e.operation === 'Update');
    expect(updates).toHaveLength(10);
    expect(updates.map((e) => e.manager)).toContain('ancient-changes');
    expect(owned(obj, 'ancient-changes', 'Update')).toEqual(['.spec.nodeSelector.k0', '.spec.nodeSelector.k1', '.spec.nodeSelector.k2']);
  });
});

describe('time and order of entries', () => {
  it('only the applier entry time changes, and only when something changed', () => {
    let obj = applyOk(undefined, deploy({ replicas: 1 }), 'a', { now: '2024-01-01T00:00:00Z' });
    obj = applyOk(obj, deploy({ paused: true }), 'b', { now: '2024-01-02T00:00:00Z' });
    obj = applyOk(obj, deploy({ replicas: 1 }), 'a', { now: '2024-01-03T00:00:00Z' });
    const times = Object.fromEntries((obj.metadata!.managedFields as JSONObject[]).map((e) => [e.manager, e.time]));
    expect(times).toEqual({ a: '2024-01-01T00:00:00Z', b: '2024-01-02T00:00:00Z' });
    obj = applyOk(obj, deploy({ replicas: 2 }), 'a', { now: '2024-01-04T00:00:00Z' });
    const entries = obj.metadata!.managedFields as JSONObject[];
    // sorted by time within an operation
    expect(entries.map((e) => [e.manager, e.time])).toEqual([
      ['b', '2024-01-02T00:00:00Z'],
      ['a', '2024-01-04T00:00:00Z'],
    ]);
  });
});

describe('schema topology changes', () => {
  it('ownership inside a value that became atomic turns into co-ownership of the value', () => {
    const granular: Schema = structuredClone(schema);
    (granular.properties!.spec!.properties!.config as Schema)['x-orch-map-type'] = 'granular';
    let obj = serverSideApply({ live: undefined, config: deploy({ config: { a: '1' } }), manager: 'alice', force: false, apiVersion: 'apps/v1', now: tick(), schema: granular, defs }).object;
    obj = serverSideApply({ live: obj, config: deploy({ config: { b: '2' } }), manager: 'bob', force: false, apiVersion: 'apps/v1', now: tick(), schema: granular, defs }).object;
    // now the schema says atomic: any change to config conflicts with both
    const r = apply(obj, deploy({ config: { c: '3' } }), 'carol');
    expect(r.conflicts.map((c) => `${c.manager} ${c.field}`)).toEqual(['alice .spec.config', 'bob .spec.config']);
  });
});

describe('field manager names', () => {
  it('infers the manager from the User-Agent prefix', () => {
    expect(fieldManagerFromUserAgent('kubectl/v1.31.0 (linux/amd64) kubernetes/abc')).toBe('kubectl');
    expect(fieldManagerFromUserAgent('kube-controller-manager/v1.31.0')).toBe('kube-controller-manager');
    expect(fieldManagerFromUserAgent('tab\there/1')).toBe('tabhere');
    expect(fieldManagerFromUserAgent('x'.repeat(300))).toHaveLength(128);
    expect(inferFieldManager('explicit', 'kubectl/v1')).toBe('explicit');
    expect(inferFieldManager(null, 'kubectl/v1')).toBe('kubectl');
  });

  it('validates explicit manager names', () => {
    expect(validateFieldManager('kubectl')).toBeUndefined();
    expect(validateFieldManager('x'.repeat(129))).toMatch(/128/);
    expect(validateFieldManager('a\u0000b')).toMatch(/printable/);
  });
});

describe('sets in metadata', () => {
  it('finalizers are a set even without a metadata schema', () => {
    const obj = applyOk(undefined, deploy({}, { finalizers: ['example.com/x'] }), 'alice');
    expect(managedSetOf(obj, 'alice').has(path('metadata', 'finalizers', valuePE('example.com/x')))).toBe(true);
  });
});

describe('kubectl moving from client-side to server-side apply (kube lastAppliedManager / lastAppliedUpdater)', () => {
  const LA = 'kubectl.kubernetes.io/last-applied-configuration';
  const applied = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { replicas: 2, paused: false } };
  // a client-side apply: the object as written, with the annotation, owned by kubectl-client-side-apply
  const csa = (): ApiObject =>
    update(undefined, { ...structuredClone(applied), metadata: { name: 'd', annotations: { [LA]: `${JSON.stringify(applied)}\n` } } } as ApiObject, 'kubectl-client-side-apply');
  const config = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { replicas: 3, paused: false } };

  it('takes the fields the annotation still describes without a conflict, and rewrites the annotation', () => {
    const r = apply(csa(), config, 'kubectl');
    expect(r.conflicts).toEqual([]);
    expect((r.object.spec as JSONObject).replicas).toBe(3);
    expect(r.object.metadata?.annotations?.[LA]).toBe('{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"paused":false,"replicas":3}}\n');
    expect(managedSetOf(r.object, 'kubectl').has(path('spec', 'replicas'))).toBe(true);
  });

  it('still conflicts on a field someone changed since the client-side apply, and for other managers', () => {
    const changed = update(csa(), { ...csa(), spec: { replicas: 5, paused: false } } as ApiObject, 'kubectl-client-side-apply');
    const other = update(changed, { ...changed, spec: { replicas: 5, paused: true } } as ApiObject, 'someone');
    const r = apply(other, config, 'kubectl');
    // both values moved away from the annotation's: neither may be taken
    expect(r.conflicts.map((c) => `${c.manager} ${c.field}`)).toEqual(['kubectl-client-side-apply .spec.replicas', 'someone .spec.paused']);
    expect(apply(csa(), config, 'my-tool').conflicts.map((c) => c.field)).toEqual(['.spec.replicas']);
  });
});
