// Validation and defaults of RuntimeClass, the CSI kinds and the flow-control
// kinds (kube 1.32's pkg/apis/{node,storage,flowcontrol}/validation): field
// paths and messages as kube prints them.

import { describe, expect, it } from 'vitest';
import { builtinDefinitions, builtinSchemaDefinitions } from '../../src/registry/kinds/index.js';
import { applyDefaults } from '../../src/machinery/schema/defaults.js';
import { validateAgainstSchema } from '../../src/machinery/schema/validate.js';
import { validateObjectMeta } from '../../src/machinery/schema/object-meta.js';
import type { ApiObject, FieldError, JSONValue, ResourceDefinition } from '../../src/registry/types.js';

const kinds = builtinDefinitions('k8s.io');
const defs = builtinSchemaDefinitions('k8s.io');
const kind = (k: string): ResourceDefinition => kinds.find((d) => d.kind === k)!;

/** the store's create pipeline: strategy default, prepare, schema defaults, validation */
function create(k: string, o: ApiObject): { obj: ApiObject; errors: FieldError[] } {
  const def = kind(k);
  const obj = structuredClone(o);
  def.strategy.default?.(obj);
  def.strategy.prepareForCreate?.(obj);
  applyDefaults(obj, def.schema, defs);
  const errors = [
    ...validateAgainstSchema(obj, def.schema, defs).errors,
    ...validateObjectMeta(obj.metadata, { namespaced: def.scope === 'Namespaced', nameValidation: def.nameValidation }),
    ...(def.strategy.validate?.(obj) ?? []),
  ];
  return { obj, errors };
}

function update(k: string, next: ApiObject, old: ApiObject): FieldError[] {
  const def = kind(k);
  const obj = structuredClone(next);
  def.strategy.default?.(obj);
  return def.strategy.validateUpdate?.(obj, old) ?? [];
}

const brief = (errs: FieldError[]) => errs.map((e) => `${e.field}: ${e.message}`);

describe('RuntimeClass', () => {
  const rc = (extra: Record<string, JSONValue>): ApiObject => ({ apiVersion: 'node.k8s.io/v1', kind: 'RuntimeClass', metadata: { name: 'r' }, handler: 'runc', ...extra });
  it('accepts a full object', () => {
    expect(create('RuntimeClass', rc({ overhead: { podFixed: { cpu: '1' } }, scheduling: { nodeSelector: { a: 'b' }, tolerations: [{ key: 'k', operator: 'Equal', value: 'v', effect: 'NoExecute', tolerationSeconds: 5 }] } })).errors).toEqual([]);
  });
  it('refuses a handler that is not a DNS label, negative overhead and bad tolerations', () => {
    const { errors } = create('RuntimeClass', rc({
      handler: 'a.b', overhead: { podFixed: { memory: '-1Mi' } },
      scheduling: { tolerations: [{ operator: 'Exists', value: 'x' }, { key: 'k', operator: 'Less' }, { key: 'k', operator: 'Exists', tolerationSeconds: 3 }] },
    }));
    const out = brief(errors);
    expect(out).toContainEqual(expect.stringMatching(/^handler: Invalid value: "a\.b": a lowercase RFC 1123 label must consist of/));
    expect(out).toContain('overhead.limits[memory]: Invalid value: "-1Mi": must be greater than or equal to 0');
    expect(out).toContain('scheduling.tolerations[0].operator: Invalid value: {"operator":"Exists","value":"x"}: value must be empty when `operator` is \'Exists\'');
    expect(out).toContain('scheduling.tolerations[1].operator: Unsupported value: "Less": supported values: "Equal", "Exists"');
    expect(out).toContain('scheduling.tolerations[2].effect: Invalid value: "": effect must be \'NoExecute\' when `tolerationSeconds` is set');
  });
  it('handler is immutable, the rest is not', () => {
    const old = create('RuntimeClass', rc({})).obj;
    expect(brief(update('RuntimeClass', { ...old, handler: 'kata' }, old))).toEqual(['handler: Invalid value: "kata": field is immutable']);
    expect(update('RuntimeClass', { ...old, overhead: { podFixed: { cpu: '2' } } }, old)).toEqual([]);
  });
});

