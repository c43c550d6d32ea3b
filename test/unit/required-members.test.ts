// kube 1.32's checks of members its OpenAPI marks required but orch's schema
// leaves optional (pod-scheduling-validation.ts, required-members.ts): kube
// decodes an absent one to its zero value and refuses it, so no stored object
// lacks it (a strict Java or Rust client refuses an object without a required
// member); where kube accepts the zero value, the zero shape writes it back.

import { describe, expect, it } from 'vitest';
import { builtinDefinitions, builtinSchemaDefinitions } from '../../src/registry/kinds/index.js';
import type { ApiObject, FieldError, JSONValue, ResourceDefinition } from '../../src/registry/types.js';
import { applyDefaults } from '../../src/machinery/schema/defaults.js';
import { fillZeroShape } from '../../src/registry/zero-shape.js';
import { validateAgainstSchema } from '../../src/machinery/schema/validate.js';
import { validateAllowedTopologies, validateDataSourceRef, validateIngressClassParameters, validateMetaConditions } from '../../src/registry/kinds/required-members.js';

const kinds = builtinDefinitions('k8s.io');
const defs = builtinSchemaDefinitions('k8s.io');
const def = (kind: string, version?: string): ResourceDefinition => kinds.find((d) => d.kind === kind && (!version || d.version === version))!;
const brief = (errs: FieldError[]): string[] => errs.map((e) => `${e.field}: ${e.message}`);

/** the store's pipeline without admission: zero shape, schema defaults, the strategy's defaults, validation */
function create(o: ApiObject, d = def(o.kind!)): string[] {
  const obj = structuredClone(o);
  fillZeroShape(obj, d.strategy.zeroShape);
  applyDefaults(obj, d.schema, defs);
  d.strategy.default?.(obj);
  return brief(d.strategy.validate?.(obj) ?? []);
}
const pod = (spec: Record<string, JSONValue>): ApiObject => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default' }, spec: { containers: [{ name: 'c', image: 'nginx' }], ...spec },
});

describe('pod scheduling constraints (ValidateAffinity, validateTopologySpreadConstraints)', () => {
  const na = 'spec.affinity.nodeAffinity';
  it('a required node selector needs a term, each requirement a key and an operator', () => {
    expect(create(pod({ affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: {} } } })))
      .toEqual([`${na}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: Required value: must have at least one node selector term`]);
    const errs = create(pod({ affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ values: ['a'] }] }] } } } }));
    expect(errs[0]).toBe(`${na}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator: Invalid value: "": not a valid selector operator`);
    expect(errs[1]).toBe(`${na}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key: Invalid value: "": name part must be non-empty`);
  });

  it('weights are 1-100; a preferred term without a preference is kube\'s empty NodeSelectorTerm', () => {
    expect(create(pod({ affinity: { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ preference: {} }] } } })))
      .toEqual([`${na}.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: 0: must be in the range 1-100`]);
    const o = pod({ affinity: { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 1 }] } } });
    expect(create(o)).toEqual([]);
    fillZeroShape(o, def('Pod').strategy.zeroShape);
    expect(o.spec).toMatchObject({ affinity: { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 1, preference: {} }] } } });
  });

  it('a pod affinity term needs a topologyKey, a weighted one a term', () => {
    const p = 'spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]';
    const errs = create(pod({ affinity: { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 200 }] } } }));
    expect(errs.slice(0, 3)).toEqual([
      `${p}.weight: Invalid value: 200: must be in the range 1-100`,
      `${p}.podAffinityTerm.topologyKey: Required value: can not be empty`,
      `${p}.podAffinityTerm.topologyKey: Invalid value: "": name part must be non-empty`,
    ]);
    expect(create(pod({ affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'zone', labelSelector: { matchLabels: { a: 'b' } } }] } } }))).toEqual([]);
  });

  it('a topology spread constraint needs maxSkew, topologyKey and whenUnsatisfiable, each pair once', () => {
    const p = 'spec.topologySpreadConstraints';
    expect(create(pod({ topologySpreadConstraints: [{}] }))).toEqual([
      `${p}[0].maxSkew: Invalid value: 0: must be greater than zero`,
      `${p}[0].topologyKey: Required value: can not be empty`,
      `${p}[0].whenUnsatisfiable: Unsupported value: "": supported values: "DoNotSchedule", "ScheduleAnyway"`,
    ]);
    const c = { maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'ScheduleAnyway' };
    expect(create(pod({ topologySpreadConstraints: [{ ...c, minDomains: 2 }, c] }))).toEqual([
      `${p}[0].{topologyKey, whenUnsatisfiable}: Duplicate value: "{zone, ScheduleAnyway}"`,
      `${p}[0].minDomains: Invalid value: 2: can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway`,
    ]);
  });
});

