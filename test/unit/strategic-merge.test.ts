import { describe, expect, it } from 'vitest';
import { PatchError, UnsupportedPatchType, applyPatch } from '../../src/machinery/patch/index.js';
import { applyStrategicMergePatch, createStrategicMergePatch } from '../../src/machinery/patch/strategic-merge.js';
import type { Definitions, Schema } from '../../src/machinery/schema/types.js';
import type { JSONObject, JSONValue } from '../../src/registry/types.js';

// A Pod-like schema with Kubernetes' patch strategies (spec 000 §4.9 markers).
const defs: Definitions = {
  ContainerPort: {
    type: 'object',
    properties: { containerPort: { type: 'integer' }, protocol: { type: 'string' }, name: { type: 'string' } },
  },
  EnvVar: { type: 'object', properties: { name: { type: 'string' }, value: { type: 'string' } } },
  Container: {
    type: 'object',
    properties: {
      name: { type: 'string' },
      image: { type: 'string' },
      args: { type: 'array', items: { type: 'string' } },
      ports: {
        type: 'array',
        items: { $ref: '#/definitions/ContainerPort' },
        'x-orch-patch-strategy': 'merge',
        'x-orch-patch-merge-key': 'containerPort',
      },
      env: {
        type: 'array',
        items: { $ref: 'EnvVar' },
        'x-orch-patch-strategy': 'merge',
        'x-orch-patch-merge-key': 'name',
      },
      resources: {
        type: 'object',
        properties: {
          limits: { type: 'object', additionalProperties: { type: 'string' } },
          requests: { type: 'object', additionalProperties: { type: 'string' } },
        },
      },
    },
  },
  Volume: {
    type: 'object',
    properties: {
      name: { type: 'string' },
      emptyDir: { type: 'object', properties: { medium: { type: 'string' } } },
      hostPath: { type: 'object', properties: { path: { type: 'string' } } },
      configMap: { type: 'object', properties: { name: { type: 'string' } } },
    },
  },
  DeploymentStrategy: {
    type: 'object',
    properties: {
      type: { type: 'string' },
      rollingUpdate: { type: 'object', properties: { maxSurge: { type: 'string' }, maxUnavailable: { type: 'string' } } },
    },
  },
  PodSpec: {
    type: 'object',
    properties: {
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
      tolerations: { type: 'array', items: { type: 'object', properties: { key: { type: 'string' } } } },
      nodeSelector: { type: 'object', additionalProperties: { type: 'string' } },
      selector: { type: 'object', additionalProperties: { type: 'string' }, 'x-orch-patch-strategy': 'replace' },
      strategy: { $ref: 'DeploymentStrategy', 'x-orch-patch-strategy': 'retainKeys' },
      sidecarSets: { type: 'object', additionalProperties: { $ref: 'Container' } },
      extra: { type: 'object', 'x-orch-preserve-unknown-fields': true },
    },
  },
  ObjectMeta: {
    type: 'object',
    properties: {
      name: { type: 'string' },
      labels: { type: 'object', additionalProperties: { type: 'string' } },
      finalizers: { type: 'array', items: { type: 'string' }, 'x-orch-patch-strategy': 'merge' },
    },
  },
};

const pod: Schema = {
  type: 'object',
  properties: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { $ref: 'ObjectMeta' },
    spec: { $ref: 'PodSpec' },
  },
};

const smp = (orig: JSONValue, patch: JSONValue) => applyStrategicMergePatch(orig, patch, pod, defs);

function errorOf(f: () => unknown): PatchError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(PatchError);
    return e as PatchError;
  }
  throw new Error('expected a PatchError');
}

const base: JSONObject = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', labels: { app: 'web', tier: 'fe' }, finalizers: ['a', 'b'] },
  spec: {
    containers: [
      {
        name: 'web',
        image: 'nginx:1',
        args: ['-v'],
        ports: [{ containerPort: 80 }, { containerPort: 443, name: 'https' }],
        env: [
          { name: 'A', value: '1' },
          { name: 'B', value: '2' },
        ],
      },
      { name: 'log', image: 'busybox' },
    ],
    volumes: [{ name: 'data', emptyDir: {} }],
    tolerations: [{ key: 'x' }, { key: 'y' }],
    nodeSelector: { disk: 'ssd', zone: 'a' },
    selector: { app: 'web', tier: 'fe' },
    strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '1' } },
  },
};

