// What kube's Validate…Update functions (pkg/apis/{apps,core,storage}/validation)
// refuse to change on an existing object, for the kinds whose strategies
// check it by hand. Tools meet these every day (`kubectl apply` of a changed
// volumeClaimTemplate, a StorageClass's parameters), so the field paths and
// messages are kube's.

import { deepEqual } from '../../machinery/meta.js';
import type { ApiObject, FieldError } from '../types.js';
import { fieldDiff, forbidden, immutable, invalid } from './field-errors.js';

type Obj = Record<string, unknown>;
const specOf = (o: ApiObject): Obj => ((o as { spec?: Obj }).spec ?? {});

/** the StatefulSet spec fields an update may change (kube 1.32's list, in its message's order) */
const STATEFULSET_MUTABLE = ['replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy', 'minReadySeconds'];

/** kube's ValidateStatefulSetUpdate: everything else in the spec (selector, serviceName, volumeClaimTemplates, …) is fixed */
export function statefulSetUpdateErrors(o: ApiObject, old: ApiObject): FieldError[] {
  const next = { ...specOf(o) };
  const prev = { ...specOf(old) };
  for (const f of STATEFULSET_MUTABLE) {
    delete next[f];
    delete prev[f];
  }
  if (deepEqual(next, prev)) return [];
  const list = STATEFULSET_MUTABLE.map((f) => `'${f}'`);
  return [forbidden('spec', `updates to statefulset spec for fields other than ${list.slice(0, -1).join(', ')} and ${list.at(-1)!} are forbidden`)];
}

/** kube's ValidateStorageClassUpdate */
export function storageClassUpdateErrors(o: ApiObject, old: ApiObject): FieldError[] {
  const errs: FieldError[] = [];
  const c = o as Obj;
  const p = old as Obj;
  if (!deepEqual(c.parameters ?? {}, p.parameters ?? {})) errs.push(forbidden('parameters', 'updates to parameters are forbidden.'));
  if (c.provisioner !== p.provisioner) errs.push(forbidden('provisioner', 'updates to provisioner are forbidden.'));
  if (c.reclaimPolicy !== p.reclaimPolicy) errs.push(forbidden('reclaimPolicy', 'updates to reclaimPolicy are forbidden.'));
  errs.push(...immutable('volumeBindingMode', c.volumeBindingMode, p.volumeBindingMode));
  return errs;
}

/** kube's ValidateResourceQuotaUpdate: the scopes, as a set, are fixed */
export function resourceQuotaUpdateErrors(o: ApiObject, old: ApiObject): FieldError[] {
  const scopes = (x: ApiObject): string[] => [...new Set((specOf(x).scopes as string[] | undefined) ?? [])].sort();
  return deepEqual(scopes(o), scopes(old)) ? [] : [invalid('spec.scopes', specOf(o).scopes ?? null, 'field is immutable')];
}

/** the PersistentVolumeSpec fields that are not its volume source */
const PV_NOT_SOURCE = new Set(['capacity', 'accessModes', 'claimRef', 'persistentVolumeReclaimPolicy', 'storageClassName', 'mountOptions', 'volumeMode', 'nodeAffinity', 'volumeAttributesClassName']);

/** kube's ValidatePersistentVolumeUpdate: the volume source and mode are fixed; node affinity may only be set where there was none */
export function persistentVolumeUpdateErrors(o: ApiObject, old: ApiObject, subresource?: string): FieldError[] {
  if (subresource) return [];
  const source = (x: ApiObject): Obj => Object.fromEntries(Object.entries(specOf(x)).filter(([k]) => !PV_NOT_SOURCE.has(k)));
  const errs: FieldError[] = [];
  const now = source(o);
  const was = source(old);
  if (!deepEqual(now, was)) {
    errs.push(forbidden('spec.persistentvolumesource', `spec.persistentvolumesource is immutable after creation\n${fieldDiff(was, now)}`));
  }
  // kube's paths for these two are "volumeMode" and "nodeAffinity", not under spec
  if (specOf(old).volumeMode !== undefined) errs.push(...immutable('volumeMode', specOf(o).volumeMode, specOf(old).volumeMode));
  if (specOf(old).nodeAffinity !== undefined) errs.push(...immutable('nodeAffinity', specOf(o).nodeAffinity, specOf(old).nodeAffinity));
  return errs;
}

/** a node's pod CIDRs as kube's internal NodeSpec holds them: `podCIDRs`, or the v1 `podCIDR` alone */
function podCIDRsOf(o: ApiObject): string[] {
  const spec = specOf(o);
  if (Array.isArray(spec.podCIDRs) && spec.podCIDRs.length > 0) return spec.podCIDRs.map(String);
  return typeof spec.podCIDR === 'string' && spec.podCIDR !== '' ? [spec.podCIDR] : [];
}

const ONLY_FROM_EMPTY = (f: string): string => `node updates may not change ${f} except from "" to valid`;

/** kube's ValidateNodeUpdate: pod CIDRs and the provider ID are set once (by the node IPAM and cloud controllers), externalID never changes */
export function nodeUpdateErrors(o: ApiObject, old: ApiObject): FieldError[] {
  const errs: FieldError[] = [];
  const was = podCIDRsOf(old);
  const now = podCIDRsOf(o);
  if (was.length > 0) {
    // kube reports each differing entry (or one error for a different count)
    const changes = was.length !== now.length ? 1 : was.filter((c, i) => c !== now[i]).length;
    for (let i = 0; i < changes; i++) errs.push(forbidden('spec.podCIDRs', ONLY_FROM_EMPTY('podCIDR')));
  }
  const provider = (x: ApiObject): string => String(specOf(x).providerID ?? '');
  if (provider(old) !== '' && provider(old) !== provider(o)) errs.push(forbidden('spec.providerID', ONLY_FROM_EMPTY('providerID')));
  if ((specOf(o).externalID ?? '') !== (specOf(old).externalID ?? '')) errs.push(forbidden('spec.externalID', 'may not be updated'));
  return errs;
}