describe('containers and volumes', () => {
  it('a volume device names a claim volume and has a devicePath', () => {
    const volumes: JSONValue = [{ name: 'data', persistentVolumeClaim: { claimName: 'x' } }, { name: 'tmp', emptyDir: {} }];
    const c = (d: Record<string, JSONValue>): Record<string, JSONValue> => ({ containers: [{ name: 'c', image: 'nginx', volumeDevices: [d] }], volumes });
    expect(create(pod(c({ name: 'data' })))).toEqual(['spec.containers[0].volumeDevices[0].devicePath: Required value']);
    expect(create(pod(c({ name: 'tmp', devicePath: '/dev/x' })))).toEqual(['spec.containers[0].volumeDevices[0].name: Invalid value: "tmp": can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode']);
    expect(create(pod(c({ name: 'nope', devicePath: '/dev/x' })))).toEqual(['spec.containers[0].volumeDevices[0].name: Not found: "nope"']);
    expect(create(pod(c({ name: 'data', devicePath: '/dev/x' })))).toEqual([]);
  });

  it('an AppArmor profile has a type; a resize policy a resource and a restart policy', () => {
    expect(create(pod({ securityContext: { appArmorProfile: {} } }))).toEqual(['spec.securityContext.appArmorProfile.type: Required value: type is required when appArmorProfile is set']);
    expect(create(pod({ containers: [{ name: 'c', image: 'nginx', securityContext: { appArmorProfile: { type: 'Localhost' } } }] })))
      .toEqual(['spec.containers[0].securityContext.appArmorProfile.localhostProfile: Required value: must be set when AppArmor type is Localhost']);
    expect(create(pod({ containers: [{ name: 'c', image: 'nginx', resizePolicy: [{ resourceName: 'cpu' }] }] }))).toEqual(['spec.containers[0].resizePolicy: Required value']);
  });

  it('a PersistentVolume\'s node affinity has required terms', () => {
    const pv = (nodeAffinity: JSONValue): ApiObject => ({ apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'v' }, spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/x' }, nodeAffinity } });
    expect(create(pv({}))).toEqual(['spec.nodeAffinity.required: Required value: must specify required node constraints']);
    expect(create(pv({ required: {} }))).toEqual(['spec.nodeAffinity.required.nodeSelectorTerms: Required value: must have at least one node selector term']);
  });
});

describe('other structures', () => {
  it('metav1.Condition: a transition time and a reason; the message may be empty', () => {
    expect(brief(validateMetaConditions([{ type: 'Ready', status: 'Maybe' }, { type: 'Ready', status: 'True', reason: 'bad reason', lastTransitionTime: '2024-01-01T00:00:00Z' }], 'status.conditions'))).toEqual([
      'status.conditions[0].status: Unsupported value: "Maybe": supported values: "False", "True", "Unknown"',
      'status.conditions[0].lastTransitionTime: Required value: must be set',
      'status.conditions[0].reason: Required value: must be set',
      'status.conditions[1].type: Duplicate value: "Ready"',
      expect.stringMatching(/^status\.conditions\[1\]\.reason: Invalid value: "bad reason": a condition reason must start with alphabetic character/),
    ]);
    expect(validateMetaConditions([{ type: 'Ready', status: 'True', reason: 'R', lastTransitionTime: '2024-01-01T00:00:00Z' }], 'c')).toEqual([]);
  });

  it('a StorageClass\'s allowed topologies: keys and values', () => {
    expect(brief(validateAllowedTopologies([{ matchLabelExpressions: [{ key: 'zone' }, { key: 'zone', values: ['a', 'a'] }] }], 'allowedTopologies'))).toEqual([
      'allowedTopologies[0].matchLabelExpressions[0].values: Required value',
      'allowedTopologies[0].matchLabelExpressions[1].values[1]: Duplicate value: "a"',
      'allowedTopologies[0].matchLabelExpressions[1].key: Duplicate value: "zone"',
    ]);
    expect(create({ apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 's' }, provisioner: 'x', allowedTopologies: [{ matchLabelExpressions: [{ values: ['a'] }] }] } as ApiObject))
      .toContain('allowedTopologies[0].matchLabelExpressions[0].key: Invalid value: "": name part must be non-empty');
  });

  it('a claim\'s dataSourceRef has a kind and a name', () => {
    expect(brief(validateDataSourceRef({ name: 'x' }, 'spec.dataSourceRef'))).toEqual([
      'spec.dataSourceRef.kind: Required value',
      'spec.dataSourceRef: Invalid value: "": must be \'PersistentVolumeClaim\' when referencing the default apiGroup',
    ]);
    expect(validateDataSourceRef({ apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: 's' }, 'r')).toEqual([]);
  });

  it('an IngressClass\'s parameters have a kind, a name and (defaulted) a Cluster scope', () => {
    expect(brief(validateIngressClassParameters({ name: 'p', scope: 'Cluster' }, 'spec.parameters'))).toEqual(['spec.parameters.kind: Required value: kind is required']);
    expect(brief(validateIngressClassParameters({ kind: 'K', name: 'p', scope: 'Namespace' }, 'spec.parameters'))).toEqual(["spec.parameters.namespace: Required value: `parameters.scope` is set to 'Namespace'"]);
    const ic = { apiVersion: 'networking.k8s.io/v1', kind: 'IngressClass', metadata: { name: 'i' }, spec: { controller: 'x.io/c', parameters: { kind: 'K', name: 'p' } } } as ApiObject;
    expect(create(ic)).toEqual([]);
  });
});

