// The zero-shape filler (src/registry/zero-shape.ts): kube's Go zero values
// added where absent, in lists and nested templates, never over present
// values, copy on write; and every built-in kind's shape against its schema.

import { describe, expect, it } from 'vitest';
import { POD_SPEC_SHAPE, type ZeroNode, type ZeroShape, each, fillZeroShape, whenPresent, withZeroShape } from '../../src/registry/zero-shape.js';
import { builtinDefinitions, builtinSchemaDefinitions } from '../../src/registry/kinds/index.js';
import { validateAgainstSchema } from '../../src/machinery/schema/validate.js';
import { applyDefaults } from '../../src/machinery/schema/defaults.js';
import type { ApiObject, ResourceDefinition } from '../../src/registry/types.js';
import { servedObject } from '../../src/registry/storage-keys.js';

const kinds = builtinDefinitions('k8s.io');
const defs = builtinSchemaDefinitions('k8s.io');
const shapeOf = (kind: string, version?: string): ZeroShape =>
  kinds.find((d) => d.kind === kind && (version === undefined || d.version === version))!.strategy.zeroShape!;

describe('withZeroShape', () => {
  it('adds absent structs and scalars, and fills inside present structs', () => {
    const shape: ZeroShape = { spec: { strategy: {} }, status: { replicas: 0, ready: false, name: '' } };
    expect(withZeroShape({ spec: { replicas: 2 } }, shape)).toEqual({
      spec: { replicas: 2, strategy: {} },
      status: { replicas: 0, ready: false, name: '' },
    });
  });

  it('never changes present values, null counts as absent, a wrong type is left for validation', () => {
    const shape: ZeroShape = { status: { replicas: 0, loadBalancer: {} }, spec: {} };
    expect(withZeroShape({ status: { replicas: 3, loadBalancer: { ingress: [{ ip: '1.2.3.4' }] } } }, shape)).toEqual({
      spec: {},
      status: { replicas: 3, loadBalancer: { ingress: [{ ip: '1.2.3.4' }] } },
    });
    expect(withZeroShape({ status: { replicas: null, loadBalancer: null } }, shape)).toEqual({ spec: {}, status: { replicas: 0, loadBalancer: {} } });
    expect(withZeroShape({ spec: 'text', status: [] }, shape)).toEqual({ spec: 'text', status: [] });
  });

  it('fills every object item of a list, leaves other items and absent lists alone', () => {
    const o = { spec: { containers: [{ name: 'a' }, { name: 'b', resources: { limits: { cpu: '1' } } }, 'junk'] } };
    expect(withZeroShape(o, { spec: POD_SPEC_SHAPE })).toEqual({
      spec: { containers: [{ name: 'a', resources: {} }, { name: 'b', resources: { limits: { cpu: '1' } } }, 'junk'] },
    });
    // no initContainers or ephemeralContainers lists are invented
    expect(withZeroShape({ spec: {} }, { spec: POD_SPEC_SHAPE })).toEqual({ spec: {} });
  });

  it('fills pod templates nested in workloads (a CronJob job template), every container list', () => {
    const cj = {
      spec: {
        schedule: '* * * * *',
        jobTemplate: { spec: { template: { spec: { initContainers: [{ name: 'i' }], containers: [{ name: 'c' }], ephemeralContainers: [{ name: 'e' }] } } } },
      },
    };
    expect(withZeroShape(cj, shapeOf('CronJob'))).toEqual({
      spec: {
        schedule: '* * * * *',
        jobTemplate: {
          metadata: {},
          spec: {
            template: {
              metadata: {},
              spec: { initContainers: [{ name: 'i', resources: {} }], containers: [{ name: 'c', resources: {} }], ephemeralContainers: [{ name: 'e', resources: {} }] },
            },
          },
        },
      },
      status: {},
    });
  });

  it('fills a pointer struct only when present', () => {
    const shape: ZeroShape = { spec: { template: whenPresent({ metadata: {} }) } };
    expect(withZeroShape({ spec: {} }, shape)).toEqual({ spec: {} });
    expect(withZeroShape({ spec: { template: {} } }, shape)).toEqual({ spec: { template: { metadata: {} } } });
  });

  it('is copy on write: the same object when complete, untouched subtrees shared, the input never changed', () => {
    const shape: ZeroShape = { spec: { containers: each({ resources: {} }) }, status: {} };
    const done = { spec: { containers: [{ name: 'a', resources: {} }] }, status: {} };
    expect(withZeroShape(done, shape)).toBe(done);
    const meta = { name: 'x' };
    const first = { name: 'a', resources: {} };
    const o = { metadata: meta, spec: { containers: [first, { name: 'b' }] } };
    const snapshot = structuredClone(o);
    const out = withZeroShape(o, shape);
    expect(o).toEqual(snapshot);
    expect(out.metadata).toBe(meta);
    expect(out.spec.containers[0]).toBe(first);
    expect(out.spec.containers[1]).toEqual({ name: 'b', resources: {} });
    // fresh objects every time: one write's `{}` is never another's
    const a = withZeroShape({}, { status: {} }) as { status: object };
    const b = withZeroShape({}, { status: {} }) as { status: object };
    expect(a.status).not.toBe(b.status);
  });

  it('fillZeroShape fills the object itself; no shape changes nothing', () => {
    const o: ApiObject = { metadata: { name: 'x' }, spec: { replicas: 1 } };
    fillZeroShape(o, shapeOf('ReplicaSet'));
    expect(o).toEqual({ metadata: { name: 'x' }, spec: { replicas: 1, template: { metadata: {}, spec: {} } }, status: { replicas: 0 } });
    const cm: ApiObject = { metadata: { name: 'x' }, data: {} };
    fillZeroShape(cm, undefined);
    expect(cm).toEqual({ metadata: { name: 'x' }, data: {} });
  });
});