describe('CSIDriver', () => {
  const drv = (spec: Record<string, JSONValue>): ApiObject => ({ apiVersion: 'storage.k8s.io/v1', kind: 'CSIDriver', metadata: { name: 'csi.example.com' }, spec });
  it('defaults as kube 1.32', () => {
    const { obj, errors } = create('CSIDriver', drv({}));
    expect(errors).toEqual([]);
    expect(obj.spec).toEqual({
      attachRequired: true, podInfoOnMount: false, storageCapacity: false, fsGroupPolicy: 'ReadWriteOnceWithFSType',
      volumeLifecycleModes: ['Persistent'], requiresRepublish: false, seLinuxMount: false,
    });
    // explicit values stay
    expect(create('CSIDriver', drv({ attachRequired: false, volumeLifecycleModes: ['Ephemeral'] })).obj.spec).toMatchObject({ attachRequired: false, volumeLifecycleModes: ['Ephemeral'] });
  });
  it('refuses unknown modes and policies, duplicate audiences and short tokens', () => {
    const out = brief(create('CSIDriver', drv({
      volumeLifecycleModes: ['Persistent', 'Forever'], fsGroupPolicy: 'Always',
      tokenRequests: [{ audience: 'a', expirationSeconds: 60 }, { audience: 'a' }],
    })).errors);
    expect(out).toContain('spec.volumeLifecycleModes: Unsupported value: "Forever": supported values: "Ephemeral", "Persistent"');
    expect(out).toContain('spec.fsGroupPolicy: Unsupported value: "Always": supported values: "File", "None", "ReadWriteOnceWithFSType"');
    expect(out).toContain('spec.tokenRequests[0].expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes');
    expect(out).toContain('spec.tokenRequests[1].audience: Duplicate value: "a"');
  });
  it('attachRequired and volumeLifecycleModes are immutable; podInfoOnMount and storageCapacity are not', () => {
    const old = create('CSIDriver', drv({})).obj;
    const spec = old.spec as Record<string, JSONValue>;
    expect(brief(update('CSIDriver', { ...old, spec: { ...spec, attachRequired: false, volumeLifecycleModes: ['Ephemeral'] } }, old))).toEqual([
      'spec.attachRequired: Invalid value: false: field is immutable',
      'spec.volumeLifecycleModes: Invalid value: ["Ephemeral"]: field is immutable',
    ]);
    expect(update('CSIDriver', { ...old, spec: { ...spec, podInfoOnMount: true, storageCapacity: true, fsGroupPolicy: 'File' } }, old)).toEqual([]);
  });
});

describe('CSINode', () => {
  const node = (drivers: JSONValue[]): ApiObject => ({ apiVersion: 'storage.k8s.io/v1', kind: 'CSINode', metadata: { name: 'node-a' }, spec: { drivers } });
  it('refuses duplicate drivers, a missing node ID, bad topology keys and a negative count', () => {
    const out = brief(create('CSINode', node([
      { name: 'csi.example.com', nodeID: 'n1', topologyKeys: ['zone', 'zone'] },
      { name: 'csi.example.com', nodeID: '', allocatable: { count: -1 } },
    ])).errors);
    expect(out).toContain('spec.drivers[0]: Duplicate value: "zone"');
    expect(out).toContain('spec.drivers[1].nodeID: Required value');
    expect(out).toContain('spec.drivers[1].allocatable.count: Invalid value: -1: must be greater than or equal to 0');
    expect(out).toContain('spec.drivers[1].name: Duplicate value: "csi.example.com"');
  });
  it('an existing driver entry is immutable; drivers may be added', () => {
    const old = create('CSINode', node([{ name: 'a.example.com', nodeID: 'n1' }])).obj;
    expect(update('CSINode', node([{ name: 'a.example.com', nodeID: 'n1' }, { name: 'b.example.com', nodeID: 'n1' }]), old)).toEqual([]);
    expect(brief(update('CSINode', node([{ name: 'a.example.com', nodeID: 'n2' }]), old))).toEqual(['spec.drivers[0]: Invalid value: {"name":"a.example.com","nodeID":"n2"}: field is immutable']);
  });
});

