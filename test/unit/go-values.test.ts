// Quantities and times written back as kube's Go types encode them
// (src/machinery/schema/go-values.ts): resource.Quantity's canonical text,
// metav1.Time in whole seconds and MicroTime with six digits, both UTC; applied
// to built-in kinds by the schema walk (`goValues`), not to custom resources.

import { afterAll, describe, expect, it } from 'vitest';
import { canonicalQuantity, goTime } from '../../src/machinery/schema/go-values.js';
import { validateAgainstSchema } from '../../src/machinery/schema/validate.js';
import { compileSchema } from '../../src/machinery/schema/compile.js';
import { builtinDefinitions, builtinSchemaDefinitions } from '../../src/registry/kinds/index.js';
import { GenericStore } from '../../src/registry/generic-store.js';
import { SchemaAdmission, withGoValues } from '../../src/registry/admission.js';
import { storageKey } from '../../src/registry/storage-keys.js';
import { encodeObject } from '../../src/registry/object-codec.js';
import type { ApiObject } from '../../src/registry/types.js';
import { cleanupDirs, openStore } from '../watch/helpers.js';
import { microTime, time } from '../../src/machinery/schema/dsl.js';
import type { Schema } from '../../src/machinery/schema/types.js';

describe('canonicalQuantity (ParseQuantity then MarshalJSON)', () => {
  it.each([
    ['1000m', '1'], ['1.5Gi', '1536Mi'], ['2048Mi', '2Gi'], ['1024Ki', '1Mi'], ['0.5Gi', '512Mi'], ['1.1Ki', '1126400m'],
    ['1000', '1k'], ['1000000', '1M'], ['0.5', '500m'], ['.5', '500m'], ['0.1', '100m'], ['1.5', '1500m'], ['1.2e3', '1200'], ['100e2', '10e3'],
    ['0', '0'], ['0m', '0'], ['0.0000000001', '1n'], ['-1.5Gi', '-1536Mi'],
  ])('%s is written %s', (input, want) => {
    expect(canonicalQuantity(input)).toBe(want);
  });

  it('keeps a text that is already canonical, as kube caches it (and its quirks: a sign, leading zeros)', () => {
    for (const q of ['100m', '250m', '110', '24581692Ki', '5Gi', '1e3', '12e6', '100Mi', '+5', '007']) expect(canonicalQuantity(q)).toBe(q);
  });

  it('writes a JSON number as a string', () => {
    expect(canonicalQuantity(2)).toBe('2');
    expect(canonicalQuantity(1.5)).toBe('1500m');
    expect(canonicalQuantity(1024)).toBe('1024');
  });

  it('is undefined for what is no quantity', () => {
    expect(canonicalQuantity('abc')).toBeUndefined();
    expect(canonicalQuantity('1Q')).toBeUndefined();
    expect(canonicalQuantity(Number.NaN)).toBeUndefined();
  });
});

describe('goTime (metav1.Time and MicroTime)', () => {
  it('writes UTC, whole seconds for a Time, six digits for a MicroTime', () => {
    expect(goTime('2024-01-01T00:00:00.5Z', false)).toBe('2024-01-01T00:00:00Z');
    expect(goTime('2023-03-01T00:30:00+01:00', false)).toBe('2023-02-28T23:30:00Z');
    expect(goTime('2024-12-31T23:00:00-02:00', false)).toBe('2025-01-01T01:00:00Z');
    expect(goTime('2024-01-01T02:00:00+02:00', true)).toBe('2024-01-01T00:00:00.000000Z');
    expect(goTime('2024-01-01T00:00:00.1234567Z', true)).toBe('2024-01-01T00:00:00.123456Z');
    expect(goTime('0001-01-01T00:00:00Z', false)).toBe('0001-01-01T00:00:00Z');
  });

  it('is undefined for what Go\'s RFC 3339 parse refuses', () => {
    expect(goTime('2023-02-29T00:00:00Z', false)).toBeUndefined();
    expect(goTime('2024-01-01 00:00:00Z', false)).toBeUndefined();
    expect(goTime('2024-01-01T24:00:00Z', false)).toBeUndefined();
  });
});

