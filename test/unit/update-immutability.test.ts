// kube's Validate…Update rules for StatefulSets, StorageClasses, ResourceQuotas and PersistentVolumes.

import { describe, expect, it } from 'vitest';
import { persistentVolumeUpdateErrors, resourceQuotaUpdateErrors, statefulSetUpdateErrors, storageClassUpdateErrors } from '../../src/registry/kinds/update-immutability.js';
import type { ApiObject } from '../../src/registry/types.js';

const obj = (fields: Record<string, unknown>): ApiObject => ({ apiVersion: 'v1', kind: 'X', metadata: { name: 'x' }, ...fields }) as ApiObject;
const brief = (errs: { field: string; message: string }[]) => errs.map((e) => `${e.field}: ${e.message}`);

describe('StatefulSet updates', () => {
  const sts = (spec: Record<string, unknown>) => obj({ spec: { serviceName: 'web', selector: { matchLabels: { a: 'b' } }, replicas: 1, template: { spec: {} }, ...spec } });
  const FORBIDDEN = "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden";

  it('may change replicas, template, update strategy, ordinals, history, retention and minReadySeconds', () => {
    const next = sts({ replicas: 5, template: { spec: { x: 1 } }, updateStrategy: { type: 'OnDelete' }, ordinals: { start: 2 }, revisionHistoryLimit: 3, persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete' }, minReadySeconds: 9 });
    expect(statefulSetUpdateErrors(next, sts({}))).toEqual([]);
  });

  it('may not change volumeClaimTemplates, serviceName or the selector', () => {
    expect(brief(statefulSetUpdateErrors(sts({ volumeClaimTemplates: [{ metadata: { name: 'd' } }] }), sts({})))).toEqual([FORBIDDEN]);
    expect(brief(statefulSetUpdateErrors(sts({ serviceName: 'other' }), sts({})))).toEqual([FORBIDDEN]);
    expect(brief(statefulSetUpdateErrors(sts({ selector: { matchLabels: { a: 'c' } } }), sts({})))).toEqual([FORBIDDEN]);
  });
});

describe('StorageClass updates', () => {
  const sc = (f: Record<string, unknown> = {}) => obj({ provisioner: 'p', parameters: { type: 'ssd' }, reclaimPolicy: 'Delete', volumeBindingMode: 'Immediate', allowVolumeExpansion: false, ...f });
  it('refuse parameters, provisioner, reclaimPolicy and volumeBindingMode changes with kube\'s messages; other fields change', () => {
    expect(storageClassUpdateErrors(sc({ allowVolumeExpansion: true, mountOptions: ['ro'] }), sc())).toEqual([]);
    expect(brief(storageClassUpdateErrors(sc({ parameters: { type: 'hdd' }, provisioner: 'q', reclaimPolicy: 'Retain', volumeBindingMode: 'WaitForFirstConsumer' }), sc()))).toEqual([
      'parameters: Forbidden: updates to parameters are forbidden.',
      'provisioner: Forbidden: updates to provisioner are forbidden.',
      'reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden.',
      'volumeBindingMode: Invalid value: "WaitForFirstConsumer": field is immutable',
    ]);
  });
});

describe('ResourceQuota updates', () => {
  const rq = (scopes?: string[]) => obj({ spec: { hard: { pods: '1' }, ...(scopes ? { scopes } : {}) } });
  it('keep their scopes as a set', () => {
    expect(resourceQuotaUpdateErrors(rq(['BestEffort', 'Terminating']), rq(['Terminating', 'BestEffort']))).toEqual([]);
    expect(brief(resourceQuotaUpdateErrors(rq(['BestEffort']), rq()))).toEqual(['spec.scopes: Invalid value: ["BestEffort"]: field is immutable']);
  });
});

describe('PersistentVolume updates', () => {
  const pv = (spec: Record<string, unknown> = {}) => obj({ spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/a' }, volumeMode: 'Filesystem', ...spec } });
  it('may change capacity, access modes, claimRef, policy, class and mount options, and set node affinity once', () => {
    const next = pv({ capacity: { storage: '2Gi' }, accessModes: ['ReadWriteMany'], claimRef: { name: 'c' }, persistentVolumeReclaimPolicy: 'Delete', storageClassName: 's', mountOptions: ['ro'], nodeAffinity: { required: {} } });
    expect(persistentVolumeUpdateErrors(next, pv())).toEqual([]);
  });

  it('may not change the volume source, the mode or a node affinity that is set; status writes are not checked', () => {
    const errs = persistentVolumeUpdateErrors(pv({ hostPath: { path: '/b' } }), pv());
    expect(brief(errs)).toEqual(['spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is immutable after creation\n-  hostPath: {"path":"/a"}\n+  hostPath: {"path":"/b"}']);
    expect(persistentVolumeUpdateErrors(pv({ volumeMode: 'Block' }), pv()).map((e) => e.field)).toEqual(['volumeMode']);
    expect(persistentVolumeUpdateErrors(pv({ nodeAffinity: { b: 1 } }), pv({ nodeAffinity: { a: 1 } })).map((e) => e.field)).toEqual(['nodeAffinity']);
    expect(persistentVolumeUpdateErrors(pv({ hostPath: { path: '/b' } }), pv(), 'status')).toEqual([]);
  });
});