describe('VolumeAttachment', () => {
  const va = (spec: Record<string, JSONValue>, status?: JSONValue): ApiObject => ({
    apiVersion: 'storage.k8s.io/v1', kind: 'VolumeAttachment', metadata: { name: 'va' }, spec: { attacher: 'csi.example.com', nodeName: 'node-a', ...spec }, ...(status ? { status } : {}),
  });
  it('needs exactly one source; a create carries no status', () => {
    const ok = create('VolumeAttachment', va({ source: { persistentVolumeName: 'pv-1' } }, { attached: true }));
    expect(ok.errors).toEqual([]);
    expect(ok.obj.status).toBeUndefined();
    expect(brief(create('VolumeAttachment', va({ source: {} })).errors)).toContain('spec.source: Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName');
    expect(brief(create('VolumeAttachment', va({ source: { persistentVolumeName: 'pv', inlineVolumeSpec: {} } })).errors))
      .toContain('spec.source: Forbidden: must specify exactly one of inlineVolumeSpec and persistentVolumeName');
    expect(brief(create('VolumeAttachment', va({ attacher: '', nodeName: 'Node_A', source: { persistentVolumeName: 'pv' } })).errors)).toEqual(expect.arrayContaining([
      'spec.attacher: Required value', expect.stringMatching(/^spec\.nodeName: Invalid value: "Node_A": a lowercase RFC 1123 subdomain/),
    ]));
  });
  it('spec is immutable; status may change', () => {
    const old = create('VolumeAttachment', va({ source: { persistentVolumeName: 'pv-1' } })).obj;
    expect(brief(update('VolumeAttachment', va({ source: { persistentVolumeName: 'pv-2' } }), old))).toEqual([
      'spec: Invalid value: {"attacher":"csi.example.com","nodeName":"node-a","source":{"persistentVolumeName":"pv-2"}}: field is immutable',
    ]);
    expect(update('VolumeAttachment', { ...old, status: { attached: true, attachmentMetadata: { dev: '/dev/xvdb' } } }, old)).toEqual([]);
  });
});

describe('CSIStorageCapacity', () => {
  const cap = (extra: Record<string, JSONValue>): ApiObject => ({ apiVersion: 'storage.k8s.io/v1', kind: 'CSIStorageCapacity', metadata: { name: 'c', namespace: 'kube-system' }, storageClassName: 'fast', ...extra });
  it('refuses a negative capacity and a bad class name; is namespaced', () => {
    expect(create('CSIStorageCapacity', cap({ capacity: '10Gi', nodeTopology: { matchLabels: { zone: 'a' } } })).errors).toEqual([]);
    const out = brief(create('CSIStorageCapacity', cap({ capacity: '-1Gi', storageClassName: 'Fast!' })).errors);
    expect(out).toContain('capacity: Invalid value: "-1Gi": must be greater than or equal to 0');
    expect(out).toContainEqual(expect.stringMatching(/^storageClassName: Invalid value: "Fast!": a lowercase RFC 1123 subdomain/));
    expect(brief(create('CSIStorageCapacity', { ...cap({}), metadata: { name: 'c' } }).errors)).toContain('metadata.namespace: Required value');
  });
  it('storageClassName and nodeTopology are immutable; capacity is not', () => {
    const old = create('CSIStorageCapacity', cap({ capacity: '1Gi' })).obj;
    expect(update('CSIStorageCapacity', { ...old, capacity: '2Gi' }, old)).toEqual([]);
    expect(brief(update('CSIStorageCapacity', { ...old, storageClassName: 'slow', nodeTopology: {} }, old))).toEqual([
      'nodeTopology: Invalid value: {}: field is immutable', 'storageClassName: Invalid value: "slow": field is immutable',
    ]);
  });
});
