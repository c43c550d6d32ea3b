// Validation and defaults of RuntimeClass, the CSI kinds and the flow-control
// kinds (kube 1.32's pkg/apis/{node,storage,flowcontrol}/validation): field
// paths and messages as kube prints them.

import { describe, expect, it } from 'vitest';
import { builtinDefinitions, builtinSchemaDefinitions } from '../../src/registry/kinds/index.js';
import { applyDefaults } from '../../src/machinery/schema/defaults.js';
import { prepareCreate } from '../../src/registry/create-metadata.js';
import { validateAgainstSchema } from '../../src/machinery/schema/validate.js';
import { validateObjectMeta } from '../../src/machinery/schema/object-meta.js';
import type { ApiObject, FieldError, JSONValue, ResourceDefinition } from '../../src/registry/types.js';
import { decodeProtobufObject, encodeProtobufObjectReport } from '../../src/machinery/protobuf/codec.js';
import { kindExamples } from '../fixtures/kind-examples.js';

const kinds = builtinDefinitions('k8s.io');
const defs = builtinSchemaDefinitions('k8s.io');
const kind = (k: string): ResourceDefinition => kinds.find((d) => d.kind === k)!;

/** the store's create pipeline: its preparation (defaults, status reset, the kind's own), schema defaults, validation */
function create(k: string, o: ApiObject): { obj: ApiObject; errors: FieldError[] } {
  const def = kind(k);
  const obj = structuredClone(o);
  prepareCreate(def, obj, Date.now());
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
    expect(out).toContain('scheduling.tolerations[0].operator: Invalid value: core.Toleration{Key:"", Operator:"Exists", Value:"x", Effect:"", TolerationSeconds:(*int64)(nil)}: value must be empty when `operator` is \'Exists\'');
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
    expect(out.filter((e) => e.startsWith('spec.fsGroupPolicy'))).toHaveLength(1);
    expect(out).toContain('spec.tokenRequests[0].expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes');
    expect(out).toContain('spec.tokenRequests[1].audience: Duplicate value: "a"');
  });
  it('attachRequired and volumeLifecycleModes are immutable; podInfoOnMount and storageCapacity are not', () => {
    const old = create('CSIDriver', drv({})).obj;
    const spec = old.spec as Record<string, JSONValue>;
    expect(brief(update('CSIDriver', { ...old, spec: { ...spec, attachRequired: false, volumeLifecycleModes: ['Ephemeral'] } }, old))).toEqual([
      'spec.attachedRequired: Invalid value: false: field is immutable',
      'spec.volumeLifecycleModes: Invalid value: []storage.VolumeLifecycleMode{"Ephemeral"}: field is immutable',
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
    expect(brief(update('CSINode', node([{ name: 'a.example.com', nodeID: 'n2' }]), old))).toEqual(['CSINodeDriver: Invalid value: {"name":"a.example.com","nodeID":"n2"}: field is immutable']);
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

describe('PriorityLevelConfiguration', () => {
  const plc = (name: string, spec: JSONValue): ApiObject => ({ apiVersion: 'flowcontrol.apiserver.k8s.io/v1', kind: 'PriorityLevelConfiguration', metadata: { name }, spec });
  const limited = (l: Record<string, JSONValue>) => plc('batch', { type: 'Limited', limited: { limitResponse: { type: 'Reject' }, ...l } });
  it('nominalConcurrencyShares defaults to 30 only when unspecified; an explicit 0 stays 0', () => {
    const a = create('PriorityLevelConfiguration', limited({}));
    expect(a.errors).toEqual([]);
    expect(a.obj.spec).toEqual({ type: 'Limited', limited: { nominalConcurrencyShares: 30, lendablePercent: 0, limitResponse: { type: 'Reject' } } });
    const z = create('PriorityLevelConfiguration', limited({ nominalConcurrencyShares: 0 }));
    expect(z.errors).toEqual([]);
    expect(get(z.obj, 'nominalConcurrencyShares')).toBe(0);
  });
  it('defaults queuing and exempt as kube', () => {
    const q = create('PriorityLevelConfiguration', limited({ limitResponse: { type: 'Queue', queuing: {} } })).obj;
    expect((q.spec as Record<string, JSONValue>).limited).toMatchObject({ limitResponse: { type: 'Queue', queuing: { queues: 64, handSize: 8, queueLengthLimit: 50 } } });
    const e = create('PriorityLevelConfiguration', plc('exempt', { type: 'Exempt', exempt: {} }));
    expect(e.errors).toEqual([]);
    expect(e.obj.spec).toEqual({ type: 'Exempt', exempt: { nominalConcurrencyShares: 0, lendablePercent: 0 } });
  });
  it('refuses what kube refuses, with its paths and messages', () => {
    expect(brief(create('PriorityLevelConfiguration', limited({ nominalConcurrencyShares: -1, lendablePercent: 101, borrowingLimitPercent: -2 })).errors)).toEqual([
      'spec.limited.nominalConcurrencyShares: Invalid value: -1: must be a non-negative integer',
      'spec.limited.lendablePercent: Invalid value: 101: must be between 0 and 100, inclusive',
      'spec.limited.borrowingLimitPercent: Invalid value: -2: if specified, must be a non-negative integer',
    ]);
    expect(brief(create('PriorityLevelConfiguration', limited({ limitResponse: { type: 'Queue', queuing: { queues: 4, handSize: 5 } } })).errors)).toEqual([
      'spec.limited.limitResponse.queuing.handSize: Invalid value: 5: handSize 5 is greater than deckSize 4',
    ]);
    expect(brief(create('PriorityLevelConfiguration', limited({ limitResponse: { type: 'Queue' } })).errors)).toEqual([
      'spec.limited.limitResponse.queuing: Required value: must not be empty if limited.limitResponse.type is Limited',
    ]);
    expect(brief(create('PriorityLevelConfiguration', plc('batch', { type: 'Exempt' })).errors)).toEqual([
      'spec.type: Invalid value: "Exempt": type must be \'Exempt\' if and only if name is \'exempt\'',
    ]);
    expect(brief(create('PriorityLevelConfiguration', plc('batch', { type: 'Limited' })).errors)).toEqual(['spec.limited: Required value: must not be empty when type is Limited']);
    expect(brief(create('PriorityLevelConfiguration', plc('catch-all', { type: 'Limited', limited: { nominalConcurrencyShares: 50, limitResponse: { type: 'Reject' } } })).errors))
      .toEqual([expect.stringMatching(/^spec: Invalid value: .*: spec of 'catch-all' must equal the fixed value$/)]);
    expect(create('PriorityLevelConfiguration', plc('catch-all', { type: 'Limited', limited: { nominalConcurrencyShares: 5, limitResponse: { type: 'Reject' } } })).errors).toEqual([]);
  });
});

describe('FlowSchema', () => {
  const fs = (name: string, spec: Record<string, JSONValue>): ApiObject => ({
    apiVersion: 'flowcontrol.apiserver.k8s.io/v1', kind: 'FlowSchema', metadata: { name }, spec: { priorityLevelConfiguration: { name: 'batch' }, ...spec },
  });
  const rule = (r: Record<string, JSONValue>): JSONValue => ({ subjects: [{ kind: 'User', user: { name: 'alice' } }], ...r });
  it('defaults matchingPrecedence to 1000 and accepts kube-style rules', () => {
    const { obj, errors } = create('FlowSchema', fs('batch', {
      distinguisherMethod: { type: 'ByUser' },
      rules: [rule({ resourceRules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'], namespaces: ['default'] }], nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/healthz/*'] }] })],
    }));
    expect(errors).toEqual([]);
    expect(get(obj, 'matchingPrecedence')).toBe(1000);
  });
  it('refuses what kube refuses, with its paths and messages', () => {
    const out = brief(create('FlowSchema', fs('batch', {
      matchingPrecedence: 1, priorityLevelConfiguration: { name: '' },
      rules: [
        { subjects: [{ kind: 'ServiceAccount', serviceAccount: { name: 'x' }, user: { name: 'u' } }], resourceRules: [{ verbs: ['*', 'get'], apiGroups: [], resources: ['pods'] }] },
        rule({ nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['healthz', '/a/*/b'] }] }),
        rule({}),
      ],
    })).errors);
    expect(out).toEqual([
      'spec.matchingPrecedence: Invalid value: 1: only the schema named \'exempt\' may have matching precedence 1',
      'spec.priorityLevelConfiguration.name: Required value: must reference a priority level',
      'spec.rules[0].subjects[0].serviceAccount.namespace: Required value: must specify namespace for service account',
      'spec.rules[0].subjects[0].user: Forbidden: user is forbidden when subject kind is not \'User\'',
      'spec.rules[0].resourceRules[0].verbs: Invalid value: ["*","get"]: if \'*\' is present, must not specify other verbs',
      'spec.rules[0].resourceRules[0].apiGroups: Required value: resource rules must supply at least one api group',
      'spec.rules[0].resourceRules[0].namespaces: Required value: resource rules that are not cluster scoped must supply at least one namespace',
      'spec.rules[1].nonResourceRules[0].nonResourceURLs[0]: Invalid value: "healthz": must start with slash',
      'spec.rules[1].nonResourceRules[0].nonResourceURLs[1]: Invalid value: "/a/*/b": wildcard can only do suffix glob matching',
      'spec.rules[2]: Required value: at least one of resourceRules and nonResourceRules has to be non-empty',
    ]);
    expect(brief(create('FlowSchema', fs('batch', { matchingPrecedence: 10001 })).errors)).toEqual(['spec.matchingPrecedence: Invalid value: 10001: must not be greater than 10000']);
  });
});

