// The PersistentVolumeClaimResize admission plugin (kube-apiserver's, on by
// default; plugin/pkg/admission/storage/persistentvolume/resize, kube 1.32).
// A validating check on an UPDATE of a claim itself (not its status) that
// asks for more storage than the stored claim (`spec.resources.requests.storage`,
// compared as quantities: 1Gi is 1024Mi). Kube lets such a request through
// only when
// - the stored claim's `status.phase` is Bound (kube reads the phase, not
//   `spec.volumeName`), else 403 "Only bound persistent volume claims can be
//   expanded";
// - the claim names a class (the beta annotation, else `spec.storageClassName`),
//   the same before and after, and that StorageClass exists with
//   `allowVolumeExpansion: true`, else 403 "only dynamically provisioned pvc
//   can be resized and the storageclass that provisions the pvc must support
//   resize".
// A smaller or equal request is not this plugin's business (kube leaves it to
// the claim's update validation).

import { admissionForbidden } from './admission-forbidden.js';
import type { WriteHooks } from './write-options.js';
import type { ApiObject } from './types.js';
import { ZERO, parseAmount } from './quota/amount.js';
import { claimClass } from './quota/evaluators.js';
import { coreResources } from './write-hooks.js';

export const PERSISTENT_VOLUME_CLAIM_RESIZE = 'PersistentVolumeClaimResize';

/** the requested storage; none (or not a quantity) counts as zero, as kube's Quantity zero value does */
function requestedStorage(pvc: ApiObject): bigint {
  const spec = pvc.spec as { resources?: { requests?: Record<string, unknown> } } | undefined;
  return (parseAmount(spec?.resources?.requests?.storage) ?? ZERO).nano;
}

export function pvcResizeAdmission(storageClasses: () => readonly ApiObject[]): Required<Pick<WriteHooks, 'validateAdmission' | 'appliesTo'>> {
  /** kube's allowResize: one class before and after, existing and allowing expansion */
  const allowResize = (pvc: ApiObject, old: ApiObject): boolean => {
    const name = claimClass(pvc);
    if (name === '' || name !== claimClass(old)) return false;
    return storageClasses().find((sc) => sc.metadata?.name === name)?.allowVolumeExpansion === true;
  };
  return {
    appliesTo: coreResources('persistentvolumeclaims'),
    async validateAdmission(c) {
      if (c.operation !== 'UPDATE' || c.opts.subresource || c.def.group !== '' || c.def.resource !== 'persistentvolumeclaims') return;
      const pvc = c.object;
      const old = c.oldObject;
      if (!pvc || !old || requestedStorage(pvc) <= requestedStorage(old)) return;
      if ((old.status as { phase?: unknown } | undefined)?.phase !== 'Bound') throw admissionForbidden(c, 'Only bound persistent volume claims can be expanded');
      if (!allowResize(pvc, old)) throw admissionForbidden(c, 'only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize');
    },
  };
}