type Spec = { containers: JSONObject[]; [k: string]: JSONValue };
const specOf = (v: JSONValue) => (v as { spec: Spec }).spec;
const metaOf = (v: JSONValue) => (v as { metadata: JSONObject }).metadata;

describe('strategic merge: lists merged by key', () => {
  it('merges containers by name: updates in place, puts new ones before the server-only ones after them (kube)', () => {
    const out = smp(base, { spec: { containers: [{ name: 'web', image: 'nginx:2' }, { name: 'sidecar', image: 'envoy' }] } });
    const cs = specOf(out).containers;
    expect(cs.map((c) => c.name)).toEqual(['web', 'sidecar', 'log']);
    expect(cs[0]!.image).toBe('nginx:2');
    expect(cs[0]!.args).toEqual(['-v']); // untouched fields of the merged element stay
    expect(cs[1]).toEqual({ name: 'sidecar', image: 'envoy' });
    expect(cs[2]).toEqual({ name: 'log', image: 'busybox' });
    // a patch naming only a new container makes it the first, as kube's ReplicaSet and
    // StatefulSet e2e tests expect of their patched templates (containers[0] is the new image)
    expect(specOf(smp(base, { spec: { containers: [{ name: 'new', image: 'pause' }] } })).containers.map((c) => c.name)).toEqual(['new', 'web', 'log']);
  });

  it('orders patched elements by the patch, server-only ones go before one only if they were before it on the server', () => {
    // Kubernetes' order (mergeSortedSlice): the patch's relative order wins for the elements it names
    const out = smp(base, { spec: { containers: [{ name: 'sidecar', image: 'envoy' }, { name: 'web', image: 'nginx:2' }] } });
    expect(specOf(out).containers.map((c) => c.name)).toEqual(['sidecar', 'web', 'log']);
    expect(specOf(smp(base, { spec: { containers: [{ name: 'log', image: 'b2' }] } })).containers.map((c) => c.name)).toEqual(['web', 'log']);
  });

  it('merges nested lists: ports by containerPort, env by name', () => {
    const out = smp(base, {
      spec: {
        containers: [
          {
            name: 'web',
            ports: [{ containerPort: 443, name: 'tls' }, { containerPort: 8080 }],
            env: [{ name: 'B', value: '20' }],
          },
        ],
      },
    });
    const web = specOf(out).containers[0]!;
    expect(web.ports).toEqual([{ containerPort: 80 }, { containerPort: 443, name: 'tls' }, { containerPort: 8080 }]);
    expect(web.env).toEqual([
      { name: 'A', value: '1' },
      { name: 'B', value: '20' },
    ]);
  });

  it('follows additionalProperties into map values', () => {
    const orig = { spec: { sidecarSets: { s1: { name: 'c', env: [{ name: 'X', value: '1' }] } } } };
    const out = smp(orig, { spec: { sidecarSets: { s1: { env: [{ name: 'Y', value: '2' }] } } } });
    expect((out as { spec: { sidecarSets: { s1: { env: JSONValue } } } }).spec.sidecarSets.s1.env).toEqual([
      { name: 'Y', value: '2' },
      { name: 'X', value: '1' },
    ]);
  });

  it('creates a merged list that did not exist, stripping directives', () => {
    const out = smp({ spec: {} }, { spec: { containers: [{ name: 'a', image: 'x', bogus: null }, { $patch: 'delete', name: 'zz' }] } });
    expect(specOf(out).containers).toEqual([{ name: 'a', image: 'x' }]);
  });

  it('errors on elements without the merge key and on unmergeable lists', () => {
    expect(errorOf(() => smp(base, { spec: { containers: [{ image: 'x' }] } })).message).toContain('merge key "name"');
    expect(errorOf(() => smp(base, { spec: { containers: [['x']] } })).reason).toBe('Invalid');
    expect(errorOf(() => smp(base, { metadata: { finalizers: [{ x: 1 }] } })).message).toContain('mixing');
  });
});

