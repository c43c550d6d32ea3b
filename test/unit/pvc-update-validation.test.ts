// kube's ValidatePersistentVolumeClaimUpdate cases (pkg/apis/core/validation) on orch's claim strategy.

import { describe, expect, it } from 'vitest';
import { validatePersistentVolumeClaimUpdate } from '../../src/registry/kinds/pvc-update-validation.js';
import type { ApiObject } from '../../src/registry/types.js';

type Claim = ApiObject;
const claim = (storage: string, extra: Record<string, unknown> = {}, annotations?: Record<string, string>): Claim => ({
  apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'c', namespace: 'd', ...(annotations ? { annotations } : {}) },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } }, volumeMode: 'Filesystem', ...extra },
  status: { phase: 'Pending' },
}) as Claim;
const bound = (c: Claim, capacity?: string): Claim => ({ ...c, status: { phase: 'Bound', ...(capacity ? { capacity: { storage: capacity } } : {}) } }) as Claim;
const fields = (n: Claim, o: Claim, sub?: string) => validatePersistentVolumeClaimUpdate(n, o, sub).map((e) => e.field);

describe('PersistentVolumeClaim update validation', () => {
  it('an unchanged claim, and the same size written another way, pass', () => {
    expect(fields(claim('1Gi'), claim('1Gi'))).toEqual([]);
    expect(fields(bound(claim('1024Mi')), bound(claim('1Gi')))).toEqual([]);
  });

  it('volumeName may be set once, not changed', () => {
    const named = claim('1Gi', { volumeName: 'pv1' });
    expect(fields(named, claim('1Gi'))).toEqual([]);
    const err = validatePersistentVolumeClaimUpdate(claim('1Gi', { volumeName: 'pv2' }), named);
    expect(err.map((e) => [e.field, e.type])).toEqual([['spec', 'FieldValueForbidden']]);
    expect(err[0]!.message).toMatch(/^Forbidden: spec is immutable after creation except resources\.requests and volumeAttributesClassName for bound claims\n-  volumeName: "pv1"\n\+  volumeName: "pv2"$/);
  });

  it('the size may change only on a bound claim; access modes never', () => {
    expect(fields(claim('2Gi'), claim('1Gi'))).toEqual(['spec']);
    expect(fields(bound(claim('2Gi')), bound(claim('1Gi')))).toEqual([]);
    expect(fields(bound(claim('1Gi', { accessModes: ['ReadOnlyMany'] })), bound(claim('1Gi')))).toEqual(['spec']);
  });

  it('a bound claim shrinks only while it stays above status.capacity (RecoverVolumeExpansionFailure)', () => {
    expect(fields(bound(claim('2Gi')), bound(claim('3Gi'), '1Gi'))).toEqual([]);
    const err = validatePersistentVolumeClaimUpdate(bound(claim('2Gi')), bound(claim('3Gi'), '2Gi'));
    expect(err.map((e) => [e.field, e.message])).toEqual([['spec.resources.requests.storage', 'Forbidden: field can not be less than status.capacity']]);
  });

  it('volumeAttributesClassName may change on a bound claim only', () => {
    expect(fields(bound(claim('1Gi', { volumeAttributesClassName: 'fast' })), bound(claim('1Gi', { volumeAttributesClassName: 'slow' })))).toEqual([]);
    expect(fields(claim('1Gi', { volumeAttributesClassName: 'fast' }), claim('1Gi', { volumeAttributesClassName: 'slow' }))).toEqual(['spec']);
  });

  it('the class may be set where there was none (retroactive default), or to the beta annotation\'s value; not changed', () => {
    expect(fields(claim('1Gi', { storageClassName: 'std' }), claim('1Gi'))).toEqual([]);
    const legacy = { 'volume.beta.kubernetes.io/storage-class': 'gold' };
    expect(fields(claim('1Gi', { storageClassName: 'gold' }, legacy), claim('1Gi', {}, legacy))).toEqual([]);
    expect(fields(claim('1Gi', { storageClassName: 'silver' }, legacy), claim('1Gi', {}, legacy))).toEqual(['spec']);
    expect(fields(claim('1Gi', { storageClassName: 'b' }), claim('1Gi', { storageClassName: 'a' }))).toEqual(['spec']);
    expect(fields(claim('1Gi', {}, { 'volume.beta.kubernetes.io/storage-class': 'x' }), claim('1Gi'))).toEqual(['metadata.annotations[volume.beta.kubernetes.io/storage-class]']);
  });

  it('volumeMode is immutable (kube reports it at "volumeMode"); status writes are not checked', () => {
    expect(fields(claim('1Gi', { volumeMode: 'Block' }), claim('1Gi'))).toEqual(['spec', 'volumeMode']);
    expect(fields(claim('5Gi', { accessModes: ['ReadOnlyMany'] }), claim('1Gi'), 'status')).toEqual([]);
  });
});