describe('serving stored objects', () => {
  const def = (kind: string, version: string): ResourceDefinition => kinds.find((d) => d.kind === kind && d.version === version)!;

  it('an object stored without its shape is served with it; the stored object is not changed', () => {
    const stored: ApiObject = { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'old' }, spec: { template: { spec: { containers: [{ name: 'c' }] } } } };
    const snapshot = structuredClone(stored);
    const served = servedObject(def('ReplicaSet', 'v1'), stored);
    expect(served.status).toEqual({ replicas: 0 });
    expect((served.spec as Record<string, unknown>).template).toEqual({ metadata: {}, spec: { containers: [{ name: 'c', resources: {} }] } });
    expect(stored).toEqual(snapshot);
    // complete: the very object
    expect(servedObject(def('ReplicaSet', 'v1'), served)).toBe(served);
  });

  it("a version served over another version's storage gets its own shape (autoscaling/v1 over v2)", () => {
    const v2: ApiObject = {
      apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name: 'h', namespace: 'default' },
      spec: { scaleTargetRef: { kind: 'Deployment', name: 'd', apiVersion: 'apps/v1' }, maxReplicas: 3 }, status: { desiredReplicas: 0 },
    };
    const v1 = servedObject(def('HorizontalPodAutoscaler', 'v1'), v2);
    expect(v1.apiVersion).toBe('autoscaling/v1');
    expect(v1.status).toMatchObject({ currentReplicas: 0, desiredReplicas: 0 });
  });
});

describe('the built-in kinds', () => {
  it('declare the shapes kube encodes', () => {
    const filled = (shape: ZeroShape): Record<string, unknown> => withZeroShape({} as Record<string, unknown>, shape);
    expect(filled(shapeOf('Deployment'))).toEqual({ spec: { template: { metadata: {}, spec: {} }, strategy: {} }, status: {} });
    expect(filled(shapeOf('Service'))).toEqual({ spec: {}, status: { loadBalancer: {} } });
    expect(filled(shapeOf('Ingress'))).toEqual({ spec: {}, status: { loadBalancer: {} } });
    expect(filled(shapeOf('StatefulSet')).status).toEqual({ replicas: 0, availableReplicas: 0 });
    expect(filled(shapeOf('DaemonSet')).status).toEqual({ currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0 });
    expect(filled(shapeOf('ReplicationController'))).toEqual({ spec: {}, status: { replicas: 0 } });
    expect(filled(shapeOf('PodDisruptionBudget')).status).toEqual({ disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 });
    expect(filled(shapeOf('HorizontalPodAutoscaler', 'v2')).status).toEqual({ desiredReplicas: 0 });
    expect(filled(shapeOf('HorizontalPodAutoscaler', 'v1')).status).toEqual({ currentReplicas: 0, desiredReplicas: 0 });
    expect(filled(shapeOf('VolumeAttachment')).status).toEqual({ attached: false });
    expect(filled(shapeOf('Node')).status).toMatchObject({ daemonEndpoints: { kubeletEndpoint: { Port: 0 } }, nodeInfo: { kubeletVersion: '' } });
    expect(kinds.find((d) => d.kind === 'ConfigMap')!.strategy.zeroShape).toBeUndefined();
  });

  /** an object with every struct, list item and (optionally) scalar of the shape */
  function sample(shape: ZeroShape, scalars: boolean): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [k, node] of Object.entries(shape)) {
      const v = sampleNode(node, scalars);
      if (v !== undefined) out[k] = v;
    }
    return out;
  }
  function sampleNode(node: ZeroNode, scalars: boolean): unknown {
    if (node === null || typeof node !== 'object') return scalars ? node : undefined;
    if ('item' in node) return [sample(node.item as ZeroShape, scalars)];
    if ('shape' in node) return sample(node.shape as ZeroShape, scalars);
    return sample(node as ZeroShape, scalars);
  }
  /** the scalar leaves of a sample, as paths with their values */
  function scalarsOf(v: unknown, path = ''): [string, unknown][] {
    if (Array.isArray(v)) return v.flatMap((x, i) => scalarsOf(x, `${path}[${i}]`));
    if (typeof v === 'object' && v !== null) return Object.entries(v).flatMap(([k, x]) => scalarsOf(x, path ? `${path}.${k}` : k));
    return [[path, v]];
  }
  const shaped = kinds.filter((d): d is ResourceDefinition & { strategy: { zeroShape: ZeroShape } } => d.strategy.zeroShape !== undefined);

  it.each(shaped.map((d) => [`${d.kind} ${d.group}/${d.version}`, d] as const))('%s: every field of the shape is in the schema', (_, d) => {
    const full = { apiVersion: 'v1', kind: d.kind, metadata: { name: 'x' }, ...sample(d.strategy.zeroShape, true) };
    const { unknownFields } = validateAgainstSchema(structuredClone(full), d.schema, defs);
    expect(unknownFields).toEqual([]);
  });

  it.each(shaped.map((d) => [`${d.kind} ${d.group}/${d.version}`, d] as const))('%s: no schema default names a zero-valued scalar (the zero would hide it)', (_, d) => {
    const bare = sample(d.strategy.zeroShape, false);
    applyDefaults(bare, d.schema, defs);
    const zeros = new Set(scalarsOf(sample(d.strategy.zeroShape, true)).map(([p]) => p));
    const defaulted = scalarsOf(bare).filter(([p]) => zeros.has(p));
    expect(defaulted).toEqual([]);
  });
});