describe('strategic merge: primitive lists, atomic lists, maps', () => {
  it('unions a merged primitive list (no merge key)', () => {
    const out = smp(base, { metadata: { finalizers: ['c', 'a'] } });
    // Kubernetes order: patch values in patch order, a server-only value before one only if it was before it there
    expect(metaOf(out).finalizers).toEqual(['c', 'a', 'b']);
    expect(metaOf(smp(base, { metadata: { finalizers: ['c'] } })).finalizers).toEqual(['c', 'a', 'b']);
    expect(metaOf(smp(base, { metadata: { finalizers: ['b'] } })).finalizers).toEqual(['a', 'b']);
  });

  it('replaces lists without a strategy', () => {
    const out = smp(base, { spec: { tolerations: [{ key: 'z' }], containers: [{ name: 'web', args: ['-q'] }] } });
    expect(specOf(out).tolerations).toEqual([{ key: 'z' }]);
    expect(specOf(out).containers[0]!.args).toEqual(['-q']);
  });

  it('merges maps recursively and deletes keys set to null', () => {
    const out = smp(base, { metadata: { labels: { tier: null, env: 'prod' } }, spec: { nodeSelector: { zone: 'b' } } });
    expect(metaOf(out).labels).toEqual({ app: 'web', env: 'prod' });
    expect(specOf(out).nodeSelector).toEqual({ disk: 'ssd', zone: 'b' });
    const gone = smp(base, { spec: { nodeSelector: null } });
    expect('nodeSelector' in specOf(gone)).toBe(false);
  });

  it('replaces maps whose field has the replace strategy', () => {
    const out = smp(base, { spec: { selector: { app: 'api' } } });
    expect(specOf(out).selector).toEqual({ app: 'api' });
  });

  it('treats fields outside the schema with merge-patch semantics', () => {
    const orig = { spec: { extra: { m: { a: 1, b: 2 }, l: [1, 2] } }, unknownTop: { x: [{ name: 'a' }] } };
    const out = smp(orig, { spec: { extra: { m: { b: null, c: 3 }, l: [3] } }, unknownTop: { x: [{ name: 'b' }] } });
    expect(out).toEqual({ spec: { extra: { m: { a: 1, c: 3 }, l: [3] } }, unknownTop: { x: [{ name: 'b' }] } });
  });

  it('replaces values whose type changes', () => {
    const out = smp({ spec: { extra: { v: [1] } } }, { spec: { extra: { v: { a: 1, b: null } } } });
    expect(out).toEqual({ spec: { extra: { v: { a: 1 } } } });
  });

  it('never modifies its inputs', () => {
    const orig = JSON.parse(JSON.stringify(base)) as JSONObject;
    const patch: JSONObject = {
      metadata: { labels: { app: null } },
      spec: { containers: [{ name: 'web', ports: [{ containerPort: 80, $patch: 'delete' }] }, { name: 'n', image: 'i' }] },
    };
    const snap = JSON.stringify([orig, patch]);
    const out = smp(orig, patch);
    expect(JSON.stringify([orig, patch])).toBe(snap);
    (specOf(out).containers[2] as JSONObject).image = 'changed';
    expect(JSON.stringify(patch)).toBe(snap.slice(snap.indexOf(',{"metadata"') + 1, -1));
  });
});

describe('strategic merge: $patch directives', () => {
  it('$patch: replace on a map replaces the whole map', () => {
    const out = smp(base, { spec: { nodeSelector: { $patch: 'replace', only: 'this' } } });
    expect(specOf(out).nodeSelector).toEqual({ only: 'this' });
  });

  it('$patch: replace as a list element replaces the whole list', () => {
    const out = smp(base, { spec: { containers: [{ name: 'solo', image: 'x' }, { $patch: 'replace' }] } });
    expect(specOf(out).containers).toEqual([{ name: 'solo', image: 'x' }]);
    const fin = smp(base, { metadata: { finalizers: ['z', { $patch: 'replace' }] } });
    expect(metaOf(fin).finalizers).toEqual(['z']);
  });

  it('$patch: delete in a list deletes the element with that merge key', () => {
    const out = smp(base, { spec: { containers: [{ name: 'log', $patch: 'delete' }] } });
    expect(specOf(out).containers.map((c) => c.name)).toEqual(['web']);
    const ports = smp(base, { spec: { containers: [{ name: 'web', ports: [{ containerPort: 80, $patch: 'delete' }] }] } });
    expect(specOf(ports).containers[0]!.ports).toEqual([{ containerPort: 443, name: 'https' }]);
  });

  it('$patch: delete on a map deletes the field; at the top level it empties the object', () => {
    const out = smp(base, { spec: { strategy: { $patch: 'delete' } } });
    expect('strategy' in specOf(out)).toBe(false);
    expect(smp(base, { $patch: 'delete' })).toEqual({});
  });

  it('$patch: merge is the explicit default', () => {
    const out = smp(base, { spec: { nodeSelector: { $patch: 'merge', zone: 'c' } } });
    expect(specOf(out).nodeSelector).toEqual({ disk: 'ssd', zone: 'c' });
    const list = smp(base, { spec: { containers: [{ $patch: 'merge', name: 'log', image: 'bb:2' }] } });
    expect(specOf(list).containers[1]).toEqual({ name: 'log', image: 'bb:2' });
  });

  it('rejects unknown $patch values and malformed deletes', () => {
    expect(errorOf(() => smp(base, { spec: { nodeSelector: { $patch: 'frob' } } })).message).toContain('frob');
    expect(errorOf(() => smp(base, { spec: { containers: [{ name: 'web', $patch: 'frob' }] } })).message).toContain('frob');
    expect(errorOf(() => smp(base, { spec: { containers: [{ $patch: 'delete' }] } })).message).toContain('merge key');
    expect(errorOf(() => smp(base, { metadata: { finalizers: [{ $patch: 'delete' }] } })).message).toContain('merge key');
    expect(errorOf(() => smp(base, ['not', 'an', 'object'])).reason).toBe('Invalid');
  });
});