/** the first value of `key` anywhere in `o` */
function get(o: unknown, key: string): unknown {
  if (o === null || typeof o !== 'object') return undefined;
  const r = o as Record<string, unknown>;
  if (key in r) return r[key];
  for (const v of Object.values(r)) {
    const f = get(v, key);
    if (f !== undefined) return f;
  }
  return undefined;
}

describe('protobuf (field numbers of Kubernetes 1.32 generated.proto)', () => {
  const pdefs = builtinSchemaDefinitions();
  const pkinds = builtinDefinitions();
  const groups = ['node.orch.io', 'storage.orch.io', 'flowcontrol.apiserver.orch.io'];
  const mine = kindExamples.filter(([g, k]) => groups.includes(g) && k !== 'StorageClass');
  it.each(mine)('%s %s round-trips with nothing skipped', (g, k, example) => {
    const def = pkinds.find((d) => d.group === g && d.kind === k)!;
    const { bytes, skipped } = encodeProtobufObjectReport(example, def, pdefs);
    expect(skipped).toEqual([]);
    // apiVersion and kind travel in the envelope, not the message
    const { apiVersion: _v, kind: _k, ...body } = example;
    expect(decodeProtobufObject(bytes, def, pdefs)).toEqual(body);
  });
  it('RuntimeClass.handler is field 2; an explicit nominalConcurrencyShares 0 survives', () => {
    const rc = pkinds.find((d) => d.kind === 'RuntimeClass')!;
    const bytes = encodeProtobufObjectReport({ handler: 'runsc' }, rc, pdefs).bytes;
    expect(Buffer.from(bytes).toString('hex')).toBe(`1205${Buffer.from('runsc').toString('hex')}`);
    const plc = pkinds.find((d) => d.kind === 'PriorityLevelConfiguration')!;
    const jail = { spec: { type: 'Limited', limited: { nominalConcurrencyShares: 0, limitResponse: { type: 'Reject' } } } };
    expect(decodeProtobufObject(encodeProtobufObjectReport(jail, plc, pdefs).bytes, plc, pdefs)).toEqual(jail);
  });
});
