// Which PersistentVolume a claim may bind to, as kube-controller-manager's
// persistent volume controller decides it (pkg/controller/volume/
// persistentvolume index.go findByClaim and component-helpers'
// FindMatchingVolume, kube 1.32): the volumes are grouped by their set of
// access modes; only sets holding every mode the claim asks for are looked
// at, the sets with the fewest modes first, and the first set with a match
// gives the smallest volume (by capacity) that fits. A volume pre-bound to
// the claim (spec.claimRef naming it) is taken whatever its class, selector
// or phase, as long as it is large enough.

import { parseQuantity } from '../../core/quantity.js';
import { matchesLabelSelector } from '../../registry/kinds/workload-shared.js';
import type { ApiObject, JSONValue } from '../../registry/types.js';

type Obj = Record<string, JSONValue>;

export const ANN_BIND_COMPLETED = 'pv.kubernetes.io/bind-completed';
export const ANN_BOUND_BY_CONTROLLER = 'pv.kubernetes.io/bound-by-controller';
export const ANN_SELECTED_NODE = 'volume.kubernetes.io/selected-node';
export const ANN_STORAGE_PROVISIONER = 'volume.kubernetes.io/storage-provisioner';
export const ANN_BETA_STORAGE_PROVISIONER = 'volume.beta.kubernetes.io/storage-provisioner';
/** the class annotation that predates spec.storageClassName; it wins when set, as in kube */
export const ANN_BETA_STORAGE_CLASS = 'volume.beta.kubernetes.io/storage-class';
export const ANN_DEFAULT_CLASS = 'storageclass.kubernetes.io/is-default-class';

/** kube's helper.GetAccessModesAsString order */
const MODE_ORDER = ['ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOncePod'];

const specOf = (o: ApiObject): Obj => (o.spec ?? {}) as Obj;
const annotationsOf = (o: ApiObject): Record<string, string> => (o.metadata?.annotations ?? {}) as Record<string, string>;

export function hasAnnotation(o: ApiObject, name: string): boolean {
  return Object.prototype.hasOwnProperty.call(annotationsOf(o), name);
}

/** GetPersistentVolumeClaimClass: the beta annotation, else spec.storageClassName, else "" */
export function claimClass(claim: ApiObject): string {
  const a = annotationsOf(claim)[ANN_BETA_STORAGE_CLASS];
  if (a !== undefined) return a;
  const c = specOf(claim).storageClassName;
  return typeof c === 'string' ? c : '';
}

/** GetPersistentVolumeClass */
export function volumeClass(pv: ApiObject): string {
  const a = annotationsOf(pv)[ANN_BETA_STORAGE_CLASS];
  if (a !== undefined) return a;
  const c = specOf(pv).storageClassName;
  return typeof c === 'string' ? c : '';
}

export const accessModesOf = (o: ApiObject): string[] => ((specOf(o).accessModes ?? []) as JSONValue[]).map(String);
/** the API defaults volumeMode to Filesystem on both kinds */
export const volumeModeOf = (o: ApiObject): string => (typeof specOf(o).volumeMode === 'string' ? (specOf(o).volumeMode as string) : 'Filesystem');
export const requestedBytes = (claim: ApiObject): number => parseQuantity(((specOf(claim).resources as Obj | undefined)?.requests as Obj | undefined)?.storage) ?? 0;
export const capacityBytes = (pv: ApiObject): number => parseQuantity((specOf(pv).capacity as Obj | undefined)?.storage) ?? 0;

export interface ClaimRef {
  kind?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  apiVersion?: string;
  resourceVersion?: string;
}

export const claimRefOf = (pv: ApiObject): ClaimRef | undefined => (specOf(pv).claimRef ?? undefined) as ClaimRef | undefined;

/** IsVolumeBoundToClaim: the claimRef names the claim (and its uid, when the ref has one) */
export function isBoundToClaim(pv: ApiObject, claim: ApiObject): boolean {
  const ref = claimRefOf(pv);
  if (!ref) return false;
  if (ref.name !== claim.metadata?.name || (ref.namespace ?? '') !== (claim.metadata?.namespace ?? '')) return false;
  return !ref.uid || ref.uid === claim.metadata?.uid;
}