describe('strategic merge: parallel-list directives', () => {
  it('$deleteFromPrimitiveList removes values from a primitive list', () => {
    const out = smp(base, { metadata: { '$deleteFromPrimitiveList/finalizers': ['a', 'nope'] } });
    expect(metaOf(out).finalizers).toEqual(['b']);
    // combined with additions
    const both = smp(base, { metadata: { finalizers: ['c'], '$deleteFromPrimitiveList/finalizers': ['b'] } });
    expect(metaOf(both).finalizers).toEqual(['c', 'a']);
    // absent list: nothing to delete, and the directive never lands in the object
    expect(smp({ metadata: {} }, { metadata: { '$deleteFromPrimitiveList/finalizers': ['a'] } })).toEqual({ metadata: {} });
  });

  it('$setElementOrder orders a merged list of maps', () => {
    const out = smp(base, {
      spec: {
        '$setElementOrder/containers': [{ name: 'new' }, { name: 'log' }, { name: 'web' }],
        containers: [{ name: 'new', image: 'n' }],
      },
    });
    expect(specOf(out).containers.map((c) => c.name)).toEqual(['new', 'log', 'web']);
    expect(specOf(out).containers[2]!.image).toBe('nginx:1');
  });

  it('$setElementOrder reorders without content changes, and orders primitives', () => {
    const out = smp(base, {
      metadata: { '$setElementOrder/finalizers': ['b', 'a'] },
      spec: { '$setElementOrder/containers': [{ name: 'log' }, { name: 'web' }] },
    });
    expect(metaOf(out).finalizers).toEqual(['b', 'a']);
    expect(specOf(out).containers.map((c) => c.name)).toEqual(['log', 'web']);
    expect(Object.keys(specOf(out)).some((k) => k.startsWith('$'))).toBe(false);
  });

  it('$setElementOrder must agree with the patched list', () => {
    const e = errorOf(() =>
      smp(base, { spec: { '$setElementOrder/containers': [{ name: 'web' }], containers: [{ name: 'other', image: 'x' }] } }),
    );
    expect(e.message).toContain('$setElementOrder');
    expect(errorOf(() => smp(base, { spec: { '$setElementOrder/containers': 'web' } })).reason).toBe('Invalid');
  });
});

describe('strategic merge: $retainKeys', () => {
  it('clears keys not listed (retainKeys strategy on a map)', () => {
    const out = smp(base, { spec: { strategy: { $retainKeys: ['type'], type: 'Recreate' } } });
    expect(specOf(out).strategy).toEqual({ type: 'Recreate' });
  });

  it('works per element of a merge,retainKeys list', () => {
    const out = smp(base, { spec: { volumes: [{ name: 'data', hostPath: { path: '/d' }, $retainKeys: ['hostPath', 'name'] }] } });
    expect(specOf(out).volumes).toEqual([{ name: 'data', hostPath: { path: '/d' } }]);
  });

  it('rejects a patch that sets keys it does not retain, or a malformed list', () => {
    expect(errorOf(() => smp(base, { spec: { strategy: { $retainKeys: ['type'], rollingUpdate: {} } } })).message).toContain(
      'rollingUpdate',
    );
    expect(errorOf(() => smp(base, { spec: { strategy: { $retainKeys: 'type' } } })).reason).toBe('Invalid');
  });
});

