// kube's ValidatePersistentVolumeClaimUpdate (pkg/apis/core/validation): a
// claim's spec is fixed at creation so quota and LimitRange checks cannot be
// gamed, except what the volume machinery and a resize need:
// - spec.volumeName may be set once (the binder);
// - spec.storageClassName may go from unset to a value (retroactive default
//   class) or to the value of the legacy beta annotation;
// - on a Bound claim, resources.requests.storage and volumeAttributesClassName;
// - requests.storage never below what it was, unless above status.capacity
//   (RecoverVolumeExpansionFailure, beta and on in kube 1.32);
// - spec.volumeMode and the beta class annotation never change.
// Whether a growth is allowed at all is the PersistentVolumeClaimResize
// admission plugin's call (src/registry/pvc-resize-admission.ts).

import { deepEqual } from '../../machinery/meta.js';
import { parseAmount } from '../quota/amount.js';
import type { ApiObject, FieldError } from '../types.js';
import { fieldDiff, forbidden, immutable } from './field-errors.js';

const BETA_CLASS = 'volume.beta.kubernetes.io/storage-class';

type Spec = Record<string, unknown> & { resources?: { requests?: Record<string, unknown> } };

const specOf = (o: ApiObject): Spec => ((o as { spec?: Spec }).spec ?? {});
const annotation = (o: ApiObject): string | undefined => o.metadata?.annotations?.[BETA_CLASS];
const storageOf = (s: Spec): unknown => s.resources?.requests?.storage;
/** nanounits of a quantity; absent counts as zero, an unparsable one as unknown */
const nanoOf = (q: unknown): bigint | undefined => (q === undefined ? 0n : parseAmount(q)?.nano);

export function validatePersistentVolumeClaimUpdate(o: ApiObject, old: ApiObject, subresource?: string): FieldError[] {
  if (subresource) return []; // status writes keep the stored spec
  const errs: FieldError[] = [];
  const spec = structuredClone(specOf(o));
  const was = structuredClone(specOf(old));
  const bound = (old as { status?: { phase?: unknown } }).status?.phase === 'Bound';

  if (!was.volumeName) was.volumeName = spec.volumeName;
  // a claim stored before volumeMode was defaulted gets the default on this write, which is no change
  if (was.volumeMode === undefined) was.volumeMode = spec.volumeMode;
  if (was.storageClassName === undefined && spec.storageClassName !== undefined) {
    const legacy = annotation(old);
    // from the beta annotation to the field with the same value, or from nothing to a class
    if (legacy === undefined || legacy === spec.storageClassName) delete spec.storageClassName;
  }
  errs.push(...immutable(`metadata.annotations[${BETA_CLASS}]`, annotation(o), annotation(old)));
  if (bound) {
    if (spec.resources?.requests && storageOf(spec) !== undefined) {
      spec.resources.requests.storage = storageOf(was);
      if (spec.resources.requests.storage === undefined) delete spec.resources.requests.storage;
    }
    if (spec.volumeAttributesClassName !== undefined) spec.volumeAttributesClassName = was.volumeAttributesClassName;
  }
  // the same amount written another way (1Gi, 1024Mi) is no change
  const sameStorage = nanoOf(storageOf(spec)) !== undefined && nanoOf(storageOf(spec)) === nanoOf(storageOf(was));
  if (sameStorage && spec.resources?.requests) spec.resources.requests.storage = storageOf(was);
  if (!deepEqual(spec, was)) {
    errs.push(forbidden('spec', `spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n${fieldDiff(was, spec)}`));
  }

  const newSize = nanoOf(storageOf(specOf(o)));
  const oldSize = nanoOf(storageOf(specOf(old)));
  const capacity = nanoOf((old as { status?: { capacity?: Record<string, unknown> } }).status?.capacity?.storage);
  if (newSize !== undefined && oldSize !== undefined && capacity !== undefined && newSize < oldSize && newSize <= capacity) {
    errs.push(forbidden('spec.resources.requests.storage', 'field can not be less than status.capacity'));
  }
  // kube's path for this one is "volumeMode", not "spec.volumeMode"
  if (specOf(old).volumeMode !== undefined) errs.push(...immutable('volumeMode', specOf(o).volumeMode, specOf(old).volumeMode));
  return errs;
}
