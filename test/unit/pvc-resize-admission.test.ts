// The PersistentVolumeClaimResize admission plugin (kube's
// plugin/pkg/admission/storage/persistentvolume/resize): a claim asking for
// more storage passes only when the stored claim is Bound and its class, the
// same before and after, exists with allowVolumeExpansion: true.
import { describe, expect, it } from 'vitest';
import type { AdmissionCall } from '../../src/registry/write-options.js';
import type { ApiObject, ResourceDefinition } from '../../src/registry/types.js';
import { pvcResizeAdmission } from '../../src/registry/pvc-resize-admission.js';
import { forbiddenBy } from '../helpers/admission-plugin.js';

const CLAIMS = { group: '', resource: 'persistentvolumeclaims' } as ResourceDefinition;
type Obj = Record<string, unknown>;

const classes = [
  { apiVersion: 'storage.orch.io/v1', kind: 'StorageClass', metadata: { name: 'gold' }, provisioner: 'p', allowVolumeExpansion: true },
  { apiVersion: 'storage.orch.io/v1', kind: 'StorageClass', metadata: { name: 'silver' }, provisioner: 'p', allowVolumeExpansion: false },
  { apiVersion: 'storage.orch.io/v1', kind: 'StorageClass', metadata: { name: 'bronze' }, provisioner: 'p' },
] as unknown as ApiObject[];
const hooks = pvcResizeAdmission(() => classes);

interface ClaimShape {
  storage?: string;
  cls?: string;
  phase?: string;
  annotations?: Record<string, string>;
  extra?: Obj;
}
const claim = (o: ClaimShape): ApiObject => ({
  apiVersion: 'v1', kind: 'PersistentVolumeClaim',
  metadata: { name: 'data', namespace: 'default', ...(o.annotations ? { annotations: o.annotations } : {}) },
  spec: { accessModes: ['ReadWriteOnce'], volumeName: 'pv-1', ...(o.storage ? { resources: { requests: { storage: o.storage } } } : {}), ...(o.cls !== undefined ? { storageClassName: o.cls } : {}), ...(o.extra ?? {}) },
  status: { phase: o.phase ?? 'Bound' },
}) as unknown as ApiObject;

const update = (old: ClaimShape, next: ClaimShape, o: Partial<AdmissionCall> = {}): AdmissionCall => ({
  operation: 'UPDATE', def: CLAIMS, namespace: 'default', name: 'data', object: claim(next), oldObject: claim(old), opts: { dryRun: false }, ...o,
});

/** 'allowed', or the 403's message */
async function outcome(c: AdmissionCall): Promise<string> {
  const run = hooks.validateAdmission(c);
  const ok = await run.then(() => true, () => false);
  return ok ? 'allowed' : (await forbiddenBy(run)).message;
}

const NOT_BOUND = 'persistentvolumeclaims "data" is forbidden: Only bound persistent volume claims can be expanded';
const NOT_EXPANDABLE = 'persistentvolumeclaims "data" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize';

describe('PersistentVolumeClaimResize admission', () => {
  it('lets a bound claim of an expandable class grow', async () => {
    expect(await outcome(update({ storage: '1Gi', cls: 'gold' }, { storage: '2Gi', cls: 'gold' }))).toBe('allowed');
    // the class may come from the beta annotation, which wins over spec.storageClassName
    const beta = { 'volume.beta.kubernetes.io/storage-class': 'gold' };
    expect(await outcome(update({ storage: '1Gi', cls: 'silver', annotations: beta }, { storage: '2Gi', cls: 'silver', annotations: beta }))).toBe('allowed');
  });

  it('refuses growth when the class does not allow expansion, is missing, unnamed or changed', async () => {
    expect(await outcome(update({ storage: '1Gi', cls: 'silver' }, { storage: '2Gi', cls: 'silver' }))).toBe(NOT_EXPANDABLE);
    expect(await outcome(update({ storage: '1Gi', cls: 'bronze' }, { storage: '2Gi', cls: 'bronze' }))).toBe(NOT_EXPANDABLE);
    expect(await outcome(update({ storage: '1Gi', cls: 'absent' }, { storage: '2Gi', cls: 'absent' }))).toBe(NOT_EXPANDABLE);
    expect(await outcome(update({ storage: '1Gi' }, { storage: '2Gi' }))).toBe(NOT_EXPANDABLE);
    expect(await outcome(update({ storage: '1Gi', cls: '' }, { storage: '2Gi', cls: '' }))).toBe(NOT_EXPANDABLE);
    expect(await outcome(update({ storage: '1Gi', cls: 'silver' }, { storage: '2Gi', cls: 'gold' }))).toBe(NOT_EXPANDABLE);
  });

  it('refuses growth of a claim that is not Bound, whatever its class (the stored phase counts)', async () => {
    expect(await outcome(update({ storage: '1Gi', cls: 'gold', phase: 'Pending' }, { storage: '2Gi', cls: 'gold', phase: 'Bound' }))).toBe(NOT_BOUND);
    expect(await outcome(update({ storage: '1Gi', cls: 'gold', phase: 'Lost' }, { storage: '2Gi', cls: 'gold' }))).toBe(NOT_BOUND);
  });

  it('compares quantities by value: equal, smaller and unchanged requests are not its business', async () => {
    // 1Gi = 1024Mi: no growth, so neither the phase nor the class is looked at
    expect(await outcome(update({ storage: '1Gi', cls: 'silver', phase: 'Pending' }, { storage: '1024Mi', cls: 'silver', phase: 'Pending' }))).toBe('allowed');
    expect(await outcome(update({ storage: '2Gi', cls: 'silver', phase: 'Pending' }, { storage: '1Gi', cls: 'silver', phase: 'Pending' }))).toBe('allowed');
    // 1G (10^9) is less than 1Gi; 1100M is more
    expect(await outcome(update({ storage: '1Gi', cls: 'silver' }, { storage: '1G', cls: 'silver' }))).toBe('allowed');
    expect(await outcome(update({ storage: '1Gi', cls: 'silver' }, { storage: '1100M', cls: 'silver' }))).toBe(NOT_EXPANDABLE);
    // other spec changes of an unbound claim of a non-expandable class pass
    expect(await outcome(update({ storage: '1Gi', cls: 'silver', phase: 'Pending' }, { storage: '1Gi', cls: 'silver', phase: 'Pending', extra: { volumeMode: 'Block' } }))).toBe('allowed');
    // no request before: any request is growth
    expect(await outcome(update({ cls: 'silver' }, { storage: '1Gi', cls: 'silver' }))).toBe(NOT_EXPANDABLE);
  });

  it('leaves alone creates, the status sub-resource and other kinds', async () => {
    const grow = update({ storage: '1Gi', cls: 'silver', phase: 'Pending' }, { storage: '2Gi', cls: 'silver' });
    expect(await outcome({ ...grow, opts: { dryRun: false, subresource: 'status' } })).toBe('allowed');
    expect(await outcome({ ...grow, operation: 'CREATE', oldObject: undefined })).toBe('allowed');
    expect(await outcome({ ...grow, def: { group: '', resource: 'persistentvolumes' } as ResourceDefinition })).toBe('allowed');
    expect(await outcome(grow)).toBe(NOT_BOUND);
  });
});
