// The StorageObjectInUseProtection admission plugin (kube-apiserver's, on by
// default): a new PersistentVolumeClaim gets the `kubernetes.io/pvc-protection`
// finalizer and a new PersistentVolume `kubernetes.io/pv-protection`, so they
// are protected from the create on. The pvc-protection and pv-protection
// controllers (src/controllers/volume/protection.ts) add them too when missing
// (with the plugin off, a little later) and remove them once nothing uses the
// object.

import type { WriteHooks } from './write-options.js';
import type { ApiObject, ResourceDefinition } from './types.js';

export const STORAGE_OBJECT_IN_USE_PROTECTION = 'StorageObjectInUseProtection';
export const PVC_PROTECTION_FINALIZER = 'kubernetes.io/pvc-protection';
export const PV_PROTECTION_FINALIZER = 'kubernetes.io/pv-protection';

const FINALIZERS: Readonly<Record<string, string>> = {
  persistentvolumeclaims: PVC_PROTECTION_FINALIZER,
  persistentvolumes: PV_PROTECTION_FINALIZER,
};

export function storageProtectionAdmission(): Pick<WriteHooks, 'beforeWrite' | 'appliesTo'> {
  return {
    appliesTo: (def) => def.group === '' && Object.hasOwn(FINALIZERS, def.resource),
    beforeWrite(def: ResourceDefinition, obj: ApiObject, old: ApiObject | undefined) {
      if (old || def.group !== '') return;
      const finalizer = FINALIZERS[def.resource];
      if (!finalizer) return;
      const meta = (obj.metadata ??= {});
      const list = meta.finalizers ?? [];
      if (!list.includes(finalizer)) meta.finalizers = [...list, finalizer];
    },
  };
}