describe('the schema walk with goValues', () => {
  const quantity: Schema = { format: 'quantity', 'x-orch-int-or-string': true };
  const schema: Schema = {
    type: 'object',
    properties: {
      limits: { type: 'object', additionalProperties: quantity },
      sizes: { type: 'array', items: quantity },
      at: time('a Time'),
      renewed: microTime('a MicroTime'),
    },
  };
  const written = () => ({ limits: { cpu: 2, memory: '1.5Gi' }, sizes: ['1000m', 3], at: '2024-01-01T01:00:00.9+01:00', renewed: '2024-01-01T00:00:00Z' });

  it('writes a built-in kind\'s quantities and times as kube does', () => {
    const o = written();
    const r = validateAgainstSchema(o, schema, {}, { goValues: true });
    expect(r.errors).toEqual([]);
    expect(o).toEqual({ limits: { cpu: '2', memory: '1536Mi' }, sizes: ['1', '3'], at: '2024-01-01T00:00:00Z', renewed: '2024-01-01T00:00:00.000000Z' });
  });

  it('leaves them as written without it (custom resources are unstructured in kube)', () => {
    const o = written();
    validateAgainstSchema(o, schema, {});
    expect(o).toEqual(written());
  });
});

describe('a stored object written before (an upgraded data directory)', () => {
  afterAll(cleanupDirs);
  const defs = builtinSchemaDefinitions('k8s.io');
  const podDef = builtinDefinitions('k8s.io').find((d) => d.kind === 'Pod')!;
  const old: ApiObject = {
    apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default', uid: 'u', creationTimestamp: '2024-01-01T00:00:00Z' },
    spec: { containers: [{ name: 'c', image: 'nginx', resources: { limits: { cpu: 2 }, requests: { cpu: 2 } }, terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File', imagePullPolicy: 'Always' }], restartPolicy: 'Always', dnsPolicy: 'ClusterFirst', schedulerName: 'default-scheduler', terminationGracePeriodSeconds: 30, enableServiceLinks: true, priority: 0, preemptionPolicy: 'PreemptLowerPriority', securityContext: {} },
    status: { phase: 'Pending', qosClass: 'Guaranteed' },
  };

  it('is compared as kube decodes it: the same object when it is in Go\'s form, else a normalized copy', () => {
    const compiled = compileSchema(podDef.schema, defs);
    const copy = withGoValues(old, compiled);
    expect(copy).not.toBe(old);
    expect((copy.spec as { containers: { resources: unknown }[] }).containers[0]!.resources).toEqual({ limits: { cpu: '2' }, requests: { cpu: '2' } });
    expect((old.spec as { containers: { resources: unknown }[] }).containers[0]!.resources).toEqual({ limits: { cpu: 2 }, requests: { cpu: 2 } });
    expect(withGoValues(copy, compiled)).toBe(copy);
  });

  it('still takes a label change: its cpu: 2 is not a change of the pod\'s spec', async () => {
    const store = await openStore();
    try {
      await store.txn({ compare: [], success: [{ type: 'put', key: storageKey(podDef, 'default', 'p'), value: encodeObject(old) }], failure: [] });
      const gs = new GenericStore(podDef, store, new SchemaAdmission(defs));
      const { object } = await gs.guaranteedUpdate('default', 'p', { dryRun: false }, (cur) => ({ ...cur!, metadata: { ...cur!.metadata, labels: { a: 'b' } } }));
      expect(object.metadata?.labels).toEqual({ a: 'b' });
      expect((object.spec as { containers: { resources: unknown }[] }).containers[0]!.resources).toEqual({ limits: { cpu: '2' }, requests: { cpu: '2' } });
    } finally {
      await store.close();
    }
  });
});