describe('createStrategicMergePatch', () => {
  const roundTrip = (a: JSONObject, b: JSONObject) => {
    const p = createStrategicMergePatch(a, b, pod, defs);
    expect(smp(a, p)).toEqual(b);
    return p;
  };
  const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

  it('is empty for equal objects', () => {
    expect(createStrategicMergePatch(base, clone(base), pod, defs)).toEqual({});
  });

  it('emits element patches with the merge key, deletes and the element order', () => {
    const b = clone(base);
    const spec = specOf(b);
    spec.containers = [{ ...spec.containers[0]!, image: 'nginx:2' }, { name: 'new', image: 'n' }];
    const p = roundTrip(base, b);
    expect(p).toEqual({
      spec: {
        containers: [{ name: 'web', image: 'nginx:2' }, { name: 'new', image: 'n' }, { name: 'log', $patch: 'delete' }],
        '$setElementOrder/containers': [{ name: 'web' }, { name: 'new' }],
      },
    });
  });

  it('emits $deleteFromPrimitiveList and $setElementOrder for primitive merge lists', () => {
    const b = clone(base);
    metaOf(b).finalizers = ['c', 'b'];
    const p = roundTrip(base, b);
    expect(p).toEqual({
      metadata: { finalizers: ['c'], '$deleteFromPrimitiveList/finalizers': ['a'], '$setElementOrder/finalizers': ['c', 'b'] },
    });
  });

  it('emits $retainKeys for retainKeys fields and list elements', () => {
    const b = clone(base);
    specOf(b).strategy = { type: 'Recreate' };
    specOf(b).volumes = [{ name: 'data', hostPath: { path: '/d' } }];
    const p = roundTrip(base, b);
    expect((p.spec as JSONObject).strategy).toEqual({ $retainKeys: ['type'], type: 'Recreate', rollingUpdate: null });
    expect((p.spec as JSONObject).volumes).toEqual([
      { name: 'data', hostPath: { path: '/d' }, emptyDir: null, $retainKeys: ['hostPath', 'name'] },
    ]);
  });

  it('round-trips removals, reorders, replaced lists and unknown fields', () => {
    const b = clone(base);
    delete metaOf(b).labels;
    const spec = specOf(b);
    spec.containers = [spec.containers[1]!, { ...spec.containers[0]!, ports: [{ containerPort: 443, name: 'https' }], env: [] }];
    spec.tolerations = [{ key: 'y' }];
    spec.extra = { free: [{ form: 1 }] };
    delete spec.selector;
    roundTrip(base, b);
    roundTrip(b, base);
  });
});

describe('applyPatch dispatch', () => {
  const obj = { metadata: { name: 'p', finalizers: ['a'] }, spec: { containers: [{ name: 'c', image: 'i' }] } };

  it('dispatches by Content-Type (parameters ignored), with string or byte bodies', () => {
    const body = JSON.stringify({ spec: { containers: [{ name: 'd', image: 'j' }] } });
    expect(specOf(applyPatch('application/strategic-merge-patch+json', obj, body, pod, defs)).containers).toHaveLength(2);
    expect(specOf(applyPatch('application/merge-patch+json; charset=utf-8', obj, body)).containers).toHaveLength(1);
    const jp = new TextEncoder().encode(JSON.stringify([{ op: 'replace', path: '/metadata/name', value: 'q' }]));
    expect(metaOf(applyPatch('application/json-patch+json', obj, jp)).name).toBe('q');
  });

  it('refuses strategic merge without a schema and unknown types with UnsupportedPatchType', () => {
    expect(() => applyPatch('application/strategic-merge-patch+json', obj, '{}')).toThrow(UnsupportedPatchType);
    expect(() => applyPatch('application/apply-patch+yaml', obj, '{}')).toThrow(UnsupportedPatchType);
    expect(() => applyPatch('text/plain', obj, '{}')).toThrow(UnsupportedPatchType);
  });

  it('reports undecodable bodies as Malformed and test failures as TestFailed', () => {
    const reason = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return (e as PatchError).reason;
      }
      return 'no error';
    };
    expect(reason(() => applyPatch('application/merge-patch+json', obj, '{not json'))).toBe('Malformed');
    expect(reason(() => applyPatch('application/json-patch+json', obj, ''))).toBe('Malformed');
    expect(reason(() => applyPatch('application/json-patch+json', obj, new Uint8Array([0xff, 0xfe])))).toBe('Malformed');
    expect(reason(() => applyPatch('application/json-patch+json', obj, '{"op":"add"}'))).toBe('Invalid');
    expect(
      reason(() => applyPatch('application/json-patch+json', obj, '[{"op":"test","path":"/metadata/name","value":"x"}]')),
    ).toBe('TestFailed');
  });
});