describe('zero shapes of members kube writes back', () => {
  const filled = (kind: string, o: Record<string, JSONValue>, version?: string): Record<string, JSONValue> => {
    fillZeroShape(o, def(kind, version).strategy.zeroShape);
    return o;
  };
  it('an HPA\'s metric statuses, an EndpointSlice zone hint, metav1.Condition messages', () => {
    expect(filled('HorizontalPodAutoscaler', { status: { currentMetrics: [{ type: 'Resource', resource: { name: 'cpu' } }, { type: 'Object', object: {} }] } }, 'v2').status).toEqual({
      desiredReplicas: 0,
      currentMetrics: [
        { type: 'Resource', resource: { name: 'cpu', current: {} } },
        { type: 'Object', object: { metric: { name: '' }, current: {}, describedObject: { kind: '', name: '' } } },
      ],
    });
    expect(filled('EndpointSlice', { endpoints: [{ addresses: ['10.0.0.1'], hints: { forZones: [{}] } }] }).endpoints).toEqual([{ addresses: ['10.0.0.1'], conditions: {}, hints: { forZones: [{ name: '' }] } }]);
    expect(filled('PodDisruptionBudget', { status: { conditions: [{ type: 'X', status: 'True' }] } }).status).toMatchObject({ conditions: [{ type: 'X', status: 'True', message: '' }] });
    // a Service's are not validated: a zero transition time is Go's null
    expect(filled('Service', { status: { conditions: [{ type: 'X', status: 'True' }] } }).status).toEqual({ loadBalancer: {}, conditions: [{ type: 'X', status: 'True', lastTransitionTime: null, reason: '', message: '' }] });
  });

  it('a StatefulSet\'s claim templates keep apiVersion and kind, with a Pending status', () => {
    const sts = {
      apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 's', namespace: 'default' },
      spec: {
        selector: { matchLabels: { a: 'b' } }, serviceName: 's', template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
        volumeClaimTemplates: [{ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
      },
    } as ApiObject;
    expect(create(sts)).toEqual([]);
    const d = def('StatefulSet');
    const obj = structuredClone(sts);
    applyDefaults(obj, d.schema, defs);
    d.strategy.default?.(obj);
    expect(validateAgainstSchema(obj, d.schema, defs).unknownFields).toEqual([]);
    expect((obj.spec as { volumeClaimTemplates: unknown[] }).volumeClaimTemplates[0]).toMatchObject({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', status: { phase: 'Pending' } });
    // one stored before the default reads as kube decodes it, so an update of it compares equal
    const stored = structuredClone(obj);
    delete (stored.spec as { volumeClaimTemplates: Record<string, unknown>[] }).volumeClaimTemplates[0]!.status;
    expect(brief(d.strategy.validateUpdate!(obj, stored))).toHaveLength(1);
    const read = d.readDefaults!(stored);
    expect(read).not.toBe(stored);
    expect((read.spec as { volumeClaimTemplates: unknown[] }).volumeClaimTemplates[0]).toMatchObject({ status: { phase: 'Pending' } });
    expect(d.readDefaults!(read)).toBe(read);
    expect(brief(d.strategy.validateUpdate!(obj, read))).toEqual([]);
  });
});