/** every mode the claim asks for is one of the volume's (CheckAccessModes) */
export function hasAccessModes(claim: ApiObject, pv: ApiObject): boolean {
  const have = new Set(accessModesOf(pv));
  return accessModesOf(claim).every((m) => have.has(m));
}

/** checkVolumeSatisfyClaim: why a volume the claim names in spec.volumeName cannot be bound to it */
export function volumeMismatch(pv: ApiObject, claim: ApiObject): string | undefined {
  if (pv.metadata?.deletionTimestamp) return `the volume is marked for deletion "${pv.metadata.name ?? ''}"`;
  if (capacityBytes(pv) < requestedBytes(claim)) return 'requested PV is too small';
  if (volumeClass(pv) !== claimClass(claim)) return 'storageClassName does not match';
  if (volumeModeOf(pv) !== volumeModeOf(claim)) return 'incompatible volumeMode';
  if (!hasAccessModes(claim, pv)) return 'incompatible accessMode';
  return undefined;
}

/** the canonical string of a set of access modes (kube's index key) */
export function modesKey(modes: string[]): string {
  const set = new Set(modes);
  const known = MODE_ORDER.filter((m) => set.has(m));
  const other = [...set].filter((m) => !MODE_ORDER.includes(m)).sort();
  return [...known, ...other].join(',');
}

/** FindMatchingVolume over one group of volumes */
function matchIn(claim: ApiObject, volumes: ApiObject[], delayBinding: boolean): ApiObject | undefined {
  const want = requestedBytes(claim);
  const cls = claimClass(claim);
  const selector = specOf(claim).selector as Obj | undefined | null;
  let best: ApiObject | undefined;
  let bestSize = 0;
  for (const pv of volumes) {
    const size = capacityBytes(pv);
    if (size < want) continue;
    const ref = claimRefOf(pv);
    if (ref && !isBoundToClaim(pv, claim)) continue;
    if (volumeModeOf(pv) !== volumeModeOf(claim)) continue;
    if (pv.metadata?.deletionTimestamp) continue;
    if (ref) return pv; // pre-bound to this claim
    // a WaitForFirstConsumer claim is bound by the scheduler, never here
    if (delayBinding) continue;
    if ((pv.status as Obj | undefined)?.phase !== 'Available') continue;
    if (selector && !matchesLabelSelector(selector, (pv.metadata?.labels ?? {}) as Obj)) continue;
    if (volumeClass(pv) !== cls) continue;
    if (!best || size < bestSize) {
      best = pv;
      bestSize = size;
    }
  }
  return best;
}

/**
 * findBestMatchForClaim: the volume the claim binds to, undefined when none
 * fits. Within a group, equal sizes go to the first name (kube's order there
 * is the cache's, i.e. unspecified).
 */
export function findBestMatch(claim: ApiObject, volumes: Iterable<ApiObject>, delayBinding: boolean): ApiObject | undefined {
  const groups = new Map<string, ApiObject[]>();
  for (const pv of volumes) {
    const key = modesKey(accessModesOf(pv));
    let g = groups.get(key);
    if (!g) groups.set(key, (g = []));
    g.push(pv);
  }
  const want = accessModesOf(claim);
  const keys = [...groups.keys()]
    .filter((k) => {
      const have = new Set(k === '' ? [] : k.split(','));
      return want.every((m) => have.has(m));
    })
    .sort((a, b) => (a === '' ? 0 : a.split(',').length) - (b === '' ? 0 : b.split(',').length) || (a < b ? -1 : a > b ? 1 : 0));
  for (const k of keys) {
    const g = groups.get(k)!.sort((a, b) => ((a.metadata?.name ?? '') < (b.metadata?.name ?? '') ? -1 : 1));
    const pv = matchIn(claim, g, delayBinding);
    if (pv) return pv;
  }
  return undefined;
}
